"""``--batch``: the run's calls as Message Batches, at half price, stage by stage.

The questions go a window at a time (as many as hold ``DEFAULT_BATCH_WINDOW_BYTES`` of texts and
requests, so that a run never holds every question's texts): every first-stage call of the
window goes out as batches (split past the API's limits: 100,000 requests or 256 MB per batch), all
created first and then polled together; then the next stage of the questions that need one
(the judge's consensus votes, claim verification), and so on; then the next window. A
request whose result is unusable, errored, expired or canceled is sent again in a follow-up
batch, within the same limits as direct calls (``max_retries`` transient failures,
``max_calls_per_question`` unusable answers), then recorded unscored.

Nothing is paid for twice:

- before a batch is created, its requests are recorded as an intent (fsynced); once it
  exists, its id (fsynced). A rerun after a stop between the two looks for the batch among
  the workspace's recent ones (same number of requests, created since the intent, the same
  ``custom_id`` set in its results) before creating another;
- ``custom_id`` is deterministic (question, family, stage, request), so a rerun polls a
  recorded batch and takes its results;
- each collected result is written to the checkpoint (a ``stage`` line per question, the
  calls an unusable answer paid for kept as pending) before its batch is marked done;
- a batch the API no longer knows is marked done with a warning: its requests were never
  collected, so they are asked again.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from rag_evaluator.errors import BatchMissingError, BudgetExhaustedError, JudgeFatalError
from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.checkpoint.store import (
    BatchIntent,
    CheckpointWriter,
    LoadedCheckpoint,
    RecordedStage,
    StageKey,
)
from rag_evaluator.llm.client import ModelClient
from rag_evaluator.llm.engine import FamilyRun, QuestionJob, journal_entry
from rag_evaluator.llm.requests import CallOutcome, FailureKind, ModelRequest
from rag_evaluator.llm.routing import ModelClients
from rag_evaluator.settings import DEFAULT_BATCH_WINDOW_BYTES

logger = logging.getLogger(__name__)

MAX_REQUESTS_PER_BATCH = 100_000
# The API takes up to 256 MB per batch; stay well under it (JSON framing, headers).
MAX_BYTES_PER_BATCH = 200 * 1024 * 1024
# How far this machine's clock may be ahead of the API's when matching a batch to its intent.
CLOCK_SKEW = timedelta(minutes=10)


def _item_characters(item: object) -> int:
    """The characters of a question's texts (an evaluated question's; the chunks a question
    is generated from are held by the generate run whatever the window)."""
    if not isinstance(item, EvaluationItem):
        return 0
    texts = [item.question, item.ground_truth, item.rag_answer]
    for listed in (item.contexts, item.relevant_contexts, item.required_facts):
        texts += listed or ()
    return sum(map(len, texts))


def question_of(custom: str) -> int:
    """The question number a ``custom_id`` names (``q12-judge-s1-r0``: 12)."""
    return int(custom[1 : custom.index("-")])


def custom_id(key: StageKey, index: int) -> str:
    """``q12-judge-s1-r0``: question 12, family judge, stage 1, request 0 (``[A-Za-z0-9_-]``)."""
    question_number, family, stage = key
    return f"q{question_number}-{family}-s{stage}-r{index}"


@dataclass
class _Pending:
    """One request waiting for a usable result, across follow-up batches.

    What its unusable answers paid for is held by its ``FamilyRun`` (``carried``).
    """

    run: FamilyRun
    index: int
    request: ModelRequest
    custom_id: str
    reserved_usd: float = 0.0
    transient_failures: int = 0
    unusable_answers: int = 0
    give_up: bool = False  # the API said not to ask again
    last_error: str = ""


class BatchRunner:
    """Runs planned question jobs through the Message Batches API."""

    def __init__(
        self,
        client: ModelClient | ModelClients,
        stop: threading.Event,
        *,
        poll_seconds: float = 30.0,
        interaction: Any = None,
        window_bytes: int = DEFAULT_BATCH_WINDOW_BYTES,
    ) -> None:
        self.client = client
        self.stop = stop
        self.poll_seconds = poll_seconds
        # Characters of texts and first requests a window of questions holds (a byte each, at
        # least).
        self.window_characters = max(1, window_bytes)
        self.interaction = interaction
        self.open_batches: dict[str, tuple[str, ...]] = {}
        self.intents: dict[str, BatchIntent] = {}
        self.recorded_batches: set[str] = set()
        self.created_now: set[str] = set()
        self._creating = False

    def interrupt_note(self) -> str | None:
        """What a stop right now leaves behind that the user should know of."""
        if self._creating:
            return (
                "A Message Batch may have been created as the run stopped; the next run looks "
                "for it and collects it rather than paying for it again"
            )
        if self.open_batches:
            return (
                "The Message Batches already sent go on without this run; the next run "
                "collects them"
            )
        return None

    def run(self, jobs: Sequence[QuestionJob], context: Any) -> None:
        writer, recorder, journal = context
        self.writer: CheckpointWriter = writer
        self.recorder = recorder
        resumed: LoadedCheckpoint | None = recorder.plan.checkpoint.resume_from
        if resumed is not None:
            self.open_batches = dict(resumed.open_batches)
            self.intents = dict(resumed.unconfirmed_intents)
            self.recorded_batches = set(resumed.recorded_batches)
        self.journal: dict[StageKey, RecordedStage] = dict(journal)
        # The batches whose results each journaled stage already holds: a batch collected
        # again (the run stopped before marking it done) is never applied to it twice.
        self.applied: dict[StageKey, set[str]] = {
            key: set(stage.batches) for key, stage in self.journal.items() if stage.batches
        }
        self.active: dict[int, list[FamilyRun]] = {}
        self.known: dict[int, QuestionJob] = {}  # the started questions not finished yet
        for waiting in self._windows(jobs):
            self._run_stages(waiting)

    def _windows(self, jobs: Sequence[QuestionJob]) -> Iterator[list[FamilyRun]]:
        """The questions' runs, started a window at a time: a window closes once its
        questions' texts and first requests hold ``window_characters`` (each is run to its
        end before the next starts, so a run holds one window's texts). The questions an
        earlier run left in open batches, or in batches it was creating, make the first
        window, whatever its size: their batches are collected together."""
        pinned = self._numbers_in_earlier_batches()
        ordered = [job for job in jobs if job.question_number in pinned]
        first_window = len(ordered)
        ordered += [job for job in jobs if job.question_number not in pinned]
        waiting: list[FamilyRun] = []
        characters = 0
        for position, job in enumerate(ordered, start=1):
            runs = [FamilyRun(family, job) for family in job.families]
            self.active[job.question_number] = runs
            self.known[job.question_number] = job
            stages = [(run, run.start(self.journal)) for run in runs]
            waiting += [run for run, stage in stages if stage is not None]
            if any(stage is not None for _, stage in stages):
                # A started question holds its texts (its task keeps the item) and requests.
                characters += _item_characters(job.item) + sum(
                    len(request.user) for _, stage in stages for request in stage or ()
                )
            self._finish_if_done(job.question_number)
            if characters >= self.window_characters and position >= first_window:
                yield waiting
                waiting, characters = [], 0
        if waiting:
            yield waiting

    def _numbers_in_earlier_batches(self) -> set[int]:
        """The questions of the requests in the batches an earlier run sent or was sending."""
        custom_ids = [custom for ids in self.open_batches.values() for custom in ids]
        custom_ids += [custom for intent in self.intents.values() for custom in intent.custom_ids]
        return {question_of(custom) for custom in custom_ids}

    def _run_stages(self, waiting: list[FamilyRun]) -> None:
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
            waiting = self._advance(waiting)
        if budget_error is not None:
            raise budget_error

    def _advance(self, waiting: list[FamilyRun]) -> list[FamilyRun]:
        """Move each run whose stage is answered on to its next stage (or finish it)."""
        next_waiting: list[FamilyRun] = []
        for run in waiting:
            if any(outcome is None for outcome in run.outcomes):
                continue  # not sent: over the budget
            outcomes = tuple(run.outcomes)
            finished_key, entry = run.key, journal_entry(run.stage, run.spent_elsewhere, outcomes)
            next_stage = run.next_stage(outcomes)  # type: ignore[arg-type]
            if next_stage is not None:
                self.recorder.stage_finished(finished_key, *entry)
                next_waiting.append(run)
                continue
            siblings = self.active.get(run.question_number, [])
            if any(other.result is None for other in siblings):
                # Done, but another family of the question is not: keep its cost.
                self.recorder.stage_finished(finished_key, *entry)
            self._finish_if_done(run.question_number)
        return next_waiting

    def _finish_if_done(self, question_number: int) -> None:
        runs = self.active.get(question_number)
        if runs is None or any(run.result is None for run in runs):
            return
        del self.active[question_number]
        job = self.known.pop(question_number)
        results = dict(job.known)
        for run in runs:
            results[run.family.name] = run.result  # type: ignore[assignment]
            # What a finished question's stages were is not looked at again: let it go.
            for stage in range(run.key[2] + 1):
                key = (question_number, run.family.name, stage)
                self.applied.pop(key, None)
                self.journal.pop(key, None)
        self.recorder.question_finished(QuestionRecord(question_number, results), job.item)

    # -- one stage: batches until every request has a final outcome ---------------------------

    def _resolve(self, pending: list[_Pending]) -> None:
        outstanding = {item.custom_id: item for item in pending}
        while outstanding:
            self._adopt_intents(outstanding)
            in_batches = {custom for ids in self.open_batches.values() for custom in ids}
            to_send = [item for custom, item in outstanding.items() if custom not in in_batches]
            budget_error = self._book_open(outstanding, in_batches)
            if to_send and budget_error is None:
                chosen, budget_error = self._within_budget(to_send)
                self._create_all(chosen)
            self._collect_open(outstanding)
            if budget_error is not None:
                # Said now, with what the collected batches cost.
                raise self.client.cap.exhausted()
            self._give_up_exhausted(outstanding)

    def _book_open(
        self, outstanding: dict[str, _Pending], in_batches: set[str]
    ) -> BudgetExhaustedError | None:
        """Reserve ``--max-cost`` for the requests an earlier run left in open batches (they
        will be billed), before any new request is chosen; the error if they use it up."""
        for custom in in_batches:
            item = outstanding.get(custom)
            if item is None or item.reserved_usd:
                continue
            try:
                item.reserved_usd = self.client.cap.reserve(
                    self.client.estimated_call_usd(item.request)
                )
            except BudgetExhaustedError as error:
                return error
        return None

    def _within_budget(
        self, items: list[_Pending]
    ) -> tuple[list[_Pending], BudgetExhaustedError | None]:
        """The requests that fit ``--max-cost`` (each reserved), and the error past them."""
        chosen: list[_Pending] = []
        for item in items:
            # A request sent again after its batch ended without a result for it (missing
            # batch, no entry): that earlier reservation was never settled.
            self.client.cap.settle(item.reserved_usd, 0.0)
            item.reserved_usd = 0.0
            try:
                item.reserved_usd = self.client.cap.reserve(
                    self.client.estimated_call_usd(item.request)
                )
            except BudgetExhaustedError as error:
                return chosen, error
            chosen.append(item)
        return chosen, None

    def _give_up_exhausted(self, outstanding: dict[str, _Pending]) -> None:
        settings = self.client.settings
        for item in list(outstanding.values()):
            if self.client.policy.gives_up(item.transient_failures):
                self._final(item, outstanding, FailureKind.TRANSIENT)
            elif item.give_up or item.unusable_answers >= settings.max_calls_per_question:
                self._final(item, outstanding, FailureKind.QUESTION)

    def _final(self, item: _Pending, outstanding: dict[str, _Pending], kind: FailureKind) -> None:
        tries = item.transient_failures + item.unusable_answers
        error = f"{item.last_error}; gave up after {tries} attempt{'s' if tries != 1 else ''}"
        item.run.give_up(item.index, error, kind)
        del outstanding[item.custom_id]

    # -- creating batches ---------------------------------------------------------------------

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
        return self.client.batch_entry(item.custom_id, item.request)

    def _create_all(self, chosen: list[_Pending]) -> None:
        """Create a batch per group, each recorded as an intent first and by id once it exists."""
        if not chosen:
            return
        for group in self._split(chosen):
            ids = [item.custom_id for item in group]
            intent = secrets.token_hex(8)
            self.writer.append_batch_intent(intent, ids, datetime.now(UTC))
            self._creating = True
            batch_id = self.client.create_batch([self._entry(item) for item in group])
            self.writer.append_batch(batch_id, intent)
            self._creating = False
            self.open_batches[batch_id] = tuple(ids)
            self.recorded_batches.add(batch_id)
            self.created_now.add(batch_id)
            logger.info("Created Message Batch %s with %d request(s)", batch_id, len(ids))
            self._say(
                f"Sent Message Batch {batch_id} ({len(ids)} request(s)); checking every "
                f"{self.poll_seconds:g} s. Ctrl-C stops waiting; the batch goes on and a rerun "
                "collects it"
            )
            self._stop_if_asked()

    def _stop_if_asked(self) -> None:
        if self.stop.is_set():
            raise KeyboardInterrupt

    # -- finding a batch a stopped run may have created ---------------------------------------

    def _adopt_intents(self, outstanding: dict[str, _Pending]) -> None:
        """For each intent of an earlier run with no batch id: find its batch, or void it."""
        for intent, planned in list(self.intents.items()):
            if not outstanding.keys() & set(planned.custom_ids):
                continue
            self._say("Looking for the Message Batch an earlier run was creating when it stopped")
            found = self._find_batch(planned)
            if found is None:
                logger.info("No Message Batch was created for intent %s; sending anew", intent)
                self.writer.append_batch_intent_void(intent)
            else:
                self._say(f"Found Message Batch {found}, created by the earlier run")
                self.writer.append_batch(found, intent)
                self.open_batches[found] = planned.custom_ids
                self.recorded_batches.add(found)
            del self.intents[intent]

    def _find_batch(self, planned: BatchIntent) -> str | None:
        since = planned.created_at - CLOCK_SKEW
        wanted = set(planned.custom_ids)
        candidates = [
            info
            for info in self.client.batches_created_since(since)
            if info.request_count == len(wanted) and info.batch_id not in self.recorded_batches
        ]
        for info in sorted(candidates, key=lambda found: found.created_at):
            try:
                self._wait_until_ended([info.batch_id])
                results = self.client.batch_results(info.batch_id)
            except BatchMissingError:
                continue
            if {entry.custom_id for entry in results} == wanted:
                return info.batch_id
        return None

    # -- collecting ---------------------------------------------------------------------------

    def _collect_open(self, outstanding: dict[str, _Pending]) -> None:
        """Poll every open batch holding outstanding requests, together; collect each as it
        ends."""
        holding = [
            batch_id
            for batch_id, ids in self.open_batches.items()
            if any(custom in outstanding for custom in ids)
        ]
        for batch_id in holding:
            if batch_id not in self.created_now:
                self._say(f"Collecting Message Batch {batch_id}, sent by the earlier run")
        for batch_id in self._wait_until_ended(holding):
            self._collect(batch_id, outstanding)

    def _wait_until_ended(self, batch_ids: list[str]) -> list[str]:
        """Poll ``batch_ids`` until each has ended (or is missing); those that ended, in the
        order they did."""
        left = list(batch_ids)
        ended: list[str] = []
        while left:
            finished = total = 0
            for batch_id in list(left):
                try:
                    progress = self.client.batch_progress(batch_id)
                except BatchMissingError:
                    self._missing(batch_id)
                    left.remove(batch_id)
                    continue
                finished += progress.finished
                total += progress.total
                if progress.ended:
                    ended.append(batch_id)
                    left.remove(batch_id)
            if self.interaction is not None and total:
                label = "Batch" if len(batch_ids) == 1 else f"{len(batch_ids)} batches"
                self.interaction.work_progress(label, finished, total)
            if left and self.stop.wait(self.poll_seconds):
                raise KeyboardInterrupt
        return ended

    def _missing(self, batch_id: str) -> None:
        logger.warning(
            "The API no longer knows Message Batch %s (its results expired, or it belongs to "
            "another workspace); its requests that were not collected are sent again",
            batch_id,
        )
        if batch_id in self.open_batches:
            self.writer.append_batch_done(batch_id)
            self.open_batches.pop(batch_id, None)

    def _collect(self, batch_id: str, outstanding: dict[str, _Pending]) -> None:
        """Apply an ended batch's results, keep them in the checkpoint, then mark it done."""
        try:
            results = self.client.batch_results(batch_id)
        except BatchMissingError:
            self._missing(batch_id)
            return
        seen: set[str] = set()
        touched: dict[int, FamilyRun] = {}
        refusal: str | None = None
        for entry in results:
            seen.add(entry.custom_id)
            item = self._not_yet_applied(outstanding.get(entry.custom_id), batch_id)
            if item is not None:
                touched[id(item.run)] = item.run
                refusal = self._apply(item, entry.result, outstanding) or refusal
        for custom in self.open_batches.get(batch_id, ()):
            item = self._not_yet_applied(outstanding.get(custom), batch_id)
            if item is not None and custom not in seen:
                touched[id(item.run)] = item.run
                self._failed_attempt(item, CallOutcome(None, None), FailureKind.TRANSIENT, "")
                item.last_error = "the batch returned no result for this request"
        for run in touched.values():
            # Durable before the batch counts as done: a stop now never pays for these again.
            applied = self.applied.setdefault(run.key, set())
            applied.add(batch_id)
            self.recorder.stage_finished(run.key, *run.journal_entry(), sorted(applied))
        self.writer.append_batch_done(batch_id)
        self.open_batches.pop(batch_id, None)
        if refusal is not None:
            # Raised once the batch's other results are kept and it is done: a rerun sends the
            # refused requests again (they were not billed) instead of meeting this again.
            raise JudgeFatalError(
                f"The Message Batch refused a request: {refusal}. Run the same command "
                "again to resume once this is fixed"
            )

    def _not_yet_applied(self, item: _Pending | None, batch_id: str) -> _Pending | None:
        """``item``, unless its stage's journal already holds this batch's result for it."""
        if item is None or batch_id in self.applied.get(item.run.key, ()):
            return None
        return item

    def _apply(self, item: _Pending, result: Any, outstanding: dict[str, _Pending]) -> str | None:
        """Apply one result to its request; the reason when the API refused it for good."""
        outcome, failure = self.client.read_batch_entry(item.request, result)
        self.client.cap.settle(item.reserved_usd, outcome.cost_usd)
        item.reserved_usd = 0.0
        if failure is None:
            item.run.deliver(item.index, outcome)
            del outstanding[item.custom_id]
            return None
        if failure.kind is FailureKind.FATAL:
            return failure.reason
        self._failed_attempt(item, outcome, failure.kind, failure.reason)
        item.give_up = item.give_up or not failure.retry
        if failure.kind is FailureKind.QUESTION:
            logger.warning("%s: %s; asking again in the next batch", item.custom_id, failure.reason)
        return None

    def _failed_attempt(
        self, item: _Pending, paid: CallOutcome, kind: FailureKind, reason: str
    ) -> None:
        """Count a failed attempt; what it paid for is carried into the request's outcome."""
        item.run.hold(item.index, paid)
        if kind is FailureKind.QUESTION:
            item.unusable_answers += 1
        else:
            item.transient_failures += 1
        item.last_error = reason

    def _say(self, message: str) -> None:
        if self.interaction is not None:
            self.interaction.info(message)
