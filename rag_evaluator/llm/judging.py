"""The model-judged part of an evaluate run: checkpoint, plan, cost estimate, the calls.

``prepare_judging`` settles the checkpoint (resume or not) and the seeded order; ``plan_judging``
works out what is left to send (finished questions, response-cache hits, questions scored
without a call, requests too long for the model) and what it will cost; ``judge_pending`` runs
the engine (direct calls or Message Batches), checkpointing every finished question. Nothing
here prints: questions to the user go through ``RunInteraction``.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from rag_evaluator.errors import (
    BudgetExhaustedError,
    CheckpointError,
    JudgeFatalError,
    JudgeUnavailableError,
)
from rag_evaluator.families.base import (
    TOO_LONG,
    CallEstimate,
    FamilyResult,
    JudgedFamily,
    QuestionRecord,
    first_stage,
)
from rag_evaluator.inputs.files import read_input_bytes
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.inputs.selection import format_numbers, shuffled_order
from rag_evaluator.llm.checkpoint.records import StoredRecords
from rag_evaluator.llm.checkpoint.store import (
    CheckpointHeader,
    CheckpointWriter,
    LoadedCheckpoint,
    StageKey,
    family_result_from_json,
    family_result_to_json,
    keep_declined_checkpoint,
    load_checkpoint,
    stored_records,
)
from rag_evaluator.llm.cost import CostEstimate, caches_system_prompt, estimate_cost
from rag_evaluator.llm.engine import NO_KNOWN_RESULTS, DirectEngine, QuestionJob, recorded
from rag_evaluator.llm.fingerprint import InputNames, fingerprint_differences, fingerprint_run
from rag_evaluator.llm.models import ModelInfo
from rag_evaluator.llm.requests import CallOutcome, FailureKind, ModelRequest, too_long_reason
from rag_evaluator.llm.response_cache import ResponseCache, cache_key
from rag_evaluator.llm.stopping import stop_on_signals

logger = logging.getLogger(__name__)

_SEED_RANGE = 1_000_000
# Token-count requests (--exact-estimate) sent at once, at the least.
_COUNT_WORKERS = 8


class EvaluationInterrupted(Exception):
    """Ctrl-C during a run; ``message`` says what was kept and how to resume."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ProgressUpdate:
    """A finished question, with the run's running totals."""

    finished: int
    total: int
    question_number: int
    calls: int
    cost_usd: float
    tallies: Mapping[str, tuple[int, int]]  # metric -> (ones, scored)


class JudgingInteraction(Protocol):
    """The part of ``RunInteraction`` the judged run needs."""

    def can_confirm(self) -> bool: ...

    def confirm(self, question: str, *, default: bool) -> bool: ...

    def info(self, message: str) -> None: ...

    def question_started(self, position: int, total: int, question_number: int) -> None: ...

    def question_finished(self, update: ProgressUpdate) -> None: ...


@dataclass(frozen=True)
class JudgingOptions:
    """The options of the model-judged part of a run."""

    model: ModelInfo
    families: tuple[JudgedFamily[Any], ...]
    prompt_origin: str
    # evaluate's three input files (generate plans its own checkpoint and passes none)
    input_paths: tuple[Path, ...] = ()
    seed: int | None = None
    limit: int | None = None
    concurrency: int = 1
    batch: bool = False
    use_cache: bool = True
    exact_estimate: bool = False
    score_missing: bool = False
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PreparedCheckpoint:
    """Where the run's checkpoint is and whether it resumes an earlier one."""

    path: Path
    header: CheckpointHeader
    resume_from: LoadedCheckpoint | None
    replaces: Path | None  # an unfinished run's checkpoint that the user chose not to resume


@dataclass
class JudgingPlan:
    """What the judged part of the run will do."""

    checkpoint: PreparedCheckpoint
    selected: list[int]  # the question numbers of this run, in the seeded order (--limit applied)
    done: Mapping[int, QuestionRecord]  # finished before: a resumed checkpoint's records
    jobs: list[QuestionJob]
    cached_count: int
    shortcut_count: int
    missing_answer_count: int
    too_long: list[int]
    estimate: CostEstimate
    sends_calls: bool
    remaining_after_limit: int


def draw_seed() -> int:
    return secrets.randbelow(_SEED_RANGE)


def _fingerprint(options: JudgingOptions) -> Any:
    questions, ground_truth, answers = options.input_paths
    judge_prompt = next((getattr(family, "system_prompt", "") for family in options.families), "")
    return fingerprint_run(
        read_input_bytes(questions),
        read_input_bytes(ground_truth),
        read_input_bytes(answers),
        options.model.model_id,
        judge_prompt,
        families=[family.name for family in options.families],
        settings={
            "families": {
                family.name: {"version": family.version, "identity": family.identity()}
                for family in options.families
            },
            **options.settings,
        },
    )


