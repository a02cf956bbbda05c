"""A report context's field with its help text (the contract of ``contract.py``)."""

from dataclasses import field


def documented(text: str):
    """A dataclass field whose ``metadata["help"]`` says what it holds."""
    return field(metadata={"help": text})
