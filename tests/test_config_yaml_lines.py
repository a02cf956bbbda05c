"""YAML read with lines: hostile configs and rules files get a message, never a traceback."""

from __future__ import annotations

import pytest

from irbench.errors import ConfigError
from irbench.yamlfile import MAX_VALUES, parse_yaml

BOMB = "".join(f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join(
    [f"*{chr(96 + i)}"] * 9 if i else ['"x"'] * 9) + "]\n" for i in range(9))


def test_an_alias_bomb_is_refused_at_once():
    with pytest.raises(ConfigError, match=f"more than {MAX_VALUES:,} values"):
        parse_yaml("bomb.yaml", BOMB)


def test_a_few_aliases_are_fine():
    data, reader = parse_yaml("ok.yaml", "a: &a [1, 2]\nb: *a\n")
    assert data == {"a": [1, 2], "b": [1, 2]} and reader.problems == []


@pytest.mark.parametrize("text", [
    "systems: !!python/object/apply:os.system ['echo hi']\n",
    "systems: !!python/name:os.system\n",
    "systems: !custom {a: 1}\n",
    "systems: !!set {a, b}\n",
])
def test_tags_are_refused_with_their_line(text):
    data, reader = parse_yaml("tags.yaml", "name: x\n" + text)
    assert data["systems"] is None
    assert len(reader.problems) == 1 and reader.problems[0].startswith("tags.yaml:2: systems: ")
    assert "are not allowed" in reader.problems[0]


def test_an_integer_of_thousands_of_digits_is_a_problem_not_a_crash():
    data, reader = parse_yaml("big.yaml", "size: " + "9" * 5000 + "\n")
    assert data["size"] is None
    assert reader.problems[0].startswith("big.yaml:1: size: cannot read the value")


def test_a_config_nested_thousands_deep_is_a_message(tmp_path, capsys):
    """3,000 '[' once raised RecursionError inside PyYAML: a traceback from irbench check."""
    from irbench import cli

    path = tmp_path / "deep.yaml"
    path.write_text("name: x\nsystems: " + "[" * 3000 + "\n")
    assert cli.main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # ours, or newer PyYAML's own limit ("exceeded maximum nesting depth"): a line either way
    assert f"{path}:2: nested more than 64 levels deep" in err or (
        f"{path}:2: not valid YAML: exceeded maximum nesting depth" in err)
