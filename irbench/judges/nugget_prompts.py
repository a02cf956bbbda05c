"""AutoNuggetizer's prompts, word for word: nugget creation, importance and assignment.

From castorini/nuggetizer (Pradeep, Thakur, Upadhyay, Campos, Craswell, Soboroff, Dang and
Lin, "Initial Nugget Evaluation Results for the TREC 2024 RAG Track with the AutoNuggetizer
Framework", arXiv:2411.09607; Apache License 2.0), commit
d00dc3eb791f4f8f49547ce3ca4f60a63b08cfd7, files
src/nuggetizer/prompts/prompt_templates/creator_template.yaml (creation),
scorer_template.yaml (importance: vital or okay) and assigner_template.yaml (assignment:
support, partial_support or not_support; its 3-grade mode, the default), each a system
message and a user message (the YAML's ``system_message`` and ``prefix_user``). The texts
are kept exactly (their double space and all; tests/test_judge_nuggets.py pins each one's
sha256) in AutoNuggetizer's own ``str.format`` form; :func:`jinja` writes each placeholder
``{name}`` as Jinja2's ``{{ name }}``, the form a judge's template takes, which renders the
same text (the names are those of :mod:`.nugget_tasks`' contexts). AutoNuggetizer fills
``{nuggets}`` with a Python list's ``str()``: the contexts do the same.
"""

from __future__ import annotations

import re

CREATE_SYSTEM = """\
You are NuggetizeLLM, an intelligent assistant that can update a list of atomic nuggets to \
best provide all the information required for the query."""

CREATE_USER = """\
Update the list of atomic nuggets of information (1-12 words), if needed, so they best \
provide the information required for the query. Leverage only the initial list of nuggets \
(if exists) and the provided context (this is an iterative process).  Return only the final \
list of all nuggets in a Pythonic list format (even if no updates). Make sure there is no \
redundant information. Ensure the updated nugget list has at most {creator_max_nuggets} \
nuggets (can be less), keeping only the most vital ones. Order them in decreasing order of \
importance. Prefer nuggets that provide more interesting information.

Search Query: {query}
Context:
{context}
Search Query: {query}
Initial Nugget List: {nuggets}
Initial Nugget List Length: {nuggets_length}

Only update the list of atomic nuggets (if needed, else return as is). Do not explain. \
Always answer in short nuggets (not questions). List in the form ["a", "b", ...] and a and \
b are strings with no mention of ".
Updated Nugget List:"""

IMPORTANCE_SYSTEM = """\
You are NuggetizeScoreLLM, an intelligent assistant that can label a list of atomic nuggets \
based on their importance for a given search query."""

IMPORTANCE_USER = """\
Based on the query, label each of the {num_nuggets} nuggets either a vital or okay based on \
the following criteria. Vital nuggets represent concepts that must be present in a "good" \
answer; on the other hand, okay nuggets contribute worthwhile information about the target \
but are not essential. Return the list of labels in a Pythonic list format (type: \
List[str]). The list should be in the same order as the input nuggets. Make sure to provide \
a label for each nugget.

Search Query: {query}
Nugget List: {nuggets}

Only return the list of labels (List[str]). Do not explain.
Labels:"""

ASSIGN_SYSTEM = """\
You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic \
nuggets based on if they are captured by a given passage."""

ASSIGN_USER = """\
Based on the query and passage, label each of the {num_nuggets} nuggets either as support, \
partial_support, or not_support using the following criteria. A nugget that is fully \
captured in the passage should be labeled as support. A nugget that is partially captured \
in the passage should be labeled as partial_support. If the nugget is not captured at all, \
label it as not_support. Return the list of labels in a Pythonic list format (type: \
List[str]). The list should be in the same order as the input nuggets. Make sure to provide \
a label for each nugget.

Search Query: {query}
Passage: {context}
Nugget List: {nuggets}
Only return the list of labels (List[str]). Do not explain.
Labels:"""


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def jinja(text: str) -> str:
    """``text`` with each ``{name}`` written as Jinja2's ``{{ name }}``."""
    return _PLACEHOLDER.sub(r"{{ \1 }}", text)


# the built-in prompts of the nugget tasks (irbench.judges.prompts.BUILT_IN), as templates
USER = {"nuggetizer-create": jinja(CREATE_USER),
        "nuggetizer-importance": jinja(IMPORTANCE_USER),
        "nuggetizer-assign": jinja(ASSIGN_USER)}
SYSTEM = {"nuggetizer-create": CREATE_SYSTEM,
          "nuggetizer-importance": IMPORTANCE_SYSTEM,
          "nuggetizer-assign": ASSIGN_SYSTEM}
