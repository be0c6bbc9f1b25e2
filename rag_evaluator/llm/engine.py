"""Runs the judged families' tasks of every question over the model client.

The engine knows nothing of files or the terminal: it receives question jobs in the seeded
order, advances each family's task stage by stage, sends each stage's requests to the client
(from a pool of worker threads with ``--concurrency`` above 1, on its own thread with one; the
client's limiter paces them), and reports through callbacks: a finished stage of an
unfinished question (to journal it) and a finished question (to checkpoint it). A question is
the unit of checkpointing: it is reported once all its calls are done.

Questions whose calls all failed on transient errors are held back rather than reported: if
``outage_after`` such questions come in a row the API is taken to be down, the run stops with
``JudgeUnavailableError`` and those questions are asked again on resume; a question the API
answered releases them as ordinary unscored rows.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Protocol

from rag_evaluator.errors import (
    BudgetExhaustedError,
    JudgeFatalError,
    JudgeUnavailableError,
    RunStoppedError,
)
from rag_evaluator.families.base import FamilyResult, JudgedFamily, QuestionRecord, Stage
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.llm.checkpoint.store import PENDING, RecordedOutcome, RecordedStage, StageKey
from rag_evaluator.llm.requests import CallOutcome, FailureKind, ModelRequest, ReplyError

logger = logging.getLogger(__name__)

# How long the main thread waits for a worker before checking again (Ctrl-C stays prompt).
_POLL_SECONDS = 0.2
# Questions in a row whose calls all ran out of transient retries: the API looks down.
OUTAGE_AFTER = 3
# Stop tickets sort after every real one and name no question.
_LAST = 2**62
_NO_QUESTION = -1


# Shared by every job with no result known in advance (most of a million).
NO_KNOWN_RESULTS: Mapping[str, FamilyResult] = MappingProxyType({})


# Read-only by convention, not frozen: the plan builds one per question (see inputs/records).
@dataclass(slots=True)
class QuestionJob:
    """One question to finish: the families still to run and the results already known.

    ``position`` is the question's place in the run (1-based), for the progress display.
    """

    question_number: int
    # The question's item, or the run's items by number to read it from when needed (a run
    # over a spool holds no question's texts in its jobs).
    source: EvaluationItem | Mapping[int, EvaluationItem]
    families: tuple[JudgedFamily[Any], ...]
    known: Mapping[str, FamilyResult] = field(default_factory=lambda: NO_KNOWN_RESULTS)
    position: int = 0

    @property
    def item(self) -> EvaluationItem:
        source = self.source
        return source if isinstance(source, EvaluationItem) else source[self.question_number]


class EngineListener(Protocol):
    """Where the engine reports; the evaluate pipeline writes checkpoint lines from here."""

    def question_finished(self, record: QuestionRecord, item: EvaluationItem) -> None: ...

    def stage_finished(
        self, key: StageKey, digest: str, outcomes: Sequence[CallOutcome | None]
    ) -> None: ...


def stage_digest(stage: Stage) -> str:
    """The stage's requests as the journal names them: each request's digest, in order, so a
    resume can replay a recorded outcome request by request."""
    return ",".join(request.digest() for request in stage)


def _whole_stage_digest(stage: Stage) -> str:
    """The one fingerprint of a whole stage that checkpoints of earlier versions recorded."""
    return hashlib.sha256(stage_digest(stage).encode("ascii")).hexdigest()[:16]


@dataclass(frozen=True)
class SavedForStage:
    """A recorded stage laid over the stage a resume is about to send."""

    outcomes: list[RecordedOutcome | None]  # by the stage's requests; None: nothing recorded
    # Recorded for requests no longer in the stage (a juror answered from the cache since),
    # with their request digests: not replayed, but what they paid stays paid.
    elsewhere: list[tuple[str, RecordedOutcome]]


def saved_for_stage(stage: Stage, saved: RecordedStage) -> SavedForStage:
    """Match ``saved``'s outcomes to ``stage``'s requests: the whole stage when it is the one
    recorded, else request by request (the same request, the same digest)."""
    digests = stage_digest(stage)
    same_stage = saved.digest == digests or saved.digest == _whole_stage_digest(stage)
    if same_stage and len(saved.outcomes) == len(stage):
        return SavedForStage(list(saved.outcomes), [])
    recorded_requests = saved.digest.split(",")
    if len(recorded_requests) != len(saved.outcomes):  # an earlier version's whole-stage digest
        # Its requests cannot be told apart: what they paid is kept under the stage's digest.
        spent = [(saved.digest, o) for o in saved.outcomes if o is not None]
        return SavedForStage([None] * len(stage), spent)
    by_request: dict[str, list[RecordedOutcome]] = {}
    for request_digest, outcome in zip(recorded_requests, saved.outcomes, strict=True):
        if outcome is not None:
            by_request.setdefault(request_digest, []).append(outcome)
    matched = [
        found.pop(0) if (found := by_request.get(request_digest)) else None
        for request_digest in digests.split(",")
    ]
    elsewhere = [(d, outcome) for d, unmatched in by_request.items() for outcome in unmatched]
    return SavedForStage(matched, elsewhere)


def journal_entry(
    stage: Stage,
    elsewhere: Sequence[tuple[str, RecordedOutcome]],
    outcomes: Sequence[CallOutcome | None],
) -> tuple[str, list[CallOutcome | None]]:
    """A stage line's digest and outcomes: the stage's own, then what requests no longer in
    it paid (``SavedForStage.elsewhere``), so a line written again keeps that spend on record."""
    digest = stage_digest(stage)
    if not elsewhere:
        return digest, list(outcomes)
    kept = [as_call_outcome(saved) for _, saved in elsewhere]
    return ",".join([digest, *(d for d, _ in elsewhere)]), [*outcomes, *kept]


def as_call_outcome(saved: RecordedOutcome) -> CallOutcome:
    """A recorded outcome as a call outcome that ``recorded`` turns back into the same record
    (its answer is not parsed: it is only kept)."""
    if saved.pending:
        return paid_part(saved, saved.error)
    failure = FailureKind(saved.failure) if saved.failure else None
    return CallOutcome(
        None,
        saved.payload,
        saved.error,
        failure,
        saved.usage,
        saved.calls,
        saved.cost_usd,
        saved.retries,
    )


def recorded(outcome: CallOutcome) -> RecordedOutcome:
    """A call outcome as the checkpoint keeps it; a transient failure is kept ``pending``
    (asked again on resume, its paid calls carried)."""
    pending = outcome.failure is FailureKind.TRANSIENT
    return RecordedOutcome(
        payload=dict(outcome.payload) if outcome.payload is not None and not pending else None,
        error=outcome.error,
        failure=PENDING if pending else (outcome.failure.value if outcome.failure else None),
        usage=outcome.usage,
        calls=outcome.calls,
        cost_usd=outcome.cost_usd,
        retries=outcome.retries,
    )


def replayed(request: ModelRequest, saved: RecordedOutcome) -> CallOutcome | None:
    """A recorded outcome as the task receives it; ``None`` when it no longer parses.

    A pending outcome comes back as a transient failure: what its calls paid, to carry.
    """
    if saved.pending:
        return paid_part(saved, saved.error)
    value = None
    if saved.payload is not None:
        try:
            value = request.parse(saved.payload)
        except (ValueError, ReplyError):
            return None
    return replace(as_call_outcome(saved), value=value)


def paid_part(saved: RecordedOutcome, error: str | None) -> CallOutcome:
    """What a recorded outcome's calls paid for, as a pending outcome to carry."""
    return CallOutcome(
        None,
        None,
        error,
        FailureKind.TRANSIENT,
        saved.usage,
        saved.calls,
        saved.cost_usd,
        saved.retries,
    )


