"""The config's seams (issue 36): ``Config.run_table`` and ``Config.qrels_set``, used by every
command; and the registries the next kinds grow from (qrels rules, collections, run sources),
each shown taking a new member with one ``register`` call."""

from __future__ import annotations

import contextlib
import hashlib
import io
from pathlib import Path

import numpy as np
import pytest
from campaigns import make_campaign

from irbench.config import load_config
from irbench.errors import ConfigError, FormatError, MissingRunsError, UnknownQrelsSetError
from irbench.pooling import build_table


def _with_missing_run(root: Path) -> Path:
    """A campaign of 3 runs and a 4th system whose run file is missing."""
    config = make_campaign(root, systems=3)
    text = config.read_text().replace("  - glob: ../runs/r*.txt\n",
                                      "  - glob: ../runs/r*.txt\n"
                                      "  - {name: gone, run: ../runs/gone.txt, group: g}\n")
    config.write_text(text)
    return config


# ---- Config.run_table ------------------------------------------------------------------------


def test_run_table_is_the_table_the_commands_built(tmp_path):
    config = load_config(make_campaign(tmp_path, systems=3))
    table = config.run_table()
    by_hand = build_table([(s.name, s.group or s.name, s.path) for s in config.systems])
    assert table.runs == by_hand.runs == ("r00", "r01", "r02")
    for column in ("topics", "docs", "run", "topic", "rank", "doc", "cand"):
        assert np.array_equal(getattr(table, column), getattr(by_hand, column)), column


def test_run_table_in_priority_order_with_topics_and_depth(tmp_path):
    config_path = make_campaign(tmp_path, systems=3)
    config_path.write_text(config_path.read_text().replace(
        "  - glob: ../runs/r*.txt\n",
        "  - {name: b, run: ../runs/r00.txt, group: g, priority: 2}\n"
        "  - {name: a, run: ../runs/r01.txt, group: g, priority: 1}\n"))
    config = load_config(config_path)
    assert config.run_table().runs == ("a", "b")
    table = config.run_table(topics=["t01", "t02"], depth=5)
    assert [t.decode() for t in table.topics] == ["t01", "t02"]
    assert int(table.rank.max()) == 5


def test_run_table_refuses_or_drops_a_missing_run(tmp_path):
    config = load_config(_with_missing_run(tmp_path), strict=False)
    with pytest.raises(MissingRunsError) as caught:
        config.run_table()
    # the message the pool command and the desk gave, at the config line of the system
    assert str(caught.value).startswith("run files missing: ")
    assert "c.yaml:6: systems[1].run: no such file '../runs/gone.txt'" in str(caught.value)
    assert caught.value.exit_code == 1 and isinstance(caught.value, ConfigError)
    assert config.run_table(missing="drop").runs == ("r00", "r01", "r02")
    with pytest.raises(ValueError, match="refuse, drop"):
        config.run_table(missing="skip")


def test_run_table_of_a_damaged_run_names_its_line(tmp_path):
    config_path = make_campaign(tmp_path, systems=2)
    (tmp_path / "runs" / "r01.txt").write_text("t01 Q0 d1 1 1.0\n")
    with pytest.raises(FormatError, match=r"r01\.txt:1: "):
        load_config(config_path).run_table()


# ---- Config.qrels_set ------------------------------------------------------------------------


def test_qrels_set_by_name_first_by_default(tmp_path):
    config = load_config(make_campaign(tmp_path))
    assert config.qrels_set().name == "official"
    assert config.qrels_set("shallow").path.endswith("shallow.txt")
    assert config.qrels_set("shallow") is config.qrels[1]


