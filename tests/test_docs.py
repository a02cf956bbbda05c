"""The README and docs/: short, linked, current, and every command documented."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from irbench.cli import build_parser
from irbench.measures.catalogue import markdown

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SETUP = ("pip install -e '.[report,lab,stats]' && irbench run configs/demo.yaml && irbench run "
         "configs/lab.yaml && irbench compare configs/lab.yaml --across",
         "pip install -e '.[test]' && python -m pytest tests")


def test_the_measures_page_is_current():
    assert (DOCS / "measures.md").read_text() == markdown(), (
        "docs/measures.md is stale: run 'irbench measures --markdown > docs/measures.md'")


def test_the_readme_is_short_and_starts_with_the_two_setup_commands():
    text = README.read_text()
    assert len(text.encode()) < 10_000
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert [b.strip().splitlines()[-1] for b in blocks[:2]] == list(SETUP)
    assert SETUP[1] in (ROOT / ".ci" / "run").read_text()


def test_relative_links_lead_to_files():
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name}: broken link {target}"


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    return {name: (helps.get(name), p) for name, p in sub.choices.items()}


def test_every_command_has_help_and_documentation():
    text = README.read_text() + "".join(p.read_text() for p in DOCS.glob("*.md"))
    for name, (help_text, parser) in _commands().items():
        assert help_text and parser.description, name
        assert f"irbench {name}" in text, f"'irbench {name}' is documented nowhere"


def _parsers(parser: argparse.ArgumentParser, path: str = "irbench"):
    """Every parser of the command line, subcommands' subcommands included (irbench pool build)."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_no_help_shows_sphinx_markup():
    """Help texts taken from docstrings are printed clean: no ``literal`` nor :func:`role`."""
    seen = []
    for path, parser in _parsers(build_parser()):
        seen.append(path)
        text = parser.format_help()
        assert "``" not in text, path
        assert not re.search(r":[a-z]+(:[a-z]+)?:`", text), path
    assert "irbench pool bias" in seen and "irbench scores" in seen


def test_plain_writes_sphinx_markup_plainly():
    from irbench.cli.output import plain

    assert plain("``irbench pool``: see :mod:`irbench.pooling`, :class:`~irbench.store.Store`, "
                 ":meth:`means <irbench.store.Store.means>`, :py:func:`x`") == \
        "irbench pool: see irbench.pooling, Store, means, x"
