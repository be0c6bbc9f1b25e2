"""The evaluate run: load, select, plan, confirm, judge with checkpoints, write results.

Prints nothing: everything the user sees or answers goes through ``RunInteraction``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rag_evaluator import __version__
from rag_evaluator.errors import BudgetExhaustedError, ConfigError, InputError, UsageError
from rag_evaluator.families.base import JudgedFamily
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompt_file import SystemPrompt, load_system_prompt
from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.families.setup import (
    LlmFamilyOptions,
    LlmFamilySetup,
    build_llm_families,
    prepare_llm_families,
    ragas_input_warnings,
)
from rag_evaluator.inputs.fields import GROUND_TRUTH, QUESTION_NUMBER
from rag_evaluator.inputs.load import load_dataset, load_input_files
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.inputs.references import ReferenceFreeFamilies, left_out_line, without_references
from rag_evaluator.inputs.selection import (
    Selection,
    exclusion_warnings,
    format_numbers,
    select_items,
)
from rag_evaluator.llm.checkpoint.store import (
    checkpoint_path,
    lock_run,
    remove_checkpoint,
    resolve_checkpoint_directory,
)
from rag_evaluator.llm.cost import CostEstimate, dollar_range
from rag_evaluator.llm.fingerprint import checkpoint_key
from rag_evaluator.llm.judging import (
    EvaluationInterrupted,
    JudgedRecords,
    JudgingInteraction,
    JudgingOptions,
    JudgingPlan,
    ProgressUpdate,
    judge_pending,
    plan_judging,
    prepare_checkpoint,
)
from rag_evaluator.llm.models import ModelInfo, resolve_model
from rag_evaluator.llm.response_cache import ResponseCache, default_cache_directory
from rag_evaluator.offline.families import (
    JUDGE_FAMILY,
    MetricFamilies,
    check_offline_ready,
    compute_offline,
    parse_metric_families,
    resolve_all,
    runnable_offline_families,
)
from rag_evaluator.offline.registry import QUALITY, SEMANTIC
from rag_evaluator.offline.runner import EmptyMetric, MetricOptions
from rag_evaluator.offline.runner import metric_columns as offline_metric_columns
from rag_evaluator.results.gates import (
    Threshold,
    ThresholdFailure,
    computed_metrics,
    failed_thresholds,
    lower_is_better_metrics,
    resolve_thresholds,
)
from rag_evaluator.results.groups import GroupSummary, GroupTally, resolve_group_column
from rag_evaluator.results.rows import ResultRows
from rag_evaluator.results.summary import RowTally, RunFacts, SummaryLine, summary_lines
from rag_evaluator.results.writer import prepare_output_directory, results_columns, write_results
from rag_evaluator.settings import Settings

if TYPE_CHECKING:
    from rag_evaluator.llm.client import ModelClient

logger = logging.getLogger(__name__)

EXIT_ALL_SCORED = 0
EXIT_SOME_UNSCORED = 1

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


class RunInteraction(JudgingInteraction, Protocol):
    """How the pipeline talks to the user; the command implements it with ``console``."""

    def show_plan(self, plan: RunPlan) -> None: ...

    def work_progress(self, label: str, done: int, total: int) -> None: ...

    def finished(self) -> None: ...


@dataclass(frozen=True)
class EvaluateRequest:
    """Everything the user chose for a run (the command's options, parsed)."""

    questions_path: Path
    ground_truth_path: Path
    answers_path: Path
    working_directory: Path
    model: str = "sonnet"
    prompt_path: Path | None = None
    seed: int | None = None
    delay_seconds: float | None = None  # None: 0.5 s sequential, none when concurrent
    max_retries: int = 6
    timeout_seconds: float = 120.0
    output_dir: Path = Path("Evaluation_Runs")
    checkpoint_dir: Path | None = None
    metrics: str = JUDGE_FAMILY
    hedge_phrases: tuple[str, ...] = DEFAULT_HEDGE_PHRASES
    metric_options: MetricOptions = field(default_factory=MetricOptions)
    score_missing: bool = False
    limit: int | None = None
    write_json: bool = False
    concurrency: int = 1
    batch: bool = False
    batch_poll_seconds: float = 30.0
    use_cache: bool = True
    exact_estimate: bool = False
    max_cost: float | None = None
    # The --fail-under minimums and --fail-over maximums (``Threshold.upper``).
    fail_under: tuple[Threshold, ...] = ()
    # The LLM families' options (--rubric, --answer-relevance; issue 10).
    llm_options: LlmFamilyOptions = field(default_factory=LlmFamilyOptions)
    # One dataset file instead of the three CSVs (--dataset); the three paths are then unused.
    dataset_path: Path | None = None
    # A metadata column whose values get their own summary rows (--group-by).
    group_by: str | None = None
    # Whether --ground-truth was given: when not, a missing ground_truth.csv makes a run
    # without references instead of an error (if a family asked for can run without).
    ground_truth_given: bool = True
    # Set by the run once it knows the inputs hold no reference answer.
    reference_free: bool = False

    @property
    def input_paths(self) -> tuple[Path, Path, Path]:
        """The questions, ground-truth and answers files: the dataset thrice with --dataset
        (it is then what the checkpoint is named after and fingerprinted by); without a
        ground-truth file, the questions file in its place (a checkpoint of its own)."""
        if self.dataset_path is not None:
            return (self.dataset_path, self.dataset_path, self.dataset_path)
        if self.reference_free:
            return (self.questions_path, self.questions_path, self.answers_path)
        return (self.questions_path, self.ground_truth_path, self.answers_path)


@dataclass(frozen=True)
class InputFileInfo:
    """One input file as the pre-run summary shows it."""

    label: str
    path: Path
    question_count: int


@dataclass(frozen=True)
class RunPlan:
    """What the run is about to do, shown before ``Proceed?``."""

    files: list[InputFileInfo]
    question_count: int
    excluded_count: int
    exclusion_messages: list[str]
    families: MetricFamilies
    coverage: tuple[int, int]
    model: ModelInfo | None = None
    prompt_origin: str | None = None
    seed: int | None = None
    seed_was_drawn: bool = False
    selected_count: int = 0
    limit: int | None = None
    resumed_count: int = 0
    pending_count: int = 0
    cached_count: int = 0
    no_information_count: int = 0
    missing_answer_count: int = 0
    too_long: list[int] = field(default_factory=list)
    estimate: CostEstimate | None = None
    checkpoint_path: Path | None = None
    concurrency: int = 1
    batch: bool = False
    max_cost: float | None = None
    # What the LLM families will do (answer relevance method, rubric criteria).
    family_notes: tuple[str, ...] = ()
    # The metadata columns carried into the results, and the --group-by column.
    metadata_columns: tuple[str, ...] = ()
    group_by: str | None = None
    # A run without references: the line naming what it leaves out, and why.
    reference_note: str = ""


@dataclass(frozen=True)
class RunOutcome:
    """How the run ended, for the command to report."""

    declined: bool
    exit_code: int
    results_path: Path | None = None
    json_path: Path | None = None
    summary: list[SummaryLine] = field(default_factory=list)
    unscored_count: int = 0
    remaining_after_limit: int = 0
    threshold_failures: list[ThresholdFailure] = field(default_factory=list)
    groups: list[GroupSummary] = field(default_factory=list)
    # The inputs held no reference answer (no ground-truth file to read for a report).
    reference_free: bool = False
    # The offline metrics left empty for some questions, and why (a table after the summary).
    not_applicable: list[EmptyMetric] = field(default_factory=list)


@dataclass(frozen=True)
class _JudgeSetup:
    """What judging needs; absent when the run computes offline metrics only.

    ``judge`` says whether the precision/recall/accuracy judge runs (its prompt is then
    ``system_prompt``); ``llm`` holds the other model-judged families' setup.
    """

    api_key: str
    model: ModelInfo
    system_prompt: SystemPrompt
    judge: bool = True
    llm: LlmFamilySetup = field(default_factory=lambda: LlmFamilySetup((), None, "", None))


# The Prompt summary line of a run without the judge: each LLM family has its own prompts.
FAMILY_PROMPTS_ORIGIN = "built-in prompts of the families"


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
        request.model,
        request.metrics,
        request.prompt_path,
        request.seed,
        request.delay_seconds,
        request.max_retries,
        request.timeout_seconds,
        request.output_dir,
        request.checkpoint_dir,
        ",".join(request.hedge_phrases),
        request.concurrency,
        request.batch,
        request.use_cache,
        request.limit,
        request.max_cost,
        request.score_missing,
        request.llm_options.rubric_path,
        request.llm_options.answer_relevance,
        request.working_directory,
        request.dataset_path,
        request.group_by,
    )


