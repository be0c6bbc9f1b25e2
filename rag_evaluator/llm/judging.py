"""The calls of a planned run: ``judge_pending`` runs the engine (direct calls or Message
Batches), checkpointing every finished question and journaling what unfinished ones paid for,
and turns every way of stopping into the error (or budget stop) the command reports. Nothing
here prints: the user is told through the interaction.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rag_evaluator.errors import (
    BudgetExhaustedError,
    EvaluationInterrupted,
    JudgeFatalError,
    JudgeUnavailableError,
)
from rag_evaluator.families.base import (
    JudgedFamily,
    QuestionRecord,
)
from rag_evaluator.families.jury.family import JuryFamily
from rag_evaluator.families.jury.results import JuryResult
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.llm.checkpoint.records import StoredRecords
from rag_evaluator.llm.checkpoint.store import (
    CheckpointWriter,
    RecordedOutcome,
    StageKey,
    family_result_to_json,
    keep_declined_checkpoint,
    stored_records,
)
from rag_evaluator.llm.engine import DirectEngine, QuestionJob, recorded
from rag_evaluator.llm.planning import (
    FamilyCacheKeys,
    JudgingOptions,
    JudgingPlan,
    juror_cache_keys,
)
from rag_evaluator.llm.requests import CallOutcome, FailureKind, ModelRequest
from rag_evaluator.llm.response_cache import ResponseCache
from rag_evaluator.llm.stopping import stop_on_signals

logger = logging.getLogger(__name__)

_SEED_RANGE = 1_000_000
# Token-count requests (--exact-estimate) sent at once, at the least.
_COUNT_WORKERS = 8


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
    """What the calls report to the command's terminal side."""

    def can_confirm(self) -> bool: ...

    def confirm(self, question: str, *, default: bool) -> bool: ...

    def info(self, message: str) -> None: ...

    def question_started(self, position: int, total: int, question_number: int) -> None: ...

    def question_finished(self, update: ProgressUpdate) -> None: ...


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
        self.model_key = options.model.key
        self.interaction = interaction
        self.families = {family.name: family for family in options.families}
        self.keys = FamilyCacheKeys(options.families, self.model_key)
        # Every finished question, the resumed ones first: where its checkpoint line is,
        # not the record itself (a million records would not fit in memory).
        self.records = records
        self.total = len(plan.selected)
        self.finished_count = len(records)
        # What the unfinished questions paid so far, by stage (the latest line of each): the
        # resumed ones first. A finished question's calls are in its record instead.
        resumed = plan.checkpoint.resume_from
        self.open_stages: dict[StageKey, tuple[RecordedOutcome | None, ...]] = {
            key: stage.outcomes for key, stage in (resumed.stages if resumed else {}).items()
        }

    def question_started(self, job: QuestionJob) -> None:
        self.interaction.question_started(job.position, self.total, job.question_number)

    def question_finished(self, record: QuestionRecord, item: EvaluationItem) -> None:
        self.records.add(record, self.writer.append(record))
        if self.open_stages:
            number = record.question_number
            for key in [key for key in self.open_stages if key[0] == number]:
                del self.open_stages[key]
        self.finished_count += 1
        if self.cache.enabled:
            self._store(record, item)
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

    def _store(self, record: QuestionRecord, item: EvaluationItem) -> None:
        """Keep each newly paid-for scored result in the response cache: a jury's per juror,
        under the key of that juror's model (the verdict is rebuilt from them)."""
        for name, result in record.results.items():
            family = self.families[name]
            if isinstance(family, JuryFamily) and isinstance(result, JuryResult):
                keys = juror_cache_keys(family, item)
                for key, juror in zip(keys, result.jurors, strict=True):
                    if juror.scored and not juror.cached and juror.calls:
                        self.cache.put(key, name, family_result_to_json(family.inner, juror))
            elif result.scored and not result.cached and result.calls:
                key = self.keys.key(family, item)
                self.cache.put(key, name, family_result_to_json(family, result))

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
            self.open_stages[key] = tuple(kept)

    def unfinished_spend(self) -> UnfinishedSpend:
        """What the questions not finished paid for (their stages' answered calls)."""
        outcomes = [o for stage in self.open_stages.values() for o in stage if o is not None]
        usage = sum((outcome.usage for outcome in outcomes), TokenUsage())
        return UnfinishedSpend(
            usage,
            sum(outcome.calls for outcome in outcomes),
            math.fsum(outcome.cost_usd for outcome in outcomes),
        )


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


@dataclass(frozen=True)
class UnfinishedSpend:
    """What the calls of questions a stopped run did not finish paid for."""

    usage: TokenUsage = field(default_factory=TokenUsage)
    calls: int = 0
    cost_usd: float = 0.0


@dataclass
class JudgedRecords:
    """The finished questions of a judged run (read back from the checkpoint), and, when the
    ``--max-cost`` budget stopped it early, why and what its unfinished questions paid."""

    records: StoredRecords
    budget_stop: BudgetExhaustedError | None = None
    unfinished: UnfinishedSpend = field(default_factory=UnfinishedSpend)
    # How structured output was asked of models without the API's JSON schema, if any.
    output_notes: tuple[str, ...] = ()


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
        return JudgedRecords(records, exc, recorder.unfinished_spend())
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
