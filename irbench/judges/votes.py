"""Several samples of one request, and the vote that makes their labels one.

A judge's config may ask each request ``samples: n`` times (umbrela's open request for it:
castorini/umbrela issue 1, "parameter for specifying the number of samples for inference and
later performing voting to get majority results"). The samples are distinct requests: sample
``i`` > 0 has ``"sample": i`` in the request's sha256 (:func:`irbench.judges.prompts.
request_sha256`), so each is cached and journalled on its own, and sample 0 is the very
request of a judge without samples (its answers are found again). The messages the model sees
are the same; the judge's ``temperature`` (and the server) make the samples differ.

The label is the ``vote`` (the judge's ``vote:``) of the samples whose answer parsed (one
that did not is kept, counted and left out of the vote; none parsed: no label):

* ``majority``: the label most samples gave; a tie goes to the lower label (as the qrels rule
  ``majority``: a document is not called more relevant, a nugget not more supported, than
  most samples found it);
* ``mean``: the mean of the labels, rounded to the nearest label, a half to the lower one
  (1.5 is 1).

Labels here are whole numbers (relevance grades; vital 1 and okay 0; support 2, partial 1,
not 0). A vote is one function plus one :func:`register` call.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..registry import Registry

DEFAULT_VOTE = "majority"
MAX_SAMPLES = 64  # samples of one request a config may ask for


@dataclass(frozen=True)
class Vote:
    """One way of making one label of the labels of several samples (None: not parsed)."""

    name: str
    summary: str
    choose: Callable[[Sequence[int]], int]  # over the parsed labels, at least one


VOTES: Registry[Vote] = Registry("vote")


def register(vote: Vote) -> Vote:
    return VOTES.add(vote)


def vote(labels: Sequence[int | None], how: str = DEFAULT_VOTE) -> int | None:
    """The label of samples whose labels are ``labels`` (None: that sample's answer did not
    parse), by the vote ``how``; None when none parsed."""
    given = [x for x in labels if x is not None]
    return VOTES[how].choose(given) if given else None


def _majority(labels: Sequence[int]) -> int:
    counts = Counter(labels)
    top = max(counts.values())
    return min(label for label, n in counts.items() if n == top)


def _mean(labels: Sequence[int]) -> int:
    return math.ceil(Fraction(sum(labels), len(labels)) - Fraction(1, 2))


register(Vote("majority", "the label most samples gave, a tie to the lower", _majority))
register(Vote("mean", "the mean label, rounded, a half to the lower", _mean))