def with_carried(carried: CallOutcome | None, outcome: CallOutcome) -> CallOutcome:
    """``outcome`` with the calls an earlier attempt of the same request paid for."""
    if carried is None:
        return outcome
    return replace(
        outcome,
        usage=carried.usage + outcome.usage,
        calls=carried.calls + outcome.calls,
        cost_usd=carried.cost_usd + outcome.cost_usd,
        retries=carried.retries + outcome.retries + 1,
    )


class FamilyRun:
    """One family's task for one question, advancing stage by stage.

    ``carried`` holds, per request of the current stage not answered yet, the calls an
    earlier attempt paid for (a stop cut it short): they are added to its outcome when it
    comes, and journaled as pending until then.
    """

    def __init__(self, family: JudgedFamily[Any], job: QuestionJob) -> None:
        self.family = family
        self.question_number = job.question_number
        self._task = family.run(job.item)
        self.stage_index = -1
        self.stage: Stage = ()
        self.outcomes: list[CallOutcome | None] = []
        self.carried: dict[int, CallOutcome] = {}
        self.result: FamilyResult | None = None
        self._journal: Mapping[StageKey, RecordedStage] = {}
        # What the current stage's recorded requests no longer in it paid (digest, outcome).
        self.spent_elsewhere: list[tuple[str, RecordedOutcome]] = []
        self.usage = TokenUsage()
        self.calls = 0
        self.cost_usd = 0.0
        self.retries = 0
        self.answered = False  # some call got an answer from the API (usable or not)
        self.failed_transiently = False  # some call ran out of transient retries

    @property
    def key(self) -> StageKey:
        return (self.question_number, self.family.name, self.stage_index)

    def start(self, journal: Mapping[StageKey, RecordedStage]) -> Stage | None:
        """Begin the task, replaying stages recorded by an earlier run; the first stage to send.

        A stage recorded in part (some of its calls had answered when the run stopped) comes
        back with those outcomes filled in: only ``missing()`` requests are sent again.
        """
        self._journal = journal
        return self._replay(self._advance(None))

    def _replay(self, stage: Stage | None) -> Stage | None:
        """Fill ``stage`` and the stages after it from the journal; the first one to send."""
        while stage is not None:
            self.spent_elsewhere = []
            recorded_stage = self._journal.get(self.key)
            if recorded_stage is None:
                return stage
            saved = saved_for_stage(stage, recorded_stage)
            self.spent_elsewhere = saved.elsewhere
            for _, outcome in saved.elsewhere:
                self._count_spent(outcome)
            if all(outcome is None for outcome in saved.outcomes):
                return stage
            outcomes = [
                None if outcome is None else replayed(request, outcome)
                for request, outcome in zip(stage, saved.outcomes, strict=True)
            ]
            if any(
                item is None and outcome is not None
                for item, outcome in zip(outcomes, saved.outcomes, strict=True)
            ):
                # An answer that no longer parses: ask the whole stage again, carrying what
                # the saved outcomes paid for (spent, so it stays in the record).
                for index, outcome in enumerate(saved.outcomes):
                    if outcome is not None and (outcome.calls or outcome.cost_usd):
                        self.carried[index] = paid_part(
                            outcome, "the saved answer no longer parses"
                        )
                return stage
            for index, outcome in enumerate(outcomes):
                if outcome is not None and outcome.failure is FailureKind.TRANSIENT:
                    self.carried[index] = outcome
                    outcomes[index] = None
                elif outcome is not None:
                    self.account(outcome)
            if any(item is None for item in outcomes):
                self.outcomes = outcomes
                return stage
            stage = self._advance(tuple(outcomes))  # type: ignore[arg-type]
        return None

    def missing(self) -> list[int]:
        """The indices of the current stage's requests that still need an outcome."""
        return [index for index, outcome in enumerate(self.outcomes) if outcome is None]

    def journal_outcomes(self) -> list[CallOutcome | None]:
        """The current stage's outcomes as the journal keeps them: the answered ones, the
        carried calls of the others (pending), ``None`` for requests not yet paid for."""
        return [
            outcome if outcome is not None else self.carried.get(index)
            for index, outcome in enumerate(self.outcomes)
        ]

    def journal_entry(self) -> tuple[str, list[CallOutcome | None]]:
        """The current stage's line as the journal keeps it (``journal_entry``)."""
        return journal_entry(self.stage, self.spent_elsewhere, self.journal_outcomes())

    def hold(self, index: int, paid: CallOutcome) -> None:
        """Keep what an attempt that brought no answer paid for (cut short by a stop, or
        unusable), to carry into the request's next outcome; pending until then."""
        pending = replace(
            paid,
            value=None,
            payload=None,
            error=paid.error or "not answered yet",
            failure=FailureKind.TRANSIENT,
        )
        self.carried[index] = with_carried(self.carried.get(index), pending)

    def give_up(self, index: int, error: str, kind: FailureKind) -> None:
        """End a request without an answer: what its attempts paid for, and why."""
        paid = self.carried.pop(index, None) or CallOutcome(None, None)
        self.deliver(index, replace(paid, value=None, payload=None, error=error, failure=kind))

    def _count_spent(self, outcome: RecordedOutcome) -> None:
        """What a recorded call no longer part of the task paid: spent all the same."""
        self.usage = self.usage + outcome.usage
        self.calls += outcome.calls
        self.cost_usd += outcome.cost_usd

    def account(self, outcome: CallOutcome) -> None:
        self.usage = self.usage + outcome.usage
        self.calls += outcome.calls
        self.cost_usd += outcome.cost_usd
        self.retries += outcome.retries
        if outcome.ok or (outcome.failure is FailureKind.QUESTION and outcome.calls):
            self.answered = True
        if outcome.failure is FailureKind.TRANSIENT:
            self.failed_transiently = True

    def deliver(self, index: int, outcome: CallOutcome) -> tuple[CallOutcome, ...] | None:
        """Record one request's outcome; the stage's outcomes once all of them are in."""
        outcome = with_carried(self.carried.pop(index, None), outcome)
        self.outcomes[index] = outcome
        self.account(outcome)
        if any(item is None for item in self.outcomes):
            return None
        return tuple(self.outcomes)  # type: ignore[arg-type]

    def next_stage(self, outcomes: tuple[CallOutcome, ...]) -> Stage | None:
        """The next stage to send: stages the journal holds (after a stage asked again) are
        replayed rather than paid for again."""
        return self._replay(self._advance(outcomes))

    def _advance(self, outcomes: tuple[CallOutcome, ...] | None) -> Stage | None:
        while True:
            try:
                stage = next(self._task) if outcomes is None else self._task.send(outcomes)
            except StopIteration as finished:
                self.result = replace(
                    finished.value,
                    usage=self.usage,
                    calls=self.calls,
                    cost_usd=self.cost_usd,
                    retries=self.retries,
                )
                return None
            self.stage_index += 1
            if stage:
                self.stage = stage
                self.outcomes = [None] * len(stage)
                self.carried = {}
                return stage
            outcomes = ()  # an empty stage needs no call


