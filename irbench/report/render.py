"""Rendering: Jinja2 with autoescape on and undefined variables an error."""

from __future__ import annotations

import os

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from ..errors import OutputError
from .context import ReportContext


def _environment() -> Environment:
    return Environment(loader=PackageLoader("irbench", "report/templates"),
                       autoescape=select_autoescape(default=True, default_for_string=True),
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render(context: ReportContext) -> str:
    """The self-contained ``index.html`` of ``context``."""
    return _environment().get_template("index.html").render(c=context)


def write_report(context: ReportContext, folder: str, participants=()) -> str:
    """Write ``folder/index.html`` and, given ``participants``, one page per system in
    ``folder/systems/`` (numbered, since system names are participants' text); returns the
    path of index.html."""
    env = _environment()
    try:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "index.html")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(env.get_template("index.html").render(c=context))
        if participants:
            os.makedirs(os.path.join(folder, "systems"), exist_ok=True)
            page = env.get_template("participant.html")
            for i, p in enumerate(participants, 1):
                name = os.path.join(folder, "systems", f"{i:03d}.html")
                with open(name, "w", encoding="utf-8") as fh:
                    fh.write(page.render(p=p, title=context.title,
                                         generated_at=context.generated_at))
    except OSError as exc:
        raise OutputError(f"{folder}: cannot write the report ({exc.strerror})") from None
    return path
