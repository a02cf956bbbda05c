"""``irbench assess CONFIG --pool NAME``: judging a pool in the browser (:mod:`irbench.assess`)."""

from __future__ import annotations

import sys

from ..errors import UsageError, install
from ..escaping import terminal
from .output import add_wait

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "assess", help="judge a pool in the browser (assessors and organiser pages)",
        description="Serve the pool NAME (started with 'irbench pool start') to assessors in "
        "the browser: the topic beside the document, a key per relevance level, skip and "
        "undo, the next document chosen by the pool's strategy, every click one transaction "
        "in the store. --add-assessor NAME prints NAME's personal link (its token is stored "
        "hashed; a new one replaces the old). Stop the server with Ctrl-C.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--pool", required=True, metavar="NAME", help="the pool being judged")
    p.add_argument("--add-assessor", metavar="NAME", default=None,
                   help="add an assessor (or give one a new link) and exit; while the server "
                   "runs, it is asked to (the link works at once)")
    p.add_argument("--revoke", metavar="NAME", default=None,
                   help="take NAME's link away (their judgments stay) and exit; while the "
                   "server runs, from their next request on")
    p.add_argument("--set-topics", metavar="NAME", default=None,
                   help="give the assessor NAME the topics of --topics (all without it) and "
                   "exit; while the server runs, from their next document on")
    p.add_argument("--topics", default=None, metavar="IDS",
                   help="with --add-assessor or --set-topics: the topics to judge, "
                   "comma-separated topic ids of the pool (default all)")
    p.add_argument("--organiser", action="store_true",
                   help="with --add-assessor: an organiser (the progress page), not an assessor")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to serve on (default loopback only; another one warns)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    p.add_argument("--overlap", type=float, default=0.1, metavar="FRACTION",
                   help="fraction of documents judged by two assessors, for agreement "
                   "(default 0.1)")
    p.add_argument("--levels", default=None, metavar="LIST",
                   help="the relevance levels, one key each, with their names: "
                   "0:not relevant,1:relevant,2:highly relevant (default: the config's "
                   "collection.grades, else 0,1,2 named so)")
    p.add_argument("--order", choices=("shuffle", "docno"), default="shuffle",
                   help="the order of a topic's documents: a shuffle seeded by the pool's seed "
                   "(default) or by docno; never by rank or run")
    p.add_argument("--batch", type=int, default=10, metavar="N",
                   help="documents of a topic an adaptive strategy (MTF, bandits) hands out at "
                   "a time, shuffled together (default 10; 1: after every judgment)")
    p.add_argument("--suggest", metavar="JUDGE", default=None,
                   help="show the model judge JUDGE's labels of this pool as suggestions "
                   "(default: no suggestions)")
    p.add_argument("--preselect", action="store_true",
                   help="with --suggest: outline the judge's label as the default key (Enter "
                   "keeps it); without it the label is only a note")
    p.add_argument("--support", action="store_true",
                   help="serve the support screen instead: each sentence of the config's answer "
                   "runs (first citations, one per topic, sentence and segment) highlighted in "
                   "its answer beside the segment it cites, keys 2 full, 1 partial, 0 no "
                   "support, to the pool's people; labels go to the store (irbench qrels "
                   "--support)")
    p.add_argument("--nuggets", metavar="JUDGE", default=None,
                   help="serve the nugget screens instead: each answer of the config's answer "
                   "runs beside the nugget list JUDGE made (irbench judge --nuggets), keys 2 "
                   "supported, 1 partly, 0 not, one nugget at a time, to the pool's people; "
                   "organisers edit the lists (/nuggets/edit/); labels go to the store "
                   "(irbench qrels --nuggets)")
    add_wait(p)
    p.set_defaults(handler=cmd_assess)