def prepare_checkpoint(
    options: JudgingOptions,
    interaction: JudgingInteraction,
    question_numbers: set[int],
    path: Path,
    started_at: datetime,
) -> PreparedCheckpoint:
    """Find this run's checkpoint and decide, with the user, whether to resume it.

    Nothing is deleted here: a declined checkpoint is moved aside only once the user has said
    ``Proceed`` and the first question is about to be sent.
    """
    families = {family.name: family for family in options.families}
    fingerprint = _fingerprint(options)
    seed = options.seed if options.seed is not None else draw_seed()
    header = CheckpointHeader(
        fingerprint=fingerprint,
        seed=seed,
        order=shuffled_order(question_numbers, seed),
        prompt_origin=options.prompt_origin,
        input_paths=[str(item.resolve()) for item in options.input_paths],
        created_at=started_at.isoformat(timespec="seconds"),
    )
    loaded = load_checkpoint(path, families)
    if loaded is None:
        return PreparedCheckpoint(path, header, None, None)
    if not (loaded.results or loaded.stages or loaded.open_batches or loaded.unconfirmed_intents):
        logger.info("Checkpoint %s holds no finished question; starting afresh", path)
        return PreparedCheckpoint(path, header, None, None)
    total = len(loaded.header.order)
    finished = len(loaded.results)
    names = InputNames(*(item.name for item in options.input_paths))
    differences = fingerprint_differences(loaded.header.fingerprint, fingerprint, names)
    if differences:
        changed = ", ".join(differences)
        logger.warning(
            "An unfinished run of these files (%s of %s questions done, checkpoint %s) "
            "cannot be resumed: %s changed since",
            finished,
            total,
            path,
            changed,
        )
        if not interaction.confirm("Discard it and start a new run?", default=False):
            raise CheckpointError(
                f"The unfinished run's checkpoint was kept because {changed} changed. "
                "To resume it, run again with the same inputs, model, prompt and settings; "
                f"to start over, answer y or delete {path}"
            )
        return PreparedCheckpoint(path, header, None, path)
    if set(loaded.header.order) != question_numbers:
        raise CheckpointError(
            f"The checkpoint {path} lists other questions than the input files. "
            f"Delete {path} to start the run over"
        )
    started = loaded.header.created_at.replace("T", " ")
    interaction.info(
        f"Found an unfinished run of these files started {started}: "
        f"{finished} of {total} questions done (seed {loaded.header.seed})."
    )
    if interaction.confirm("Resume previous run?", default=True):
        if options.seed is not None and options.seed != loaded.header.seed:
            logger.warning(
                "--seed %s is ignored: the resumed run keeps its own order (seed %s)",
                options.seed,
                loaded.header.seed,
            )
        return PreparedCheckpoint(path, loaded.header, loaded, None)
    return PreparedCheckpoint(path, header, None, path)


def family_cache_key(family: JudgedFamily[Any], item: EvaluationItem, model_id: str) -> str:
    return cache_key(
        {
            "family": family.name,
            "version": family.version,
            "model": model_id,
            "identity": family.identity(),
            "inputs": family.cache_inputs(item),
        }
    )


def _cached_result(
    cache: ResponseCache, family: JudgedFamily[Any], key: str
) -> FamilyResult | None:
    stored = cache.get(key)
    if stored is None:
        return None
    try:
        result = family_result_from_json(family, stored)
    except (KeyError, TypeError, ValueError, RecursionError) as exc:
        reason = f"a {family.name} result that cannot be read: {exc!r}"
        cache.report_damaged_entry(key, reason[:200])
        return None
    # This run pays nothing for it.
    return replace(result, usage=TokenUsage(), calls=0, cost_usd=0.0, cached=True)


