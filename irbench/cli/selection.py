"""What a command asks of the store (``--qrels``, ``--system``, ``--measure``), checked against
the config and the store before anything is read: a name the store holds nothing for is an
error saying why and how to fix it, never an empty table."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import judgments
from ..errors import NotStoredError

if TYPE_CHECKING:
    from ..config import Config
    from ..measures import Measure
    from ..store import Store

SUGGESTED = 3  # close matches named at most
LISTED = 20  # names listed at most when none is close
SYSTEM_PHRASES = {"run": "a ranked run", "answers": "an answer run"}


def check_stored(store: Store, config: Config, qrels: str | None,
                 systems: Sequence[str] = (), measures: Sequence[Measure] = ()) -> None:
    """Raise :class:`NotStoredError` listing every one of ``systems`` and ``measures`` the
    store has no current result for on qrels set ``qrels`` (on any set if None), each with
    its reason and its fix: a system nobody declared (with close matches among the store's),
    a declared one not scored yet, a measure in no suite of the config (so no ``irbench run``
    scores it), one the qrels set's kind does not score, one not scored yet."""
    where = f"qrels '{qrels}'" if qrels is not None else "any qrels set"
    rerun = f"run 'irbench run {config.path}'"
    held_systems = store.stored_systems(qrels)
    if not held_systems:
        raise NotStoredError(f"the store holds no scores on {where}: {rerun} first")
    problems = []
    declared = {s.name: s.kind for s in config.systems}
    status = {row[0]: (row[4], row[8]) for row in store.systems_overview()}
    sets = [q for q in config.qrels if qrels is None or q.name == qrels]
    for name in dict.fromkeys(systems):
        if name in held_systems:
            continue
        unscored = [q for q in sets if declared.get(name) not in judgments.kind(q.kind).scores]
        if name in declared and sets and len(unscored) == len(sets):
            problems.append(f"system '{name}' is {SYSTEM_PHRASES.get(declared[name], 'a system')}"
                            f": {unscored[0].kind} judgments ({where}) do not score it")
        elif name in declared:
            state, error = status.get(name, ("not run", None))
            why = (f"its last 'irbench run' failed: {error.splitlines()[0]}"
                   if state == "failed" and error else state or "not run")
            problems.append(f"system '{name}' has no stored scores on {where} ({why}): "
                            f"{rerun}")
        else:
            problems.append(f"no system '{name}' in {config.path} or its store"
                            + _suggest(name, held_systems, "systems")
                            + f"; 'irbench systems {config.path}' lists them")
    held_measures = store.stored_measures(qrels)
    suites = {str(m): [s for s, ms in config.suites.items() if m in ms]
              for m in config.measures}
    for measure in dict.fromkeys(measures):
        name = str(measure)
        if name in held_measures:
            continue
        hint = _suggest(name, held_measures, "measures")
        if name not in suites:
            problems.append(
                f"measure '{name}' is in none of the suites of {config.path} "
                f"({', '.join(config.suites) or 'it has none'}), so no 'irbench run' scores "
                f"it: add it to a suite under suites: and {rerun}{hint}")
        elif sets and not any(q.takes(measure) for q in sets):
            kinds = ", ".join(sorted({q.kind for q in sets}))
            problems.append(f"measure '{name}' is not scored on {where} ({kinds} judgments "
                            f"do not give it){hint}")
        else:
            problems.append(f"no stored scores for measure '{name}' on {where} (suite "
                            f"{', '.join(suites[name])} of {config.path}): {rerun} first")
    if problems:
        raise NotStoredError("\n".join(problems))


def _suggest(name: str, known: Sequence[str], what: str) -> str:
    """`` (did you mean X, Y?)``, else what the store has: its ``what`` (or their number)."""
    exact = [k for k in known if k.casefold() == name.casefold()]  # 'groupa-1': groupA-1
    folded = {k.casefold(): k for k in known}
    close = exact + [folded[c] for c in difflib.get_close_matches(
        name.casefold(), list(folded), n=SUGGESTED) if folded[c] not in exact]
    close = close[:SUGGESTED]
    if close:
        return f" (did you mean {', '.join(close)}?)"
    if len(known) <= LISTED:
        return f" (the store has {', '.join(known)})" if known else ""
    return f" (the store has {len(known)} {what})"
