"""Model judges: relevance labels from a model that speaks the OpenAI-compatible
chat-completions protocol, every answer cached in the store.

``spec.py`` (a judge as the config declares it), ``prompts.py`` (what it is asked, UMBRELA's
prompt by default, and how its answer becomes a grade), ``client.py`` (one call, with
retries), ``journal.py`` (answers kept the moment they arrive), ``judging.py`` (judging many
pairs at the judge's concurrency, within its budget) and ``targets.py`` (which pairs: the
holes of a qrels set, or a list). Nothing is imported here: the config reads ``spec.py``
alone.
"""