def plan_judging(
    options: JudgingOptions,
    checkpoint: PreparedCheckpoint,
    items: Sequence[EvaluationItem],
    cache: ResponseCache,
    *,
    answers_name: str,
    context_window_tokens: int,
    count_tokens: Callable[[ModelRequest], int] | None = None,
) -> JudgingPlan:
    """What is left to send, what it will cost, and what needs no call at all."""
    by_number = {item.question_number: item for item in items}
    order = checkpoint.header.order
    selected = order if options.limit is None else order[: options.limit]
    done: Mapping[int, QuestionRecord] = {}
    if checkpoint.resume_from is not None:
        checkpoint.resume_from.results.keep_only(by_number)
        done = checkpoint.resume_from.results
    jobs: list[QuestionJob] = []
    # One running sum per family: a list per question would hold a million estimates.
    totals: dict[str, CallEstimate] = {}
    counted: dict[str, int] = {}  # the questions each sum covers
    # The first requests are only kept to be counted by the API (--exact-estimate).
    first_requests: list[tuple[str, ModelRequest, CallEstimate]] = []
    cached_questions = 0
    shortcut_questions = 0
    missing_answers = 0
    sending_questions = 0
    too_long: list[int] = []
    missing_note = f"no answer in {answers_name}: scored 0 without a call (--score-missing)"
    for position, number in enumerate(selected, start=1):
        if number in done:
            continue
        item = by_number[number]
        known: dict[str, FamilyResult] = {}
        to_run: list[JudgedFamily[Any]] = []
        sends = shortcut = False
        if item.answer_missing:
            missing_answers += 1
        for family in options.families:
            if item.answer_missing:
                result = family.missing_answer(missing_note)
                if result is not None:
                    known[family.name] = result
                continue
            cached = None
            if options.use_cache and cache.enabled:
                key = family_cache_key(family, item, options.model.model_id)
                cached = _cached_result(cache, family, key)
            if cached is not None:
                known[family.name] = cached
                continue
            stage = first_stage(family.run(item))
            if not isinstance(stage, tuple):
                shortcut = True  # scored without a call (e.g. both say there is no information)
                to_run.append(family)
                continue
            reasons = [
                reason
                for request in stage
                if (reason := too_long_reason(request, context_window_tokens)) is not None
            ]
            if reasons:
                known[family.name] = family.unscored(reasons[0], TOO_LONG)
                too_long.append(number)
                continue
            estimate = family.estimate(item, stage)
            totals[family.name] = totals.get(family.name, CallEstimate.none()) + estimate
            counted[family.name] = counted.get(family.name, 0) + 1
            if count_tokens is not None:
                first_requests.append((family.name, stage[0], estimate))
            to_run.append(family)
            sends = True
        if known and not to_run and all(result.cached for result in known.values()):
            cached_questions += 1
        shortcut_questions += shortcut and not sends
        sending_questions += sends
        jobs.append(QuestionJob(number, item, tuple(to_run), known or NO_KNOWN_RESULTS, position))
    estimates = {name: [total] for name, total in totals.items()}
    family_questions: dict[str, int] | None = counted
    if count_tokens is not None and first_requests:
        estimates = _exact_estimates(first_requests, count_tokens, options.concurrency)
        family_questions = None
    caching = {
        family.name: caches_system_prompt(_system_prompt(family), options.model)
        for family in options.families
    }
    estimate = estimate_cost(
        {name: values for name, values in estimates.items() if values},
        options.model,
        batch=options.batch,
        prompt_caching=caching,
        questions=sending_questions,
        cached_questions=cached_questions,
        family_questions=family_questions,
    )
    sends_calls = any(values for values in estimates.values())
    chosen = set(selected)
    remaining = sum(1 for number in order if number not in done and number not in chosen)
    return JudgingPlan(
        checkpoint=checkpoint,
        selected=list(selected),
        done=done,
        jobs=jobs,
        cached_count=cached_questions,
        shortcut_count=shortcut_questions,
        missing_answer_count=missing_answers,
        too_long=sorted(too_long),
        estimate=estimate,
        sends_calls=sends_calls,
        remaining_after_limit=remaining,
    )


def _system_prompt(family: JudgedFamily[Any]) -> str:
    return str(getattr(family, "system_prompt", ""))


def _exact_estimates(
    first_requests: Sequence[tuple[str, ModelRequest, CallEstimate]],
    count_tokens: Callable[[ModelRequest], int],
    concurrency: int,
) -> dict[str, list[CallEstimate]]:
    """Correct the input-token estimates by the API's own count of each first request.

    A family's estimate is scaled by the ratio of the counted tokens to the first request's
    local estimate (low and high alike): for a one-call family that is exactly the count per
    call; for a family whose calls differ (RAGAS) the first call's ratio stands for all.
    """
    distinct: dict[str, ModelRequest] = {}
    for _, request, _ in first_requests:
        distinct.setdefault(request.digest(), request)
    # Free requests, not paced by --delay: as many at once as the calls may run, at least a few.
    with ThreadPoolExecutor(max_workers=max(_COUNT_WORKERS, concurrency)) as pool:
        counted = dict(zip(distinct, pool.map(count_tokens, distinct.values()), strict=True))
    exact: dict[str, list[CallEstimate]] = {}
    for family, request, estimate in first_requests:
        tokens = counted[request.digest()]
        exact.setdefault(family, []).append(
            replace(
                estimate,
                input_tokens_low=estimate.input_tokens_low * tokens / request.input_tokens_low(),
                input_tokens_high=(
                    estimate.input_tokens_high * tokens / request.input_tokens_high()
                ),
            )
        )
    logger.info("Exact estimate: counted %d distinct first request(s)", len(distinct))
    return exact


