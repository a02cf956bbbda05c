"""irbench: TREC-style retrieval evaluation campaigns, from submitted runs to the published comparison."""

__version__ = "0.1.0"

from .collection import EvalOptions, PreparedQrels, rank_run  # noqa: E402
from .errors import (  # noqa: E402
    EvaluationError,
    FormatError,
    IrbenchError,
    MeasureParameterError,
    UnknownMeasureError,
)
from .evaluate import Evaluation, evaluate  # noqa: E402
from .measures import Measure, parse_measure  # noqa: E402
from .trec import Qrels, Run, read_qrels, read_run  # noqa: E402

__all__ = [
    "__version__", "EvalOptions", "PreparedQrels", "rank_run", "EvaluationError", "FormatError",
    "IrbenchError", "MeasureParameterError", "UnknownMeasureError", "Evaluation", "evaluate",
    "Measure", "parse_measure", "Qrels", "Run", "read_qrels", "read_run",
]
