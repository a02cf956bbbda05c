"""Rendering: Jinja2 with autoescape on and undefined variables an error."""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile

import numpy as np
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from ..errors import OutputError
from ..escaping import csv_cell
from .contract import ReportContext


def environment() -> Environment:
    return Environment(loader=PackageLoader("irbench", "report/templates"),
                       autoescape=select_autoescape(default=True, default_for_string=True),
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render(context: ReportContext) -> str:
    """The self-contained ``index.html`` of ``context``."""
    return environment().get_template("index.html").render(c=context, links=context.links)


OWNER = ".irbench-report.json"  # which campaign's report a folder holds


def claim(folder: str, campaign: str, config_path: str, force: bool = False) -> None:
    """Refuse to write into ``folder`` when it holds another campaign's report (another
    config file, e.g. a copied config with the same ``name:``), unless ``force``; as a store
    belongs to one campaign, so does a report folder."""
    marker = os.path.join(folder, OWNER)
    try:
        with open(marker, encoding="utf-8") as fh:
            owner = json.load(fh)
    except (OSError, ValueError):
        return  # a new folder, or one made before reports were claimed
    if not force and owner.get("config") != os.path.abspath(config_path):
        raise OutputError(f"{folder}: holds the report of campaign '{owner.get('campaign')}' "
                          f"(config {owner.get('config')}); give another --out, or --force to "
                          "replace it")


def write_report(context: ReportContext, folder: str, participants=(), *,
                 campaign: str = "", config_path: str = "", force: bool = False,
                 answer_pages=(), diff_pages=None) -> str:
    """Write ``folder/index.html`` and, given ``participants``, one appendix page per system
    in ``folder/systems/`` (named from the system's name, made safe) with an index page, and
    given ``answer_pages`` (:mod:`.answerpages`), one page per answer run in
    ``folder/systems/answers/``, and given ``diff_pages`` (:class:`.diffpages.DiffPages`),
    the diff pages beside the run pages, each run page linking its own; returns the path
    of index.html. The folder is claimed for
    the campaign (see :func:`claim`).

    Every page is rendered first, then written into a temporary folder inside ``folder`` and
    renamed into place: a report killed or failing at any moment leaves the previous
    ``index.html`` and ``systems/`` whole (never a truncated page or half a set). A report
    written without run pages removes the ``systems/`` folder an earlier report left, so no
    page is left out of date."""
    env = environment()
    index = env.get_template("index.html").render(c=context, links=context.links)
    page = env.get_template("participant.html")
    siblings = {p.system: p.file for p in participants}
    answers = {a.system: f"answers/{a.file}" for a in answer_pages}
    diffs = diff_pages.links if diff_pages is not None else {}
    pages = [(p.file, page.render(p=p, title=context.title, generated_at=context.generated_at,
                                  links=siblings, answers=answers,
                                  diffs=diffs.get(p.system, ())))
             for p in participants]
    diff = env.get_template("diff.html")
    pages += [(d.file, diff.render(p=d)) for d in (diff_pages.pages if diff_pages else ())]
    answer = env.get_template("answers.html")
    pages += [(f"answers/{a.file}", answer.render(a=a, title=context.title,
                                                  generated_at=context.generated_at))
              for a in answer_pages]
    if pages:
        pages.append(("index.html", env.get_template("participants.html").render(
            pages=participants, title=context.title, generated_at=context.generated_at,
            answers=answers, answer_pages=answer_pages)))
    path = os.path.join(folder, "index.html")
    if config_path:
        claim(folder, campaign, config_path, force)
    try:
        os.makedirs(folder, exist_ok=True)
        if config_path:
            with open(os.path.join(folder, OWNER), "w", encoding="utf-8") as fh:
                json.dump({"campaign": campaign, "config": os.path.abspath(config_path)}, fh)
        work = tempfile.mkdtemp(prefix=".irbench-report-", dir=folder)
        try:
            with open(os.path.join(work, "index.html"), "w", encoding="utf-8") as fh:
                fh.write(index)
            if context.significance is not None:
                with open(os.path.join(work, "significance.csv"), "w", encoding="utf-8",
                          newline="") as fh:
                    _pairs_csv(context.significance, fh)
                os.replace(os.path.join(work, "significance.csv"),
                           os.path.join(folder, "significance.csv"))
            if pages:
                systems = os.path.join(work, "systems")
                os.makedirs(systems)
                if answer_pages:
                    os.makedirs(os.path.join(systems, "answers"))
                for name, text in pages:  # names made safe by context._file_names
                    with open(os.path.join(systems, name), "w", encoding="utf-8") as fh:
                        fh.write(text)
                _swap_in(systems, os.path.join(folder, "systems"))
            os.replace(os.path.join(work, "index.html"), path)
            if not pages and os.path.isdir(os.path.join(folder, "systems")):
                shutil.rmtree(os.path.join(folder, "systems"))  # stale run pages
        finally:
            shutil.rmtree(work, ignore_errors=True)
    except OSError as exc:
        raise OutputError(f"{folder}: cannot write the report ({exc.strerror})") from None
    return path


def _swap_in(new: str, dest: str) -> None:
    """Put folder ``new`` at ``dest`` by renames, removing the folder it replaces."""
    old = f"{dest}.old-{os.getpid()}"
    if os.path.isdir(dest):
        os.rename(dest, old)
    os.rename(new, dest)
    shutil.rmtree(old, ignore_errors=True)


def _pairs_csv(sig, fh) -> None:
    """Every pair of the significance test: system_a, system_b, mean difference (a - b),
    effect size d_z, adjusted p-value; names neutralised for spreadsheets."""
    writer = csv.writer(fh)
    writer.writerow(["measure", "system_a", "system_b", "mean_diff", "effect_size",
                     "p_adjusted"])
    a, b = np.triu_indices(len(sig.systems), k=1)
    names = [csv_cell(n) for n in sig.systems]
    measure = csv_cell(sig.measure)
    writer.writerows((measure, names[i], names[j], f"{sig.diff[i, j]:.6f}",
                      f"{sig.effect[i, j]:.4f}", f"{sig.p[i, j]:.6g}")
                     for i, j in zip(a.tolist(), b.tolist()))
