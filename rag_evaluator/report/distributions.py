"""The report's distributions as plain data: histograms of continuous metrics and how the
judge's consensus votes split (parsed from the Votes column, ``first 1/1/1; votes …``)."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.results.run_scores import CONSENSUS, ERROR, JUDGE_METRICS, VOTES, TableRow

HISTOGRAM_BINS = 10

_VOTES = re.compile(r"^first (\S+); votes (.*)$")


@dataclass(frozen=True)
class HistogramBin:
    """Values ``low <= v < high`` (``<= high`` for the last bin)."""

    low: float
    high: float
    count: int
    last: bool


@dataclass(frozen=True)
class Histogram:
    column: str
    column_index: int  # the column's position in the run's table
    bins: tuple[HistogramBin, ...]
    count: int
    mean: float
    lower_is_better: bool


@dataclass(frozen=True)
class VoteSplit:
    """How the three consensus votes of hedged questions split on one judge metric."""

    metric: str
    unanimous: int
    split: int
    overturned: int  # the majority differs from the first (hedging) verdict


@dataclass(frozen=True)
class ConsensusSummary:
    hedged: int
    judged: int
    splits: tuple[VoteSplit, ...]
    vote_errors: int


def histogram(
    column: str,
    column_index: int,
    values: Sequence[float],
    bins: int = HISTOGRAM_BINS,
    *,
    lower_is_better: bool = False,
) -> Histogram:
    """Counts of ``values`` in equal bins over 0–1 (or over their range when outside it)."""
    low, high = 0.0, 1.0
    if values and (min(values) < 0.0 or max(values) > 1.0):
        low, high = min(values), max(values)
    if high == low:
        edges = [low, high]
    else:
        edges = [low + (high - low) * step / bins for step in range(bins)] + [high]
    counts = [0] * (len(edges) - 1)
    for value in values:
        # bisect keeps the rule "low <= v < high", the last bin closed, exactly.
        position = bisect_right(edges, value) - 1
        counts[min(max(position, 0), len(counts) - 1)] += 1
    return Histogram(
        column=column,
        column_index=column_index,
        bins=tuple(
            HistogramBin(edges[position], edges[position + 1], count, position == len(counts) - 1)
            for position, count in enumerate(counts)
        ),
        count=len(values),
        mean=sum(values) / len(values) if values else 0.0,
        lower_is_better=lower_is_better,
    )


def _parse_scores(text: str) -> tuple[int, ...] | None:
    parts = text.strip().split("/")
    if len(parts) != len(JUDGE_METRICS) or not all(part in ("0", "1") for part in parts):
        return None
    return tuple(int(part) for part in parts)


def consensus_summary(headers: Sequence[str], rows: Sequence[TableRow]) -> ConsensusSummary | None:
    """How often the judge hedged and how its consensus votes split (``None`` without a
    Consensus column)."""
    if CONSENSUS not in headers:
        return None
    hedged = 0
    judged = 0
    vote_errors = 0
    tallies = {metric: [0, 0, 0] for metric in JUDGE_METRICS}  # unanimous, split, overturned
    for row in rows:
        cells = row.cells
        if cells.get(ERROR, "").strip() or not cells.get(CONSENSUS, "").strip():
            continue
        judged += 1
        if cells.get(CONSENSUS, "").strip().casefold() != "yes":
            continue
        hedged += 1
        found = _VOTES.match(cells.get(VOTES, "").strip())
        if found is None:
            continue
        first = _parse_scores(found.group(1))
        votes = [_parse_scores(part) for part in found.group(2).split(",")]
        vote_errors += sum(1 for vote in votes if vote is None)
        valid = [vote for vote in votes if vote is not None]
        for position, metric in enumerate(JUDGE_METRICS):
            if not valid:
                continue
            tally = tallies[metric]
            if len({vote[position] for vote in valid}) == 1:
                tally[0] += 1
            else:
                tally[1] += 1
            final = cells.get(metric, "").strip()
            if first is not None and final in ("0", "1") and int(final) != first[position]:
                tally[2] += 1
    return ConsensusSummary(
        hedged=hedged,
        judged=judged,
        splits=tuple(
            VoteSplit(metric, *tallies[metric]) for metric in JUDGE_METRICS if metric in headers
        ),
        vote_errors=vote_errors,
    )