@dataclass(order=True)
class _Ticket:
    """One request of one question's stage, queued for a worker (earlier questions first)."""

    priority: tuple[int, int]
    question_number: int = field(compare=False)  # _NO_QUESTION: the worker should stop
    family: str = field(compare=False)
    index: int = field(compare=False)
    request: ModelRequest = field(compare=False)


@dataclass
class _ActiveQuestion:
    job: QuestionJob
    position: int
    runs: dict[str, FamilyRun]


class OutageWatch:
    """Holds back questions that failed on transient errors until the API answers again."""

    def __init__(self, threshold: int = OUTAGE_AFTER) -> None:
        self.threshold = threshold
        self.held: list[tuple[QuestionRecord, EvaluationItem]] = []
        self.last_reason = ""

    def classify(self, record: QuestionRecord, runs: Sequence[FamilyRun]) -> str:
        """``answered``, ``transient`` (every call ran out of transient retries) or ``silent``."""
        if any(run.answered for run in runs):
            return "answered"
        if any(run.failed_transiently for run in runs):
            reasons = [result.error for result in record.results.values() if result.error]
            self.last_reason = reasons[0] if reasons else ""
            return "transient"
        return "silent"

    def tripped(self) -> bool:
        return len(self.held) >= self.threshold

    def error(self) -> JudgeUnavailableError:
        message = (
            f"The Anthropic API kept failing for {len(self.held)} questions in a row "
            f"({self.last_reason}), so it looks unavailable. Check your network and "
            "https://status.anthropic.com, then run the same command again to resume"
        )
        logger.error("model calls stopped: %s", message, extra={"terminal": False})
        return JudgeUnavailableError(message, len(self.held))


