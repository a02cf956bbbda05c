"""A campaign's inputs as the runner reads them: files hashed (an unchanged file, by size and
mtime, is not read again), the topics, every qrels set checked and prepared on first use, and
the measures each set can take."""

from __future__ import annotations

import hashlib
import json
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import numpy as np

from .. import judgments
from ..config import Config, QrelsSet
from ..errors import FormatError, IrbenchError
from ..measures import Measure
from ..store import FileFacts, QrelsRecord, Store
from ..system import source_of
from ..trec import Loaded, Qrels, display, is_url, read_qrels, read_url
from ..trec.sources import Stream
from .results import Findings

if TYPE_CHECKING:  # read for a config with topics only
    from ..topics import Topics

# ---- hashing -------------------------------------------------------------------------------


def stat_of(path: str) -> tuple[int, int]:
    """(size, mtime in ns) of a file; of an object at a URL, (size, a version token): as the
    path's source (:func:`irbench.system.source_of`) gives them."""
    return source_of(path).stat(path)


def open_stream(path: str) -> AbstractContextManager[Stream]:
    """A binary stream of the file (or object at a URL) at ``path``, from its source."""
    return source_of(path).open(path)


def known_hash(path: str, cache: dict[str, FileFacts], rehash: bool) -> str | None:
    """The file's sha256 from the store's cache if its size and mtime are unchanged."""
    if rehash or path not in cache:
        return None
    try:
        size, mtime = stat_of(path)
    except OSError:
        return None
    cached = cache[path]
    if mtime == 0 and not source_of(path).versioned:  # no version given: read it again
        return None
    return cached.sha256 if (cached.size, cached.mtime_ns) == (size, mtime) else None


def load(path: str) -> tuple[FileFacts, Loaded]:
    """The file at ``path`` (or URL) read whole by its source: its facts (sha256 of its
    bytes) and bytes."""
    source = source_of(path)
    size, mtime = source.stat(path)
    data = source.read(path)
    return FileFacts(path, size, mtime, hashlib.sha256(data).hexdigest()), Loaded(path, data)


# ---- qrels sets ----------------------------------------------------------------------------


class QrelsSets:
    """Qrels sets by name, read and prepared on first use (a rerun with nothing to compute
    never reads them) by the judgments registry; a set of a kind that serves the known
    documents gets them attached when the config has them."""

    def __init__(self, known: Qrels | None = None):
        self.specs: dict[str, QrelsSet] = {}
        self.known = known  # qrels of the documents users already know, or None
        self._prepared: dict[str, judgments.Prepared] = {}

    def add(self, spec: QrelsSet, prepared: judgments.Prepared | None = None) -> None:
        self.specs[spec.name] = spec
        if prepared is not None:
            self._prepared[spec.name] = self._with_known(spec, prepared)

    def _with_known(self, spec: QrelsSet, prepared: judgments.Prepared) -> judgments.Prepared:
        if self.known is None or "known" not in judgments.kind(spec.kind).serves:
            return prepared
        return judgments.with_known(prepared, self.known)

    def __getitem__(self, name: str) -> judgments.Prepared:
        if name not in self._prepared:
            spec = self.specs[name]
            self._prepared[name] = self._with_known(spec, prepare(spec))
        return self._prepared[name]


def prepare(spec: QrelsSet, source: Loaded | None = None,
            weights: Loaded | None = None) -> judgments.Prepared:
    """A qrels set prepared for ranking runs (from ``source``, loaded bytes, if given; a URL
    is read here, as the readers take local paths)."""
    def loaded(path: str) -> Loaded | str:
        return Loaded(path, read_url(path)) if is_url(path) else path

    return judgments.prepare(spec.kind, source or loaded(spec.path), spec.name,
                             weights or (spec.intent_weights and loaded(spec.intent_weights)))


def result_key(sha: str, kind: str, weights_sha: str | None) -> str:
    """What stored results of a qrels set are keyed by: its file's sha256 for ad hoc qrels;
    otherwise the sha256 of that joined with the kind (one file read as qrels and as
    preferences gives different judgments) and the intent weights' sha256."""
    if kind == judgments.DEFAULT_KIND and weights_sha is None:
        return sha
    return hashlib.sha256(f"{sha}+kind:{kind}+intent_weights:{weights_sha or ''}".encode()
                          ).hexdigest()


