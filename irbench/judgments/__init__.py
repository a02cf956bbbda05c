"""The kinds of judgments irbench evaluates: one registry, as trec_eval's ``formats.c`` is.

Each :class:`JudgmentKind` says how its files are read, how they are prepared for ranking
runs, the ad hoc judgments inside them (for counts, pools and reports), which measures it
takes and which it computes when none are asked. ``irbench eval -R``, a config's ``kind:``,
the runner and the report ask this registry; no other module lists kinds. A measure family
names the judgments it needs (:attr:`irbench.measures.Family.needs`); a kind serves a set of
those needs.

Every prepared object satisfies :class:`Prepared`, which :func:`irbench.evaluate` checks.
The next judgment format is one module beside this one plus one :func:`register` call here.
Readers are imported on first use (``irbench eval`` on plain qrels imports none of the others).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ..measures import Measure
from ..ranked import EvalOptions, PreparedQrels, Ranked
from ..registry import Registry, exported
from ..trec import Qrels, Run, read_qrels


@runtime_checkable
class Prepared(Protocol):
    """Judgments prepared once for ranking many runs.

    ``topics``: the judged topics (bytes, in byte order: the topics a run is evaluated on);
    ``adhoc``: the ad hoc judgments inside, prepared (a document's level per topic; level
    counts for a campaign's checks); ``rank(run, options)``: the run ranked in trec_eval's
    order with whatever columns this kind's measures read attached (``Ranked.cached``).
    """

    @property
    def topics(self) -> np.ndarray: ...

    @property
    def adhoc(self) -> PreparedQrels: ...

    @property
    def qrels(self) -> Any: ...  # the judgments as read: query_id and line columns

    def rank(self, run: Run, options: EvalOptions = ...) -> Ranked: ...


@dataclass(frozen=True, kw_only=True)
class JudgmentKind:
    """One kind of judgments.

    ``name`` is the config's ``kind:``; ``eval_format`` the ``irbench eval -R`` value that
    reads it (two kinds may share one: ``-R qrels`` reads ad hoc qrels, or diversity qrels
    when a diversity measure is asked for). ``read(source, name)`` reads a file (a path, ``-``
    or a file object) and ``prepare(judgments, intent_weights)`` makes a :class:`Prepared`;
    ``read_adhoc(source, name)`` gives the ad hoc judgments alone (a :class:`Qrels`).
    ``serves``: the measure needs (:data:`irbench.measures.base.NEEDS`) it computes.
    ``measures_name`` and ``own_measures`` name its measures in messages;
    ``default_measures`` is what ``irbench eval`` computes when no ``-m`` is given.
    ``scores``: the kinds of systems it scores (:data:`irbench.system.SYSTEM_KINDS`): ranked
    runs and answer runs (their references, as a ranking) for judgments of documents; answer
    runs alone for support labels and nugget assignments.
    """

    name: str
    eval_format: str
    lines: str
    description: str
    read: Callable[..., Any]
    prepare: Callable[..., Prepared]
    read_adhoc: Callable[..., Qrels]
    serves: frozenset[str]
    default_measures: str = "official"
    measures_name: str = ""
    own_measures: str = ""
    intent_weights: bool = False
    scores: frozenset[str] = frozenset({"run", "answers"})  # the system kinds it scores
    hint: Callable[[Any], str | None] | None = None  # a hint when the file failed to read
    read_labels: Callable[..., Any] | None = None  # labels as agreement keys them (labels())

    def labels(self, source, name: str | None = None) -> Any:
        """The labels ``irbench agreement`` compares, keyed as this kind's judgments are (a
        :class:`irbench.judgments.agreement.LabelSet`): ``read_labels``, else the ad hoc
        judgments' (topic, document) grades."""
        if self.read_labels is not None:
            return self.read_labels(source, name=name)
        return _provided("agreement", "qrels_labels")(self.read_adhoc(source, name=name))

    def takes(self, measure: Measure) -> bool:
        """Whether this kind computes ``measure``."""
        return measure.definition.needs in self.serves

    @property
    def set_phrase(self) -> str:
        return f"a {self.measures_name} qrels set"


KINDS: Registry[JudgmentKind] = Registry("judgment kind")
DEFAULT_KIND = "adhoc"


