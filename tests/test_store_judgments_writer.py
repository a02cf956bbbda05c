"""One writer of ``judgments`` (issue 36): every producer (an assessor's file judged into a
pool, an imported qrels file, a model judge, the browser's clicks) records its rows through
:meth:`Store.record_judgments`, and the rows read back are :class:`Judgment` records."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from chat_server import ChatServer, rule_simulated

from irbench import cli
from irbench.assess.writer import Writer
from irbench.store import ASSESSED, JUDGMENT_FIELDS, Click, Judgment, ModelAnswer, Store


@pytest.fixture
def spied(monkeypatch):
    """Every call of Store.record_judgments: (its rows or columns, its once_per, how many it
    recorded)."""
    calls: list[tuple[object, tuple[str, ...], int]] = []
    real = Store.record_judgments

    def spy(self, rows, **options):
        recorded = real(self, rows, **options)
        calls.append((rows, tuple(options.get("once_per", ())), recorded))
        return recorded

    monkeypatch.setattr(Store, "record_judgments", spy)
    return calls


def _stored(store: Store) -> list[Judgment]:
    rows = store.con.execute(f"SELECT {', '.join(JUDGMENT_FIELDS)} FROM judgments "
                             "ORDER BY judged_at, rowid").fetchall()
    return [Judgment(**dict(zip(JUDGMENT_FIELDS, row))) for row in rows]


def _without_time(row: Judgment) -> Judgment:
    return dataclasses.replace(row, judged_at=None)


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "3",
                     "--pool-depth", "5", "--seed", "5"]) == 0
    return folder / "campaign.yaml"


@pytest.mark.timeout(300)
def test_each_producer_writes_through_record_judgments(campaign, tmp_path, spied, capsys,
                                                       monkeypatch):
    store_path = str(campaign.parent / "campaign.duckdb")
    seen: dict = {"calls": 0, "last": None}

    def through_the_writer(source_is) -> list[Judgment]:
        """The rows the producer just wrote (judged after the last producer's): as many as
        its calls of record_judgments recorded, none written any other way."""
        with Store(store_path, read_only=True) as store:
            rows = _stored(store)
        new = [r for r in rows if seen["last"] is None or r.judged_at > seen["last"]]
        assert new and all(source_is(r.source) for r in new)
        assert sum(n for _, _, n in spied[seen["calls"]:]) == len(new)
        seen.update(calls=len(spied), last=max(r.judged_at for r in rows))
        return new

    # 1. an assessor's file judged into a pool (irbench pool judge -j FILE)
    assert cli.main(["pool", "start", str(campaign), "--name", "web", "--param", "k=3"]) == 0
    batch = tmp_path / "batch.txt"
    assert cli.main(["pool", "next", str(campaign), "--name", "web", "-o", str(batch)]) == 0
    judged = tmp_path / "judged.txt"
    lines = [line.split() for line in batch.read_text().splitlines()]
    judged.write_text("".join(f"{q} 0 {d} {i % 3}\n" for i, (q, _, d, _) in enumerate(lines)))
    assert cli.main(["pool", "judge", str(campaign), "--name", "web", "-j", str(judged)]) == 0
    rows = through_the_writer(lambda source: source == str(judged))
    assert [(r.query_id, r.doc_id, r.relevance) for r in rows] == [
        (q, d, i % 3) for i, (q, _, d, _) in enumerate(lines)]
    assert {(r.pool, r.batch, r.judge, r.judge_kind) for r in rows} == {
        ("web", 1, "assessor", "human")}
    assert spied[-1][1] == ("pool", "query_id", "doc_id", "source", "judge")

    # 2. a qrels file imported, then the same file imported again changed (replace-on-change)
    qrels = tmp_path / "nist.qrels"
    first, *rest = (campaign.parent / "qrels.txt").read_text().splitlines()
    qrels.write_text("\n".join([first, *rest]) + "\n")
    assert cli.main(["qrels", str(campaign), "--import", str(qrels), "--as", "nist"]) == 0
    rows = through_the_writer(lambda source: source == str(qrels))
    assert {(r.pool, r.batch, r.judge) for r in rows} == {("", 1, "nist")}
    assert len(rows) == 1 + len(rest)
    q, it, d, r = first.split()
    qrels.write_text("\n".join([f"{q} {it} {d} {int(r) + 1}", *rest]) + "\n")
    capsys.readouterr()
    assert cli.main(["qrels", str(campaign), "--import", str(qrels), "--as", "nist"]) == 0
    assert "replaced 1 labels" in capsys.readouterr().out
    rows = through_the_writer(lambda source: source == str(qrels))
    assert [(x.query_id, x.doc_id, x.relevance, x.batch) for x in rows] == [
        (q, d, int(r) + 1, 2)]

    # 3. a model judge: the journal's answers folded into the store
    monkeypatch.setenv("STANDIN_KEY", "sk-test")
    with ChatServer(rule_simulated, api_key="sk-test") as server:
        data = yaml.safe_load(campaign.read_text())
        data["judges"] = {"standin": {"base_url": server.base_url, "model": "stand-in-8b",
                                      "api_key_env": "STANDIN_KEY", "backoff": 0}}
        campaign.write_text(yaml.safe_dump(data, sort_keys=False))
        assert cli.main(["judge", str(campaign), "--judge", "standin", "--pool", "web"]) == 0
        assert server.calls > 0
    rows = through_the_writer(lambda source: source == "model:stand-in-8b")
    assert {(r.judge, r.judge_kind, r.model, r.pool, r.batch) for r in rows} == {
        ("standin", "model", "stand-in-8b", "web", None)}
    assert all(len(r.prompt_sha256 or "") == 64 and r.answer for r in rows)
    assert spied[-1][1] == ("judge", "prompt_sha256", "query_id", "doc_id")

    # 4. the browser's clicks (the assessment server's writer thread)
    with Store(store_path) as store:
        with Writer(store, "web") as writer:
            done = [writer.click(Click(query_id="401", doc_id=f"d{i}", relevance=i % 2,
                                       judge="ann", suggested=None if i else 1,
                                       seconds=0.5 + i)) for i in range(3)]
        assert all(f.result() is None for f in done)
        clicks = store.clicks("web")
    rows = through_the_writer(lambda source: source == ASSESSED)
    assert spied[-1][1] == ()
    assert [_without_time(c) for c in clicks] == [_without_time(r) for r in rows] == [
        Judgment(query_id="401", doc_id=f"d{i}", relevance=i % 2, judge="ann", pool="web",
                 source=ASSESSED, suggested=None if i else 1, seconds=0.5 + i)
        for i in range(3)]
    assert all(isinstance(c, Judgment) and c.judged_at is not None for c in clicks)


def _file_row(doc: str, relevance: int = 1, **fields) -> Judgment:
    return Judgment(**{"query_id": "1", "doc_id": doc, "relevance": relevance, "judge": "ann",
                       "pool": "p", "source": "f.txt", **fields})


def test_record_judgments_keeps_the_order_and_records_a_key_once(tmp_path):
    with Store(str(tmp_path / "s.duckdb")) as store:
        clicks = [Judgment(query_id="1", doc_id=d, relevance=r, judge="ann", pool="p",
                           source=ASSESSED, seconds=1.0) for d, r in
                  [("b", 1), ("a", 2), ("b", 1), ("c", 0)]]
        assert store.record_judgments(clicks) == 4  # every click, in the order made
        assert [(c.doc_id, c.relevance) for c in store.clicks("p")] == [
            ("b", 1), ("a", 2), ("b", 1), ("c", 0)]
        rows = [_file_row("z", 2), _file_row("y"), _file_row("z", 0), _file_row("x")]
        key = ("pool", "query_id", "doc_id", "source", "judge")
        assert store.record_judgments(rows, once_per=key) == 3  # the first z only
        assert store.record_judgments([_file_row("x"), _file_row("w")], once_per=key) == 1
        stored = [(r.doc_id, r.relevance) for r in _stored(store) if r.source == "f.txt"]
        assert stored == [("z", 2), ("y", 1), ("x", 1), ("w", 1)]
        assert store.record_judgments([]) == 0
        with pytest.raises(ValueError, match="not columns"):
            store.record_judgments(rows, once_per=("judged_at",))


def test_files_are_numbered_in_batches_of_their_pool_with_ids_as_the_store_keeps_them(
        tmp_path):
    not_utf8 = b"d\xff".decode("utf-8", "surrogateescape")
    with Store(str(tmp_path / "s.duckdb")) as store:
        assert store.record_judged([_file_row(not_utf8), _file_row("a", 2.0)]) == 2
        assert store.record_judged([_file_row("a", 2), _file_row("b")]) == 1  # a: there
        assert store.record_judged([_file_row("c", pool="q")]) == 1
        assert store.record_judged([]) == 0
        stored = [(r.pool, r.doc_id, r.relevance, r.batch) for r in _stored(store)]
    assert stored == [("p", "d\\xff", 1, 1), ("p", "a", 2, 1), ("p", "b", 1, 2),
                      ("q", "c", 1, 1)]


def test_replacing_a_files_labels(tmp_path):
    with Store(str(tmp_path / "s.duckdb")) as store:
        assert store.replace_judged([_file_row("a"), _file_row("b")]) == (2, 0, 0, 0)
        assert store.replace_judged([_file_row("a"), _file_row("b")]) == (0, 0, 2, 0)
        assert store.replace_judged([_file_row("a", 3), _file_row("c")]) == (1, 1, 0, 1)
        stored = sorted((r.doc_id, r.relevance, r.batch) for r in _stored(store))
        assert stored == [("a", 3, 1), ("c", 1, 1)]  # the batches before are gone
        with pytest.raises(ValueError, match="one judge"):
            store.replace_judged([_file_row("a"), _file_row("b", judge="bob")])


def test_model_answers_make_one_judgment_per_judge_request_and_pair(tmp_path):
    def answer(doc: str, relevance: int | None, judge: str = "j") -> ModelAnswer:
        return ModelAnswer(model="m", prompt_sha256="a" * 64, query_id="1", doc_id=doc,
                           judge=judge, answer=f"{relevance}", relevance=relevance,
                           prompt_tokens=1, completion_tokens=1, seconds=0.1)

    with Store(str(tmp_path / "s.duckdb")) as store:
        store.save_answers([answer("a", 1), answer("a", 1), answer("b", None)], "p")
        store.save_answers([answer("a", 1), answer("a", 1, judge="k")], "other")
        stored = [_without_time(r) for r in _stored(store)]
    assert stored == [Judgment(query_id="1", doc_id="a", relevance=1, judge=j,
                               judge_kind="model", pool=p, source="model:m", model="m",
                               prompt_sha256="a" * 64, answer="1")
                      for j, p in (("j", "p"), ("k", "other"))]


def _table(store: Store) -> list[tuple]:
    """Every stored row but judged_at (the store's clock), in the order recorded."""
    names = [n for n in JUDGMENT_FIELDS if n != "judged_at"]
    return store.con.execute(f"SELECT {', '.join(names)} FROM judgments "
                             "ORDER BY judged_at, rowid").fetchall()


@pytest.mark.timeout(60)
def test_columns_and_rows_store_the_same_table(tmp_path):
    """JudgmentColumns (numpy arrays and one-value columns) and the same Judgment rows give
    the same stored table: once_per keeps the first row of each key and skips those stored,
    new_batch numbers the pool's batches, rows in the order given, odd ids as id_text."""
    import numpy as np

    from irbench.store import JudgmentColumns

    rows = [Judgment(query_id=q, doc_id=d, relevance=r, judge="ann", pool="p", source="f",
                     seconds=s, model=m)
            for q, d, r, s, m in [("2", "b", 1, 0.5, None), ("1", "a", 0, 1.0, "x"),
                                  ("2", "b", 2, 0.5, None), ("1", "\udcff", 3, None, "y"),
                                  ("3", "c", 1, 2.0, None)]]
    columns = JudgmentColumns(
        length=5, query_id=np.array([r.query_id for r in rows], dtype="U"),
        doc_id=np.array([r.doc_id for r in rows], dtype=object),
        relevance=np.array([r.relevance for r in rows]), judge="ann", pool="p", source="f",
        seconds=np.array([r.seconds for r in rows], dtype=object),
        model=np.array([r.model for r in rows], dtype=object))
    assert JudgmentColumns.from_rows(rows).judge == "ann"  # one value: a scalar
    tables = []
    for given in (rows, columns):
        with Store(str(tmp_path / f"{len(tables)}.duckdb")) as store:
            counts = [store.record_judged(given), store.record_judged(given),
                      store.record_judgments(  # (2, b, 2): the one key not stored
                          given[:3] if isinstance(given, list) else JudgmentColumns.from_rows(
                              rows[:3]), once_per=("query_id", "doc_id", "relevance")),
                      store.record_judgments(given[:1] if isinstance(given, list) else
                                             JudgmentColumns.from_rows(rows[:1]))]
            tables.append((counts, _table(store)))
    assert tables[0] == tables[1]
    counts, table = tables[0]
    assert counts == [4, 0, 1, 1]
    assert [(q, d, r, batch) for q, d, r, _, _, _, _, batch, *_ in table] == [
        ("2", "b", 1, 1), ("1", "a", 0, 1), ("1", "\\xff", 3, 1), ("3", "c", 1, 1),
        ("2", "b", 2, None), ("2", "b", 1, None)]
