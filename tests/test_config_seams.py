"""The config's seams (issue 36): ``Config.run_table`` and ``Config.qrels_set``, used by every
command; and the registries the next kinds grow from (qrels rules, collections, run sources),
each shown taking a new member with one ``register`` call."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from irbench.config import load_config
from irbench.errors import ConfigError, FormatError, MissingRunsError, UnknownQrelsSetError
from irbench.pooling import build_table

from campaigns import make_campaign


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