def test_qrels_set_unknown_names_the_close_match(tmp_path):
    config = load_config(make_campaign(tmp_path))
    with pytest.raises(UnknownQrelsSetError) as caught:
        config.qrels_set("shalow")
    text = str(caught.value)
    assert text == (f"no qrels set 'shalow' in {config.path} (it has official, shallow; "
                    "did you mean 'shallow'?)")
    assert isinstance(caught.value, ConfigError) and caught.value.exit_code == 1
    with pytest.raises(UnknownQrelsSetError, match=r"\(it has official, shallow\)$"):
        config.qrels_set("zzz")


# ---- qrels rules: a registry ---------------------------------------------------------------


def _judgments(rows):
    q, d, r, j, k = (np.array(c, dtype=object) for c in zip(*rows))
    return {"query_id": q, "doc_id": d, "relevance": r.astype(np.int64), "judge": j,
            "judge_kind": k, "position": np.arange(len(rows))}


ROWS = [("1", "a", 2, "ann", "human"), ("1", "a", 0, "llm", "model"),
        ("1", "a", 1, "bob", "human"), ("2", "c", 3, "ann", "human"),
        ("2", "c", 1, "llm", "model")]


@pytest.fixture
def toy_rule():
    """A rule registered by the test (the second-highest label, else the only one), taken
    out again afterwards."""
    from irbench.judgments import rules

    def second_highest(labels: rules.Labels) -> np.ndarray:
        order = np.lexsort((-labels.label, labels.pair))
        pair, label = labels.pair[order], labels.label[order]
        starts = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
        counts = np.diff(np.r_[starts, len(pair)])
        return label[starts + np.minimum(counts - 1, 1)]

    rule = rules.register(rules.Rule("second", "the second-highest label", second_highest))
    yield rule
    del rules.REGISTRY["second"]


def test_a_new_rule_is_one_function_and_one_register_call(toy_rule):
    from irbench.judgments.rules import RULES, combine, rules_phrase

    assert list(RULES)[-1] == "second"  # RULES is the registry's, not a copy
    q, d, r = combine(_judgments(ROWS), "second")
    assert dict(zip(zip(q, d), r.tolist())) == {("1", "a"): 1, ("2", "c"): 1}
    assert rules_phrase().endswith("max, min or second (the second-highest label)")


def test_the_rules_give_the_labels_they_gave():
    from irbench.judgments.rules import RULES, combine, rules_phrase

    assert tuple(RULES) == ("majority", "pool", "first", "human-first", "max", "min")
    expected = {"majority": [0, 1], "pool": [2, 3], "first": [1, 1], "human-first": [1, 3],
                "max": [2, 3], "min": [0, 1]}
    for name, labels in expected.items():
        assert combine(_judgments(ROWS), name, ["bob", "llm"])[2].tolist() == labels, name
    assert rules_phrase() == ("majority (ties to the lower label), pool (the first person's "
                              "latest label, as irbench assess keeps it; the default with "
                              "--pool of a pool being judged), first (the first --judge "
                              "given that judged it), human-first (people's majority where "
                              "any judged it, else the models'), max or min")


def test_a_rule_registered_twice_fails_loudly(toy_rule):
    from irbench.judgments.rules import Rule, combine, register

    with pytest.raises(ValueError, match="qrels rule 'majority' registered twice"):
        register(Rule("majority", "", toy_rule.choose))
    with pytest.raises(ValueError, match="no rule 'majorty' .*did you mean majority"):
        combine(_judgments(ROWS), "majorty")


# ---- collections -----------------------------------------------------------------------------


def test_the_config_holds_one_collection_and_reads_it_as_before(tmp_path):
    from irbench.config import DEFAULT_COLLECTION, Collection

    config_path = make_campaign(tmp_path)
    config = load_config(config_path)
    (collection,) = config.collections
    assert isinstance(collection, Collection) and collection.name == DEFAULT_COLLECTION
    assert config.collection() is config.collection("default") is collection
    assert config.topics == collection.topics == str(tmp_path / "runs" / "topics.tsv")
    assert config.qrels is collection.qrels and [q.name for q in config.qrels] == [
        "official", "shallow"]
    assert config.known is None and config.documents is None
    with pytest.raises(ConfigError, match=r"no collection 'robust' in .*c\.yaml \(it has "
                                          r"default\)"):
        config.collection("robust")


