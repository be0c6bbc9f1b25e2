"""A run's summary from result rows held in memory, as the tests build them.

A run streams its rows into ``RowTally`` / ``GroupTally`` one at a time; these helpers feed a
list of rows to the same tallies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rag_evaluator.families.base import JudgedFamily
from rag_evaluator.results.groups import GroupSummary, GroupTally
from rag_evaluator.results.rows import ResultRow
from rag_evaluator.results.summary import RowTally, RunFacts, SummaryLine, summary_lines


def tally_rows(
    rows: Iterable[ResultRow],
    families: Sequence[JudgedFamily[Any]] = (),
    metric_columns: Sequence[str] = (),
) -> RowTally:
    """A ``RowTally`` of ``rows``, in the order given."""
    tally = RowTally(families, metric_columns)
    for row in rows:
        tally.add(row)
    return tally


def build_summary(
    rows: Iterable[ResultRow], facts: RunFacts, families: Sequence[JudgedFamily[Any]] = ()
) -> list[SummaryLine]:
    """Summary lines in file order (see ``summary_lines``) of rows held in memory."""
    return summary_lines(tally_rows(rows, families, facts.metric_columns), facts)


def group_summaries(
    rows: Iterable[ResultRow],
    column: str,
    families: Sequence[JudgedFamily[Any]] = (),
    metric_columns: Sequence[str] = (),
) -> list[GroupSummary]:
    """One summary per value of ``column`` among ``rows`` (taken in question-number order)."""
    tally = GroupTally(column, families, metric_columns)
    for row in sorted(rows, key=lambda row: row.item.question_number):
        tally.add(row)
    return tally.summaries()
