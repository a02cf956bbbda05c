"""Support labels from the store written as NIST's support JSONL: ``irbench qrels --support``.

The store's support labels (``answer_labels``, task ``support``: :meth:`irbench.store.Store.
answer_label_columns`) are combined per unit by a qrels rule (:func:`irbench.judgments.rules.
combine`: each judge's latest label, then the rule across judges), and written so that a qrels
set ``{path: FILE, kind: support_shared}`` gives every run its labels:

* a label made for a unit shared by every run, (topic, sentence text, segment), goes into one
  object per topic whose ``run_id`` is :data:`SHARED_RUN`, each sentence text once with the
  segments it cites and their labels; ``support_shared`` keys labels by (topic, sentence text,
  reference), whichever object holds them;
* a label made for one run's sentence (a judge that saw the whole answer) goes into that run's
  object for the topic, at the sentence's position (earlier positions without a label hold
  their text when a label names it, else an empty text without citations), so that the file
  also scores as ``kind: support`` (keyed by run and position).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..judgments import combine

SHARED_RUN = "support-shared"  # the run id of the objects of labels every run shares


@dataclass(frozen=True)
class SupportMade:
    """The file's text, and what it holds: labels, topics."""

    text: str
    labels: int
    topics: int


def support_made(columns: dict[str, np.ndarray], rule_name: str, order: Sequence[str] = ()
                 ) -> SupportMade:
    """NIST's JSONL of the labels ``columns`` (as :meth:`Store.answer_label_columns` gives
    them) by ``rule_name`` (see the module docstring)."""
    units: dict[tuple, int] = {}
    keys = [(r, s, t, ref) if r is not None else (None, None, t, ref) for r, s, t, ref in zip(
        columns["run_id"].tolist(), columns["sentence"].tolist(),
        columns["sentence_text"].tolist(), columns["reference"].tolist())]
    code = np.array([str(units.setdefault(k, len(units))) for k in keys], dtype=object)
    q, d, label = combine({"query_id": columns["query_id"], "doc_id": code,
                           "relevance": columns["label"].astype(np.int64),
                           "judge": columns["judge"], "judge_kind": columns["judge_kind"],
                           "position": columns["position"].astype(np.int64)},
                          rule_name, order)
    unit_of = list(units)
    objects: dict[tuple[str, str], dict[int | str, list]] = {}
    for topic, unit, value in zip(q.tolist(), d.tolist(), label.tolist()):
        run, position, text, ref = unit_of[int(unit)]
        sentences = objects.setdefault((topic, run or SHARED_RUN), {})
        slot = position if run is not None else text
        sentences.setdefault(slot, [text, []])[1].append({"reference": ref,
                                                          "support": int(value)})
    lines = []
    for (topic, run), sentences in sorted(objects.items()):
        if run == SHARED_RUN:
            listed = [sentences[t] for t in sorted(sentences, key=lambda t: str(t))]
        else:
            last = max(int(p) for p in sentences)
            listed = [sentences.get(p, ["", []]) for p in range(last + 1)]
        lines.append(_line({"topic_id": topic, "run_id": run, "sentences": [
            {"text": text, "citations": cited} for text, cited in listed]}))
    return SupportMade(text="".join(lines), labels=len(q), topics=len({t for t, _ in objects}))


def _line(value: dict) -> str:
    """One JSON line, UTF-8 as it is; escaped where a text holds lone surrogates."""
    try:
        text = json.dumps(value, ensure_ascii=False)
        text.encode("utf-8")
        return text + "\n"
    except UnicodeEncodeError:
        return json.dumps(value) + "\n"