def cmd_assess(args) -> int:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ModuleNotFoundError:
        raise UsageError("irbench assess needs the assess extra (Starlette and uvicorn): "
                         + install("assess")) from None
    from ..assess.relevance import chosen_levels
    from ..assess.serve import serve
    from ..config import load_config

    config = load_config(args.config, collection=args.collection, strict=False)
    named = chosen_levels(args.levels, config.grades)  # OptionError: what is wrong with it
    levels, names = tuple(named), tuple(named.values())
    url = f"http://{'[' + args.host + ']' if ':' in args.host else args.host}:{args.port}/"
    asked = people_change(args)  # "" too: refused by name, never a server started
    if asked is not None:
        return change_people(config, args.pool, asked, args.wait, url)
    if args.host not in LOOPBACK:
        print(f"irbench: warning: serving on {terminal(args.host)}: anyone who can reach this "
              "machine can try the pages (each still needs a token); put a reverse proxy with "
              "TLS and request timeouts (Caddy, nginx) in front of it", file=sys.stderr)
    return serve(config, args.pool, host=args.host, port=args.port,
                 options=desk_options(args), preselect=args.preselect, wait=args.wait,
                 url=url, levels=levels, names=names,
                 desk_kind="support" if args.support else "nuggets" if args.nuggets else "pool")


def desk_options(args):
    """How the desk hands out the pool (a :class:`irbench.assess.serve.DeskOptions`), from
    the options; UsageError for one out of range."""
    from ..assess.serve import DeskOptions

    if not 0 <= args.overlap <= 1:
        raise UsageError("--overlap is a fraction between 0 and 1")
    if not 1 <= args.batch <= 1000:
        raise UsageError("--batch is a number of documents from 1 to 1000")
    if args.support and args.nuggets is not None:
        raise UsageError("--support and --nuggets are two servers: give one")
    answer = "--support" if args.support else "--nuggets" if args.nuggets is not None else ""
    if answer and (args.suggest is not None or args.levels is not None):
        raise UsageError(f"{answer} has its own keys (2, 1, 0) and no model suggestions: not "
                         "with --suggest, --preselect or --levels")
    if args.preselect and args.suggest is None:
        raise UsageError("--preselect outlines a judge's label: give --suggest JUDGE too")
    return DeskOptions(overlap=args.overlap, order=args.order, batch=args.batch,
                       suggest=args.suggest, nuggets=args.nuggets)


PEOPLE = (("add", "add_assessor"), ("revoke", "revoke"), ("topics", "set_topics"))


def people_change(args):
    """The change of people the options ask (a :class:`irbench.assess.roster.Change`), or
    None: serve the pool."""
    from ..assess.people import split_topics
    from ..assess.roster import Change

    given = [(action, getattr(args, dest)) for action, dest in PEOPLE
             if getattr(args, dest) is not None]
    if len(given) > 1:
        raise UsageError("give one of --add-assessor, --revoke and --set-topics at a time")
    action, name = given[0] if given else ("", None)
    if (args.organiser and action != "add") or (args.topics is not None
                                                 and action not in ("add", "topics")):
        raise UsageError("--topics and --organiser go with --add-assessor NAME (--topics "
                         "with --set-topics NAME too)")
    if name is None:
        return None
    return Change(action, name, split_topics(args.topics),
                  "organiser" if args.organiser else "assessor")


def change_people(config, pool: str, asked, wait: float | None, url: str) -> int:
    """Make the change (through the running server, else in the store) and say what it did;
    a new link is printed once, after it is stored."""
    from ..assess.roster import change

    made = change(config, pool, asked, wait=wait, url=url)
    name = terminal(asked.name)
    if made.link:
        print(f"{name}'s link (keep it private; it is shown once): {terminal(made.link)}")
    elif asked.action == "revoke":
        print(f"{name}'s link no longer works (pool '{terminal(pool)}'); their judgments stay")
    else:
        topics = ", ".join(asked.topics) or "all"
        print(f"{name} judges topics {terminal(topics)} of pool '{terminal(pool)}' from "
              "their next document")
    return 0