def register(kind: JudgmentKind) -> JudgmentKind:
    """Add a kind; a second kind with the same name is a bug."""
    return KINDS.add(kind)


def kind(name: str) -> JudgmentKind:
    """The kind called ``name``; ValueError naming the kinds if there is none."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown judgment kind {name!r} (kinds: {', '.join(KINDS)})") from None


def prepare(kind_name: str, source, name: str | None = None, intent_weights=None) -> Prepared:
    """Judgments of kind ``kind_name`` from ``source`` (a path, ``-`` or a file object),
    prepared for ranking runs. Raises FormatError naming the file and line of every problem."""
    k = kind(kind_name)
    return k.prepare(k.read(source, name=name), intent_weights)


def takes(kind_name: str, measure: Measure) -> bool:
    """Whether judgments of kind ``kind_name`` compute ``measure``."""
    return kind(kind_name).takes(measure)


def serving(measure: Measure) -> list[JudgmentKind]:
    """The kinds that compute ``measure``, in registry order."""
    return [k for k in KINDS.values() if k.takes(measure)]


def eval_formats() -> list[str]:
    """The ``irbench eval -R`` values, in registry order."""
    return list(dict.fromkeys(k.eval_format for k in KINDS.values()))


def format_kinds(eval_format: str) -> list[JudgmentKind]:
    """The kinds ``-R eval_format`` reads, the default one first."""
    return [k for k in KINDS.values() if k.eval_format == eval_format]


def _provided(module: str, attribute: str) -> Callable:
    """``module.attribute`` of this package, resolved when first called: the kinds' modules
    are loaded by the registry when a kind is used, so ``irbench eval`` on ad hoc qrels
    starts without them (4 ms; tests/test_architecture.py lists this registry among the
    lazy loads)."""
    def call(*args, **kwargs):
        return getattr(importlib.import_module(f".{module}", __name__), attribute)(
            *args, **kwargs)

    call.__qualname__ = call.__name__ = f"{module}.{attribute}"
    return call


def with_known(prepared: Prepared, known: Qrels) -> Prepared:
    """``prepared`` ad hoc judgments plus the documents the user already knows (``Coverage``,
    ``Novelty``)."""
    return _provided("known", "PreparedKnown")(prepared.adhoc.qrels, known)


def _read_qrels(source, name=None):
    return read_qrels(source, name=name)


def _prepare_adhoc(qrels: Qrels, intent_weights=None) -> PreparedQrels:
    return PreparedQrels(qrels)


def _collapsed(second: str) -> Callable[..., Qrels]:
    def read(source, name=None):
        return _provided("diversity", "collapse")(
            _provided("diversity", "read_diversity_qrels")(source, name=name, second=second))

    return read


def _prefs_documents(source, name=None) -> Qrels:
    prefs = _provided("preferences", "read_prefs")(source, name=name)
    return _provided("preferences", "PreparedPrefs")(prefs).judged.qrels


register(JudgmentKind(
    name="adhoc", eval_format="qrels", lines="qid iter docno rel", description="ad hoc qrels",
    read=_read_qrels, prepare=_prepare_adhoc, read_adhoc=_read_qrels,
    serves=frozenset({"adhoc", "known", "none"}),
    measures_name="ad hoc", hint=_provided("diversity", "diversity_hint")))
register(JudgmentKind(
    name="diversity", eval_format="qrels", lines="topic subtopic docno rel",
    description="diversity qrels (ndeval's; read when a diversity measure is asked for; ad hoc "
    "measures use each document at its highest level)",
    read=_provided("diversity", "read_diversity_qrels"),
    prepare=_provided("diversity", "PreparedDiversity"),
    read_adhoc=_collapsed("subtopic"), serves=frozenset({"adhoc", "diversity", "none"}),
    measures_name="diversity", intent_weights=True))
register(JudgmentKind(
    name="qrels_jg", eval_format="qrels_jg", lines="qid jg docno rel",
    description="judgment groups",
    read=_provided("groups", "read_qrels_jg"),
    prepare=lambda judgments, intent_weights=None:
        _provided("groups", "PreparedJudgmentGroups")(judgments),
    read_adhoc=_collapsed("jg"), serves=frozenset({"judgment_groups", "none"}),
    default_measures="qrels_jg",
    measures_name="judgment-group", own_measures="map_avgjg, P_avgjg, Rprec_mult_avgjg"))
register(JudgmentKind(
    name="prefs", eval_format="prefs", lines="qid jg jsg docno rel_level",
    description="preferences",
    read=_provided("preferences", "read_prefs"),
    prepare=lambda judgments, intent_weights=None:
        _provided("preferences", "PreparedPrefs")(judgments),
    read_adhoc=_prefs_documents, serves=frozenset({"preferences", "none"}),
    default_measures="prefs",
    measures_name="preference", own_measures="the prefs_* measures"))
register(JudgmentKind(
    name="qrels_prefs", eval_format="qrels_prefs", lines="qid iter docno rel",
    description="a qrels read as preferences",
    read=_provided("preferences", "read_qrels_prefs"),
    prepare=lambda judgments, intent_weights=None:
        _provided("preferences", "PreparedPrefs")(judgments),
    read_adhoc=_read_qrels, serves=frozenset({"preferences", "none"}),
    default_measures="prefs",
    measures_name="preference", own_measures="the prefs_* measures"))

_ANSWERS = frozenset({"answers"})
register(JudgmentKind(
    name="support", eval_format="support", lines="NIST's JSONL, or topic run sentence "
    "citation reference label", description="support labels of answer citations (NIST's "
    "citation judgments): 2 full, 1 partial, 0 none, -1 not judged",
    read=_provided("answered", "read_support_labels"),
    prepare=_provided("answered", "prepare_support"),
    read_adhoc=_provided("answered", "support_adhoc"), serves=frozenset({"support", "answer"}),
    read_labels=_provided("agreement", "support_labels"),
    default_measures="support", scores=_ANSWERS,
    measures_name="support", own_measures="support_precision, support_recall"))
register(replace(  # the same files, keyed by what a sentence says rather than by run
    KINDS["support"], name="support_shared", lines="as support",
    description="support labels keyed by (topic, sentence text, segment): one judgment serves "
    "every run that wrote the same sentence citing the same segment",
    prepare=_provided("answered", "prepare_shared_support"),
    read_labels=_provided("agreement", "shared_support_labels")))
register(JudgmentKind(
    name="nuggets", eval_format="nuggets", lines="nuggetizer's assignments JSONL",
    description="nugget assignments of answers (nuggetizer's): support, partial_support, "
    "not_support per nugget, nuggets vital or okay",
    read=_provided("nuggets", "read_assignments"),
    prepare=_provided("answered", "prepare_nuggets"),
    read_adhoc=_provided("answered", "nuggets_adhoc"), serves=frozenset({"nuggets", "answer"}),
    read_labels=_provided("agreement", "nugget_labels"),
    default_measures="nuggets", scores=_ANSWERS,
    measures_name="nugget", own_measures="nugget_score"))


# What the command line may use of this package besides the kinds (tests/test_architecture.py:
# irbench/cli imports none of its modules, only names this one makes public): labels
# agreement (the function itself is irbench.agreement), the qrels rules' registry and the one
# function that makes a qrels set from the store's judgments (made: irbench qrels and the
# assessment server's /qrels), ir_datasets qrels. Loaded when first asked for (PEP 562), as
# the kinds' modules are: irbench eval starts without them.
EXPORTS = {"Agreement": "agreement", "alpha_of": "agreement", "RULES": "rules",
           "combine": "rules", "rules_phrase": "rules", "made": "rules", "POOL_RULE": "rules",
           "DEFAULT_RULE": "rules", "is_irds": "irds",
           "materialise": "irds"}

if TYPE_CHECKING:
    from .agreement import Agreement as Agreement
    from .agreement import alpha_of as alpha_of
    from .irds import is_irds as is_irds
    from .irds import materialise as materialise
    from .rules import DEFAULT_RULE as DEFAULT_RULE
    from .rules import POOL_RULE as POOL_RULE
    from .rules import RULES as RULES
    from .rules import combine as combine
    from .rules import made as made
    from .rules import rules_phrase as rules_phrase


def __getattr__(name: str) -> Any:
    return exported(__name__, EXPORTS, name)
