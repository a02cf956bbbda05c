"""Judging a pool in the browser (``irbench assess``): ``desk.py`` (who judges what next, the
rules; no HTTP), ``app.py`` (the Starlette app: routes, refusals, exception handlers),
``security.py`` (tokens as an authentication backend, CSRF, the security headers),
``calls.py`` (the JSON calls and how a body is read), ``contexts.py`` (what every page and
call shows, documented), ``screens.py`` (the assessment screens' registry: ``relevance.py``, and
for generated answers ``support.py`` and ``nuggets.py`` over ``answer_desk.py``, with the
organiser's ``nugget_edit.py``), ``organiser.py`` (the organiser's page) and ``serve.py``
(the campaign, the store and uvicorn put together)."""

from . import nuggets, relevance, support  # noqa: F401  (registers the screens)
