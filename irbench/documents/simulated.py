"""The document collection of a simulated campaign (``irbench simulate``): one TREC SGML
document for every document any run retrieved, whose words follow its simulated grades, so
that a judge reading it can tell relevant from not.

A topic's title is ``modifier subject aspect``; its narrative calls a document relevant when it
reports on the subject's aspect in the modifier's setting, and not relevant when it mentions the
subject without the aspect. A document of grade g >= 1 for a topic says so in g + 1 sentences
(a grade-2 document is more on topic than a grade-1 one); a candidate of grade 0 mentions the
subject only. A filler sentence comes from a fixed vocabulary. The text is drawn from its own
seeded stream (the campaign's seed), after every other draw: the runs and qrels of a seed do
not change with it. Written gzip-compressed with a zero time stamp: the same seed writes the
same bytes.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence

import numpy as np

FILLER = ("the", "committee", "reported", "figures", "for", "last", "year", "while",
          "officials", "noted", "several", "changes", "in", "regional", "planning", "and",
          "local", "groups", "asked", "about", "budgets", "schedules", "weather", "markets",
          "prices", "transport", "schools", "elections", "sport", "results")
ON_TOPIC = ("A new study of {subject} {aspect} in a {modifier} setting was published.",
            "Officials described {subject} {aspect} affecting {modifier} communities.",
            "The report gives specific cases of {subject} {aspect} in {modifier} areas.",
            "Policies on {subject} {aspect} were debated for {modifier} regions.")
MENTION = "The article mentions {subject} briefly."


def document_texts(titles: Sequence[str], candidates: Sequence[np.ndarray],
                   grades: Sequence[np.ndarray], seed: int) -> dict[int, list[str]]:
    """{collection position: its sentences}: for each topic's candidates, sentences by grade
    (see the module docstring), then a filler sentence per document."""
    rng = np.random.default_rng([seed, 7])  # its own stream: the campaign's draws are done
    sentences: dict[int, list[str]] = {}
    for title, cand, grade in zip(titles, candidates, grades):
        modifier, subject, aspect = title.split(" ")
        picks = rng.integers(0, len(ON_TOPIC), size=(len(cand), 4))
        for position, g, pick in zip(cand.tolist(), grade.tolist(), picks.tolist()):
            named = {"subject": subject, "aspect": aspect, "modifier": modifier}
            said = ([ON_TOPIC[k].format(**named) for k in pick[:g + 1]] if g > 0
                    else [MENTION.format(**named)])
            sentences.setdefault(position, []).extend(said)
    for position in sorted(sentences):
        words = [FILLER[k] for k in rng.choice(len(FILLER), size=10).tolist()]
        sentences[position].append(" ".join(words).capitalize() + ".")
    return sentences


def sgml(sentences: dict[int, list[str]], prefix: str, width: int) -> bytes:
    """The collection as TREC SGML, documents in docno order, gzip-compressed (time 0)."""
    parts = []
    for position in sorted(sentences):
        said = sentences[position]
        parts.append(f"<DOC>\n<DOCNO> {prefix}{position:0{width}d} </DOCNO>\n"
                     f"<HEADLINE>\n{said[0]}\n</HEADLINE>\n<TEXT>\n"
                     + " ".join(said[1:]) + "\n</TEXT>\n</DOC>\n")
    return gzip.compress("".join(parts).encode("ascii"), mtime=0)
