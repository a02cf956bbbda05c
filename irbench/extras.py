"""The optional extras and how to install one, for the messages of the commands that need
them: one wording everywhere, naming both ways irbench is installed (a package from an index,
or a checkout in editable mode)."""

from __future__ import annotations

# extra -> the commands or inputs that need it (README.md's 'Extras' line says the same)
NEEDED_BY = {
    "report": "irbench report (matplotlib: the charts; pypdf: --appendix-pdf)",
    "judge": "irbench judge with model judges (httpx)",
    "assess": "irbench assess (Starlette, uvicorn)",
    "cluster": "irbench run --cluster (Dask distributed)",
    "cloud": "s3://, gs://, https:// inputs (fsspec, s3fs)",
    "pandas": "data frames in and out",
    "irds": "irds: topics and qrels (ir_datasets)",
}


def install(extra: str) -> str:
    """How to install ``extra``: ``pip install 'irbench[report]' (in a checkout: pip install
    -e '.[report]')``."""
    return f"pip install 'irbench[{extra}]' (in a checkout: pip install -e '.[{extra}]')"