def _missing_key_message(families: MetricFamilies) -> str:
    message = (
        "ANTHROPIC_API_KEY is not set. Set ANTHROPIC_API_KEY or put it in a .env file "
        "in this folder (ANTHROPIC_API_KEY=sk-ant-...)"
    )
    if not (families.wants_all or families.offline):
        return message
    from rag_evaluator.offline.families import runnable_offline_families

    runnable = runnable_offline_families()
    if runnable:
        message += f", or leave the judge out with --metrics {','.join(runnable)}"
    return message


def _judge_setup(
    request: EvaluateRequest,
    settings: Settings,
    families: MetricFamilies,
    llm: LlmFamilySetup,
) -> _JudgeSetup | None:
    if not families.model_judged:
        return None
    model = resolve_model(request.model)
    if settings.api_key is None:
        raise ConfigError(_missing_key_message(families))
    if not families.judge:
        if request.prompt_path is not None:
            logger.warning(
                "--prompt is the judge family's prompt and the judge does not run: it is ignored"
            )
        return _JudgeSetup(
            settings.api_key, model, SystemPrompt("", FAMILY_PROMPTS_ORIGIN), False, llm
        )
    prompt = load_system_prompt(request.prompt_path, request.working_directory)
    return _JudgeSetup(settings.api_key, model, prompt, True, llm)


