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

from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.fields import column_key
from rag_evaluator.results.summary import RowTally, SummaryLine, one_line

if TYPE_CHECKING:
    from rag_evaluator.families.base import JudgedFamily
    from rag_evaluator.results.rows import ResultRow

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
        """The results-file rows, one line each: ``#SUMMARY[Category=billing]: Precision: 8/9
        (89%)``."""
        return [
            one_line(f"#SUMMARY[{self.column}={self.value}]: {line.label}: {line.value}")
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


class GroupTally:
    """The summaries of the groups of ``column`` built one row at a time (see ``RowTally``)."""

    def __init__(
        self,
        column: str,
        families: Sequence[JudgedFamily[Any]] = (),
        metric_columns: Sequence[str] = (),
    ) -> None:
        self.column = column
        self.families = families
        self.metric_columns = metric_columns
        self.groups: dict[str, RowTally] = {}

    def add(self, row: ResultRow) -> None:
        value = group_value(row, self.column)
        tally = self.groups.get(value)
        if tally is None:
            tally = self.groups[value] = RowTally(self.families, self.metric_columns)
        tally.add(row)

    def summaries(self) -> list[GroupSummary]:
        """One summary per value met, named values first (case-insensitive), then blank."""
        named = sorted((value for value in self.groups if value != BLANK_GROUP), key=str.casefold)
        ordered = [*named, *([BLANK_GROUP] if BLANK_GROUP in self.groups else [])]
        summaries = []
        for value in ordered:
            tally = self.groups[value]
            lines = [
                SummaryLine(TOTAL_QUESTIONS, str(tally.question_count)),
                *tally.family_lines(),
                *tally.metric_lines(),
            ]
            summaries.append(GroupSummary(self.column, value, tally.question_count, lines))
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