class _Recorder:
    """Writes the checkpoint and the response cache as the engine finishes things."""

    def __init__(
        self,
        writer: CheckpointWriter,
        records: StoredRecords,
        plan: JudgingPlan,
        options: JudgingOptions,
        cache: ResponseCache,
        interaction: JudgingInteraction,
    ) -> None:
        self.writer = writer
        self.plan = plan
        self.cache = cache
        self.model_id = options.model.model_id
        self.interaction = interaction
        self.families = {family.name: family for family in options.families}
        # Every finished question, the resumed ones first: where its checkpoint line is,
        # not the record itself (a million records would not fit in memory).
        self.records = records
        self.total = len(plan.selected)
        self.finished_count = len(records)

    def question_started(self, job: QuestionJob) -> None:
        self.interaction.question_started(job.position, self.total, job.question_number)

    def question_finished(self, record: QuestionRecord, item: EvaluationItem) -> None:
        self.records.add(record, self.writer.append(record))
        self.finished_count += 1
        if self.cache.enabled:
            for name, result in record.results.items():
                if result.scored and not result.cached and result.calls:
                    family = self.families[name]
                    key = family_cache_key(family, item, self.model_id)
                    self.cache.put(key, name, family_result_to_json(family, result))
        self.interaction.question_finished(
            ProgressUpdate(
                self.finished_count,
                self.total,
                record.question_number,
                self.records.calls,
                self.records.cost_usd,
                {metric: (ones, scored) for metric, (ones, scored) in self.records.tallies.items()},
            )
        )

    def stage_finished(
        self,
        key: StageKey,
        digest: str,
        outcomes: Sequence[CallOutcome | None],
        batches: Sequence[str] = (),
    ) -> None:
        """Journal a stage's outcomes so far (``None``: not answered yet), with the Message
        Batches whose results they hold. A call that ran out of transient retries, or was cut
        short by a stop, is kept pending: a resume asks it again (the API may be back),
        carrying what its calls paid for."""
        kept = [
            None if outcome is None or _paid_nothing(outcome) else recorded(outcome)
            for outcome in outcomes
        ]
        if any(outcome is not None for outcome in kept):
            self.writer.append_stage(key, digest, kept, batches)


def _paid_nothing(outcome: CallOutcome) -> bool:
    """A transient failure that no call paid for: nothing worth keeping."""
    return outcome.failure is FailureKind.TRANSIENT and not outcome.calls and not outcome.cost_usd


_RESUME_HINT = "run the same command again to resume"


def with_kept_questions(message: str, finished: int) -> str:
    """A fatal error's message, plus what was saved and (unless it says so) how to resume."""
    kept = (
        "The finished question is kept"
        if finished == 1
        else f"The {finished} finished questions are kept"
    )
    message = message.rstrip(".")
    if _RESUME_HINT in message.lower() or "again with a higher --max-cost" in message:
        return f"{message}. {kept} in the checkpoint"
    return f"{message}. {kept}: {_RESUME_HINT} once this is fixed"


def open_writer(
    plan: JudgingPlan, families: Mapping[str, JudgedFamily[Any]], interaction: JudgingInteraction
) -> CheckpointWriter:
    """The checkpoint writer of the run: the resumed file, or a fresh one (keeping a declined
    run's file aside, never deleting it)."""
    checkpoint = plan.checkpoint
    if checkpoint.resume_from is not None:
        return CheckpointWriter.resume(checkpoint.resume_from, families)
    if checkpoint.replaces is not None:
        kept = keep_declined_checkpoint(checkpoint.replaces, _created_at(checkpoint.replaces))
        if kept is not None:
            interaction.info(f"The earlier unfinished run's checkpoint was kept as {kept}")
    return CheckpointWriter.create(checkpoint.path, checkpoint.header, families)


