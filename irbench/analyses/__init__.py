"""The analyses stage: what a report shows beside the scores, computed from the run files by
``irbench run`` (or ``irbench analyse``) and stored; the report only reads them.

Two experiments need the runs themselves, not only their scores:

- ``judgment-reduction`` (reduction.py): how each measure ranks the systems when each topic
  keeps only part of its judgments, with ``report.reduction_design``.
- ``leave-one-group-out`` (pool bias): each group's runs re-scored without the documents only
  that group contributed to the depth ``report.pool_depth`` pool.

``irbench run`` computes the ones the config's ``report:`` asks for (``reduction_design``,
``pool_depth``) after scoring, and ``irbench analyse`` computes them on demand (the reduction
with its default design when the config names none). Each is stored with its parameters under
a key of the content of its inputs: the sha256 of every run shown on the first qrels set (as
``irbench run`` scored it), of that qrels set, the evaluation options, the parameters and the
irbench version. The store keeps one analysis per kind. The report computes the key from the
store alone and shows an analysis only when it matches; any other was made from other inputs
(stale) and is never shown as current. The report never reads a run file.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass

from .. import __version__, judgments
from ..config import pooled_systems, priority_order
from ..errors import AnalysisError, EvaluationError
from ..system import System, run_of
from ..trec import Loaded, is_url, read_url

REDUCTION, POOL_BIAS = "judgment-reduction", "leave-one-group-out"
QRELS_AGREEMENT = "qrels-agreement"
DEFAULT_DESIGN = "buckley-voorhees"  # reduction.DEFAULT_DESIGN (that module imports scipy)


@dataclass(frozen=True)
class Spec:
    """One analysis of a campaign as the store's inputs and the config define it now."""

    kind: str
    params: dict        # what the analysis is computed with (stored beside it)
    key: str            # sha256 of the inputs' content and the parameters
    systems: tuple      # (name, run path, sha256) of the runs it reads, in name order


def _key(kind: str, params: dict, systems, qrels_sha: str, options: str) -> str:
    return hashlib.sha256(json.dumps({
        "kind": kind, "params": params, "runs": [[n, s] for n, _, s in systems],
        "qrels": qrels_sha, "options": options, "version": __version__,
    }, sort_keys=True).encode()).hexdigest()


def reduction_spec(config, store, design: str | None = None) -> Spec | None:
    """The judgment-reduction experiment on the first qrels set with ``design`` (default: the
    config's ``report.reduction_design``, else the default design); None under 2 systems."""
    if not config.qrels:
        return None
    systems = tuple(store.shown_systems(config.qrels[0].name))
    if len(systems) < 2:
        return None
    from .reduction import FRACTIONS, MEASURES, SEEDS

    params = {"design": design or config.report.reduction_design or DEFAULT_DESIGN,
              "fractions": list(FRACTIONS), "seeds": list(SEEDS), "measures": list(MEASURES)}
    return Spec(REDUCTION, params, _key(REDUCTION, params, systems,
                                        store.qrels_hash(config.qrels[0].name),
                                        config.settings.key()), systems)


def pool_bias_spec(config, store) -> Spec | None:
    """Leave-one-group-out on the first qrels set, when ``report.pool_depth`` is set. The pool
    is rebuilt from the systems the config declares ``pooled: true`` (when any declares
    ``pooled``), else each group's first ``pooled_per_group`` runs by priority, else every
    run."""
    depth = config.report.pool_depth
    if depth is None or not config.qrels:
        return None
    shown = {name: (name, path, sha) for name, path, sha in
             store.shown_systems(config.qrels[0].name)}
    systems = store.declared_systems()  # as the run declared them: the report needs no runs
    ordered = [s for s in priority_order(systems) if s.name in shown]
    if not ordered:
        return None
    declared = pooled_systems(systems)
    params = {"depth": int(depth), "declared": list(declared) if declared is not None else None,
              "per_group": None if declared is not None else
              config.report.pooled_per_group,
              "relevance_level": config.settings.relevance_level,
              "order": [[s.name, s.group or s.name] for s in ordered]}
    systems = tuple(shown[s.name] for s in ordered)
    return Spec(POOL_BIAS, params, _key(POOL_BIAS, params, sorted(systems),
                                        store.qrels_hash(config.qrels[0].name),
                                        config.settings.key()), systems)


def qrels_agreement_spec(config, store) -> Spec | None:
    """The agreement of each other ad hoc qrels set's labels with the first's, when the
    campaign has two or more (and the store has scored them)."""
    sets = [q for q in config.qrels if q.kind == judgments.DEFAULT_KIND]
    records = store.qrels_records()
    if len(sets) < 2 or not all(records.get(q.name, {}).get("status") == "ok" for q in sets):
        return None  # a set that failed at the last run has no labels the store vouches for
    hashes = [store.qrels_hash(q.name) for q in sets]
    params = {"sets": [q.name for q in sets],
              "relevance_level": config.settings.relevance_level}
    return Spec(QRELS_AGREEMENT, params, _key(QRELS_AGREEMENT, params, (), json.dumps(hashes),
                                              config.settings.key()), ())


def specs(config, store, every: bool = False) -> list[Spec]:
    """The analyses ``config`` asks for (``every``: the reduction even when it names no
    design, as ``irbench analyse`` computes it)."""
    wanted = []
    if every or config.report.reduction_design is not None:
        wanted.append(reduction_spec(config, store))
    wanted.append(pool_bias_spec(config, store))
    wanted.append(qrels_agreement_spec(config, store))
    return [s for s in wanted if s is not None]


