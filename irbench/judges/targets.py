"""What a judge is asked to label: the holes of a qrels set, or a list of pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import FormatError
from ..ids import id_text, ids_text
from ..trec import Qrels, read_source

if TYPE_CHECKING:  # the pooling package imports scipy (0.6 s of irbench judge --pairs)
    from ..pooling.table import RunTable


def text(values: np.ndarray) -> np.ndarray:
    """Ids as str (the readers give bytes), by :func:`irbench.ids.ids_text`: bytes that are
    not UTF-8 as ``\\xNN``, as the store keeps them."""
    return ids_text(values)


def holes(table: RunTable, qrels: Qrels) -> list[tuple[str, str]]:
    """The (topic, document) pairs of ``table`` (its runs cut to the depth wanted, on the
    qrels' topics) that ``qrels`` did not judge, by topic then document: the hole-filling
    design (MacAvaney and Soldaini, 2023)."""
    topics = text(table.topics)[table.cand_topic].astype(str)
    docs = text(table.docs)[table.cand_doc].astype(str)
    keys = np.char.add(np.char.add(topics, "\t"), docs)
    judged = np.char.add(np.char.add(text(qrels.query_id).astype(str), "\t"),
                         text(qrels.doc_id).astype(str))
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
