"""What a jury produced for one question: each juror's result and the jury's verdict."""

from __future__ import annotations

from dataclasses import dataclass

from rag_evaluator.families.base import FamilyResult
from rag_evaluator.llm.models import ModelInfo


@dataclass(frozen=True)
class Juror:
    """One model of the jury: ``label`` as given in ``--jury`` (``haiku``,
    ``openai/llama3.1:8b``), which names its columns; ``model`` the model it calls."""

    label: str
    model: ModelInfo


JUROR_SEPARATOR = "@"


def juror_column(column: str, label: str) -> str:
    """The results column holding juror ``label``'s value of ``column``: ``accuracy@haiku``."""
    return f"{column}{JUROR_SEPARATOR}{label}"


def split_juror_column(column: str) -> tuple[str, str] | None:
    """``(column, label)`` of a juror column (``accuracy@haiku`` -> ``("accuracy",
    "haiku")``), split at the first ``@`` (no metric column holds one); ``None`` for any
    other column."""
    metric, separator, label = column.partition(JUROR_SEPARATOR)
    if not separator or not metric or not label:
        return None
    return metric, label


@dataclass(kw_only=True, slots=True)
class JuryResult(FamilyResult):
    """A jury's result for one question in one family.

    ``jurors`` holds each juror's own result (the inner family's type, in ``--jury`` order),
    each with the usage, calls and cost of that juror's calls; ``verdict`` is the jury's
    combined result of the same type, which pays for nothing itself (``None`` when the jury
    could not score the question: then ``error`` says why). The jury result's own usage,
    calls and cost are the jurors' together.
    """

    verdict: FamilyResult | None = None
    jurors: tuple[FamilyResult, ...] = ()