def load(store, spec: Spec) -> dict | None:
    """The stored result of ``spec`` when it was computed from exactly these inputs."""
    saved = store.load_analysis(spec.key)
    return None if saved is None else json.loads(saved)


def stale(store, spec: Spec) -> bool:
    """Whether the store holds an analysis of this kind made from other inputs."""
    return spec.kind in store.analysis_kinds() and store.load_analysis(spec.key) is None


def compute_missing(config, store, every: bool = False,
                    progress: Callable[[int, int, str], None] | None = None) -> list[str]:
    """Compute and store each analysis of :func:`specs` whose stored result is missing or
    stale; returns the kinds computed. The runs are read once and must be the ones the store
    scored (same sha256), else :class:`AnalysisError`, as for a report section with
    problems."""
    if config.report.problems:
        raise AnalysisError("\n".join(config.report.problems))
    todo = [s for s in specs(config, store, every) if load(store, s) is None]
    if not todo:
        return []
    names = sorted({name for s in todo for name, _, _ in s.systems})
    paths = {name: (path, sha) for s in todo for name, path, sha in s.systems}
    declared = {s.name: s for s in config.systems}
    runs = {}
    for i, name in enumerate(names, 1):
        if progress is not None:
            progress(i, len(names), f"reading {name}")
        path, sha = paths[name]
        runs[name] = _read_scored(declared.get(name, System(name, path)), sha)
    qrels = _read_scored_qrels(config, store)
    for spec in todo:
        result = (_reduction(config, spec, runs, qrels, progress) if spec.kind == REDUCTION
                  else _pool_bias(config, spec, runs, qrels, progress)
                  if spec.kind == POOL_BIAS else _qrels_agreement(config, store, spec))
        store.save_analysis(spec.key, spec.kind, json.dumps(result),
                            json.dumps(spec.params, sort_keys=True))
    return [s.kind for s in todo]


def _read_verified(path: str, sha: str, what: str) -> Loaded:
    try:
        if is_url(path):
            data = read_url(path)
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        raise AnalysisError(f"{path}: cannot read {what} for the report's analyses "
                            f"({exc.strerror})") from None
    if hashlib.sha256(data).hexdigest() != sha:
        raise AnalysisError(f"{path}: {what} changed since 'irbench run' scored it; run "
                            "'irbench run CONFIG' again first")
    return Loaded(path, data)


def _read_scored(system: System, sha: str):
    return run_of(system, _read_verified(system.path, sha,
                                         f"the run of system '{system.name}'"))


def _read_scored_qrels(config, store, index: int = 0):
    """A qrels set's (the first's) ad hoc judgments, once its file is checked to be the one
    scored."""
    spec = config.qrels[index]
    data = _read_verified(spec.path, store.qrels_hash(spec.name), f"qrels '{spec.name}'")
    return judgments.kind(spec.kind).read_adhoc(data, name=spec.name)


def _qrels_agreement(config, store, spec: Spec) -> dict:
    """{"sets": [{"name", "pairs", "only_reference", "only_other", "agreed", "kappa",
    "kappa_linear", "kappa_quadratic", "kappa_binary", "alpha_ordinal"}]} of each other set
    against the first (NaN as None; pairs 0 when none were judged by both)."""
    from ..judgments.agreement import agreement  # here: 8 ms of every irbench run's start-up

    index = {q.name: i for i, q in enumerate(config.qrels)}
    read = [_read_scored_qrels(config, store, index[name]) for name in spec.params["sets"]]
    out = []
    for other in read[1:]:
        try:
            a = agreement(read[0], other, spec.params["relevance_level"])
        except EvaluationError:
            out.append({"name": other.name, "pairs": 0})
            continue
        out.append({"name": other.name, "pairs": a.pairs, "only_reference": a.only_reference,
                    "only_other": a.only_other, **{
                        k: None if math.isnan(v) else v for k, v in (
                            ("agreed", a.agreed), ("kappa", a.kappa),
                            ("kappa_linear", a.kappa_linear),
                            ("kappa_quadratic", a.kappa_quadratic),
                            ("kappa_binary", a.kappa_binary),
                            ("alpha_ordinal", a.alpha_ordinal))}})
    return {"sets": out}


def _reduction(config, spec: Spec, runs: dict, qrels, progress) -> dict:
    from .reduction import judgment_reduction

    result = judgment_reduction([runs[name] for name, _, _ in spec.systems], qrels,
                                config.settings.options(), design=spec.params["design"],
                                progress=progress)
    return result.to_json()


def _pool_bias(config, spec: Spec, runs: dict, qrels, progress) -> dict:
    from ..pooling import build_pool, build_table, contributing_runs, leave_one_out, pool_coverage

    params = spec.params
    if progress is not None:
        progress(1, 1, "pool bias")
    table = build_table([(name, group, runs[name]) for name, group in params["order"]])
    declared = params["declared"]
    contributing = contributing_runs(
        table, [n for n in declared if n in table.runs] if declared is not None else None,
        per_group=params["per_group"])
    pool = build_pool(table, "depth", contributing=contributing, k=params["depth"])
    coverage = pool_coverage(pool, qrels)
    result = leave_one_out(table, qrels, pool, by="group", measures=("AP",),
                           relevance_level=params["relevance_level"])
    return {"runs": list(result.runs), "unit": list(result.unit),
            "removed": result.removed.tolist(),
            "removed_relevant": result.removed_relevant.tolist(),
            "full": result.full[0].tolist(), "reduced": result.reduced[0].tolist(),
            "pooled": int(contributing.sum()),
            "coverage": [coverage.judged, coverage.covered, coverage.pooled,
                         coverage.unjudged]}
