"""The evaluate run's offline families: their scores for the selected questions, and a run of
offline families only (no key, no call, no prompt, no checkpoint)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import islice
from typing import Any

from rag_evaluator.evaluate.inputs import carried_columns
from rag_evaluator.evaluate.request import (
    EXIT_ALL_SCORED,
    EvaluateRequest,
    RunInteraction,
    RunOutcome,
    RunPlan,
)
from rag_evaluator.families.base import JudgedFamily
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.offline.embeddings import describe_model
from rag_evaluator.offline.families import compute_offline, log_offline_notes, offline_scoring
from rag_evaluator.offline.metric_settings import run_settings, setting_values
from rag_evaluator.offline.options import MetricOptions
from rag_evaluator.offline.runner import EmptyMetric
from rag_evaluator.results.gates import check_thresholds, failures_of
from rag_evaluator.results.groups import GroupSummary, GroupTally
from rag_evaluator.results.rows import ResultRow, ResultRows
from rag_evaluator.results.summary import RowTally, RunFacts, summary_lines
from rag_evaluator.results.writer import PendingRows, prepare_output_directory
from rag_evaluator.settings import DEFAULT_OFFLINE_CHUNK_ROWS

logger = logging.getLogger(__name__)

# The progress of a run scored in more than one chunk: questions scored of all.
SCORING_PROGRESS = "Scoring"


@dataclass(frozen=True)
class OfflineScores:
    """The offline families' columns, each question's values, and the metrics left empty."""

    columns: list[str]
    scores: dict[int, dict[str, float | str | None]]
    empty: list[EmptyMetric]


def offline_scores(
    request: EvaluateRequest,
    plan: RunPlan,
    selected: Sequence[EvaluationItem],
    interaction: RunInteraction,
) -> OfflineScores:
    """The offline families' columns and each question's values (none without families)."""
    return OfflineScores(
        *compute_offline(
            plan.families,
            selected,
            replace(request.metric_options, references=not request.reference_free),
            interaction.info,
            answers_file=request.input_paths[2],
            ground_truth_file=request.input_paths[1],
            on_progress=interaction.work_progress,
        )
    )


def recorded_settings(options: MetricOptions, columns: Sequence[str]) -> dict[str, str]:
    """The settings defining the run's offline metric ``columns`` (the ``Metric Settings``
    row), the models named as the run's messages name them."""
    values = setting_values(
        options, describe_model(options.embedding_model), describe_model(options.bertscore_model)
    )
    return run_settings(columns, values)


def offline_run(
    request: EvaluateRequest,
    interaction: RunInteraction,
    plan: RunPlan,
    items: Sequence[EvaluationItem],
    started_at: datetime,
    chunk_rows: int = DEFAULT_OFFLINE_CHUNK_ROWS,
) -> RunOutcome:
    """A run of offline metric families only: no key, no call, no prompt, no checkpoint.

    The items are scored ``chunk_rows`` at a time and each chunk's rows written to a
    temporary file in the output folder as it finishes, while the summary is tallied; the
    results file is then written whole (summary, then the rows copied). The temporary files
    are removed however the run ends.
    """
    selected = items if request.limit is None else items[: request.limit]
    interaction.show_plan(plan)
    prepare_output_directory(request.output_dir)
    scoring = offline_scoring(
        plan.families,
        replace(request.metric_options, references=not request.reference_free),
        interaction.info,
        answers_file=request.input_paths[2],
        ground_truth_file=request.input_paths[1],
        on_progress=interaction.work_progress,
    )
    metric_columns = list(scoring.columns)
    carried = carried_columns(plan, (), metric_columns)
    with PendingRows(
        request.output_dir,
        families=[],
        metric_columns=metric_columns,
        metadata_columns=carried,
        with_json=request.write_json,
    ) as pending:
        tallied = TalliedRows(pending, plan.group_by, (), metric_columns)
        total, done = len(selected), 0
        for chunk in scoring.chunks(_in_number_order(selected), chunk_rows):
            tallied.add(ResultRows(chunk.items, None, chunk.scores))
            done += len(chunk.items)
            if total > chunk_rows:
                interaction.work_progress(SCORING_PROGRESS, done, total)
        notes = scoring.notes()
        log_offline_notes(notes)
        interaction.finished()
        facts = RunFacts(
            judged=False,
            coverage=plan.coverage,
            metric_columns=metric_columns,
            metadata_columns=carried,
            metric_settings=recorded_settings(request.metric_options, metric_columns),
        )
        summary = summary_lines(tallied.tally, facts)
        groups = tallied.groups()
        results_path, json_path = pending.publish(started_at, summary, groups)
    logger.info("Results written to %s", results_path)
    gate_checks = check_thresholds(request.fail_under, tallied.tally.observed_values())
    return RunOutcome(
        False,
        EXIT_ALL_SCORED,
        results_path,
        json_path,
        summary,
        threshold_failures=failures_of(gate_checks),
        gate_checks=gate_checks,
        groups=groups,
        reference_free=request.reference_free,
        not_applicable=list(notes.empty),
    )


def _in_number_order(items: Sequence[EvaluationItem]) -> Iterable[EvaluationItem]:
    """The items in question-number order, the order of the results' rows (a spool's are
    read in that order already)."""
    if getattr(items, "in_number_order", False):
        return items
    return sorted(items, key=lambda item: item.question_number)


class TalliedRows:
    """The rows of a results table as they finish: written to ``pending`` and added to the
    summary of the whole table and, with --group-by, of each group."""

    def __init__(
        self,
        pending: PendingRows,
        group_by: str | None,
        families: Sequence[JudgedFamily[Any]],
        metric_columns: Sequence[str],
    ) -> None:
        self.pending = pending
        self.tally = RowTally(families, metric_columns)
        self.group_tally = GroupTally(group_by, families, metric_columns) if group_by else None

    def add(self, rows: Iterable[ResultRow]) -> None:
        """Write and summarise ``rows`` (in number order, after those added before)."""
        chunk = list(rows)
        for row in chunk:
            self.tally.add(row)
            if self.group_tally is not None:
                self.group_tally.add(row)
        self.pending.add(chunk)

    def groups(self) -> list[GroupSummary]:
        return self.group_tally.summaries() if self.group_tally is not None else []


def tally_and_write_rows(
    rows: ResultRows, tallied: TalliedRows, chunk_rows: int = DEFAULT_OFFLINE_CHUNK_ROWS
) -> None:
    """Every row of ``rows`` into ``tallied``, read once (a run's are read back from its
    checkpoint), ``chunk_rows`` held at a time."""
    ordered = iter(rows)
    while chunk := list(islice(ordered, chunk_rows)):
        tallied.add(chunk)