def options_key(config: Config) -> tuple[str, Qrels | None]:
    """The evaluation options as stored with every result (with the known documents'
    sha256 when the config has them), and the known documents' qrels or None."""
    if config.known is None:
        return config.settings.key(), None
    try:
        facts, data = load(config.known)
    except OSError as exc:
        raise IrbenchError(f"{config.known}: cannot read ({exc.strerror})") from None
    key = json.loads(config.settings.key())
    key["known_sha256"] = facts.sha256
    known = read_qrels(data, name="known")
    return json.dumps(key, sort_keys=True, separators=(",", ":")), known


def listed(items: list[str], shown: int = 5) -> str:
    """'a', 'b' ... and N more."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(f"'{t}'" for t in items[:shown]) + more


def unknown_topics(path: str, query_id: np.ndarray, line: np.ndarray,
                   topic_set: frozenset | None) -> str | None:
    """'PATH:LINE: topics not in the topic set: ...' (the line of the first), or None."""
    if topic_set is None:
        return None
    unknown = [t for t in np.unique(query_id) if display(t) not in topic_set]
    if not unknown:
        return None
    first = int(line[np.argmax(query_id == unknown[0])])
    return (f"{path}:{first}: topics not in the topic set: "
            f"{listed([display(t) for t in unknown])}")


# ---- reading a campaign's inputs -----------------------------------------------------------


class Inputs:
    """The topics, qrels sets and measures of ``config``, read as the store's file facts
    allow; problems go to ``findings``, the facts of every file read to ``new_hashes``."""

    def __init__(self, config: Config, store: Store | None, findings: Findings, rehash: bool,
                 known: Qrels | None = None):
        self.config = config
        self.store = store
        self.findings = findings
        self.rehash = rehash
        self.known = known
        self.new_hashes: list[FileFacts] = []

    def read_topics(self) -> tuple[list[tuple[str, str]], frozenset | None, str, Topics | None]:
        """(topics with their text, the topic set or None, sha256 of the topic file or '',
        the Topics or None)."""
        path = self.config.topics
        if path is None:
            return [], None, "", None
        from ..topics import read_topics  # a config with topics only

        try:
            facts, data = load(path)
            self.new_hashes.append(facts)
            topics = read_topics(data)
        except OSError as exc:
            self.findings.fail("topics", f"{path}: cannot read ({exc.strerror})")
            return [], None, "", None
        except FormatError as exc:
            self.findings.fail("topics", str(exc))
            return [], None, "", None
        return (list(zip(topics.query_id, topics.text)), frozenset(topics.query_id),
                facts.sha256, topics)

    def hash_tables(self) -> None:
        """The run tables' facts (the groups, types and pooled flags of the systems come from
        them), kept in the store for the report's provenance; one that cannot be read now is
        left out (the config read it a moment ago)."""
        for path in self.config.tables:
            try:
                self.new_hashes.append(load(path)[0])
            except OSError:
                continue

    def read_qrels(self, topic_set: frozenset | None, topics_sha: str,
                   cache: dict[str, FileFacts]
                   ) -> tuple[QrelsSets, dict[str, str], list[QrelsRecord]]:
        """Check every qrels set; returns (lazily prepared qrels, result key by usable set,
        records).

        A qrels file (and intent weights file) whose size and mtime are unchanged since it was
        last found usable (with the same topic file) is not read again: its counts come from
        the store. The result key of a set: see :func:`result_key`."""
        stored = self.store.qrels_records() if self.store is not None else {}
        prepared = QrelsSets(self.known)
        shas: dict[str, str] = {}
        records = []
        level = self.config.settings.relevance_level
        for spec in self.config.qrels:
            sha = known_hash(spec.path, cache, self.rehash)
            weights_sha = (known_hash(spec.intent_weights, cache, self.rehash)
                           if spec.intent_weights else None)
            prev = stored.get(spec.name)
            if (sha is not None and (weights_sha is not None or not spec.intent_weights)
                    and prev is not None and prev["status"] == "ok"
                    and (prev["path"], prev["sha256"], prev["topics_sha256"], prev["kind"],
                         prev["intent_weights_sha256"])
                    == (spec.path, sha, topics_sha, spec.kind, weights_sha)):
                level_counts, topics = list(prev["level_counts"]), list(prev["topics"])
                prepared.add(spec)
            else:
                loaded = self._read_one_qrels(spec, topic_set)
                if loaded is None:
                    records.append(QrelsRecord(name=spec.name, path=spec.path, kind=spec.kind,
                                               intent_weights=spec.intent_weights))
                    continue
                sha, weights_sha, prep = loaded
                prepared.add(spec, prep)
                level_counts = prep.adhoc.level_counts.sum(axis=0).tolist()
                topics = [display(t) for t in prep.topics]
            levels = [i for i, n in enumerate(level_counts) if n]
            record = QrelsRecord(
                name=spec.name, path=spec.path, kind=spec.kind,
                intent_weights=spec.intent_weights, sha256=sha,
                intent_weights_sha256=weights_sha, num_topics=len(topics),
                num_judged=int(sum(level_counts)), num_relevant=int(sum(level_counts[level:])),
                max_level=max(levels) if levels else 0, level_counts=level_counts,
                topics=topics, topics_sha256=topics_sha)
            records.append(record)
            if record.num_relevant == 0 and "run" in judgments.kind(spec.kind).scores:
                # (answer judgments: labels of citations or nuggets, not relevance levels)
                self.findings.fail(f"qrels '{spec.name}'", f"{spec.path}: no judgment reaches "
                                   f"relevance level {level}")
                continue
            shas[spec.name] = result_key(sha, spec.kind, weights_sha)
        return prepared, shas, records

    def _read_one_qrels(self, spec: QrelsSet, topic_set: frozenset | None
                        ) -> tuple[str, str | None, judgments.Prepared] | None:
        """(sha256, intent weights' sha256 or None, prepared qrels), or None on a failure."""
        subject = f"qrels '{spec.name}'"
        try:
            facts, data = load(spec.path)
            weights_facts = weights = None
            if spec.intent_weights:
                weights_facts, weights = load(spec.intent_weights)
            prep = prepare(spec, data, weights)
        except OSError as exc:
            self.findings.fail(subject, f"{exc.filename or spec.path}: cannot read "
                               f"({exc.strerror})")
            return None
        except FormatError as exc:
            self.findings.fail(subject, str(exc))
            return None
        self.new_hashes.append(facts)
        if weights_facts is not None:
            self.new_hashes.append(weights_facts)
        # what the reader of answer judgments accepted with a warning (FILE:LINE: ...)
        self.findings.warnings.extend(f"{subject}: {w}" for w in getattr(prep, "warnings", ()))
        qrels = prep.qrels
        stray = unknown_topics(spec.path, qrels.query_id, qrels.line, topic_set)
        if stray is not None:
            self.findings.fail(subject, stray)
            return None
        weights_sha = weights_facts.sha256 if weights_facts is not None else None
        return facts.sha256, weights_sha, prep

    def measures_for(self, records: list[QrelsRecord], shas: dict[str, str]
                     ) -> dict[str, tuple[Measure, ...]]:
        """The measures each usable qrels set can take (see Family.level_problem, which
        ``irbench eval`` asks too); diversity measures are taken by diversity sets only,
        Coverage and Novelty (which need the known documents) by ad hoc sets only."""
        out = {}
        specs = {spec.name: spec for spec in self.config.qrels}
        for record in records:
            if record.name not in shas:
                continue
            usable = []
            for m in specs[record.name].measures(self.config.measures):
                problem = m.definition.level_problem(m, record.max_level or 0)
                if problem is not None and problem.fatal:
                    self.findings.fail(f"qrels '{record.name}', measure {m}",
                                       f"{record.path}: {problem.text}")
                    continue
                if problem is not None:
                    self.findings.warnings.append(f"qrels '{record.name}': {record.path}: "
                                                  f"{problem.text}")
                usable.append(m)
            out[record.name] = tuple(usable)
        return out
