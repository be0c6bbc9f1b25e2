"""``--batch``: the run's calls as Message Batches, at half price, stage by stage.

Every question's first-stage calls go out as one batch (split past the API's limits: 100,000
requests or 256 MB per batch), polled until it ends; then the next stage of the questions that
need one (the judge's consensus votes, claim verification) as the next batch, and so on. A
request whose result is unusable, errored, expired or canceled is sent again in a follow-up
batch, within the same limits as direct calls (``max_retries`` transient failures,
``max_calls_per_question`` unusable answers), then recorded unscored.

Each batch id goes into the checkpoint the moment the batch exists, with the ``custom_id`` of
every request in it; ``custom_id`` is deterministic (question, family, stage, request), so a
rerun after a crash, Ctrl-C or ``kill -9`` polls the same batch and takes its results instead
of paying twice. A batch is marked done in the checkpoint once its results are recorded.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anthropic

from rag_evaluator.core.records import TokenUsage
from rag_evaluator.core.requests import CallOutcome, FailureKind, ModelRequest
from rag_evaluator.core.tasks.base import QuestionRecord
from rag_evaluator.errors import BudgetExhaustedError, JudgeFatalError
from rag_evaluator.judge.client import ModelClient, classify_failure
from rag_evaluator.pipeline.engine import FamilyRun, QuestionJob, stage_digest
from rag_evaluator.storage.checkpoint import CheckpointWriter, RecordedStage, StageKey

logger = logging.getLogger(__name__)

MAX_REQUESTS_PER_BATCH = 100_000
# The API takes up to 256 MB per batch; stay well under it (JSON framing, headers).
MAX_BYTES_PER_BATCH = 200 * 1024 * 1024

T = TypeVar("T")


def custom_id(key: StageKey, index: int) -> str:
    """``q12-judge-s1-r0``: question 12, family judge, stage 1, request 0 (``[A-Za-z0-9_-]``)."""
    question_number, family, stage = key
    return f"q{question_number}-{family}-s{stage}-r{index}"


@dataclass
class _Pending:
    """One request waiting for a usable result, across follow-up batches."""

    run: FamilyRun
    index: int
    request: ModelRequest
    custom_id: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    calls: int = 0
    transient_failures: int = 0
    unusable_answers: int = 0
    last_error: str = ""


class BatchRunner:
    """Runs planned question jobs through the Message Batches API."""

    def __init__(
        self,
        client: ModelClient,
        stop: threading.Event,
        *,
        poll_seconds: float = 30.0,
        interaction: Any = None,
        open_batches: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.client = client
        self.stop = stop
        self.poll_seconds = poll_seconds
        self.interaction = interaction
        self.open_batches = dict(open_batches or {})

    def run(self, jobs: Sequence[QuestionJob], context: Any) -> None:
        writer, recorder, journal = context
        self.writer: CheckpointWriter = writer
        self.recorder = recorder
        self.journal: dict[StageKey, RecordedStage] = dict(journal)
        if not self.open_batches:
            resumed = recorder.plan.checkpoint.resume_from
            if resumed is not None:
                self.open_batches = dict(resumed.open_batches)
        active: dict[int, list[FamilyRun]] = {}
        known = {job.question_number: job for job in jobs}
        waiting: list[FamilyRun] = []
        for job in jobs:
            runs = [FamilyRun(family, job) for family in job.families]
            active[job.question_number] = runs
            for run in runs:
                if run.start(self.journal) is not None:
                    waiting.append(run)
            self._finish_if_done(job.question_number, active, known)
        budget_error: BudgetExhaustedError | None = None
        while waiting and budget_error is None:
            pending = [
                _Pending(run, index, run.stage[index], custom_id(run.key, index))
                for run in waiting
                for index in run.missing()
            ]
            try:
                self._resolve(pending)
            except BudgetExhaustedError as error:
                budget_error = error
            next_waiting: list[FamilyRun] = []
            for run in waiting:
                if any(outcome is None for outcome in run.outcomes):
                    continue  # not sent: over the budget
                outcomes = tuple(run.outcomes)  # type: ignore[arg-type]
                finished_key, digest = run.key, stage_digest(run.stage)
                next_stage = run.next_stage(outcomes)  # type: ignore[arg-type]
                if next_stage is not None:
                    recorder.stage_finished(finished_key, digest, outcomes)
                    next_waiting.append(run)
                else:
                    siblings = active.get(run.question_number, [])
                    if any(other.result is None for other in siblings):
                        # Done, but another family of the question is not: keep its cost.
                        recorder.stage_finished(finished_key, digest, outcomes)
                    self._finish_if_done(run.question_number, active, known)
            waiting = next_waiting
        if budget_error is not None:
            raise budget_error

    def _finish_if_done(
        self,
        question_number: int,
        active: dict[int, list[FamilyRun]],
        known: dict[int, QuestionJob],
    ) -> None:
        runs = active.get(question_number)
        if runs is None or any(run.result is None for run in runs):
            return
        del active[question_number]
        results = dict(known[question_number].known)
        for run in runs:
            results[run.family.name] = run.result  # type: ignore[assignment]
        self.recorder.question_finished(
            QuestionRecord(question_number, results), known[question_number].item
        )

    # -- one stage: batches until every request has a final outcome ---------------------------

    def _resolve(self, pending: list[_Pending]) -> None:
        outstanding = {item.custom_id: item for item in pending}
        settings = self.client.settings
        while outstanding:
            for batch_id, ids in list(self.open_batches.items()):
                if outstanding.keys() & set(ids):
                    self._say(f"Collecting Message Batch {batch_id}, sent by the earlier run")
                    self._collect(batch_id, outstanding)
            if not outstanding:
                break
            budget_error: BudgetExhaustedError | None = None
            chosen: list[_Pending] = []
            reservations: list[float] = []
            for item in outstanding.values():
                try:
                    reservations.append(
                        self.client.cap.reserve(self.client.estimated_call_usd(item.request))
                    )
                except BudgetExhaustedError as error:
                    budget_error = error
                    break
                chosen.append(item)
            if chosen:
                spent_before = sum(item.cost_usd for item in chosen)
                try:
                    for group in self._split(chosen):
                        batch_id = self._create(group)
                        self._collect(batch_id, outstanding)
                finally:
                    spent = sum(item.cost_usd for item in chosen) - spent_before
                    self.client.cap.settle(sum(reservations), spent)
            if budget_error is not None:
                raise budget_error
            for item in list(outstanding.values()):
                if item.transient_failures > settings.max_retries:
                    self._final(item, outstanding, FailureKind.TRANSIENT)
                elif item.unusable_answers >= settings.max_calls_per_question:
                    self._final(item, outstanding, FailureKind.QUESTION)

    def _final(self, item: _Pending, outstanding: dict[str, _Pending], kind: FailureKind) -> None:
        tries = item.transient_failures + item.unusable_answers
        error = f"{item.last_error}; gave up after {tries} attempt{'s' if tries != 1 else ''}"
        outcome = CallOutcome(None, None, error, kind, item.usage, item.calls, item.cost_usd)
        item.run.deliver(item.index, outcome)
        del outstanding[item.custom_id]

    def _split(self, items: list[_Pending]) -> list[list[_Pending]]:
        groups: list[list[_Pending]] = [[]]
        size = 0
        for item in items:
            entry_size = len(json.dumps(self._entry(item)).encode("utf-8"))
            if groups[-1] and (
                len(groups[-1]) >= MAX_REQUESTS_PER_BATCH or size + entry_size > MAX_BYTES_PER_BATCH
            ):
                groups.append([])
                size = 0
            groups[-1].append(item)
            size += entry_size
        return groups

    def _entry(self, item: _Pending) -> dict[str, Any]:
        return {"custom_id": item.custom_id, "params": self.client.params(item.request)}

    def _create(self, group: list[_Pending]) -> str:
        batch = self._with_retries(
            "create a batch",
            lambda: self.client.transport.create_batch([self._entry(item) for item in group]),
        )
        ids = [item.custom_id for item in group]
        # Recorded before anything else can go wrong: a rerun polls this batch, never pays twice.
        self.writer.append_batch(batch.id, ids)
        self.open_batches[batch.id] = tuple(ids)
        logger.info("Created Message Batch %s with %d request(s)", batch.id, len(ids))
        self._say(
            f"Sent Message Batch {batch.id} ({len(ids)} request(s)); checking it every "
            f"{self.poll_seconds:g} s. Ctrl-C stops waiting; the batch goes on and a rerun "
            "collects it"
        )
        return batch.id

    def _say(self, message: str) -> None:
        if self.interaction is not None:
            self.interaction.info(message)

    def _collect(self, batch_id: str, outstanding: dict[str, _Pending]) -> None:
        """Wait for a batch to end, then apply its results to the outstanding requests."""
        self._wait(batch_id)
        results = self._with_retries(
            "read the batch results", lambda: list(self.client.transport.batch_results(batch_id))
        )
        seen: set[str] = set()
        for entry in results:
            item = outstanding.get(entry.custom_id)
            seen.add(entry.custom_id)
            if item is None:
                continue
            self._apply(item, entry.result, outstanding)
        for custom in self.open_batches.get(batch_id, ()):
            item = outstanding.get(custom)
            if item is not None and custom not in seen:
                item.transient_failures += 1
                item.last_error = "the batch returned no result for this request"
        self.writer.append_batch_done(batch_id)
        self.open_batches.pop(batch_id, None)

    def _apply(self, item: _Pending, result: Any, outstanding: dict[str, _Pending]) -> None:
        if result.type == "succeeded":
            outcome, usable = self.client.read_batch_message(item.request, result.message)
            item.usage = item.usage + outcome.usage
            item.cost_usd += outcome.cost_usd
            item.calls += 1
            if usable:
                final = CallOutcome(
                    outcome.value,
                    outcome.payload,
                    None,
                    None,
                    item.usage,
                    item.calls,
                    item.cost_usd,
                )
                item.run.deliver(item.index, final)
                del outstanding[item.custom_id]
                return
            item.unusable_answers += 1
            item.last_error = outcome.error or "unusable answer"
            logger.warning(
                "%s: %s; asking again in the next batch", item.custom_id, item.last_error
            )
            return
        if result.type == "errored":
            error = result.error.error
            error_type = getattr(error, "type", "api_error")
            message = getattr(error, "message", "") or error_type
            if error_type in (
                "authentication_error",
                "permission_error",
                "billing_error",
                "not_found_error",
            ):
                raise JudgeFatalError(
                    f"The Message Batch refused a request ({error_type}: {message}). Check the "
                    "API key, the model and the billing, then run the same command again to resume"
                )
            if error_type == "invalid_request_error":
                item.unusable_answers += 1
                item.last_error = f"request rejected: {message}"
            else:
                item.transient_failures += 1
                item.last_error = f"API error in the batch ({error_type})"
            return
        item.transient_failures += 1
        item.last_error = f"the batch request was {result.type}"

    def _wait(self, batch_id: str) -> None:
        label = f"Batch {batch_id[-8:]}"
        while True:
            batch = self._with_retries(
                "check the batch", lambda: self.client.transport.retrieve_batch(batch_id)
            )
            counts = batch.request_counts
            finished = counts.succeeded + counts.errored + counts.canceled + counts.expired
            total = finished + counts.processing
            if self.interaction is not None:
                self.interaction.work_progress(label, finished, total)
            if batch.processing_status == "ended":
                logger.info(
                    "Batch %s ended: %d succeeded, %d errored, %d canceled, %d expired",
                    batch_id,
                    counts.succeeded,
                    counts.errored,
                    counts.canceled,
                    counts.expired,
                )
                return
            self.stop.wait(self.poll_seconds)

    def _with_retries(self, what: str, action: Callable[[], T]) -> T:
        settings = self.client.settings
        failures = 0
        while True:
            try:
                return action()
            except anthropic.APIError as error:
                failure = classify_failure(error, self.client.model_id)
                if failure.kind is FailureKind.FATAL:
                    raise JudgeFatalError(failure.reason) from error
                failures += 1
                if failure.kind is FailureKind.QUESTION or failures > settings.max_retries:
                    raise JudgeFatalError(
                        f"Could not {what} ({failure.reason}). Run the same command again to "
                        "resume; batches already created are polled, not paid for again"
                    ) from error
                wait = min(
                    settings.backoff_max_seconds,
                    max(
                        settings.backoff_base_seconds * 2 ** (failures - 1),
                        failure.retry_after_seconds or 0,
                    ),
                )
                logger.warning("Could not %s (%s); retrying in %.1f s", what, failure.reason, wait)
                self.stop.wait(wait)
