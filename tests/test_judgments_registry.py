"""The judgment-kind registry: every kind read, prepared and evaluated through one protocol,
with the same numbers as the command line (which reproduces trec_eval's golden outputs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import irbench
from irbench import cli, judgments
from irbench.answers import read_answers
from irbench.judgments.known import PreparedKnown
from irbench.measures import REGISTRY, parse_measure
from irbench.measures.base import NEEDS
from irbench.trec import read_qrels

TE = Path(__file__).parent / "data" / "trec_eval_test"
QRELS = str(TE / "qrels.test")
RUN = str(TE / "results.test")
PREFS_RUN = str(TE / "prefs.results.test")
ANSWERS = Path(__file__).parent / "data" / "answers_compare"
ANSWER_RUN = str(ANSWERS / "answers" / "a1.jsonl")

# per kind: a judgments file of that kind from trec_eval's own tests, and a measure it takes
CASES = {
    "adhoc": (QRELS, "map", "AP"),
    "diversity": ("diversity", None, "alpha_nDCG@20"),  # made from qrels.test below
    "qrels_jg": (str(TE / "qrels.123"), "map_avgjg", "AP_avgjg"),
    "prefs": (str(TE / "prefs.test"), "prefs_simp", "prefs_simp"),  # its run: PREFS_RUN
    "qrels_prefs": (QRELS, "prefs_simp", "prefs_simp"),
    # answer judgments (issue 39), scoring an answer run (ANSWER_RUN)
    "support": (str(ANSWERS / "judgments" / "support.jsonl"), "support_precision",
                "support_precision"),
    "support_shared": (str(ANSWERS / "judgments" / "support.jsonl"), "support_recall",
                       "support_recall"),
    "nuggets": (str(ANSWERS / "judgments" / "assign.jsonl"),
                "nugget_score(importance=vital,strict=true)",
                "nugget_score(importance=vital,strict=true)"),
}


def test_every_registered_kind_has_a_case():
    assert set(CASES) == set(judgments.KINDS)


def test_every_measure_need_is_served_by_some_kind():
    served = set().union(*(k.serves for k in judgments.KINDS.values()))
    assert served == set(NEEDS)
    for family in REGISTRY.values():
        assert family.needs in NEEDS


def _cli_values(capsys, kind: judgments.JudgmentKind, path: str, trec_name: str,
                run: str = RUN) -> dict[str, float]:
    assert cli.main(["eval", "-q", "-R", kind.eval_format, "-m", trec_name, path, run]) == 0
    out = {}
    for line in capsys.readouterr().out.splitlines():
        name, topic, value = line.split("\t")
        if name.strip() == trec_name and topic != "all":
            out[topic] = float(value)
    return out


def _diversity_qrels(folder: Path) -> str:
    """qrels.test with each judgment spread over subtopics 1-3 (topic subtopic docno rel)."""
    lines = [line.split() for line in Path(QRELS).read_text().splitlines() if line.strip()]
    path = folder / "diversity.qrels"
    path.write_text("".join(f"{q} {1 + i % 3} {d} {r}\n" for i, (q, _, d, r) in enumerate(lines)))
    return str(path)


@pytest.mark.parametrize("name", sorted(CASES))
def test_evaluate_accepts_every_prepared_kind(name, capsys, tmp_path):
    path, trec_name, measure = CASES[name]
    path = _diversity_qrels(tmp_path) if path == "diversity" else path
    kind = judgments.kind(name)
    prepared = judgments.prepare(name, path)
    assert isinstance(prepared, judgments.Prepared)
    assert len(prepared.adhoc.topics) == len(prepared.topics)
    assert kind.takes(parse_measure(measure))
    run = PREFS_RUN if name == "prefs" else ANSWER_RUN if "answers" in kind.scores and \
        "run" not in kind.scores else RUN
    ev = irbench.evaluate(prepared, read_answers(run) if run == ANSWER_RUN else run, [measure])
    assert ev.topics == tuple(t.decode() for t in prepared.topics)
    assert np.isfinite(ev[measure]).all()
    if trec_name is not None:  # the command line agrees topic by topic
        expected = _cli_values(capsys, kind, path, trec_name, run)
        assert {t: round(v, 4) for t, v in zip(ev.topics, ev[measure])} == expected


def test_evaluate_accepts_known_documents():
    qrels = read_qrels(QRELS)
    prepared = PreparedKnown(qrels, qrels)  # every relevant document already known
    assert isinstance(prepared, judgments.Prepared)
    assert isinstance(judgments.with_known(judgments.prepare("adhoc", QRELS), qrels),
                      PreparedKnown)
    ev = irbench.evaluate(prepared, RUN, ["Coverage", "Novelty", "AP"])
    plain = irbench.evaluate(QRELS, RUN, ["AP"])
    assert np.array_equal(ev["AP"], plain["AP"])
    assert np.all(ev["Novelty"] == 0)  # nothing retrieved is new


def test_an_object_lacking_part_of_the_protocol_is_refused():
    class Ranks:
        def rank(self, run, options=None):
            raise AssertionError("never called")

    with pytest.raises(TypeError, match="lacks topics, adhoc"):
        irbench.evaluate(Ranks(), RUN, ["AP"])


def test_which_kinds_take_which_measures():
    def takers(name):
        return [k.name for k in judgments.serving(parse_measure(name))]

    assert takers("AP") == ["adhoc", "diversity"]
    assert takers("alpha_nDCG@20") == ["diversity"]
    assert takers("Coverage") == ["adhoc"]
    assert takers("map_avgjg") == ["qrels_jg"]
    assert takers("prefs_simp") == ["prefs", "qrels_prefs"]
    assert takers("support_precision") == ["support", "support_shared"]
    assert takers("nugget_score") == ["nuggets"]
    assert takers("answer_words") == ["support", "support_shared", "nuggets"]
    # runid and the other facts of a ranked run: every kind that scores ranked runs
    assert takers("runid") == [k.name for k in judgments.KINDS.values() if "run" in k.scores]


def test_eval_formats_come_from_the_registry():
    assert judgments.eval_formats() == ["qrels", "qrels_jg", "prefs", "qrels_prefs", "support",
                                        "nuggets"]
    assert [k.name for k in judgments.format_kinds("qrels")] == ["adhoc", "diversity"]


def test_a_second_kind_of_the_same_name_is_refused():
    with pytest.raises(ValueError, match="registered twice"):
        judgments.register(judgments.KINDS["adhoc"])
    with pytest.raises(ValueError, match="unknown judgment kind 'nope'"):
        judgments.kind("nope")
