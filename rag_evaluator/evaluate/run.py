"""``rag-eval evaluate``: load and select the inputs, check every option that could fail
later, then run the offline families alone or the judged run on the shared session.

Prints nothing: everything the user sees or answers goes through ``RunInteraction``.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime

from rag_evaluator import __version__
from rag_evaluator.collector import building_long_lived
from rag_evaluator.errors import EvaluationInterrupted
from rag_evaluator.evaluate.inputs import (
    group_column,
    load_inputs,
    reference_free_families,
    settle_ground_truth,
)
from rag_evaluator.evaluate.judged import judge_setup, judged_families, judged_run
from rag_evaluator.evaluate.offline import offline_run
from rag_evaluator.evaluate.request import (
    EXIT_ALL_SCORED,
    EXIT_SOME_UNSCORED,
    EvaluateRequest,
    InputFileInfo,
    RunInteraction,
    RunOutcome,
    RunPlan,
)
from rag_evaluator.families.setup import LlmFamilySetup, prepare_llm_families
from rag_evaluator.inputs.selection import Selection, exclusion_warnings
from rag_evaluator.llm.judging import ProgressUpdate
from rag_evaluator.llm.session import call_models, check_call_options
from rag_evaluator.offline.families import (
    MetricFamilies,
    check_offline_ready,
    parse_metric_families,
    resolve_all,
)
from rag_evaluator.offline.runner import metric_columns as offline_metric_columns
from rag_evaluator.results.gates import (
    computed_metrics,
    lower_is_better_metrics,
    resolve_thresholds,
)
from rag_evaluator.settings import Settings

logger = logging.getLogger(__name__)

__all__ = [
    "EXIT_ALL_SCORED",
    "EXIT_SOME_UNSCORED",
    "EvaluateRequest",
    "EvaluationInterrupted",
    "ProgressUpdate",
    "RunInteraction",
    "RunOutcome",
    "RunPlan",
    "run_evaluation",
]


def _log_request(request: EvaluateRequest) -> None:
    """Record what the run was asked to do, for whoever debugs it from rag_eval.log."""
    logger.info(
        "rag-eval %s evaluate: questions=%s ground_truth=%s answers=%s model=%s metrics=%s "
        "prompt=%s seed=%s delay=%ss max_retries=%s timeout=%ss output_dir=%s "
        "checkpoint_dir=%s hedge_phrases=%s concurrency=%s batch=%s cache=%s limit=%s "
        "max_cost=%s score_missing=%s rubric=%s answer_relevance=%s working_directory=%s "
        "dataset=%s group_by=%s",
        __version__,
        request.questions_path,
        request.ground_truth_path,
        request.answers_path,
        request.calls.model,
        request.metrics,
        request.prompt_path,
        request.seed,
        request.calls.delay_seconds,
        request.calls.max_retries,
        request.calls.timeout_seconds,
        request.output_dir,
        request.calls.checkpoint_dir,
        ",".join(request.hedge_phrases),
        request.calls.concurrency,
        request.calls.batch,
        request.calls.use_cache,
        request.limit,
        request.calls.max_cost,
        request.score_missing,
        request.llm_options.rubric_path,
        request.llm_options.answer_relevance,
        request.working_directory,
        request.dataset_path,
        request.group_by,
    )


def run_evaluation(
    request: EvaluateRequest,
    settings: Settings,
    interaction: RunInteraction,
    *,
    now: datetime | None = None,
) -> RunOutcome:
    """Run ``rag-eval evaluate`` from parsed options to the written results file."""
    started_at = now or datetime.now()
    _log_request(request)
    check_call_options(request.calls)
    families = parse_metric_families(request.metrics)
    llm = prepare_llm_families(families.llm, request.llm_options, request.working_directory)
    if families.model_judged:
        call_models(request.calls)  # an unknown model is reported before any file is read
    request = settle_ground_truth(request, families, llm)
    # The inputs' spool, when they are read into one, lasts until the results are written.
    with ExitStack() as resources:
        with building_long_lived():
            loaded = load_inputs(request, resources, settings.spool_above_bytes)
        return _run_inputs(request, settings, interaction, families, llm, loaded, started_at)


def _run_inputs(
    request: EvaluateRequest,
    settings: Settings,
    interaction: RunInteraction,
    families: MetricFamilies,
    llm: LlmFamilySetup,
    loaded: tuple[list[InputFileInfo], Selection, list[str], bool],
    started_at: datetime,
) -> RunOutcome:
    """The run of the loaded inputs: the families settled, then offline or judged."""
    files, selection, metadata_columns, reference_free = loaded
    group_by = group_column(request, metadata_columns)
    exclusion_messages = exclusion_warnings(selection.exclusions)
    for message in exclusion_messages:
        logger.warning(message)
    items = selection.items
    families = resolve_all(families, items)
    reference_note = ""
    if reference_free:
        request = replace(request, reference_free=True)
        families, llm, reference_note = reference_free_families(request, families, llm)
    check_offline_ready(families, request.metric_options)
    setup = judge_setup(request, settings, families, llm)
    # A threshold on a metric this run will not compute is a usage error, found before any
    # question is scored or paid for.
    judged = judged_families(request, setup) if setup else ()
    offline = offline_metric_columns(families.offline, references=not request.reference_free)
    resolve_thresholds(
        request.fail_under,
        computed_metrics(judged, offline),
        lower_is_better_metrics(judged, offline),
    )
    base_plan = RunPlan(
        files=files,
        question_count=len(items),
        excluded_count=len(selection.exclusions),
        exclusion_messages=exclusion_messages,
        families=families,
        coverage=selection.coverage,
        selected_count=len(items) if request.limit is None else min(request.limit, len(items)),
        limit=request.limit,
        metadata_columns=tuple(metadata_columns),
        group_by=group_by,
        reference_note=reference_note,
    )
    if setup is None:
        return offline_run(
            request, interaction, base_plan, items, started_at, settings.offline_chunk_rows
        )
    return judged_run(request, settings, interaction, base_plan, setup, items, started_at)