def test_a_second_collection_is_one_more_value(tmp_path):
    """What a config of two collections will hold: the commands ask for one by name and the
    default stays the first."""
    import dataclasses

    from irbench.config import Collection, QrelsSet

    config = load_config(make_campaign(tmp_path))
    other = Collection(name="robust", topics=None,
                       qrels=(QrelsSet("deep", str(tmp_path / "runs" / "qrels.txt")),))
    both = dataclasses.replace(config, collections=(*config.collections, other))
    assert both.collection("robust").qrels[0].name == "deep"
    assert both.qrels == config.qrels  # the commands of today read the first
    assert both.collection("robust").qrels[0].read().query_id.size > 0


# ---- run sources: a registry ---------------------------------------------------------------


class MemoryObjects:
    """A toy source of runs, ``mem://NAME``: objects held in a dict (what a source of runs
    produced by a command, or fetched from a service, would look like to irbench)."""

    def __init__(self):
        self.objects: dict[str, bytes] = {}
        self.asked: list[tuple[str, str]] = []

    def claims(self, path: str) -> bool:
        return path.startswith("mem://")

    def stat(self, path: str) -> tuple[int, int]:
        self.asked.append(("stat", path))
        data = self._get(path)
        return len(data), int.from_bytes(hashlib.sha256(data).digest()[:7], "big")

    def read(self, path: str) -> bytes:
        self.asked.append(("read", path))
        return self._get(path)

    @contextlib.contextmanager
    def open(self, path: str):
        self.asked.append(("open", path))
        yield io.BytesIO(self._get(path))

    def _get(self, path: str) -> bytes:
        try:
            return self.objects[path[len("mem://"):]]
        except KeyError:
            raise FileNotFoundError(2, "no such object", path) from None


@pytest.fixture
def memory_source():
    from irbench import system

    objects = MemoryObjects()
    system.register_source(system.RunSource(name="memory", claims=objects.claims,
                                            stat=objects.stat, read=objects.read,
                                            open=objects.open))
    yield objects
    del system.SOURCES["memory"]


def test_the_sources_of_today(tmp_path):
    from irbench.system import SOURCES, source_of

    assert list(SOURCES) == ["file", "url"]
    assert source_of(str(tmp_path / "r.txt")).name == "file"
    assert source_of("s3://bucket/r.txt").name == "url"
    assert source_of("https://example.org/r.txt").name == "url"
    assert source_of("s3://b/r").versioned is False and source_of("r").versioned is True


def test_a_source_registered_twice_fails_loudly(memory_source):
    from irbench.system import SOURCES, RunSource, register_source

    with pytest.raises(ValueError, match="run source 'file' registered twice"):
        register_source(RunSource(name="file", claims=memory_source.claims,
                                  stat=memory_source.stat, read=memory_source.read,
                                  open=memory_source.open))
    assert list(SOURCES) == ["file", "url", "memory"]


def _memory_campaign(tmp_path: Path, objects: MemoryObjects) -> Path:
    """The campaign of make_campaign with its runs given as mem:// objects."""
    config = make_campaign(tmp_path, systems=3)
    runs = tmp_path / "runs"
    for i in range(3):
        objects.objects[f"r{i:02d}.txt"] = (runs / f"r{i:02d}.txt").read_bytes()
    config.write_text(config.read_text().replace(
        "  - glob: ../runs/r*.txt\n",
        "".join(f"  - {{name: r{i:02d}, run: 'mem://r{i:02d}.txt'}}\n" for i in range(3))))
    return config


