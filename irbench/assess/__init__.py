"""Judging a pool in the browser (``irbench assess``): ``desk.py`` (who judges what next, the
rules; no HTTP), ``app.py`` (the Starlette app: pages, calls, tokens, CSRF), ``organiser.py``
(the organiser's page) and ``serve.py`` (the campaign, the store and uvicorn put together)."""
