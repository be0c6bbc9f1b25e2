"""The run summary: the ``#SUMMARY:`` rows of the results file and the end-of-run table."""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.offline.metric_settings import METRIC_SETTINGS, settings_text
from rag_evaluator.offline.registry import METRIC_SCALES, RATE_COLUMNS, TEXT_COLUMNS
from rag_evaluator.results.kinds import METRIC_KINDS, MetricScale, declaration_text
from rag_evaluator.stats.statistics import (
    CONFIDENCE_LEVEL,
    Interval,
    bootstrap_mean_interval,
    wilson_interval,
)
from rag_evaluator.text.money import format_usd

if TYPE_CHECKING:
    from rag_evaluator.families.base import JudgedFamily
    from rag_evaluator.results.rows import ResultRow

SUMMARY_PREFIX = "#SUMMARY: "
# The summary row naming the results table's metadata columns (carried from questions.csv
# or the dataset), so that readers never take them for metrics: names joined by "; ".
METADATA_COLUMNS = "Metadata Columns"
METADATA_SEPARATOR = "; "
# Every character str.splitlines() breaks a line at: none may reach a summary line, which
# readers take as one line (a value from the user's files, a group value, may hold any).
_LINE_BREAKS = str.maketrans(dict.fromkeys("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))


def one_line(text: str) -> str:
    """``text`` with every line break turned into a space: a summary line stays one line."""
    return text.translate(_LINE_BREAKS)


# The numbers of a rate or mean line, as the tally computed them (never read back from the
# rounded text): ``count, total, rate, ci_low, ci_high`` or ``mean, n, ci_low, ci_high``.
SummaryNumbers = Mapping[str, int | float | None]


@dataclass(frozen=True)
class SummaryLine:
    """One summary entry, e.g. label ``Precision``, value ``43/50 (86%)``, with the numbers
    behind a rate or mean for ``--json``."""

    label: str
    value: str
    numbers: SummaryNumbers | None = field(default=None, compare=False)

    def text(self) -> str:
        """The results-file form, one line: ``#SUMMARY: Precision: 43/50 (86%)``."""
        return one_line(f"{SUMMARY_PREFIX}{self.label}: {self.value}")


@dataclass(frozen=True)
class RunFacts:
    """What the summary reports besides the rows themselves.

    ``coverage`` is (questions answered, questions with a ground truth) when known.
    ``estimate`` is the pre-run cost estimate as shown (``$0.01 to $0.03``), if any.
    ``calls`` counts billed calls; ``retries`` the requests sent again (billed or not).
    ``partial`` says why the run stopped before every question was scored, if it did.
    ``metric_settings`` are the settings defining the offline metrics of the run, in the
    ``Metric Settings`` row's order (``offline/metric_settings.py``).
    """

    judged: bool
    model_id: str | None = None
    seed: int | None = None
    prompt_origin: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    calls: int = 0
    retries: int = 0
    cached_questions: int = 0
    cost_usd: float | None = None
    estimate: str | None = None
    batch: bool = False
    coverage: tuple[int, int] | None = None
    metric_columns: Sequence[str] = ()
    metadata_columns: Sequence[str] = ()
    partial: str | None = None
    unpriced: Sequence[str] = ()  # the models called whose price is unknown
    output_notes: Sequence[str] = ()  # models asked for JSON in text (no JSON schema)
    metric_settings: Mapping[str, str] = field(default_factory=dict)


# The summary line of a run whose server took no JSON schema (answers asked for in text).
STRUCTURED_OUTPUT = "Structured Output"


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
    return fraction_line("", count, total).value


def whole_percent(count: int, total: int) -> int:
    """``count`` of ``total`` as a whole percentage, halves rounded up (``total`` > 0)."""
    return (200 * count + total) // (2 * total)


def fraction_line(label: str, count: int, total: int) -> SummaryLine:
    """A rate's summary line (``format_fraction``'s text) with the unrounded numbers behind
    it: ``count``, ``total``, ``rate`` and the interval's ``ci_low``, ``ci_high``."""
    if total == 0:
        return SummaryLine(
            label, f"{count}/{total} (n/a)", {"count": count, "total": 0, "rate": None}
        )
    interval = wilson_interval(count, total)
    text = f"{count}/{total} ({whole_percent(count, total)}%)" + _interval_text(interval, "%")
    return SummaryLine(
        label,
        text,
        {"count": count, "total": total, "rate": count / total, **_bounds(interval)},
    )


def _bounds(interval: Interval | None) -> dict[str, float]:
    return {} if interval is None else {"ci_low": interval.low, "ci_high": interval.high}


def mean_line(label: str, values: Sequence[float]) -> SummaryLine:
    """A mean's summary line, ``mean 0.6291 (n=20) [95% CI 0.55–0.70]`` with a seeded
    bootstrap interval (``mean n/a (n=0)`` when no question had the inputs, ``[95% CI n/a]``
    when the values have no spread to resample: one value, or all equal), with the unrounded
    numbers behind it: ``mean``, ``n`` and the interval's ``ci_low``, ``ci_high``."""
    if not values:
        return SummaryLine(label, "mean n/a (n=0)", {"mean": None, "n": 0})
    mean = sum(values) / len(values)
    interval = bootstrap_mean_interval(values)
    text = f"mean {mean:.4f} (n={len(values)})" + _interval_text(interval, "")
    return SummaryLine(label, text, {"mean": mean, "n": len(values), **_bounds(interval)})


class RowTally:
    """A results table's summary built one row at a time, so that a run can stream its rows
    from the checkpoint instead of holding them (a million-question run would not fit).

    Keeps, besides each family's tally, what the summary says about the judged records
    (tokens, calls, cost, cached and unscored questions), each offline metric's values, and
    each metric's running sum for ``--fail-under``.
    """

    def __init__(
        self, families: Sequence[JudgedFamily[Any]], metric_columns: Sequence[str]
    ) -> None:
        self.families = tuple(families)
        self.family_tallies = [family.tally() for family in self.families]
        self.metric_values = {
            column: MetricValues() for column in metric_columns if column not in TEXT_COLUMNS
        }
        # metric -> [sum, count] of the judged families' values, for the gates.
        self.judged_sums: dict[str, list[float]] = {
            name: [0.0, 0] for family in self.families for name in family.metric_columns
        }
        self.question_count = 0
        self.usage = TokenUsage()
        self.calls = 0
        self.retries = 0
        self.cost_usd = 0.0
        self.cached_questions = 0
        self.unscored_questions = 0

    def add(self, row: ResultRow) -> None:
        """Count one row of the table."""
        self.question_count += 1
        record = row.record
        if record is not None:
            for family, tally in zip(self.families, self.family_tallies, strict=True):
                result = record.result(family.name)
                if result is None:
                    continue
                tally.add_question(record.question_number, result)
                for name, value in family.metric_values(result).items():
                    if value is not None:
                        sums = self.judged_sums.setdefault(name, [0.0, 0])
                        sums[0] += float(value)
                        sums[1] += 1
            results = record.results.values()
            for result in results:
                self.usage = self.usage + result.usage
                self.calls += result.calls
                self.retries += result.retries
                self.cost_usd += result.cost_usd
            self.cached_questions += bool(results) and all(result.cached for result in results)
            self.unscored_questions += not record.scored
        for column, values in self.metric_values.items():
            value = row.metric_scores.get(column)
            if isinstance(value, int | float):
                values.add(float(value))

    def family_lines(self) -> list[SummaryLine]:
        """Every judged family's summary lines, in family order."""
        return [line for tally in self.family_tallies for line in tally.lines()]

    def metric_lines(self) -> list[SummaryLine]:
        """One line per offline metric column: a pass rate for a 0/1 check, else a mean; text
        columns (``Quality Failures``) have none."""
        lines = []
        for column, collected in self.metric_values.items():
            values = collected.values
            if column in RATE_COLUMNS:
                # A 0/1 metric: its rate over the questions it applies to.
                passed = sum(1 for value in values if value == 1.0)
                lines.append(fraction_line(column, passed, len(values)))
            else:
                lines.append(mean_line(column, values))
        return lines

    def metric_scales(self) -> dict[str, MetricScale]:
        """The declared kind of every metric column of the table: the judged families' and
        the offline ones' (a column no family declares is left to the reader)."""
        scales: dict[str, MetricScale] = {}
        for family in self.families:
            scales.update(family.metric_scales())
        for column in self.metric_values:
            if column in METRIC_SCALES:
                scales[column] = METRIC_SCALES[column]
        return scales

    def observed_values(self) -> dict[str, float | None]:
        """Each metric's rate or mean over the questions that have a value for it (judged
        metrics over scored questions, offline ones over the questions that had their
        inputs); ``None`` when nothing was scored."""
        observed: dict[str, float | None] = {
            name: total / count if count else None
            for name, (total, count) in self.judged_sums.items()
        }
        for column, collected in self.metric_values.items():
            values = collected.values
            observed[column] = sum(values) / len(values) if values else None
        return observed


def summary_lines(tally: RowTally, facts: RunFacts) -> list[SummaryLine]:
    """Summary lines in file order. Judged families' fractions count scored questions only."""
    lines = [SummaryLine("Total Questions", str(tally.question_count))]
    if facts.partial is not None:
        lines.append(SummaryLine("Partial", facts.partial))
    if facts.coverage is not None:
        answered, total = facts.coverage
        lines.append(SummaryLine("Coverage", f"{answered}/{total} questions answered"))
    lines += tally.family_lines()
    if facts.judged:
        lines += [
            SummaryLine("Model", facts.model_id or ""),
            SummaryLine("Seed", "" if facts.seed is None else str(facts.seed)),
            SummaryLine("Prompt", facts.prompt_origin or ""),
            SummaryLine("Judge Calls", str(facts.calls)),
        ]
        if facts.retries:
            lines.append(SummaryLine("Retries", retries_text(facts.retries)))
        if facts.output_notes:
            lines.append(SummaryLine(STRUCTURED_OUTPUT, " / ".join(facts.output_notes)))
        lines += [
            SummaryLine("Cached Questions", str(facts.cached_questions)),
        ]
        lines += spending_lines(
            facts.usage, facts.batch, facts.estimate, facts.cost_usd, facts.unpriced
        )
    lines += tally.metric_lines()
    scales = tally.metric_scales()
    if scales:
        lines.append(SummaryLine(METRIC_KINDS, declaration_text(scales)))
    if facts.metric_settings:
        lines.append(SummaryLine(METRIC_SETTINGS, settings_text(facts.metric_settings)))
    if facts.metadata_columns:
        lines.append(SummaryLine(METADATA_COLUMNS, METADATA_SEPARATOR.join(facts.metadata_columns)))
    return lines


def spending_lines(
    usage: TokenUsage,
    batch: bool,
    estimate: str | None,
    cost_usd: float | None,
    unpriced: Sequence[str] = (),
) -> list[SummaryLine]:
    """Tokens, cache tokens (when any), batch, estimate and cost: the tail of every summary of
    a run that calls the model (evaluate's and generate's). The cost of calls to a model
    whose price is unknown is not in the figure: the line says so."""
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
        cost = format_usd(cost_usd)
        if unpriced and not cost_usd:
            cost = f"price unknown ({' / '.join(unpriced)})"
        elif unpriced:
            cost = f"{cost} plus the calls to {' / '.join(unpriced)} (price unknown)"
        lines.append(SummaryLine("Cost", cost))
    return lines


def retries_text(retries: int) -> str:
    """``3 (requests sent again after a transient failure or an unusable answer)``."""
    return f"{retries} (requests sent again after a transient failure or an unusable answer)"


def unscored_line(label: str, unscored: int) -> SummaryLine:
    """``<Family> Unscored: n``, the questions a model-judged family could not score."""
    return SummaryLine(label, str(unscored))


class MetricValues:
    """One metric's values in the order they were added, 8 bytes each: what a mean and its
    bootstrap interval need, without holding the results they came from."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: array[float] = array("d")

    def add(self, value: float | None) -> None:
        """Keep ``value``; ``None`` (no value for this question) is left out."""
        if value is not None:
            self.values.append(float(value))

    def line(self, label: str) -> SummaryLine:
        """The summary line of these values: see ``mean_line``."""
        return mean_line(label, self.values)


def metadata_columns(summary: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """The metadata columns a results file's summary names (none in older files)."""
    for label, value in summary:
        if label == METADATA_COLUMNS:
            names = value.split(METADATA_SEPARATOR.strip())
            return tuple(name.strip() for name in names if name.strip())
    return ()
