"""Writes the bundled demo campaign (seeded, so the files never change): qrels and three runs."""

from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
rng = np.random.default_rng(20261122)
topics = [f"d{n:03d}" for n in range(1, 21)]
docs = [f"DOC-{n:05d}" for n in range(3000)]
with open(HERE / "qrels.txt", "w") as q:
    judged = {}
    for t in topics:
        pool = rng.choice(len(docs), 120, replace=False)
        levels = rng.choice([0, 0, 0, 1, 1, 2, 3], size=120)
        judged[t] = dict(zip(pool, levels))
        for d, lvl in sorted(judged[t].items()):
            q.write(f"{t} 0 {docs[d]} {lvl}\n")
for name, skill in (("bm25", 1.0), ("dense", 1.6), ("weak", 0.4)):
    with open(HERE / f"run_{name}.txt", "w") as out:
        for t in topics:
            cand = rng.choice(len(docs), 300, replace=False)
            base = rng.normal(size=300)
            boost = np.array([judged[t].get(d, 0) for d in cand]) * skill
            scores = np.round(base + boost, 4)
            for rank, i in enumerate(np.argsort(-scores, kind="stable")[:100], 1):
                out.write(f"{t} Q0 {docs[cand[i]]} {rank} {scores[i]:.4f} {name}\n")
