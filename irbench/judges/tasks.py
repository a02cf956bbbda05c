"""Judge tasks: what a model judge is asked to label, one registry.

A :class:`Task` names

* its ``unit``: the fields of one item it judges (a topic and a document today, the one unit
  the targets give: :mod:`.targets`);
* its ``labels``: the labels a judge of it gives unless its config lists others (``labels:``),
  whole numbers as the store keeps them;
* its prompt ``context``: the dataclass a prompt template sees (its fields are the template's
  names) and how it is built for one item, and the ``sample`` the config check renders a
  template over;
* its answer ``parse``: the label an answer gives, or None;
* its default ``prompt`` (a built-in's name), the built-in ``prompts`` it brings and its
  default ``label_pattern`` and ``system`` message;
* ``max_tokens``: the answer's length a judge of it allows unless its config says
  (``max_tokens:``): 100 for a label (UMBRELA's), :data:`CREATE_MAX_TOKENS` for a nugget list;
* ``voted``: whether its judging asks each request ``samples`` times and votes
  (:mod:`.votes`): every task so far (relevance and support through
  :func:`.judging.sampled` and :func:`.judging.record_votes`, the nugget tasks through
  :mod:`.nugget_judging`).

``relevance`` (UMBRELA's graded relevance of a document to a topic) judges (topic, document)
pairs; ``support`` (:mod:`.support_task`: NIST's support of an answer's sentence by its cited
segment) judges (topic, sentence, segment) units. A judge names its task in the config
(``task:``, default ``relevance``); :func:`irbench.judges.run.judge` and
:func:`irbench.judges.support_units.judge_support` look it up here by name. The next task is
one module (its context dataclass and its parser) plus one :func:`register` call.

The nugget judge's three tasks (``nugget_create``, ``nugget_importance``, ``nugget_assign``:
:mod:`.nugget_tasks`, AutoNuggetizer's prompts and system messages by default) are driven by
:mod:`.nugget_judging` over units of their own (windows of segments, batches of nuggets); it
reads their answers, so their ``parse`` gives no grade.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import JudgeError
from ..registry import Registry
from . import nugget_tasks as nt
from . import support_task
from .nugget_prompts import SYSTEM as NUGGET_SYSTEM
from .nugget_prompts import USER as NUGGET_USER
from .prompts import DEFAULT_LABEL_PATTERN, SAMPLE, Context, PromptContext, Rendering

PAIR = ("topic", "document")  # the unit the targets give: (topic, document) pairs
SENTENCE_SEGMENT = ("topic", "sentence", "segment")  # an answer's sentence, a cited segment
DEFAULT_TASK = "relevance"

# (topic fields, docno, the document's title, its text, max characters of text) -> context
ContextOf = Callable[[Mapping[str, str], str, str, str, int], Context]
# (the compiled prompt, the answer, the request's messages) -> the label, or None
Parse = Callable[[Rendering, str, Sequence[Mapping[str, Any]]], "int | None"]


@dataclass(frozen=True, kw_only=True)
class Task:
    """One kind of judging (see the module docstring)."""

    name: str
    description: str
    unit: tuple[str, ...]
    labels: tuple[int, ...]
    context: type  # the dataclass of the template's names
    context_of: ContextOf
    sample: Context
    parse: Parse
    prompt: str = "umbrela"  # the built-in prompt a judge of this task is asked by default
    prompts: Mapping[str, str] = field(default_factory=dict)  # built-ins of its own
    label_pattern: str = DEFAULT_LABEL_PATTERN
    system: str = ""  # the system message a judge of it is sent unless its config says
    voted: bool = False  # its judging asks each request `samples` times and votes (votes.py)
    max_tokens: int = 100  # a judge's max_tokens unless its config says (a label: a few)


TASKS: Registry[Task] = Registry("judge task")


def register(task: Task) -> Task:
    """Add a task; a second task of the same name is a bug (ValueError)."""
    return TASKS.add(task)


def unknown_task(name: str) -> str:
    """Why ``name`` is no task: the tasks, and the closest name."""
    close = TASKS.closest(name)
    return (f"unknown task '{name}' (tasks: {', '.join(TASKS)}"
            + (f"; did you mean '{close}'?)" if close else ")"))


def get_task(name: str) -> Task:
    """The task called ``name``; a :class:`JudgeError` naming the close match if none."""
    try:
        return TASKS[name]
    except KeyError:
        raise JudgeError(unknown_task(name)) from None


def _grade(rendering: Rendering, answer: str, messages: Sequence[Mapping[str, Any]]
           ) -> int | None:
    return rendering.grade(answer, messages)


register(Task(
    name=DEFAULT_TASK, description="how relevant a document is to a topic (UMBRELA's 0-3)",
    unit=PAIR, labels=(0, 1, 2, 3), context=PromptContext, context_of=PromptContext.of,
    sample=SAMPLE, parse=_grade, voted=True))
register(Task(
    name=support_task.NAME, description="whether a cited segment supports an answer's sentence "
    "(NIST's full 2, partial 1, none 0)", unit=SENTENCE_SEGMENT, labels=support_task.LABELS,
    context=support_task.SupportContext, context_of=support_task.SupportContext.for_pair,
    sample=support_task.SAMPLE, parse=support_task.parse, prompt=support_task.PROMPT_NAME,
    prompts=support_task.PROMPTS, label_pattern=support_task.LABEL_PATTERN, voted=True))


def _no_grade(rendering: Rendering, answer: str, messages: Sequence[Mapping[str, Any]]
              ) -> int | None:
    return None  # a nugget task's labels are read from the answer by nugget_judging


NUGGET_UNIT = ("topic", "batch")
# a creation answer is a list of up to max_nuggets (30) nuggets of some 20 words: some 800
# tokens (1.3 a word) and 150 of quotes, commas and fence; twice that leaves room for a model
# that writes before its list (an answer cut short does not parse: kept, counted, not voted)
CREATE_MAX_TOKENS = 2048
NUGGET_TASKS = ("nugget_create", "nugget_importance", "nugget_assign")  # in the order asked
for _name, _description, _labels, _context, _sample in (
        ("nugget_create", "a topic's nuggets from windows of its relevant segments "
         "(AutoNuggetizer)", (), nt.CreateContext, nt.SAMPLE_CREATE),
        ("nugget_importance", "vital (1) or okay (0) for a batch of a topic's nuggets "
         "(AutoNuggetizer)", (0, 1), nt.ImportanceContext, nt.SAMPLE_IMPORTANCE),
        ("nugget_assign", "support (2), partial_support (1) or not_support (0) of a batch of "
         "nuggets in an answer (AutoNuggetizer)", (0, 1, 2), nt.AssignContext,
         nt.SAMPLE_ASSIGN)):
    _prompt = "nuggetizer-" + _name.removeprefix("nugget_")
    register(Task(name=_name, description=_description, unit=NUGGET_UNIT, labels=_labels,
                  context=_context, context_of=nt.not_a_pair, sample=_sample, parse=_no_grade,
                  prompt=_prompt, prompts={_prompt: NUGGET_USER[_prompt]},
                  system=NUGGET_SYSTEM[_prompt], voted=True,
                  max_tokens=CREATE_MAX_TOKENS if _name == "nugget_create" else 100))
