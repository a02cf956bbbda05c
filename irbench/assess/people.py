"""Who may be added to a pool (``irbench assess --add-assessor NAME [--topics IDS]``): a name
the pages and messages can show, and topics the pool has.

* a name is non-empty, at most :data:`MAX_NAME` characters, without spaces at its ends and
  without control, format or line-separator characters (nothing a terminal or a page would
  act on, nothing the store cannot keep);
* ``--topics`` is a comma-separated list of topic ids of the pool (as
  :func:`irbench.ids.id_text` gives them), without empty entries; unknown ones are refused
  all at once, each with the pool's ids closest to it.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Sequence

from ..errors import IrbenchError
from ..escaping import terminal

MAX_NAME = 64
SHOWN = 20  # unknown topics named in a message
_REFUSED = {"Cc": "a control character", "Cf": "a format character",
            "Cs": "an undecodable byte", "Cn": "an unassigned character",
            "Zl": "a line separator", "Zp": "a paragraph separator"}


class AssessorError(IrbenchError):
    """An assessor's name or topics that the pool cannot take."""


def check_name(name: str) -> str:
    """``name`` when it can be an assessor's (see the module docstring); AssessorError
    saying why not."""
    if not name.strip():
        raise AssessorError("an assessor's name cannot be empty (--add-assessor NAME)")
    if len(name) > MAX_NAME:
        raise AssessorError(f"the assessor's name '{terminal(name[:MAX_NAME])}...' has "
                            f"{len(name)} characters: at most {MAX_NAME}")
    for at, char in enumerate(name, 1):
        what = _REFUSED.get(unicodedata.category(char))
        if what is not None:
            raise AssessorError(f"the assessor's name '{terminal(name)}' has {what} "
                                f"({terminal(char)}) at character {at}: names are shown on "
                                "pages and terminals; choose one without it")
    if name != name.strip():
        raise AssessorError(f"the assessor's name '{terminal(name)}' starts or ends with a "
                            "space: choose one without")
    return name


def split_topics(spec: str | None) -> tuple[str, ...]:
    """The topic ids of ``--topics`` (None: all topics, the empty tuple), in the order given,
    each once; AssessorError for an empty entry."""
    if spec is None:
        return ()
    entries = [t.strip() for t in spec.split(",")]
    empty = [i for i, t in enumerate(entries, 1) if not t]
    if empty:
        raise AssessorError(f"--topics '{terminal(spec)}': entry "
                            f"{', '.join(map(str, empty))} of {len(entries)} is empty (give "
                            "topic ids separated by commas, e.g. 401,402; leave --topics out "
                            "for all topics)")
    return tuple(dict.fromkeys(entries))


def check_topics(topics: Sequence[str], known: Sequence[str], pool: str) -> tuple[str, ...]:
    """``topics`` when every one is a topic of the pool (``known``); AssessorError naming
    every unknown one, with the pool's ids closest to it."""
    have = set(known)
    unknown = [t for t in topics if t not in have]
    if not unknown:
        return tuple(topics)
    shown = []
    for topic in unknown[:SHOWN]:
        close = difflib.get_close_matches(topic, list(known), n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(map(terminal, close))}?)" if close else ""
        shown.append(f"'{terminal(topic)}'{hint}")
    more = f" and {len(unknown) - SHOWN} more" if len(unknown) > SHOWN else ""
    first = ", ".join(map(terminal, list(known)[:10])) + (" ..." if len(known) > 10 else "")
    raise AssessorError(f"--topics: {len(unknown)} not a topic of pool '{terminal(pool)}': "
                        f"{', '.join(shown)}{more}; its {len(known)} topics are {first}")
