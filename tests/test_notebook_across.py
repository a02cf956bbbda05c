"""The notebook across collections (issue 41): ``irbench.open_store(CONFIG).across()`` is the
CSV ``irbench compare CONFIG --across --format csv`` writes, read by pandas; for a config with
collections ``per_query()`` and ``means()`` read one collection (``collection=``) or every one
with a ``collection`` column first; a one-collection config's frames are as before."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from test_collections import PARTS, SUITE, _split

import irbench
from irbench import cli
from irbench.errors import OptionError
from irbench.store import Store

pd = pytest.importorskip("pandas")

SYSTEMS = ('  - {name: groupA-1, run: "{collection}/runs/groupA-1.txt", baseline: true}\n'
           '  - {glob: "{collection}/runs/group[BCD]-*.txt"}\n')


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    """The demo split into three collections (as tests/test_collections.py), groupA-1 the
    baseline, scored."""
    root = tmp_path_factory.mktemp("lab")
    _split(root)
    path = root / "lab.yaml"
    path.write_text("name: lab\ncollections:\n" + "".join(
        f"  {name}: {{qrels: {name}/qrels.txt}}\n" for name in PARTS)
        + "systems:\n" + SYSTEMS + SUITE)
    assert cli.main(["run", str(path), "--quiet"]) == 0
    return path


def _csv(capsys, *args: str):
    capsys.readouterr()
    assert cli.main(["compare", *args, "--across", "--format", "csv"]) == 0
    return pd.read_csv(io.StringIO(capsys.readouterr().out))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("options", [{}, {"measure": "AP", "effect": "smd", "test": "t"},
                                     {"baseline": "groupB-2", "correction": "bonferroni"}])
def test_across_is_the_csv_of_compare_across(lab, capsys, options):
    frame = irbench.open_store(str(lab)).across(**options)
    flags = [x for k, v in options.items() for x in (f"--{k}", v)]
    expected = _csv(capsys, str(lab), *flags)
    assert list(frame.columns) == list(expected.columns)
    assert len(frame) == len(PARTS) * 10 + 10
    pd.testing.assert_frame_equal(frame, expected, check_dtype=False)
    assert set(frame["collection"]) == {*PARTS, "all"}
    assert frame.attrs["notes"] == []


@pytest.mark.timeout(120)
def test_frames_per_collection(lab):
    frames = irbench.open_store(str(lab))
    assert frames.several
    one = frames.means(collection="c2")
    with Store(str(lab.parent / "lab.duckdb"), scope="c2", read_only=True) as store:
        assert one.equals(store.frame("means"))
    every = frames.per_query(measures=["AP"])
    assert list(every.columns) == ["collection", "system", "qrels", "measure", "query_id",
                                   "value"]
    for name in PARTS:
        part = every[every["collection"] == name].drop(columns="collection")
        alone = frames.per_query(measures=["AP"], collection=name)
        assert part.reset_index(drop=True).equals(alone)
    assert list(dict.fromkeys(frames.means()["collection"])) == list(PARTS)
    with pytest.raises(OptionError, match=r"no collection 'c9' \(it has c1, c2, c3\)"):
        frames.means(collection="c9")


@pytest.mark.timeout(120)
def test_a_store_alone_or_one_collection(lab, tmp_path):
    with pytest.raises(OptionError, match="needs the campaign's config"):
        irbench.open_store(str(lab.parent / "lab.duckdb")).across()
    _split(tmp_path)
    config = tmp_path / "c1.yaml"
    assert cli.main(["run", str(config), "--quiet"]) == 0
    frames = irbench.open_store(str(config))
    assert not frames.several
    with Store(str(tmp_path / "c1.duckdb"), read_only=True) as store:
        assert frames.means().equals(store.frame("means"))
        assert frames.per_query().equals(store.frame("per_query"))
    with pytest.raises(OptionError, match="one collection"):
        frames.means(collection="c1")