def _check_request(request: EvaluateRequest) -> None:
    if request.batch and request.concurrency != 1:
        logger.info("--concurrency is not used with --batch (the API runs the batch)")
    if request.max_cost is not None and request.max_cost <= 0:
        raise UsageError(
            f"--max-cost must be more than 0 dollars (got {request.max_cost:g}). Try --max-cost 5"
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
    _check_request(request)
    families = parse_metric_families(request.metrics)
    llm = prepare_llm_families(families.llm, request.llm_options, request.working_directory)
    if families.model_judged:
        resolve_model(request.model)  # an unknown model is reported before any file is read

    request = _settle_ground_truth(request, families, llm)
    files, selection, metadata_columns, reference_free = _load_inputs(request)
    group_by = _group_column(request, metadata_columns)
    exclusion_messages = exclusion_warnings(selection.exclusions)
    for message in exclusion_messages:
        logger.warning(message)
    items = selection.items
    families = resolve_all(families, items)
    reference_note = ""
    if reference_free:
        request = replace(request, reference_free=True)
        families, llm, reference_note = _reference_free_families(request, families, llm)
    check_offline_ready(families, request.metric_options)
    # A threshold on a metric this run will not compute is a usage error, found before any
    # question is scored or paid for.
    setup = _judge_setup(request, settings, families, llm)
    judged = _judged_families(request, setup) if setup else ()
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
        return _offline_run(request, interaction, base_plan, items, started_at)
    return _judged_run(request, settings, interaction, base_plan, setup, items, started_at)


@dataclass(frozen=True)
class _OfflineScores:
    """The offline families' columns, each question's values, and the metrics left empty."""

    columns: list[str]
    scores: dict[int, dict[str, float | str | None]]
    empty: list[EmptyMetric]


def _group_column(request: EvaluateRequest, metadata_columns: Sequence[str]) -> str | None:
    """The metadata column ``--group-by`` names, as spelled in the inputs."""
    if request.group_by is None:
        return None
    source = (
        request.dataset_path.name
        if request.dataset_path is not None
        else request.questions_path.name
    )
    return resolve_group_column(request.group_by, list(metadata_columns), source)


def _offline_scores(
    request: EvaluateRequest,
    plan: RunPlan,
    selected: Sequence[EvaluationItem],
    interaction: RunInteraction,
) -> _OfflineScores:
    """The offline families' columns and each question's values (none without families)."""
    return _OfflineScores(
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


def _offline_run(
    request: EvaluateRequest,
    interaction: RunInteraction,
    plan: RunPlan,
    items: Sequence[EvaluationItem],
    started_at: datetime,
) -> RunOutcome:
    """A run of offline metric families only: no key, no call, no prompt, no checkpoint."""
    selected = list(items) if request.limit is None else list(items)[: request.limit]
    interaction.show_plan(plan)
    prepare_output_directory(request.output_dir)
    offline = _offline_scores(request, plan, selected, interaction)
    metric_columns = offline.columns
    interaction.finished()
    rows = ResultRows(selected, None, offline.scores)
    carried = _carried_columns(plan, (), metric_columns)
    facts = RunFacts(
        judged=False,
        coverage=plan.coverage,
        metric_columns=metric_columns,
        metadata_columns=carried,
    )
    tally, group_tally = _tally_rows(rows, plan.group_by, (), metric_columns)
    summary = summary_lines(tally, facts)
    groups = group_tally.summaries() if group_tally is not None else []
    results_path, json_path = write_results(
        request.output_dir,
        started_at,
        summary,
        rows,
        families=[],
        metric_columns=metric_columns,
        with_json=request.write_json,
        metadata_columns=carried,
        groups=groups,
    )
    logger.info("Results written to %s", results_path)
    return RunOutcome(
        False,
        EXIT_ALL_SCORED,
        results_path,
        json_path,
        summary,
        threshold_failures=failed_thresholds(request.fail_under, tally.observed_values()),
        groups=groups,
        reference_free=request.reference_free,
        not_applicable=offline.empty,
    )


def _tally_rows(
    rows: ResultRows,
    group_by: str | None,
    families: Sequence[JudgedFamily[Any]],
    metric_columns: Sequence[str],
) -> tuple[RowTally, GroupTally | None]:
    """The summary of the whole table and, with --group-by, of each group: one pass."""
    tally = RowTally(families, metric_columns)
    group_tally = GroupTally(group_by, families, metric_columns) if group_by else None
    for row in rows:
        tally.add(row)
        if group_tally is not None:
            group_tally.add(row)
    return tally, group_tally


def _judged_families(request: EvaluateRequest, setup: _JudgeSetup) -> tuple[JudgedFamily[Any], ...]:
    """The run's model-judged families in column order: the judge, then the LLM families."""
    judge = [JudgeFamily(setup.system_prompt.text, request.hedge_phrases)] if setup.judge else []
    return (*judge, *build_llm_families(setup.llm))


def _checkpoint_location(request: EvaluateRequest, settings: Settings) -> Path:
    """The checkpoint of a run over these three input files (named after their paths)."""
    directory = resolve_checkpoint_directory(request.checkpoint_dir, settings.checkpoint_dir)
    paths = [str(path.resolve()) for path in request.input_paths]
    return checkpoint_path(directory, checkpoint_key(paths))


def _open_cache(request: EvaluateRequest, settings: Settings) -> ResponseCache:
    if not request.use_cache:
        return ResponseCache(None)
    directory = settings.cache_dir or default_cache_directory()
    from rag_evaluator.llm.response_cache import CACHE_FILE_NAME

    return ResponseCache(directory / CACHE_FILE_NAME)


def _make_client(
    request: EvaluateRequest, setup: _JudgeSetup, stop: threading.Event, spent_usd: float
) -> ModelClient:
    # Imported here: the SDK takes seconds to import, which every other command would pay.
    from rag_evaluator.llm.client import ClientSettings, ModelClient
    from rag_evaluator.llm.limits import CallLimiter, SpendingCap, call_spacing
    from rag_evaluator.llm.transport import Transport

    transport = Transport(setup.api_key, request.timeout_seconds)
    concurrency = request.concurrency if not request.batch else 1
    return ModelClient(
        transport,
        ClientSettings(model=setup.model, max_retries=request.max_retries, batch=request.batch),
        limiter=CallLimiter(
            concurrency, call_spacing(request.delay_seconds, concurrency), stop=stop
        ),
        # The budget covers the whole run: what the resumed sessions spent counts.
        cap=SpendingCap(request.max_cost, already_spent_usd=spent_usd),
        api_key=setup.api_key,
    )


def _judged_run(
    request: EvaluateRequest,
    settings: Settings,
    interaction: RunInteraction,
    base_plan: RunPlan,
    setup: _JudgeSetup,
    items: Sequence[EvaluationItem],
    started_at: datetime,
) -> RunOutcome:
    judged = _judged_families(request, setup)
    options = JudgingOptions(
        model=setup.model,
        families=judged,
        prompt_origin=setup.system_prompt.origin,
        input_paths=request.input_paths,
        seed=request.seed,
        limit=request.limit,
        concurrency=request.concurrency,
        batch=request.batch,
        use_cache=request.use_cache,
        exact_estimate=request.exact_estimate,
        score_missing=request.score_missing,
        settings={"score_missing": request.score_missing},
    )
    stop = threading.Event()
    with ExitStack() as hold:
        checkpoint_file = _checkpoint_location(request, settings)
        # Held until the run ends (the OS drops it if the process dies), so two runs over
        # the same files cannot interleave their answers in one checkpoint.
        hold.enter_context(lock_run(checkpoint_file))
        cache = _open_cache(request, settings)
        hold.callback(cache.close)
        checkpoint = prepare_checkpoint(
            options,
            interaction,
            {item.question_number for item in items},
            checkpoint_file,
            started_at,
        )
        resumed = checkpoint.resume_from
        client = _make_client(request, setup, stop, resumed.spent_usd if resumed else 0.0)
        hold.callback(client.close)
        plan = plan_judging(
            options,
            checkpoint,
            items,
            cache,
            answers_name=request.input_paths[2].name,
            context_window_tokens=client.context_window_tokens,
        )
        if plan.sends_calls:
            if not interaction.can_confirm():
                raise UsageError(
                    "There is no terminal to ask 'Proceed?' before paying for the calls. "
                    "Run with --yes (-y) to confirm in scripts and CI"
                )
            # Free, and before the user is asked to pay: a bad key or model stops here.
            window = client.check_model()
            if window is not None and window != setup.model.context_window_tokens:
                plan = plan_judging(
                    options,
                    checkpoint,
                    items,
                    cache,
                    answers_name=request.input_paths[2].name,
                    context_window_tokens=window,
                )
            if request.exact_estimate and plan.sends_calls:
                plan = plan_judging(
                    options,
                    checkpoint,
                    items,
                    cache,
                    answers_name=request.input_paths[2].name,
                    context_window_tokens=client.context_window_tokens,
                    count_tokens=client.count_input_tokens,
                )
        run_plan = _run_plan(base_plan, request, setup, plan)
        selected_numbers = set(plan.selected)
        selected = [item for item in items if item.question_number in selected_numbers]
        for warning in ragas_input_warnings(
            setup.llm.names, selected, references=setup.llm.references
        ):
            logger.warning(warning)
        interaction.show_plan(run_plan)
        if plan.sends_calls and not interaction.confirm("Proceed?", default=True):
            logger.info("The user declined to proceed; nothing was evaluated")
            return RunOutcome(declined=True, exit_code=EXIT_ALL_SCORED)
        # Found out now, not after every question has been paid for.
        prepare_output_directory(request.output_dir)
        if plan.sends_calls and setup.llm.question_embeddings is not None:
            # Loaded now, so a model that cannot load stops the run before the first call.
            setup.llm.question_embeddings.load()
        offline = _offline_scores(request, base_plan, selected, interaction)
        batches = None
        if request.batch:
            from rag_evaluator.llm.batches import BatchRunner

            batches = BatchRunner(
                client, stop, poll_seconds=request.batch_poll_seconds, interaction=interaction
            )
        judged_records = judge_pending(
            plan,
            options,
            lambda model_request, label: client.call(model_request, label=label),
            cache,
            interaction,
            stop,
            batches,
        )
        interaction.finished()
        outcome = _write_outcome(
            request,
            base_plan,
            setup,
            plan,
            selected,
            judged_records,
            offline,
            started_at,
            judged,
            cache,
        )
        if judged_records.budget_stop is not None:
            raise _budget_stop(judged_records.budget_stop, outcome)
        return outcome


def _run_plan(
    base: RunPlan, request: EvaluateRequest, setup: _JudgeSetup, plan: JudgingPlan
) -> RunPlan:
    checkpoint = plan.checkpoint
    pending = sum(1 for job in plan.jobs if job.families or job.known)
    return replace(
        base,
        model=setup.model,
        prompt_origin=setup.system_prompt.origin,
        seed=checkpoint.header.seed,
        seed_was_drawn=checkpoint.resume_from is None and request.seed is None,
        selected_count=len(plan.selected),
        resumed_count=len(plan.done),
        pending_count=pending,
        cached_count=plan.cached_count,
        no_information_count=plan.shortcut_count,
        missing_answer_count=plan.missing_answer_count,
        too_long=plan.too_long,
        estimate=plan.estimate if plan.sends_calls else None,
        checkpoint_path=checkpoint.path,
        concurrency=request.concurrency,
        batch=request.batch,
        max_cost=request.max_cost,
        family_notes=tuple(setup.llm.describe()),
    )


def _write_outcome(
    request: EvaluateRequest,
    base_plan: RunPlan,
    setup: _JudgeSetup,
    plan: JudgingPlan,
    selected: Sequence[EvaluationItem],
    judged_records: JudgedRecords,
    offline: _OfflineScores,
    started_at: datetime,
    judged: Sequence[JudgedFamily[Any]],
    cache: ResponseCache,
) -> RunOutcome:
    records = judged_records.records
    partial = None
    if judged_records.budget_stop is not None:
        # What the money bought: the finished questions only, marked partial.
        partial = (
            f"stopped at the --max-cost budget after {len(records)} of {len(selected)} questions"
        )
        selected = [item for item in selected if item.question_number in records]
    # Read back from the checkpoint twice, to summarise and to write: never held whole.
    metric_columns = offline.columns
    rows = ResultRows(selected, records, offline.scores)
    tally, group_tally = _tally_rows(rows, base_plan.group_by, judged, metric_columns)
    estimate = plan.estimate
    carried = _carried_columns(base_plan, judged, metric_columns)
    facts = RunFacts(
        judged=True,
        model_id=setup.model.model_id,
        seed=plan.checkpoint.header.seed,
        prompt_origin=setup.system_prompt.origin,
        usage=tally.usage,
        calls=tally.calls,
        retries=tally.retries,
        cached_questions=tally.cached_questions,
        cost_usd=tally.cost_usd,
        estimate=dollar_range(estimate.low_usd, estimate.high_usd) if plan.sends_calls else None,
        batch=request.batch,
        coverage=base_plan.coverage,
        metric_columns=metric_columns,
        metadata_columns=carried,
        partial=partial,
    )
    summary = summary_lines(tally, facts)
    groups = group_tally.summaries() if group_tally is not None else []
    try:
        results_path, json_path = write_results(
            request.output_dir,
            started_at,
            summary,
            rows,
            families=judged,
            metric_columns=metric_columns,
            with_json=request.write_json,
            metadata_columns=carried,
            groups=groups,
        )
    finally:
        records.close()
    logger.info("Results written to %s", results_path)
    if plan.remaining_after_limit == 0 and partial is None:
        remove_checkpoint(plan.checkpoint.path)
    unscored = tally.unscored_questions
    logger.info("Response cache: %d hit(s)", cache.hits)
    return RunOutcome(
        declined=False,
        exit_code=EXIT_SOME_UNSCORED if unscored else EXIT_ALL_SCORED,
        results_path=results_path,
        json_path=json_path,
        summary=summary,
        unscored_count=unscored,
        remaining_after_limit=plan.remaining_after_limit,
        threshold_failures=failed_thresholds(request.fail_under, tally.observed_values()),
        groups=groups,
        reference_free=request.reference_free,
        not_applicable=offline.empty,
    )


def _budget_stop(error: BudgetExhaustedError, outcome: RunOutcome) -> BudgetExhaustedError:
    """The budget stop, saying where the partial results are."""
    written = f"The results of the finished questions are in {outcome.results_path}"
    if outcome.json_path is not None:
        written += f" and {outcome.json_path}"
    stopped = BudgetExhaustedError(f"{error.message.rstrip('.')}. {written}, marked partial")
    stopped.outcome = outcome
    return stopped


def _load_inputs(
    request: EvaluateRequest,
) -> tuple[list[InputFileInfo], Selection, list[str], bool]:
    """The input files' sizes, the questions to score, the metadata columns and whether the
    inputs hold no reference answer.

    The loaded rows are dropped on return: only the selected items live on through the run.
    """
    if request.dataset_path is not None:
        inputs = load_dataset(request.dataset_path)
    else:
        inputs = load_input_files(
            request.questions_path,
            None if request.reference_free else request.ground_truth_path,
            request.answers_path,
        )
    files = (
        [InputFileInfo("Dataset", request.dataset_path, len(inputs.dataset.rows))]
        if request.dataset_path is not None and inputs.dataset is not None
        else [
            InputFileInfo("Questions", request.questions_path, len(inputs.questions.rows)),
            *(
                []
                if inputs.reference_free
                else [
                    InputFileInfo(
                        "Ground truth", request.ground_truth_path, len(inputs.ground_truth.rows)
                    )
                ]
            ),
            InputFileInfo("Answers", request.answers_path, len(inputs.answers.rows)),
        ]
    )
    selection = select_items(
        inputs.questions,
        inputs.ground_truth,
        inputs.answers,
        score_missing=request.score_missing,
        reference_free=inputs.reference_free,
    )
    return files, selection, inputs.metadata_columns, inputs.reference_free


def _reference_free_choice(families: MetricFamilies, llm: LlmFamilySetup) -> ReferenceFreeFamilies:
    return without_references(
        families.judge,
        llm.names,
        families.offline,
        rubric_reads_reference=llm.rubric_reads_reference,
    )


def _settle_ground_truth(
    request: EvaluateRequest, families: MetricFamilies, llm: LlmFamilySetup
) -> EvaluateRequest:
    """The three CSVs without ground_truth.csv (and no --ground-truth): a run without
    references when a family asked for can run without one, else the missing-file error
    with both fixes."""
    if (
        request.dataset_path is not None
        or request.ground_truth_given
        or request.ground_truth_path.exists()
    ):
        return request
    if _reference_free_choice(families, llm).empty and not families.wants_all:
        raise InputError(
            f"{request.ground_truth_path.name} not found. Create this file with columns: "
            f"{QUESTION_NUMBER}, {GROUND_TRUTH}, or run families that need no reference "
            f"answer, such as --metrics {_reference_free_suggestion()}",
            request.ground_truth_path,
        )
    return replace(request, reference_free=True)


def _reference_free_suggestion() -> str:
    """The offline families to suggest for a run without references (those installed)."""
    runnable = runnable_offline_families()
    return ",".join(family for family in (QUALITY, SEMANTIC) if family in runnable)


def _reference_free_families(
    request: EvaluateRequest, families: MetricFamilies, llm: LlmFamilySetup
) -> tuple[MetricFamilies, LlmFamilySetup, str]:
    """The families of a run without references, and the one line naming what it leaves
    out; an error when nothing asked for can run without references."""
    choice = _reference_free_choice(families, llm)
    if request.dataset_path is not None:
        where = f"in {request.dataset_path.name}"
    else:
        where = f"(no {request.ground_truth_path.name})"
    if choice.empty:
        source = request.dataset_path.name if request.dataset_path is not None else where
        raise InputError(
            f"{source} has no reference answers, and every family asked for compares the "
            f"answer with one ({', '.join(choice.wholly_left_out)}). Run families that need "
            f"none, such as --metrics {_reference_free_suggestion()}"
        )
    line = left_out_line(where, choice)
    logger.info("%s", line)
    return (
        replace(families, judge=False, llm=choice.llm, offline=choice.offline),
        replace(llm, names=choice.llm, references=False),
        line,
    )


def _carried_columns(
    plan: RunPlan, families: Sequence[JudgedFamily[Any]], metric_columns: Sequence[str]
) -> list[str]:
    """The metadata columns written to the results: those named like a results column are
    left out (with a warning), so that no header appears twice."""
    taken = set(results_columns(families, metric_columns))
    clashing = [name for name in plan.metadata_columns if name in taken]
    if clashing:
        logger.warning(
            "The metadata %s %s %s the name of a results column and %s not carried into "
            "the results. Rename %s in the inputs",
            "column" if len(clashing) == 1 else "columns",
            ", ".join(repr(name) for name in clashing),
            "has" if len(clashing) == 1 else "have",
            "is" if len(clashing) == 1 else "are",
            "it" if len(clashing) == 1 else "them",
        )
    return [name for name in plan.metadata_columns if name not in taken]


def describe_too_long(numbers: Sequence[int]) -> str:
    return format_numbers(numbers, 10)
