"""Generated original and reproduced runs for the reproducibility measures' tests and bench:
a seeded numpy Generator makes an original baseline and advanced run and their reproductions
(scores rounded to make ties, a reproduction that retrieves other documents for some ranks,
and a topic the reproductions miss), written as TREC files with their qrels."""

from __future__ import annotations

from pathlib import Path

import numpy as np

RUNS = ("baseline", "advanced", "reproduced_baseline", "reproduced_advanced")


def _write_run(path: Path, name: str, rows: list[tuple[str, np.ndarray, np.ndarray]]) -> None:
    with path.open("w") as out:
        for topic, docs, scores in rows:
            order = np.argsort(-scores, kind="stable")
            out.writelines(f"{topic} Q0 {docs[i]} {r} {scores[i]:.2f} {name}\n"
                           for r, i in enumerate(order, 1))


def make_runs(folder: Path, *, seed: int = 42, topics: int = 30, docs: int = 1000,
              missing: str | None = "t7", pool: int = 3000) -> dict[str, Path]:
    """Write the qrels and the four runs into ``folder``; returns their paths by name
    (``qrels`` and :data:`RUNS`). The reproductions lack topic ``missing``."""
    rng = np.random.default_rng(seed)
    names = [f"t{i}" for i in range(1, topics + 1)]
    vocab = np.array([f"doc{j:05d}" for j in range(pool)])
    rows: dict[str, list] = {name: [] for name in RUNS}
    qrels = []
    for topic in names:
        gain = rng.integers(0, 3, pool) * (rng.random(pool) < 0.15)
        judged = np.flatnonzero(rng.random(pool) < 0.4)
        qrels += [f"{topic} 0 {vocab[j]} {gain[j]}\n" for j in judged]
        signal = gain + rng.normal(0, 1.0, pool)
        for name, noise in (("baseline", 1.5), ("advanced", 1.0)):
            score = signal + rng.normal(0, noise, pool)
            picked = np.argsort(-score)[:docs]
            base = np.round(score[picked], 1)  # rounded: many ties
            rows[name].append((topic, vocab[picked], base))
            if topic == missing:
                continue
            again = picked.copy()
            swap = rng.random(docs) < 0.1  # other documents at some ranks
            others = np.setdiff1d(np.arange(pool), picked)
            again[swap] = rng.choice(others, int(swap.sum()), replace=False)
            rescored = np.round(score[again] + rng.normal(0, 0.3, docs), 1)
            rows[f"reproduced_{name}"].append((topic, vocab[again], rescored))
    paths = {"qrels": folder / "qrels.txt"}
    paths["qrels"].write_text("".join(qrels))
    for name in RUNS:
        paths[name] = folder / f"{name}.run"
        _write_run(paths[name], name, rows[name])
    return paths