class DirectEngine:
    """Sends every question's calls straight to the Messages API, up to N at once.

    Every way of stopping lets the calls in flight finish and keeps what they paid for: a
    budget or fatal error, an outage, and a stop request (``interrupt``: Ctrl-C or SIGTERM,
    set by a signal handler). Only a second Ctrl-C, arriving as ``KeyboardInterrupt``,
    abandons them.
    """

    def __init__(
        self,
        call: Callable[[ModelRequest, str], CallOutcome],
        listener: EngineListener,
        *,
        concurrency: int = 1,
        stop: threading.Event | None = None,
        journal: Mapping[StageKey, RecordedStage] | None = None,
        outage_after: int = OUTAGE_AFTER,
        on_start: Callable[[QuestionJob], None] | None = None,
        interrupt: threading.Event | None = None,
        on_stopping: Callable[[int], None] | None = None,
    ) -> None:
        self._call = call
        self._on_start = on_start
        self._listener = listener
        self._workers = max(1, concurrency)
        # One call at a time is made on the calling thread: no hand-off to a worker and back
        # for every call. A stop request is still answered at once (a watcher thread).
        self._inline = self._workers == 1
        # With one worker, one question at a time (the spec's sequential run); with more, enough
        # questions open to keep every worker busy while others wait on their next stage.
        self._max_active = 1 if self._workers == 1 else self._workers * 2
        self.stop = stop or threading.Event()
        self._interrupt = interrupt
        self._on_stopping = on_stopping
        self._journal = journal or {}
        self._outage = OutageWatch(outage_after)
        self._calls: queue.PriorityQueue[_Ticket] = queue.PriorityQueue()
        self._done: queue.Queue[tuple[_Ticket, CallOutcome | BaseException]] = queue.Queue()
        self._active: dict[int, _ActiveQuestion] = {}
        self._in_flight = 0
        self._sequence = 0
        # Why the run is stopping while the calls in flight finish.
        self._draining: BaseException | None = None
        self._threads: list[threading.Thread] = []
        # Calls a worker is making right now (queued tickets not counted): what a stop waits for.
        self._calling = 0
        self._calling_lock = threading.Lock()

    # -- the main thread ----------------------------------------------------------------------

    def run(self, jobs: Iterable[QuestionJob]) -> None:
        """Finish every job (reporting each question), or raise why the run stopped
        (``KeyboardInterrupt`` for a stop request), once the calls in flight are kept.

        A deque is consumed as questions open, so a million jobs are not all held to the end.
        """
        waiting = jobs if isinstance(jobs, deque) else deque(jobs)
        ended = threading.Event()
        self._start_workers()
        self._watch_for_stop_request(ended)
        try:
            self._until_done(waiting)
            if self._draining is not None:
                raise self._draining
            self._release_held()
        except BaseException:
            self.stop.set()
            raise
        finally:
            ended.set()
            self._stop_workers()

    def _until_done(self, waiting: deque[QuestionJob]) -> None:
        opened = 0
        while True:
            self._notice_interrupt()
            while waiting and self._draining is None and len(self._active) < self._max_active:
                self._open(waiting.popleft(), opened)
                opened += 1
            if self._in_flight == 0:
                if self._draining is not None or not waiting:
                    if self._active and self._draining is None:
                        raise RuntimeError("questions left open with no call in flight")
                    return
                continue
            if self._inline:
                ticket = self._calls.get_nowait()
                outcome = self._answer(ticket)
            else:
                try:
                    ticket, outcome = self._done.get(timeout=_POLL_SECONDS)
                except queue.Empty:
                    continue
            self._in_flight -= 1
            if isinstance(outcome, BaseException):
                self._failed(ticket, outcome)
            else:
                self._deliver(ticket, outcome)

    def _notice_interrupt(self) -> None:
        if self._interrupt is None or not self._interrupt.is_set() or self._draining is not None:
            return
        self._drain(KeyboardInterrupt())

    def _drain(self, reason: BaseException) -> None:
        """Start no call from now on; the calls in flight finish and are kept."""
        if self._draining is None:
            self._draining = reason
            self.stop.set()

    def _open(self, job: QuestionJob, position: int) -> None:
        active = _ActiveQuestion(job, position, {})
        self._active[job.question_number] = active
        stages = []
        for family in job.families:
            run = FamilyRun(family, job)
            active.runs[family.name] = run
            stage = run.start(self._journal)
            if stage is not None:
                stages.append((run, stage))
        # Only questions that call the model are announced (not cached or shortcut ones).
        if stages and self._on_start is not None:
            self._on_start(job)
        for run, stage in stages:
            self._submit(active, run, stage)
        self._finish_if_done(active)

    def _submit(self, active: _ActiveQuestion, run: FamilyRun, stage: Stage) -> None:
        for index in run.missing():
            request = stage[index]
            self._sequence += 1
            ticket = _Ticket(
                (active.position, self._sequence),
                active.job.question_number,
                run.family.name,
                index,
                request,
            )
            self._in_flight += 1
            self._calls.put(ticket)

    def _journal_stage(self, run: FamilyRun) -> None:
        self._listener.stage_finished(run.key, *run.journal_entry())

    def _deliver(self, ticket: _Ticket, outcome: CallOutcome) -> None:
        active = self._active[ticket.question_number]
        run = active.runs[ticket.family]
        outcomes = run.deliver(ticket.index, outcome)
        if outcomes is None:
            # Part of a stage: keep this answer, so a stop before the rest of the stage is
            # answered never pays for it again.
            self._journal_stage(run)
            return
        finished_key = run.key
        # Digested now (``next_stage`` moves on) but only journaled when the question goes
        # on: a question done in one stage, the usual case, skips hashing its prompts.
        finished_stage, elsewhere = run.stage, run.spent_elsewhere
        next_stage = run.next_stage(outcomes)
        if next_stage is not None:
            # The question needs more calls: keep what this stage cost.
            entry = journal_entry(finished_stage, elsewhere, outcomes)
            self._listener.stage_finished(finished_key, *entry)
            if self._draining is None:
                self._submit(active, run, next_stage)
            return
        if any(other.result is None for other in active.runs.values()):
            # This family is done but another of the question is not: keep what it cost, so a
            # stop before the question's line is written never pays for these calls again.
            entry = journal_entry(finished_stage, elsewhere, outcomes)
            self._listener.stage_finished(finished_key, *entry)
        self._finish_if_done(active)

    def _failed(self, ticket: _Ticket, error: BaseException) -> None:
        """A call that raised: keep what it paid, and stop the run when the error says so.

        The question stays open, so calls of it still in flight are delivered and kept.
        """
        active = self._active[ticket.question_number]
        run = active.runs[ticket.family]
        paid = getattr(error, "partial", None)
        if isinstance(paid, CallOutcome):
            run.hold(ticket.index, paid)
            self._journal_stage(run)
        if isinstance(error, RunStoppedError):
            return
        if isinstance(error, BudgetExhaustedError | JudgeFatalError):
            if self._draining is None and isinstance(error, BudgetExhaustedError):
                logger.warning(error.message, extra={"terminal": False})
            self._drain(error)
            return
        raise error

    def _finish_if_done(self, active: _ActiveQuestion) -> None:
        runs = list(active.runs.values())
        if any(run.result is None for run in runs):
            return
        self._active.pop(active.job.question_number, None)
        results: dict[str, FamilyResult] = dict(active.job.known)
        for run in runs:
            results[run.family.name] = run.result  # type: ignore[assignment]
        record = QuestionRecord(active.job.question_number, results)
        kind = self._outage.classify(record, runs)
        if kind == "transient":
            # Held back, and asked again on resume should the outage stop the run: keep what
            # its calls paid for meanwhile.
            for run in runs:
                if run.stage:
                    self._journal_stage(run)
            self._outage.held.append((record, active.job.item))
            if self._outage.tripped():
                self._drain(self._outage.error())
            return
        if kind == "answered" and not isinstance(self._draining, JudgeUnavailableError):
            # Once the outage has stopped the run, a call in flight answered meanwhile does
            # not turn the held questions into unscored rows: they are asked again on resume.
            self._release_held()
        self._listener.question_finished(record, active.job.item)

    def _release_held(self) -> None:
        held, self._outage.held = self._outage.held, []
        for record, item in held:
            self._listener.question_finished(record, item)

    # -- the workers --------------------------------------------------------------------------

    def _start_workers(self) -> None:
        if self._inline:
            return
        for number in range(self._workers):
            thread = threading.Thread(
                target=self._work, name=f"rag-eval-call-{number + 1}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _stop_workers(self) -> None:
        # Daemon threads: a call still in flight after Ctrl-C is abandoned, not waited for.
        for number in range(len(self._threads)):
            self._calls.put(_Ticket((_LAST, number), _NO_QUESTION, "", 0, None))  # type: ignore[arg-type]

    def _watch_for_stop_request(self, ended: threading.Event) -> None:
        """Answer a stop request at once, even while the main thread is making a call: no call
        starts from then on, and the user is told how many calls the run waits for."""
        interrupt = self._interrupt
        if interrupt is None:
            return

        def watch() -> None:
            while not ended.is_set():
                if interrupt.wait(_POLL_SECONDS):
                    self.stop.set()
                    with self._calling_lock:
                        calling = self._calling
                    if self._on_stopping is not None and not ended.is_set():
                        self._on_stopping(calling)
                    return

        threading.Thread(target=watch, name="rag-eval-stop-request", daemon=True).start()

    def _work(self) -> None:
        while True:
            ticket = self._calls.get()
            if ticket.question_number == _NO_QUESTION:
                return
            self._done.put((ticket, self._answer(ticket)))

    def _answer(self, ticket: _Ticket) -> CallOutcome | BaseException:
        """The call of one ticket, or what it raised (the main thread decides what that means);
        ``KeyboardInterrupt`` (a second Ctrl-C, on the main thread) goes through."""
        if self.stop.is_set() or (self._interrupt is not None and self._interrupt.is_set()):
            return RunStoppedError("the run is stopping")
        with self._calling_lock:
            self._calling += 1
        try:
            return self._call(ticket.request, f"question {ticket.question_number}")
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # reported to the main thread, which decides
            if isinstance(error, BudgetExhaustedError | JudgeFatalError):
                # No worker starts another call once one of these is known.
                self.stop.set()
            return error
        finally:
            with self._calling_lock:
                self._calling -= 1