def test_a_new_source_feeds_the_pooling_run_table(tmp_path, memory_source):
    local = load_config(make_campaign(tmp_path / "local", systems=3)).run_table()
    config = load_config(_memory_campaign(tmp_path / "memory", memory_source))
    assert [s.path for s in config.systems] == [f"mem://r{i:02d}.txt" for i in range(3)]
    table = config.run_table()
    assert [a for a in memory_source.asked if a[0] == "read"] == [
        ("read", f"mem://r{i:02d}.txt") for i in range(3)]
    assert table.runs == local.runs
    for column in ("topics", "docs", "doc", "rank", "cand"):
        assert np.array_equal(getattr(table, column), getattr(local, column)), column


def _stored(config) -> list:
    from irbench.store import Store

    with Store(config.store, read_only=True) as store:
        return sorted(store.query("SELECT system, qrels, measure, query_id, value "
                                  "FROM per_query")[1])


@pytest.mark.timeout(120)
def test_a_new_source_feeds_irbench_run(tmp_path, memory_source):
    """The runner stats and reads a run through its source: the store holds what it holds
    for the same runs as local files; an unchanged rerun only stats."""
    from irbench.runner import run_campaign

    stored = _stored
    local = load_config(make_campaign(tmp_path / "local", systems=3))
    assert run_campaign(local, workers=1).failures == []
    config = load_config(_memory_campaign(tmp_path / "memory", memory_source))
    report = run_campaign(config, workers=1)
    assert report.failures == [] and report.evaluated == 6  # 3 systems x 2 qrels sets
    assert stored(config) == stored(local)
    asked = {kind for kind, path in memory_source.asked if path.startswith("mem://r")}
    assert asked == {"stat", "read"}
    memory_source.asked.clear()
    assert run_campaign(config, workers=1).evaluated == 0  # unchanged: stat only, no read
    assert {kind for kind, _ in memory_source.asked} == {"stat"}


@pytest.mark.timeout(120)
def test_a_run_too_big_to_hold_is_streamed_from_its_source(tmp_path, memory_source,
                                                           monkeypatch):
    from irbench.runner import run_campaign

    local = load_config(make_campaign(tmp_path / "local", systems=3))
    run_campaign(local, workers=1)
    config = load_config(_memory_campaign(tmp_path / "memory", memory_source))
    monkeypatch.setenv("IRBENCH_SHARD_BYTES", "1000")  # every run: scored in topic shards
    assert run_campaign(config, workers=1).failures == []
    asked = {kind for kind, path in memory_source.asked if path.startswith("mem://r")}
    assert asked == {"stat", "open"}  # streamed, never read whole
    assert _stored(config) == _stored(local)


@pytest.mark.timeout(120)
def test_a_missing_object_of_a_new_source_is_its_systems_failure(tmp_path, memory_source):
    from irbench.runner import run_campaign

    config = load_config(_memory_campaign(tmp_path, memory_source))
    del memory_source.objects["r01.txt"]
    report = run_campaign(config, workers=1)
    assert report.evaluated == 4  # 2 systems x 2 qrels sets
    assert [f.subject for f in report.failures] == ["system 'r01'"]
    assert "mem://r01.txt: cannot read (no such object)" in report.failures[0].message


def test_a_source_that_can_tell_says_at_load_that_a_run_is_missing(tmp_path, memory_source,
                                                                   monkeypatch):
    import dataclasses

    from irbench import system

    config_path = _memory_campaign(tmp_path, memory_source)
    del memory_source.objects["r01.txt"]
    assert load_config(config_path).missing_runs == {}  # present=None: the run tells
    monkeypatch.setitem(system.SOURCES, "memory", dataclasses.replace(
        system.SOURCES["memory"], present=lambda path: path[6:] in memory_source.objects))
    with pytest.raises(ConfigError, match=r"c\.yaml:6: systems\[1\]\.run: no such file "
                                          r"'mem://r01\.txt'"):
        load_config(config_path)
    config = load_config(config_path, strict=False)
    assert list(config.missing_runs) == ["r01"]
    assert config.run_table(missing="drop").runs == ("r00", "r02")