def _created_at(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            header = json.loads(handle.readline())
    except (OSError, ValueError, RecursionError):
        return ""
    value = header.get("created_at", "") if isinstance(header, dict) else ""
    return value if isinstance(value, str) else ""


class BatchRunning(Protocol):
    """What ``judge_pending`` needs of a Message Batches runner."""

    def run(self, jobs: Sequence[QuestionJob], context: Any) -> None: ...

    def interrupt_note(self) -> str | None: ...


@dataclass
class JudgedRecords:
    """The finished questions of a judged run (read back from the checkpoint), and, when the
    ``--max-cost`` budget stopped it early, why."""

    records: StoredRecords
    budget_stop: BudgetExhaustedError | None = None


def judge_pending(
    plan: JudgingPlan,
    options: JudgingOptions,
    call: Callable[[ModelRequest, str], CallOutcome],
    cache: ResponseCache,
    interaction: JudgingInteraction,
    stop: threading.Event,
    batches: BatchRunning | None = None,
) -> JudgedRecords:
    """Finish every planned question, checkpointing each; every finished record by number,
    read back from the checkpoint when asked for.

    A budget stop returns what was finished with the error; Ctrl-C, a fatal error or an
    outage raise, once the calls in flight are kept. Consumes ``plan.jobs``.
    """
    families = {family.name: family for family in options.families}
    writer = open_writer(plan, families, interaction)
    resumed = plan.checkpoint.resume_from
    records = resumed.results if resumed is not None else stored_records(writer.path, families)
    recorder = _Recorder(writer, records, plan, options, cache, interaction)
    logger.info(
        "Checkpoint %s (%s of %s done, seed %s, %s)",
        plan.checkpoint.path,
        len(plan.done),
        len(plan.selected),
        plan.checkpoint.header.seed,
        "resumed" if resumed is not None else "new run",
    )
    interrupt = threading.Event()
    try:
        with stop_on_signals(interrupt, stop):
            _run_engine(plan, options, call, recorder, stop, interrupt, batches)
    except BudgetExhaustedError as exc:
        stop.set()
        return JudgedRecords(records, exc)
    except KeyboardInterrupt:
        stop.set()
        raise _interrupted(plan, recorder, batches) from None
    except JudgeFatalError as exc:
        stop.set()
        raise _with_kept(exc, recorder.finished_count) from exc
    finally:
        writer.close()
    return JudgedRecords(records)


def _run_engine(
    plan: JudgingPlan,
    options: JudgingOptions,
    call: Callable[[ModelRequest, str], CallOutcome],
    recorder: _Recorder,
    stop: threading.Event,
    interrupt: threading.Event,
    batches: BatchRunning | None,
) -> None:
    """The calls of every planned question, direct or as Message Batches."""
    resumed = plan.checkpoint.resume_from
    journal = resumed.stages if resumed is not None else {}
    # Handed over, not kept: the engine lets go of each job once its question is open.
    jobs = deque(plan.jobs)
    plan.jobs.clear()
    if batches is not None:
        batches.run(jobs, (recorder.writer, recorder, journal))
        return

    def stopping(in_flight: int) -> None:
        if in_flight:
            recorder.interaction.info(
                f"Stopping: waiting for {in_flight} call(s) in flight so that what they paid "
                "for is kept (Ctrl-C again to quit at once)"
            )

    DirectEngine(
        call,
        recorder,
        concurrency=options.concurrency,
        stop=stop,
        journal=journal,
        on_start=recorder.question_started,
        interrupt=interrupt,
        on_stopping=stopping,
    ).run(jobs)


def _interrupted(
    plan: JudgingPlan, recorder: _Recorder, batches: BatchRunning | None
) -> EvaluationInterrupted:
    finished = recorder.finished_count
    # The command prints the message below; the log alone gets this record.
    logger.warning(
        "Interrupted after %s of %s questions",
        finished,
        len(plan.selected),
        extra={"terminal": False},
    )
    note = batches.interrupt_note() if batches is not None else None
    return EvaluationInterrupted(
        f"Interrupted after {finished} of {len(plan.selected)} questions; they are saved "
        f"in the checkpoint {plan.checkpoint.path}. "
        + (f"{note}. " if note else "")
        + "Run the same command again to resume"
    )


def _with_kept(exc: JudgeFatalError, finished: int) -> JudgeFatalError:
    """A fatal error (an outage too) whose message says what was kept, when anything was."""
    if not finished:
        return exc
    message = with_kept_questions(exc.message, finished)
    if isinstance(exc, JudgeUnavailableError):
        return JudgeUnavailableError(message, exc.questions_in_a_row)
    return type(exc)(message)


def too_long_message(numbers: Sequence[int]) -> str:
    return (
        f"Too long for the model, left unscored without a call: question "
        f"{format_numbers(numbers, 10)}"
    )
