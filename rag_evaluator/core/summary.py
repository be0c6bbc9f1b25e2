"""The run summary: the ``#SUMMARY:`` rows of the results file and the end-of-run table."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rag_evaluator.core.metrics.registry import RATE_COLUMNS, TEXT_COLUMNS
from rag_evaluator.core.records import TokenUsage
from rag_evaluator.core.statistics import (
    CONFIDENCE_LEVEL,
    Interval,
    bootstrap_mean_interval,
    wilson_interval,
)

if TYPE_CHECKING:
    from rag_evaluator.core.result_rows import ResultRow
    from rag_evaluator.core.tasks.base import FamilyResult, JudgedFamily

SUMMARY_PREFIX = "#SUMMARY: "
# The summary row naming the results table's metadata columns (carried from questions.csv
# or the dataset), so that readers never take them for metrics: names joined by "; ".
METADATA_COLUMNS = "Metadata Columns"
METADATA_SEPARATOR = "; "


@dataclass(frozen=True)
class SummaryLine:
    """One summary entry, e.g. label ``Precision``, value ``43/50 (86%)``."""

    label: str
    value: str

    def text(self) -> str:
        """The results-file form: ``#SUMMARY: Precision: 43/50 (86%)``."""
        return f"{SUMMARY_PREFIX}{self.label}: {self.value}"


@dataclass(frozen=True)
class RunFacts:
    """What the summary reports besides the rows themselves.

    ``coverage`` is (questions answered, questions with a ground truth) when known.
    ``estimate`` is the pre-run cost estimate as shown (``$0.01 to $0.03``), if any.
    """

    judged: bool
    model_id: str | None = None
    seed: int | None = None
    prompt_origin: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    calls: int = 0
    cached_questions: int = 0
    cost_usd: float | None = None
    estimate: str | None = None
    batch: bool = False
    coverage: tuple[int, int] | None = None
    metric_columns: Sequence[str] = ()
    metadata_columns: Sequence[str] = ()


def _percent(share: float) -> int:
    """A share as a whole percent, rounded half up."""
    return math.floor(share * 100 + 0.5)


def _interval_text(interval: Interval | None, unit: str) -> str:
    """`` [95% CI 69–97%]``, or `` [95% CI n/a]`` when there is none."""
    label = f"{CONFIDENCE_LEVEL:.0%} CI"
    if interval is None:
        return f" [{label} n/a]"
    if unit == "%":
        return f" [{label} {_percent(interval.low)}–{_percent(interval.high)}%]"
    return f" [{label} {interval.low:.2f}–{interval.high:.2f}]"


def format_fraction(count: int, total: int) -> str:
    """``17/19 (89%) [95% CI 69–97%]``: the percentage rounded half up, then the Wilson
    interval; ``0/0 (n/a)`` when nothing counts.

    The interval follows the older ``17/19 (89%)`` text rather than entering its
    parentheses, so parsers of that text still read it, and it holds no comma, so the
    CSV cell is not quoted and the line still starts with ``#SUMMARY:``.
    """
    if total == 0:
        return f"{count}/{total} (n/a)"
    percent = (200 * count + total) // (2 * total)
    return f"{count}/{total} ({percent}%)" + _interval_text(wilson_interval(count, total), "%")


def format_mean(values: Sequence[float]) -> str:
    """``mean 0.6291 (n=20) [95% CI 0.55–0.70]`` with a seeded bootstrap interval;
    ``mean n/a (n=0)`` when no question had the inputs, ``[95% CI n/a]`` when the values
    have no spread to resample (one value, or all equal)."""
    if not values:
        return "mean n/a (n=0)"
    mean = f"mean {sum(values) / len(values):.4f} (n={len(values)})"
    return mean + _interval_text(bootstrap_mean_interval(values), "")


def build_summary(
    rows: Sequence[ResultRow], facts: RunFacts, families: Sequence[JudgedFamily[Any]] = ()
) -> list[SummaryLine]:
    """Summary lines in file order. Judged families' fractions count scored questions only."""
    lines = [SummaryLine("Total Questions", str(len(rows)))]
    if facts.coverage is not None:
        answered, total = facts.coverage
        lines.append(SummaryLine("Coverage", f"{answered}/{total} questions answered"))
    for family in families:
        results = [result for row in rows if (result := row.family_result(family.name)) is not None]
        lines += family.summary(results)
    if facts.judged:
        lines += [
            SummaryLine("Model", facts.model_id or ""),
            SummaryLine("Seed", "" if facts.seed is None else str(facts.seed)),
            SummaryLine("Prompt", facts.prompt_origin or ""),
            SummaryLine("Judge Calls", str(facts.calls)),
            SummaryLine("Cached Questions", str(facts.cached_questions)),
        ]
        lines += spending_lines(facts.usage, facts.batch, facts.estimate, facts.cost_usd)
    lines += metric_lines(rows, facts.metric_columns)
    if facts.metadata_columns:
        lines.append(SummaryLine(METADATA_COLUMNS, METADATA_SEPARATOR.join(facts.metadata_columns)))
    return lines


def spending_lines(
    usage: TokenUsage, batch: bool, estimate: str | None, cost_usd: float | None
) -> list[SummaryLine]:
    """Tokens, cache tokens (when any), batch, estimate and cost: the tail of every summary of
    a run that calls the model (evaluate's and generate's)."""
    lines = [
        SummaryLine("Tokens In", str(usage.input_tokens)),
        SummaryLine("Tokens Out", str(usage.output_tokens)),
    ]
    if usage.cache_creation_input_tokens or usage.cache_read_input_tokens:
        lines.append(
            SummaryLine(
                "Cache Tokens",
                f"written {usage.cache_creation_input_tokens}, "
                f"read {usage.cache_read_input_tokens}",
            )
        )
    if batch:
        lines.append(SummaryLine("Batch", "yes (Message Batches API, 50% of the price)"))
    if estimate is not None:
        lines.append(SummaryLine("Estimated Cost", estimate))
    if cost_usd is not None:
        lines.append(SummaryLine("Cost", f"${cost_usd:.4f}"))
    return lines


def unscored_line(label: str, results: Sequence[FamilyResult]) -> SummaryLine:
    """``<Family> Unscored: n``, the questions a model-judged family could not score."""
    return SummaryLine(label, str(sum(1 for result in results if not result.scored)))


def metric_lines(rows: Sequence[ResultRow], metric_columns: Sequence[str]) -> list[SummaryLine]:
    """One line per offline metric column: a pass rate for a 0/1 check, else a mean; text
    columns (``Quality Failures``) have none."""
    lines = []
    for column in metric_columns:
        if column in TEXT_COLUMNS:
            continue
        values = [
            float(value)
            for row in rows
            if isinstance(value := row.metric_scores.get(column), int | float)
        ]
        if column in RATE_COLUMNS:
            # A 0/1 check: its pass rate over the questions it applies to.
            passed = sum(1 for value in values if value == 1.0)
            lines.append(SummaryLine(column, format_fraction(passed, len(values))))
        else:
            lines.append(SummaryLine(column, format_mean(values)))
    return lines


def metadata_columns(summary: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """The metadata columns a results file's summary names (none in older files)."""
    for label, value in summary:
        if label == METADATA_COLUMNS:
            names = value.split(METADATA_SEPARATOR.strip())
            return tuple(name.strip() for name in names if name.strip())
    return ()
