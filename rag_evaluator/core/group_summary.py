"""Results by group (``--group-by COLUMN``): the summary of each value of a metadata column.

Each group gets the question count, every judged family's summary and every offline
metric's mean, computed exactly as the overall summary is but over the group's rows. Rows
whose cell is empty form the group ``(blank)``, listed last; the others are in the order of
their values (case-insensitive). A group with no scored row gives ``0/0 (n/a)`` and
``mean n/a (n=0)``, never a division by zero.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag_evaluator.core.fields import column_key
from rag_evaluator.core.summary import SummaryLine, metric_lines
from rag_evaluator.errors import UsageError

if TYPE_CHECKING:
    from rag_evaluator.core.result_rows import ResultRow
    from rag_evaluator.core.tasks.base import JudgedFamily

BLANK_GROUP = "(blank)"
TOTAL_QUESTIONS = "Total Questions"
_HEADLINE = re.compile(r"^(\d+/\d+ \((?:\d+%|n/a)\)|mean (?:n/a|-?[\d.]+))")


@dataclass(frozen=True)
class GroupSummary:
    """The summary lines of one group: ``column`` = ``value``."""

    column: str
    value: str
    question_count: int
    lines: list[SummaryLine]

    def texts(self) -> list[str]:
        """The results-file rows: ``#SUMMARY[Category=billing]: Precision: 8/9 (89%)``."""
        return [
            f"#SUMMARY[{self.column}={self.value}]: {line.label}: {line.value}"
            for line in self.lines
        ]


def resolve_group_column(wanted: str, columns: Sequence[str], source: str) -> str:
    """The metadata column ``--group-by`` names: its exact name, else the one spelled the
    same but for case, spaces and punctuation; a ``UsageError`` naming those that exist."""
    if wanted in columns:
        return wanted
    matches = [column for column in columns if column_key(column) == column_key(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not columns:
        raise UsageError(
            f"--group-by {wanted!r}: {source} has no metadata column to group by. Add a "
            "column such as Category to the questions (a field to each dataset record)"
        )
    raise UsageError(
        f"--group-by {wanted!r} is not a column of {source} (columns there: "
        f"{', '.join(columns)}). Pass one of them"
    )


def group_value(row: ResultRow, column: str) -> str:
    value = row.item.metadata.get(column, "").strip()
    return value or BLANK_GROUP


def _ordered_groups(rows: Sequence[ResultRow], column: str) -> list[tuple[str, list[ResultRow]]]:
    groups: dict[str, list[ResultRow]] = {}
    for row in sorted(rows, key=lambda row: row.item.question_number):
        groups.setdefault(group_value(row, column), []).append(row)
    named = sorted((value for value in groups if value != BLANK_GROUP), key=str.casefold)
    ordered = [*named, *([BLANK_GROUP] if BLANK_GROUP in groups else [])]
    return [(value, groups[value]) for value in ordered]


def group_summaries(
    rows: Sequence[ResultRow],
    column: str,
    families: Sequence[JudgedFamily[Any]] = (),
    metric_columns: Sequence[str] = (),
) -> list[GroupSummary]:
    """One summary per value of ``column`` among ``rows``."""
    summaries = []
    for value, members in _ordered_groups(rows, column):
        lines = [SummaryLine(TOTAL_QUESTIONS, str(len(members)))]
        for family in families:
            results = [
                result for row in members if (result := row.family_result(family.name)) is not None
            ]
            lines += family.summary(results)
        lines += metric_lines(members, metric_columns)
        summaries.append(GroupSummary(column, value, len(members), lines))
    return summaries


def headline(value: str) -> str | None:
    """A rate or mean without its interval (``8/9 (89%)``, ``mean 0.6291``), for the
    terminal's group table; ``None`` for counts and text."""
    found = _HEADLINE.match(value)
    if found is None:
        return None
    text = found.group(1)
    if not text.startswith("mean "):
        return text
    mean = text.removeprefix("mean ")
    return mean if mean == "n/a" else f"{float(mean):.3f}"


def group_table(summaries: Sequence[GroupSummary]) -> tuple[list[str], list[list[str]]]:
    """The per-group terminal table: a column per group, a row per rate or mean.

    Metrics run down the side because there are often more of them than groups (quality alone
    has seven): a column per metric would fold every figure on an ordinary terminal.
    """
    labels: list[str] = []
    for summary in summaries:
        for line in summary.lines:
            if headline(line.value) is not None and line.label not in labels:
                labels.append(line.label)
    header = [summaries[0].column if summaries else "Group", *(s.value for s in summaries)]
    by_group = [{line.label: headline(line.value) for line in s.lines} for s in summaries]
    rows = [["Questions", *(str(s.question_count) for s in summaries)]]
    for label in labels:
        rows.append([label, *(values.get(label) or "" for values in by_group)])
    return header, rows
