"""simulate(spec, out_dir): a seeded TREC-style campaign (topics, runs, pooled graded qrels).

For demos, tests, and for organisers planning pool depth and topic counts. Every random draw
comes from one ``numpy.random.Generator`` seeded with ``spec.seed``, in a fixed order, so the
same spec writes byte-identical files (with the same numpy: numpy does not promise that a
Generator's streams never change between versions). Pooling draws nothing, so two specs that
differ only in ``pool_depth`` or ``pooled_runs`` give the same runs and differ only in their
qrels (and ``campaign.json``): compare pool depths on one set of runs.

The model, one choice at a time:

* Topics: ids ``401``, ``402``, ... as in TREC. The number of relevant documents of a topic is
  long-tailed, ``round(lognormal(log 30, 1.0))`` clipped to ``[3, 800]`` (and to a tenth of the
  collection): a median of 30, some topics with 3, some with 100+. Each topic also has an *ease*,
  ``lognormal(0, 0.35)``, that multiplies every system's signal on it: some topics are hard for
  everyone.
* Documents: docnos ``SIM-00000000`` to ``SIM-{collection_size - 1}``, zero-padded so byte order is
  number order. Each relevant document's latent grade is drawn in ``1..grades-1``, each grade
  half as likely as the one below it; every other document has grade 0.
* Candidates: a run can only retrieve a topic's candidates, all its relevant documents plus
  ``max(3000, 2 * depth)`` random non-relevant ones (fewer if the collection is smaller). The
  rest of the collection stands for documents no system would rank in its top ``depth``; this
  keeps the cost per topic independent of ``collection_size``.
* Systems: each group has a quality ``normal(1.3, 0.4)``; each of its runs adds
  ``normal(0, 0.15)``; one run in ten is ``manual`` and gets ``+0.3`` (human query formulation).
  The result, clipped at 0.1, is the run's *true quality*: how far a grade-1 document's score
  sits above the noise, in noise standard deviations, on a topic of ease 1. A run's signal on a
  topic is ``quality * ease * lognormal(0, 0.25)`` (systems do not all find the same topics hard).
* Scores: ``signal * grade + noise``, where the unit-variance noise is the sum of a per-document
  part shared by all systems (weight 0.6: some documents look relevant to everyone), a part shared
  by the runs of a group (0.5: variants of one system) and the run's own part (the rest). So runs
  of one group are more alike than runs of different groups, and all runs agree on part of the
  ranking, as real submissions do. A run returns its ``depth`` best candidates per topic.
* Printing: each run maps scores through its own ``offset + scale * score`` (systems print
  different scales) and prints 4 decimals, so a few scores tie. File order is trec_eval's ranking
  order (score descending, then docno descending), so ranks are 1..depth and agree with trec_eval.
* Judgments: depth-``pool_depth`` pooling of the first ``pooled_runs`` runs of each group (the
  groups' priority runs); every pooled document gets its latent grade, nothing else is judged.
  Relevant documents that only unpooled runs found, or that no run retrieved, stay unjudged, so
  judgments are incomplete and unpooled runs are penalised when scored, as in real campaigns.
  Which runs a group pools is not tied to quality, so that penalty is pool bias alone.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import yaml

from .documents.simulated import document_texts, sgml
from .errors import OutputError, SimulationError
from .files import write_file

FIRST_TOPIC = 401
DOCNO_PREFIX = "SIM-"
DOCNO_DIGITS = 8
SCORE_DECIMALS = 4

_REL_MEDIAN, _REL_SIGMA, _REL_MIN, _REL_MAX = 30.0, 1.0, 3, 800
_EASE_SIGMA = 0.35
_NONREL_CANDIDATES = 3000
_GROUP_QUALITY, _GROUP_QUALITY_SD, _RUN_QUALITY_SD, _MIN_QUALITY = 1.3, 0.4, 0.15, 0.1
_MANUAL_RATE, _MANUAL_BOOST = 0.1, 0.3
_TOPIC_INTERACTION_SIGMA = 0.25
_W_SHARED, _W_GROUP = 0.6, 0.5
_W_OWN = math.sqrt(1.0 - _W_SHARED**2 - _W_GROUP**2)

# Topic titles are "<modifier> <subject> <aspect>", e.g. "coastal wetland restoration".
_MODIFIERS = (
    "international", "coastal", "rural", "urban", "genetic", "solar", "maritime", "industrial",
    "agricultural", "medical", "airline", "nuclear", "digital", "tropical", "arctic", "municipal",
    "foreign", "regional", "wildlife", "automotive", "pharmaceutical", "educational", "military",
    "financial", "historic", "organic", "offshore", "electric", "volcanic", "cultural",
)
_SUBJECTS = (
    "wetland", "art", "oil", "tobacco", "fishing", "steel", "railway", "vaccine", "coral",
    "housing", "water", "satellite", "timber", "grain", "banking", "copper", "tourism", "pension",
    "drug", "textile", "forest", "bridge", "wind", "river", "mining", "museum", "school",
    "hospital", "port", "telephone",
)
_ASPECTS = (
    "restoration", "theft", "regulation", "exports", "subsidies", "safety", "pollution",
    "privatization", "shortages", "smuggling", "strikes", "prices", "research", "disasters",
    "reform", "mergers", "lawsuits", "funding", "tariffs", "inspections", "accidents", "fraud",
    "development", "protests", "licensing", "recycling", "monopolies", "imports", "quotas",
    "taxation",
)


@dataclass(frozen=True)
class CampaignSpec:
    """What to simulate; invalid values raise :class:`SimulationError` naming every bad parameter.

    groups: participating groups; runs_per_group: runs each group submits; topics: topic count;
    depth: documents per topic per run; pool_depth: depth-k pooling; pooled_runs: runs per group
    in the pool (each group's first runs); grades: relevance grades 0..grades-1 (2 = binary);
    collection_size: documents in the collection; seed: seed of the one random generator.
    """

    groups: int = 4
    runs_per_group: int = 3
    topics: int = 25
    depth: int = 100
    pool_depth: int = 10
    pooled_runs: int = 1
    grades: int = 3
    collection_size: int = 50_000
    seed: int = 42

    def __post_init__(self) -> None:
        problems = _spec_problems(self)
        if problems:
            raise SimulationError("invalid campaign spec: " + "; ".join(problems))
        for f in fields(self):  # numpy integers become ints (JSON, exact equality)
            object.__setattr__(self, f.name, int(getattr(self, f.name)))


@dataclass(frozen=True)
class SimulatedRun:
    """One run written by :func:`simulate`; ``quality`` is its simulated true quality."""

    name: str
    group: str
    pooled: bool
    type: str
    quality: float
    path: Path


@dataclass(frozen=True)
class SimulatedTopic:
    """One topic: its relevant documents in the collection, and how many the pool judged."""

    query_id: str
    title: str
    ease: float
    relevant: int
    judged: int
    relevant_judged: int


@dataclass(frozen=True)
class SimulationResult:
    """The files :func:`simulate` wrote and the campaign's metadata (as in ``campaign.json``)."""

    spec: CampaignSpec
    out_dir: Path
    topics_path: Path
    qrels_path: Path
    campaign_path: Path
    config_path: Path
    runs: tuple[SimulatedRun, ...]
    topics: tuple[SimulatedTopic, ...]
    pool_size: int
    documents_path: Path | None = None  # the collection's text (TREC SGML, gzip)

    @property
    def run_paths(self) -> tuple[Path, ...]:
        return tuple(run.path for run in self.runs)


def _spec_problems(spec: CampaignSpec) -> list[str]:
    """Every problem of ``spec`` as ``'<parameter> must ... (got ...)'``; empty when valid."""
    problems: list[str] = []
    values = {}
    for f in fields(spec):
        value = getattr(spec, f.name)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            problems.append(f"{f.name} must be an integer (got {value!r})")
        else:
            values[f.name] = int(value)
    minimum = {"groups": 1, "runs_per_group": 1, "topics": 1, "depth": 1, "pool_depth": 1,
               "pooled_runs": 1, "grades": 2, "collection_size": 1, "seed": 0}
    for name, low in minimum.items():
        if name in values and values[name] < low:
            problems.append(f"{name} must be >= {low} (got {values[name]})")
            del values[name]
    for small, large in (("pooled_runs", "runs_per_group"), ("pool_depth", "depth"),
                         ("depth", "collection_size")):
        if small in values and large in values and values[small] > values[large]:
            problems.append(f"{small} must be <= {large} ({values[small]} > {values[large]})")
    return problems


def group_name(index: int) -> str:
    """``groupA`` .. ``groupZ``, then ``groupAA``, ``groupAB`` ... (spreadsheet columns)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return f"group{letters}"


def simulate(spec: CampaignSpec, out_dir: str | os.PathLike) -> SimulationResult:
    """Simulate the campaign ``spec`` and write it into ``out_dir`` (created if needed).

    Writes ``topics.txt``, ``qrels.txt``, ``runs/<group>-<k>.txt``, ``documents.sgml.gz`` (the
    documents' text: :mod:`irbench.documents.simulated`), ``campaign.json`` and
    ``campaign.yaml`` (a config ready for ``irbench run``), overwriting files of those names
    and touching nothing else. See the module docstring.
    """
    if not isinstance(spec, CampaignSpec):
        raise TypeError(f"spec must be a CampaignSpec, not {type(spec).__name__}")
    rng = np.random.default_rng(spec.seed)
    query_ids = [str(FIRST_TOPIC + t) for t in range(spec.topics)]
    draws = _campaign_draws(rng, spec)  # campaign-level draws: topics, then runs
    pool = _candidate_draws(rng, spec, draws.n_relevant)  # then each topic's candidates

    out = Path(out_dir)
    _make_folder(out / "runs")
    width = max(DOCNO_DIGITS, len(str(spec.collection_size - 1)))
    run_format = _RunFormat(query_ids, pool.candidates, spec.depth, width)
    judged = [np.zeros(len(c), dtype=bool) for c in pool.candidates]
    seen = [np.zeros(len(c), dtype=bool) for c in pool.candidates]  # retrieved by any run
    runs: list[SimulatedRun] = []
    for g in range(spec.groups):  # then each group's runs, topic by topic
        runs_of = slice(g * spec.runs_per_group, (g + 1) * spec.runs_per_group)
        retrieved, printed = _group_rankings(rng, spec, draws, runs_of, pool, judged)
        for t, mask in enumerate(seen):
            mask[retrieved[:, t].ravel()] = True
        runs += _write_group(out, g, spec, draws, run_format, retrieved, printed)

    result = SimulationResult(
        spec=spec, out_dir=out, topics_path=out / "topics.txt", qrels_path=out / "qrels.txt",
        campaign_path=out / "campaign.json", config_path=out / "campaign.yaml",
        runs=tuple(runs), topics=_simulated_topics(query_ids, draws, pool, judged),
        pool_size=int(sum(int(j.sum()) for j in judged)),
        documents_path=out / "documents.sgml.gz",
    )
    _write(result.topics_path, _topics_text(query_ids, draws.titles).encode("ascii"))
    _write(result.qrels_path,
           _qrels_text(query_ids, pool.candidates, pool.grades, judged, width).encode("ascii"))
    texts = document_texts(draws.titles, [c[m] for c, m in zip(pool.candidates, seen)],
                           [g[m] for g, m in zip(pool.grades, seen)], spec.seed)
    _write(out / "documents.sgml.gz", sgml(texts, DOCNO_PREFIX, width))
    _write(result.campaign_path, _campaign_json(result).encode("ascii"))
    _write(result.config_path, _campaign_yaml(result).encode("utf-8"))
    return result


def simulated_relevance(spec: CampaignSpec) -> tuple[_Draws, _Candidates]:
    """The draws :func:`simulate` starts from (per topic its ease and title, per run its
    quality ...) and each topic's candidates, latent grades and shared noise: the same spec
    gives the same values. For simulations built on a campaign (simulated answers)."""
    rng = np.random.default_rng(spec.seed)
    draws = _campaign_draws(rng, spec)
    return draws, _candidate_draws(rng, spec, draws.n_relevant)


@dataclass(frozen=True)
class _Draws:
    """The campaign-level draws: per topic its relevant count, ease and title; per run
    whether it is manual, its true quality and how it prints scores (offset + scale * score)."""

    n_relevant: np.ndarray
    ease: np.ndarray
    titles: list[str]
    manual: np.ndarray
    quality: np.ndarray
    score_offset: np.ndarray
    score_scale: np.ndarray


def _campaign_draws(rng: np.random.Generator, spec: CampaignSpec) -> _Draws:
    """Topics first (relevant counts, eases, titles), then groups and runs, in this order."""
    n_topics, n_runs = spec.topics, spec.groups * spec.runs_per_group
    cap = min(_REL_MAX, max(1, spec.collection_size // 10))
    n_relevant = np.clip(np.rint(rng.lognormal(math.log(_REL_MEDIAN), _REL_SIGMA, n_topics)),
                         min(_REL_MIN, cap), cap).astype(np.int64)
    ease = np.round(rng.lognormal(0.0, _EASE_SIGMA, n_topics), 4)
    titles = _titles(rng, n_topics)
    group_quality = rng.normal(_GROUP_QUALITY, _GROUP_QUALITY_SD, spec.groups)
    manual = rng.random(n_runs) < _MANUAL_RATE
    quality: np.ndarray = (np.repeat(group_quality, spec.runs_per_group)
                           + rng.normal(0.0, _RUN_QUALITY_SD, n_runs))
    quality = np.round(np.maximum(quality + _MANUAL_BOOST * manual, _MIN_QUALITY), 4)
    score_offset = np.round(rng.uniform(-10.0, 20.0, n_runs), 2)
    score_scale = np.round(rng.uniform(0.5, 4.0, n_runs), 2)
    return _Draws(n_relevant=n_relevant, ease=ease, titles=titles, manual=manual,
                  quality=quality, score_offset=score_offset, score_scale=score_scale)


@dataclass(frozen=True)
class _Candidates:
    """Per topic: its candidates (collection positions, relevant first), their latent grades
    and the noise every system shares on them."""

    candidates: list[np.ndarray]
    grades: list[np.ndarray]
    shared: list[np.ndarray]


def _candidate_draws(rng: np.random.Generator, spec: CampaignSpec,
                     n_relevant: np.ndarray) -> _Candidates:
    """Each topic's candidates, their latent grades and the shared noise, topic by topic."""
    grade_levels = np.arange(1, spec.grades)
    grade_p = 0.5 ** (grade_levels - 1.0)
    grade_p /= grade_p.sum()
    candidates, grades, shared = [], [], []
    for t in range(spec.topics):
        n_rel = int(n_relevant[t])
        n_cand = min(spec.collection_size, n_rel + max(_NONREL_CANDIDATES, 2 * spec.depth))
        candidates.append(rng.choice(spec.collection_size, n_cand, replace=False))
        grade = np.zeros(n_cand, dtype=np.int64)
        grade[:n_rel] = rng.choice(grade_levels, n_rel, p=grade_p)
        grades.append(grade)
        shared.append(_W_SHARED * rng.standard_normal(n_cand))
    return _Candidates(candidates=candidates, grades=grades, shared=shared)


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create the campaign folder {folder}: {exc.strerror or exc}"
        ) from None


def _group_rankings(rng: np.random.Generator, spec: CampaignSpec, draws: _Draws,
                    runs_of: slice, pool: _Candidates,
                    judged: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(retrieved, printed), each (runs, topics, depth): the candidate positions each run of
    one group (``runs_of``) returns per topic in trec_eval's order, and their printed scores
    times ``10**SCORE_DECIMALS``. Draws topic by topic; marks what the group's pooled runs
    return in their top ``pool_depth`` as judged (in ``judged``)."""
    quality, ease, candidates = draws.quality[runs_of], draws.ease, pool.candidates
    per_group, n_topics = len(quality), len(candidates)
    retrieved = np.empty((per_group, n_topics, spec.depth), dtype=np.int64)
    printed = np.empty((per_group, n_topics, spec.depth), dtype=np.int64)
    offset, scale = draws.score_offset[runs_of, None], draws.score_scale[runs_of, None]
    for t in range(n_topics):
        n_cand = len(candidates[t])
        signal = (quality * ease[t]
                  * rng.lognormal(0.0, _TOPIC_INTERACTION_SIGMA, per_group))
        latent = (signal[:, None] * pool.grades[t] + pool.shared[t]
                  + _W_GROUP * rng.standard_normal(n_cand)
                  + _W_OWN * rng.standard_normal((per_group, n_cand)))
        retrieved[:, t], printed[:, t] = _ranked(latent, candidates[t], offset, scale,
                                                 spec.depth)
        judged[t][retrieved[:spec.pooled_runs, t, :spec.pool_depth].ravel()] = True
    return retrieved, printed


def _ranked(latent: np.ndarray, candidates: np.ndarray, offset: np.ndarray, scale: np.ndarray,
            depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's (run's) ``depth`` best candidate positions in trec_eval's order (printed
    score descending, then docno descending) and their printed scores, as ints."""
    top = _top(latent, depth)
    value = np.rint((offset + scale * np.take_along_axis(latent, top, axis=1))
                    * 10**SCORE_DECIMALS).astype(np.int64)
    order = np.lexsort((-candidates[top], -value), axis=-1)  # trec_eval's order
    return np.take_along_axis(top, order, axis=1), np.take_along_axis(value, order, axis=1)


def _write_group(out: Path, g: int, spec: CampaignSpec, draws: _Draws, run_format: _RunFormat,
                 retrieved: np.ndarray, printed: np.ndarray) -> list[SimulatedRun]:
    """Write the run files of group ``g``; its runs."""
    runs = []
    first = g * spec.runs_per_group
    for k in range(spec.runs_per_group):
        name = f"{group_name(g)}-{k + 1}"
        path = out / "runs" / f"{name}.txt"
        _write(path, run_format.render(retrieved[k], printed[k], name))
        runs.append(SimulatedRun(name=name, group=group_name(g), pooled=k < spec.pooled_runs,
                                 type="manual" if draws.manual[first + k] else "automatic",
                                 quality=float(draws.quality[first + k]), path=path))
    return runs


def _simulated_topics(query_ids: list[str], draws: _Draws, pool: _Candidates,
                      judged: list[np.ndarray]) -> tuple[SimulatedTopic, ...]:
    return tuple(
        SimulatedTopic(query_id=query_ids[t], title=draws.titles[t], ease=float(draws.ease[t]),
                       relevant=int(draws.n_relevant[t]), judged=int(judged[t].sum()),
                       relevant_judged=int((judged[t] & (pool.grades[t] > 0)).sum()))
        for t in range(len(query_ids))
    )


def _write(path: Path, data: bytes) -> None:
    try:
        write_file(path, data)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _top(latent: np.ndarray, depth: int) -> np.ndarray:
    """Column indices of each row's ``depth`` largest values (in no particular order)."""
    if depth >= latent.shape[1]:
        return np.broadcast_to(np.arange(latent.shape[1]), latent.shape).copy()
    return np.argpartition(-latent, depth - 1, axis=1)[:, :depth]


def _titles(rng: np.random.Generator, n: int) -> list[str]:
    sizes = (len(_MODIFIERS), len(_SUBJECTS), len(_ASPECTS))
    total = sizes[0] * sizes[1] * sizes[2]
    picks = rng.choice(total, n, replace=n > total)
    a, rest = np.divmod(picks, sizes[1] * sizes[2])
    b, c = np.divmod(rest, sizes[2])
    return [f"{_MODIFIERS[i]} {_SUBJECTS[j]} {_ASPECTS[k]}"
            for i, j, k in zip(a.tolist(), b.tolist(), c.tolist())]


def _topics_text(query_ids: list[str], titles: list[str]) -> str:
    blocks = []
    for qid, title in zip(query_ids, titles):
        modifier, subject, aspect = title.split(" ")
        blocks.append(
            f"<top>\n<num> Number: {qid}\n<title> {title}\n"
            f"<desc> Description:\nIdentify documents that discuss {title}.\n"
            f"<narr> Narrative:\nA relevant document reports on {subject} {aspect} in a "
            f"{modifier} setting: specific cases, policies, or their consequences. Documents "
            f"that mention {subject} without discussing {aspect} are not relevant.\n</top>\n"
        )
    return "\n".join(blocks)


def _qrels_text(query_ids, candidates, grades, judged, width: int) -> str:
    lines = []
    for qid, cand, grade, mask in zip(query_ids, candidates, grades, judged):
        order = np.argsort(cand[mask])  # zero-padded docnos: number order is byte order
        lines += [f"{qid} 0 {DOCNO_PREFIX}{d:0{width}d} {r}\n"
                  for d, r in zip(cand[mask][order].tolist(), grade[mask][order].tolist())]
    return "".join(lines)


def _campaign_json(result: SimulationResult) -> str:
    out = result.out_dir
    doc = {
        "spec": asdict(result.spec),
        "seed": result.spec.seed,
        "files": {
            "topics": result.topics_path.relative_to(out).as_posix(),
            "qrels": result.qrels_path.relative_to(out).as_posix(),
            "documents": "documents.sgml.gz",
        },
        "pool_size": result.pool_size,
        "runs": [
            {"name": r.name, "group": r.group, "pooled": r.pooled, "type": r.type,
             "quality": r.quality, "path": r.path.relative_to(out).as_posix()}
            for r in result.runs
        ],
        "topics": [asdict(t) for t in result.topics],
    }
    return json.dumps(doc, indent=2) + "\n"


SUITES = {"core": ["AP", "nDCG@10", "P@10", "RR", "Rprec", "R@100", "GMAP"],
          "incomplete": ["Bpref", "infAP", "judged@10", "AP(condensed)", "nDCG(condensed)@10"]}


def _campaign_yaml(result: SimulationResult) -> str:
    """A campaign config over the simulated files, paths relative to it: ready for
    ``irbench run OUT/campaign.yaml``."""
    spec, out = result.spec, result.out_dir
    name = re.sub(r"[^A-Za-z0-9_-]", "-", out.resolve().name).strip("-.") or "simulated"
    config = {
        "name": name[:128],
        "collection": {"topics": result.topics_path.relative_to(out).as_posix(),
                       "qrels": {"official": result.qrels_path.relative_to(out).as_posix()},
                       "documents": "documents.sgml.gz",
                       "size": spec.collection_size},
        "systems": [{"name": r.name, "run": r.path.relative_to(out).as_posix(),
                     "group": r.group, "type": r.type, "priority": int(r.name.rsplit("-")[-1]),
                     "pooled": r.pooled} for r in result.runs],
        "suites": {k: list(v) for k, v in SUITES.items()},
        "evaluation": {"topics": "qrels", "relevance_level": 1},
        "report": {"pool_depth": spec.pool_depth},
        "store": "campaign.duckdb",
    }
    head = (f"# Written by 'irbench simulate' (seed {spec.seed}): {len(result.runs)} runs of "
            f"{spec.groups} groups x {spec.topics} topics,\n# qrels from a depth-"
            f"{spec.pool_depth} pool of each group's first {spec.pooled_runs} run(s) "
            "(pooled: true). Run: irbench run campaign.yaml\n")
    return head + yaml.safe_dump(config, sort_keys=False, default_flow_style=None, width=100)


# ---- run files as byte matrices ----------------------------------------------------------
# 6 million lines through f-strings take seconds. A run file is built as one uint8 matrix, one
# row per line, gathered from precomputed digit tables; 0 bytes are padding, dropped at the end.


def _digits(values: np.ndarray, width: int, pad: bool) -> np.ndarray:
    """ASCII digits of non-negative ints in ``width`` columns, one row per value.

    Leading zeros are 0 bytes (padding, dropped when the file is assembled) unless ``pad``.
    """
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    column = values.reshape(-1, 1)
    out = (column // powers % 10 + ord("0")).astype(np.uint8)
    if not pad:
        leading = column < powers
        leading[:, -1] = False
        out[leading] = 0
    return out


class _RunFormat:
    """Byte columns shared by every run file of a campaign, and the rendering of one run."""

    def __init__(self, query_ids: list[str], candidates: list[np.ndarray], depth: int,
                 width: int):
        qid_width = max(len(q) for q in query_ids)
        qids = np.zeros((len(query_ids), qid_width), dtype=np.uint8)
        for t, qid in enumerate(query_ids):
            qids[t, :len(qid)] = np.frombuffer(qid.encode("ascii"), dtype=np.uint8)
        self.qids = np.repeat(qids, depth, axis=0)
        ranks = _digits(np.arange(1, depth + 1), len(str(depth)), pad=False)
        self.ranks = np.tile(ranks, (len(query_ids), 1))
        # docnos of every topic's candidates, one table; a topic's rows start at first[t]
        self.docnos = _digits(np.concatenate(candidates), width, pad=True)
        sizes = np.array([len(c) for c in candidates], dtype=np.int64)
        self.first = (np.cumsum(sizes) - sizes)[:, None]
        self.fractions = _digits(np.arange(10**SCORE_DECIMALS), SCORE_DECIMALS, pad=True)

    def render(self, retrieved: np.ndarray, printed: np.ndarray, tag: str) -> bytes:
        """``qid Q0 docno rank score tag`` lines; both arrays are (topic, rank), ``retrieved``
        holding candidate positions and ``printed`` scores times ``10**SCORE_DECIMALS``."""
        rows = printed.size
        value = printed.ravel()
        whole, frac = np.divmod(np.abs(value), 10**SCORE_DECIMALS)
        wholes = _digits(np.arange(int(whole.max()) + 1), len(str(int(whole.max()))), pad=False)
        sign = np.where(value < 0, ord("-"), 0).astype(np.uint8).reshape(-1, 1)
        matrix = np.concatenate([
            self.qids,
            _text(f" Q0 {DOCNO_PREFIX}", rows),
            self.docnos[(retrieved + self.first).ravel()],
            _text(" ", rows),
            self.ranks,
            _text(" ", rows),
            sign,
            wholes[whole],
            _text(".", rows),
            self.fractions[frac],
            _text(f" {tag}\n", rows),
        ], axis=1)
        return matrix[matrix != 0].tobytes()


def _text(text: str, rows: int) -> np.ndarray:
    return np.broadcast_to(np.frombuffer(text.encode("ascii"), dtype=np.uint8),
                           (rows, len(text)))
