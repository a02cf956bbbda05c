"""What a judge is asked to label: the documents of a stored pool, the holes of a qrels set,
or a list of pairs.

Each kind of targets is a small value (:class:`PoolTargets`, :class:`HoleTargets`,
:class:`PairTargets`) whose ``pairs(config, store)`` gives the (topic, document) pairs to
judge and the pool they are asked for ("" for none). The run table they need is the config's
(:meth:`irbench.config.Config.run_table`): a pool being judged numbers its candidates over
every system, so a missing run file is refused there; the holes of a qrels set are what the
runs present retrieved, so a missing run is left out there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..errors import FormatError, JudgeError
from ..ids import id_text, ids_text
from ..trec import Qrels, read_source

if TYPE_CHECKING:  # the pooling package imports scipy (0.6 s of irbench judge --pairs)
    from ..pooling.table import RunTable

Pairs = list[tuple[str, str]]


class PoolSource(Protocol):
    """What targets need of a store (the :class:`irbench.store.Store` has it)."""

    def pool_documents(self, pool: str) -> tuple[list[str], list[str]] | None: ...

    def load_pool(self, name: str) -> tuple[str, bytes] | None: ...


@dataclass(frozen=True)
class PoolTargets:
    """The documents of the pool ``name``: built (``irbench pool build --name``), or being
    judged (``irbench pool start``: its planned documents, or those an adaptive strategy has
    handed out so far)."""

    name: str

    def pairs(self, config: Any, store: PoolSource) -> tuple[Pairs, str]:
        from ..pooling import load_state

        found = store.pool_documents(self.name)
        if found is not None:
            return list(zip(*found)), self.name
        state = (None if store.load_pool(self.name) is None else
                 load_state(store, self.name, config.run_table()))
        if state is None:
            raise JudgeError(f"no pool '{self.name}' in {config.store} (irbench pool build "
                             f"--name, or irbench pool start)")
        return state.model_targets(), self.name


@dataclass(frozen=True)
class HoleTargets:
    """The documents of the top ``depth`` of every run (on the set's topics) that the qrels
    set ``qrels`` did not judge."""

    qrels: str
    depth: int = 10

    def pairs(self, config: Any, store: Any) -> tuple[Pairs, str]:
        qrels = config.qrels_set(self.qrels).read()
        table = config.run_table("drop", topics=sorted(set(qrels.query_id.tolist())),
                                 depth=self.depth)
        return holes(table, qrels), ""


@dataclass(frozen=True)
class PairTargets:
    """The pairs of a file of ``topic docno`` lines (:func:`read_pairs`)."""

    source: str | os.PathLike

    def pairs(self, config: Any, store: Any) -> tuple[Pairs, str]:
        return read_pairs(self.source), ""


Targets = PoolTargets | HoleTargets | PairTargets


def holes(table: RunTable, qrels: Qrels) -> list[tuple[str, str]]:
    """The (topic, document) pairs of ``table`` (its runs cut to the depth wanted, on the
    qrels' topics) that ``qrels`` did not judge, by topic then document: the hole-filling
    design (MacAvaney and Soldaini, 2023)."""
    topics = ids_text(table.topics)[table.cand_topic].astype(str)
    docs = ids_text(table.docs)[table.cand_doc].astype(str)
    keys = np.char.add(np.char.add(topics, "\t"), docs)
    judged = np.char.add(np.char.add(ids_text(qrels.query_id).astype(str), "\t"),
                         ids_text(qrels.doc_id).astype(str))
    keep = ~np.isin(keys, judged)
    order = np.lexsort((docs[keep], topics[keep]))
    return list(zip(topics[keep][order].tolist(), docs[keep][order].tolist()))


def read_pairs(source) -> list[tuple[str, str]]:
    """(topic, document) pairs from a file of ``topic docno`` lines, or of qrels-like
    ``topic 0 docno [label]`` lines; ``#`` comments and blank lines are skipped. A line of
    another shape is a :class:`FormatError` naming it (all such lines at once)."""
    path, data = read_source(source)
    pairs, problems = [], []
    for number, raw in enumerate(data.decode("utf-8", "surrogateescape").splitlines(), 1):
        fields = [id_text(f) for f in raw.split()]  # as the store keeps ids
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) == 2:
            pairs.append((fields[0], fields[1]))
        elif len(fields) in (3, 4):
            pairs.append((fields[0], fields[2]))
        else:
            problems.append(f"{path}:{number}: expected 'topic docno' or 'topic 0 docno "
                            f"[label]', found {len(fields)} fields")
    if problems:
        raise FormatError(problems)
    if not pairs:
        raise FormatError([f"{path}:1: no (topic, docno) pairs"])
    return list(dict.fromkeys(pairs))
