"""The direct-call engine on its own (issue 21): a scripted model, no HTTP.

``DirectEngine`` gets a plain ``call(request, label)`` that plays the model: it answers by
question, may hold a call "in flight" until the run is stopping, and may raise the errors the
client raises (budget, fatal, stopping), with what the call had already paid for attached as
``partial``. An in-memory listener records what the engine reports; its stage lines are
turned into the journal a resumed run replays, exactly as the checkpoint keeps them.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from fakes import roles
from fakes.anthropic_server import verdict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scripted_api import HAIKU, REPLY_USAGE, ScriptedApi, Unusable, api_error

from rag_evaluator.errors import (
    BudgetExhaustedError,
    JudgeFatalError,
    JudgeUnavailableError,
    RunStoppedError,
)
from rag_evaluator.families.base import JudgedFamily, QuestionRecord
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.families.ragas.family import RagasFamily
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.llm.checkpoint.store import RecordedOutcome, RecordedStage, StageKey
from rag_evaluator.llm.client import ClientSettings, ModelClient
from rag_evaluator.llm.cost import call_cost, reserved_call_usd
from rag_evaluator.llm.engine import (
    DirectEngine,
    FamilyRun,
    QuestionJob,
    SavedForStage,
    as_call_outcome,
    journal_entry,
    recorded,
    saved_for_stage,
    stage_digest,
)
from rag_evaluator.llm.limits import CallLimiter, SpendingCap
from rag_evaluator.llm.providers.anthropic import messages_body
from rag_evaluator.llm.requests import CallOutcome, FailureKind, ModelRequest

JUDGE = JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES)
RAGAS = RagasFamily()
HEDGED = "Recall is a close call here."
CALL_USD = 0.01
CALL_USAGE = TokenUsage(1000, 100)
# How long a scripted call waits for the engine before the test fails (never reached when
# the engine behaves).
PATIENCE_SECONDS = 10.0


def item(number: int) -> EvaluationItem:
    return EvaluationItem(
        number,
        f"What is the limit for item {number}?",
        f"The limit for item {number} is {number * 10} units.",
        f"Item {number} is limited to {number * 10} units.",
        contexts=[f"Item {number} has a limit of {number * 10} units.", "Unrelated text."],
    )


def paid(calls: int = 1, error: str = "stopped") -> CallOutcome:
    """What an attempt that brought no usable answer paid for (a client's ``partial``)."""
    return CallOutcome(
        None,
        None,
        error,
        FailureKind.TRANSIENT,
        TokenUsage(CALL_USAGE.input_tokens * calls, CALL_USAGE.output_tokens * calls),
        calls,
        CALL_USD * calls,
    )


def with_partial(error: BaseException, partial: CallOutcome | None) -> BaseException:
    error.partial = partial  # type: ignore[attr-defined]
    return error


def payload_for(request: ModelRequest) -> dict[str, Any]:
    """The default answer of the fake API's role for ``request`` (a plain verdict for the
    judge)."""
    params = messages_body(request, "claude-haiku-5-5", cache_system=False)
    role = roles.role_of(params)
    answer = roles.default_answer(role, params, request.user, request.system)
    return verdict() if answer is None else answer


@dataclass(frozen=True)
class Call:
    """One call the scripted model received: its question, its place among that question's
    calls (1-based) and the request."""

    question_number: int
    nth: int
    request: ModelRequest


Action = Callable[[Call], CallOutcome]


class ScriptedModel:
    """Plays the model. Answers every request with its role's default answer (the judge's
    first call of a question in ``hedged`` with a hedging verdict), unless ``on`` scripts an
    action for that call. Like the real client, a call that starts once the run is stopping
    raises ``RunStoppedError``. Keeps a ledger of what it billed."""

    def __init__(self, stop: threading.Event, hedged: Iterable[int] = ()) -> None:
        self.stop = stop
        self.hedged = set(hedged)
        self.actions: dict[tuple[int, int], Action] = {}
        self.calls: list[Call] = []
        self.billed_usd = 0.0
        self.answers = 0  # usable answers billed
        self._condition = threading.Condition()

    def on(self, question_number: int, nth: int, action: Action) -> None:
        self.actions[(question_number, nth)] = action

    def __call__(self, request: ModelRequest, label: str) -> CallOutcome:
        question_number = int(label.split()[-1])
        if self.stop.is_set():
            raise RunStoppedError("the run is stopping")
        with self._condition:
            nth = 1 + sum(1 for call in self.calls if call.question_number == question_number)
            call = Call(question_number, nth, request)
            self.calls.append(call)
            self._condition.notify_all()
        action = self.actions.get((question_number, nth))
        if action is not None:
            return action(call)
        return self.answer(call)

    def answer(self, call: Call) -> CallOutcome:
        payload = payload_for(call.request)
        if call.question_number in self.hedged and call.nth == 1 and "precision" in payload:
            payload = verdict(reasoning=HEDGED)
        if call.request.purpose == "judge":
            payload = {**payload, "summary": f"Call {call.nth} of question {call.question_number}."}
        self.bill(CALL_USD, answer=True)
        return CallOutcome(
            call.request.parse(payload), payload, usage=CALL_USAGE, calls=1, cost_usd=CALL_USD
        )

    def bill(self, amount: float, *, answer: bool = False) -> None:
        with self._condition:
            self.billed_usd += amount
            self.answers += answer

    def wait_for_calls(self, count: int) -> None:
        with self._condition:
            if not self._condition.wait_for(lambda: len(self.calls) >= count, PATIENCE_SECONDS):
                raise AssertionError(f"fewer than {count} calls started")

    def asked(self, question_number: int) -> int:
        return sum(1 for call in self.calls if call.question_number == question_number)

    # -- actions ------------------------------------------------------------------------------

    def until_stopping(self, call: Call) -> CallOutcome:
        """In flight until the engine is stopping, then answered."""
        if not self.stop.wait(PATIENCE_SECONDS):
            raise AssertionError("the engine never started stopping")
        return self.answer(call)

    def answering_after(self, count: int) -> Action:
        """Answered once ``count`` calls have started."""

        def action(call: Call) -> CallOutcome:
            self.wait_for_calls(count)
            return self.answer(call)

        return action

    def pressing(self, interrupt: threading.Event, *, after_calls: int = 0) -> Action:
        """Ctrl-C while this call is in flight (once ``after_calls`` calls have started); the
        call then finishes with its answer."""

        def action(call: Call) -> CallOutcome:
            self.wait_for_calls(after_calls)
            interrupt.set()
            return self.until_stopping(call)

        return action

    def raising(self, error: BaseException, *, after_calls: int = 0) -> Action:
        """Once ``after_calls`` calls have started, raise ``error`` (its ``partial`` billed)."""

        def action(call: Call) -> CallOutcome:
            self.wait_for_calls(after_calls)
            partial = getattr(error, "partial", None)
            if partial is not None:
                self.bill(partial.cost_usd)
            raise error

        return action


@dataclass
class Listener:
    """Records what the engine reports, in order."""

    questions: dict[int, QuestionRecord] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    stages: list[tuple[StageKey, str, list[CallOutcome | None]]] = field(default_factory=list)

    def question_finished(self, record: QuestionRecord, item: EvaluationItem) -> None:
        assert record.question_number not in self.questions, "a question reported twice"
        self.questions[record.question_number] = record
        self.order.append(record.question_number)

    def stage_finished(
        self, key: StageKey, digest: str, outcomes: Sequence[CallOutcome | None]
    ) -> None:
        self.stages.append((key, digest, list(outcomes)))

    def latest(self, key: StageKey) -> list[CallOutcome | None]:
        return next(outcomes for saved, _, outcomes in reversed(self.stages) if saved == key)

    def journal(self) -> dict[StageKey, RecordedStage]:
        """The stages as a resumed run reads them back: the latest line of each, of the
        questions not finished, outcomes that paid nothing left out (as the checkpoint does)."""
        journal: dict[StageKey, RecordedStage] = {}
        for key, digest, outcomes in self.stages:
            if key[0] in self.questions:
                continue
            journal[key] = RecordedStage(
                digest,
                tuple(
                    None
                    if outcome is None
                    or (
                        outcome.failure is FailureKind.TRANSIENT
                        and not outcome.calls
                        and not outcome.cost_usd
                    )
                    else recorded(outcome)
                    for outcome in outcomes
                ),
            )
        return journal


def run_engine(
    model: ScriptedModel,
    numbers: Iterable[int],
    *,
    families: tuple[JudgedFamily[Any], ...] = (JUDGE,),
    concurrency: int = 1,
    journal: Mapping[StageKey, RecordedStage] | None = None,
    interrupt: threading.Event | None = None,
    listener: Listener | None = None,
    outage_after: int = 3,
    stopping: list[int] | None = None,
    started: list[int] | None = None,
) -> Listener:
    """Run the engine over ``numbers`` (in that order) until it finishes or raises."""
    listener = listener or Listener()
    jobs = [
        QuestionJob(number, item(number), families, position=position)
        for position, number in enumerate(numbers, start=1)
    ]
    engine = DirectEngine(
        model,
        listener,
        concurrency=concurrency,
        stop=model.stop,
        journal=journal,
        outage_after=outage_after,
        interrupt=interrupt,
        on_stopping=None if stopping is None else stopping.append,
        on_start=None if started is None else lambda job: started.append(job.question_number),
    )
    engine.run(jobs)
    return listener


def resume(
    first: Listener, numbers: Iterable[int], *, hedged: Iterable[int] = (), **options: Any
) -> tuple[ScriptedModel, Listener]:
    """A second run over the questions the first did not finish, replaying its journal."""
    model = ScriptedModel(threading.Event(), hedged)
    left = [number for number in numbers if number not in first.questions]
    return model, run_engine(model, left, journal=first.journal(), **options)


def total_cost(*listeners: Listener) -> float:
    return sum(record.cost_usd for listener in listeners for record in listener.questions.values())


def total_calls(*listeners: Listener) -> int:
    return sum(record.calls for listener in listeners for record in listener.questions.values())


# -- a stop request (Ctrl-C, SIGTERM) -----------------------------------------------------------


def test_a_stop_request_lets_the_calls_in_flight_finish_journals_them_and_sends_nothing_more() -> (
    None
):
    stop, interrupt = threading.Event(), threading.Event()
    model = ScriptedModel(stop, hedged=[1])
    # Question 1's first verdict hedges: its votes go out while questions 2 and 3 are in
    # flight (the verdict comes once their calls have started); Ctrl-C arrives during the
    # first vote. Question 3's call had paid for an unusable answer and is retrying when the
    # stop reaches it.
    model.on(1, 1, model.answering_after(3))
    model.on(1, 2, model.pressing(interrupt, after_calls=4))
    model.on(2, 1, model.until_stopping)

    def stopped_mid_retry(call: Call) -> CallOutcome:
        if not stop.wait(PATIENCE_SECONDS):
            raise AssertionError("the engine never started stopping")
        model.bill(CALL_USD)
        raise with_partial(RunStoppedError("the run is stopping"), paid(1))

    model.on(3, 1, stopped_mid_retry)
    stopping: list[int] = []
    listener = Listener()
    with pytest.raises(KeyboardInterrupt):
        run_engine(
            model,
            [1, 2, 3],
            concurrency=3,
            interrupt=interrupt,
            listener=listener,
            stopping=stopping,
        )

    # Told once how many calls it waits for: those being made (not the queued votes).
    assert len(stopping) == 1 and 1 <= stopping[0] <= 3
    # Nothing started after the stop: the other two votes were never sent.
    assert [model.asked(number) for number in (1, 2, 3)] == [2, 1, 1]
    # The calls in flight were delivered: question 2 is finished, question 1's vote and
    # what question 3's call paid are journaled.
    assert list(listener.questions) == [2]
    first_vote, *others = listener.latest((1, "judge", 1))
    assert first_vote is not None and first_vote.ok and others == [None, None]
    [pending] = listener.latest((3, "judge", 0))
    assert pending is not None and pending.failure is FailureKind.TRANSIENT
    assert (pending.calls, pending.cost_usd) == (1, CALL_USD)
    assert recorded(pending).pending

    again, resumed = resume(listener, [1, 2, 3])
    # Only what was not answered is asked: two votes and question 3.
    assert [again.asked(number) for number in (1, 2, 3)] == [2, 0, 1]
    assert set(resumed.questions) == {1, 3}
    votes = resumed.questions[1].results["judge"]
    assert votes.consensus and len(votes.votes) == 3 and votes.calls == 4  # type: ignore[attr-defined]
    retried = resumed.questions[3].results["judge"]
    assert (retried.calls, retried.scored) == (2, True)
    assert retried.cost_usd == pytest.approx(2 * CALL_USD)
    # Every dollar billed is in a record, once.
    assert total_cost(listener, resumed) == pytest.approx(model.billed_usd + again.billed_usd)


def test_a_stop_request_in_a_sequential_run_opens_no_further_question() -> None:
    stop, interrupt = threading.Event(), threading.Event()
    model = ScriptedModel(stop)
    model.on(2, 1, model.pressing(interrupt))
    started: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        run_engine(model, [1, 2, 3, 4], interrupt=interrupt, started=started)
    assert started == [1, 2]  # no question is opened (or announced) once stopping
    assert [model.asked(number) for number in (1, 2, 3, 4)] == [1, 1, 0, 0]
    assert model.answers == 2


def test_one_call_at_a_time_is_made_on_the_running_thread_and_a_stop_is_still_told_at_once() -> (
    None
):
    # No hand-off to a worker and back for every call at --concurrency 1; Ctrl-C during the
    # call is still answered while it is in flight (the user is told it is waited for), and
    # what it paid for is kept.
    stop, interrupt = threading.Event(), threading.Event()
    model = ScriptedModel(stop)
    threads: list[threading.Thread] = []
    stopping: list[int] = []

    def told_while_in_flight(call: Call) -> CallOutcome:
        threads.append(threading.current_thread())
        interrupt.set()
        deadline = time.monotonic() + PATIENCE_SECONDS
        while not stopping and time.monotonic() < deadline:
            time.sleep(0.01)
        return model.until_stopping(call)

    def answered(call: Call) -> CallOutcome:
        threads.append(threading.current_thread())
        return model.answer(call)

    model.on(2, 1, told_while_in_flight)
    for number in (1, 3):
        model.on(number, 1, answered)
    listener = Listener()
    with pytest.raises(KeyboardInterrupt):
        run_engine(model, [1, 2, 3], interrupt=interrupt, listener=listener, stopping=stopping)
    assert threads == [threading.current_thread()] * 2
    assert stopping == [1]
    assert list(listener.questions) == [1, 2]
    assert model.asked(3) == 0


def test_a_stop_request_between_stages_journals_the_finished_stage_and_sends_no_next_one() -> None:
    # The judge and RAGAS for one question: the judge is answered first, then Ctrl-C arrives
    # while RAGAS' first stage is in flight. Those calls finish; its second stage is not sent.
    stop, interrupt = threading.Event(), threading.Event()
    model = ScriptedModel(stop)
    model.on(1, 2, model.pressing(interrupt, after_calls=5))
    for nth in range(3, 6):
        model.on(1, nth, model.until_stopping)
    listener = Listener()
    with pytest.raises(KeyboardInterrupt):
        run_engine(
            model,
            [1],
            families=(JUDGE, RAGAS),
            concurrency=5,
            interrupt=interrupt,
            listener=listener,
        )
    ragas_first = listener.latest((1, "ragas", 0))
    assert len(ragas_first) == model.asked(1) - 1 == 4
    assert all(outcome is not None and outcome.ok for outcome in ragas_first)
    # The judge is done while RAGAS is not: its outcome is kept so it is never paid again.
    [judged] = listener.latest((1, "judge", 0))
    assert judged is not None and judged.ok
    assert not listener.questions

    again, resumed = resume(listener, [1], families=(JUDGE, RAGAS), concurrency=2)
    purposes = sorted(call.request.purpose for call in again.calls)
    assert purposes == ["context recall attributions", "faithfulness verdicts"]
    record = resumed.questions[1]
    assert record.calls == 7
    assert record.cost_usd == pytest.approx(model.billed_usd + again.billed_usd)


# -- a budget or fatal error with calls in flight ------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        BudgetExhaustedError("Stopped before the next call: the budget."),
        JudgeFatalError("The Anthropic API refused to bill this request (402)."),
    ],
    ids=["budget", "fatal"],
)
def test_a_budget_or_fatal_error_lets_the_calls_in_flight_finish_and_keeps_what_was_paid(
    error: Exception,
) -> None:
    stop = threading.Event()
    model = ScriptedModel(stop)
    model.on(1, 1, model.until_stopping)
    model.on(3, 1, model.until_stopping)
    # Question 2's call had paid for one unusable answer when the error came.
    model.on(2, 1, model.raising(with_partial(error, paid(1)), after_calls=3))
    listener = Listener()
    with pytest.raises(type(error)) as raised:
        run_engine(model, [1, 2, 3, 4, 5], concurrency=3, listener=listener)
    assert raised.value is error
    assert [model.asked(number) for number in (1, 2, 3, 4, 5)] == [1, 1, 1, 0, 0]
    assert sorted(listener.questions) == [1, 3]
    [pending] = listener.latest((2, "judge", 0))
    assert pending is not None and pending.failure is FailureKind.TRANSIENT
    assert (pending.calls, pending.cost_usd, pending.usage) == (1, CALL_USD, CALL_USAGE)

    again, resumed = resume(listener, [1, 2, 3, 4, 5])
    assert [again.asked(number) for number in (2, 4, 5)] == [1, 1, 1]
    retried = resumed.questions[2].results["judge"]
    assert retried.scored and (retried.calls, retried.retries) == (2, 1)
    assert retried.cost_usd == pytest.approx(2 * CALL_USD)
    assert retried.usage == CALL_USAGE + CALL_USAGE
    assert total_cost(listener, resumed) == pytest.approx(model.billed_usd + again.billed_usd)


def test_a_second_error_while_draining_keeps_the_first_reason() -> None:
    stop = threading.Event()
    model = ScriptedModel(stop)
    budget = BudgetExhaustedError("Stopped before the next call: the budget.")
    model.on(1, 1, model.raising(budget, after_calls=2))

    def fatal_later(call: Call) -> CallOutcome:
        if not stop.wait(PATIENCE_SECONDS):
            raise AssertionError("the engine never started stopping")
        raise JudgeFatalError("The Anthropic API rejected the API key (401).")

    model.on(2, 1, fatal_later)
    with pytest.raises(BudgetExhaustedError) as raised:
        run_engine(model, [1, 2, 3], concurrency=2)
    assert raised.value is budget
    assert model.asked(3) == 0


@pytest.mark.parametrize("stop_by", ["fatal", "budget"])
def test_a_real_client_stopped_after_a_paid_unusable_answer_hands_over_what_it_paid(
    stop_by: str,
) -> None:
    # The client (over a scripted transport) is paid for an unusable answer, then meets a
    # billing error (fatal) or a budget with no room for the second call.
    stop = threading.Event()
    replies: list[Any] = [Unusable()]
    if stop_by == "fatal":
        replies.append(api_error(402, "billing_error", "Your credit balance is too low."))
    api = ScriptedApi(direct_replies=replies)
    request = JUDGE.request(item(1))
    # Room for the first call's reservation, not for a second one once the first is paid.
    one_reply = call_cost(TokenUsage(*REPLY_USAGE), HAIKU)
    budget = reserved_call_usd(request, HAIKU) + one_reply / 2 if stop_by == "budget" else None
    client = ModelClient(
        api,
        ClientSettings(model=HAIKU),
        limiter=CallLimiter(stop=stop),
        cap=SpendingCap(budget),
        jitter=random.Random(0),
    )
    listener = Listener()
    engine = DirectEngine(
        lambda request, label: client.call(request, label=label), listener, stop=stop
    )
    with pytest.raises(JudgeFatalError if stop_by == "fatal" else BudgetExhaustedError):
        engine.run([QuestionJob(1, item(1), (JUDGE,), position=1)])
    [kept] = listener.latest((1, "judge", 0))
    assert kept is not None and recorded(kept).pending and kept.calls == 1
    assert kept.cost_usd == pytest.approx(api.billed_usd) and api.billed_usd > 0


# -- saved replies that no longer parse ---------------------------------------------------------


def stopped_during_the_votes() -> Listener:
    """A run stopped while question 1's first vote was in flight: its first verdict (stage 0)
    and that vote (stage 1) are journaled."""
    stop, interrupt = threading.Event(), threading.Event()
    model = ScriptedModel(stop, hedged=[1])
    model.on(1, 2, model.pressing(interrupt))
    listener = Listener()
    with pytest.raises(KeyboardInterrupt):
        run_engine(model, [1], interrupt=interrupt, listener=listener)
    assert model.asked(1) == 2
    return listener


def break_saved_answer(listener: Listener, key: StageKey) -> None:
    """Edit the journaled answers of ``key`` into ones today's parser refuses."""
    for index, (saved, digest, outcomes) in enumerate(listener.stages):
        if saved == key:
            broken = [
                None
                if outcome is None
                else replace(
                    outcome, payload={k: v for k, v in outcome.payload.items() if k != "recall"}
                )  # type: ignore[union-attr]
                for outcome in outcomes
            ]
            listener.stages[index] = (saved, digest, broken)


@pytest.mark.parametrize(
    ("broken", "asked_again"),
    [((1, "judge", 0), 1 + 2), ((1, "judge", 1), 3)],
    ids=["first verdict", "a vote"],
)
def test_a_saved_answer_that_no_longer_parses_asks_its_stage_again(
    broken: StageKey, asked_again: int
) -> None:
    listener = stopped_during_the_votes()
    break_saved_answer(listener, broken)
    # The first verdict hedges again when asked again, so its votes are the same requests.
    again, resumed = resume(listener, [1], hedged=[1] if broken[2] == 0 else [])
    assert again.asked(1) == asked_again
    result = resumed.questions[1].results["judge"]
    assert result.scored and result.consensus  # type: ignore[attr-defined]
    # What the unusable saved answer had paid for stays in the record: nothing spent is lost.
    assert result.calls == 2 + asked_again
    assert result.cost_usd == pytest.approx((2 + asked_again) * CALL_USD)


# -- the outage watch ----------------------------------------------------------------------------


def gave_up(model: ScriptedModel, cost_calls: int = 0) -> Action:
    """A call that ran out of transient retries (having paid for ``cost_calls`` calls)."""

    def action(call: Call) -> CallOutcome:
        model.bill(cost_calls * CALL_USD)
        return replace(paid(cost_calls), error="API overloaded (529); gave up after 7 attempts")

    return action


def test_questions_out_of_transient_retries_in_a_row_stop_the_run_and_are_asked_again() -> None:
    stop = threading.Event()
    model = ScriptedModel(stop)
    model.on(1, 1, gave_up(model))
    model.on(2, 1, gave_up(model, cost_calls=1))  # an unusable answer before the 529s: paid
    model.on(3, 1, gave_up(model))
    listener = Listener()
    with pytest.raises(JudgeUnavailableError) as raised:
        run_engine(model, [1, 2, 3, 4, 5], listener=listener)
    assert raised.value.questions_in_a_row == 3
    assert "529" in raised.value.message
    assert model.asked(4) == 0 and not listener.questions
    [kept] = listener.latest((2, "judge", 0))
    assert kept is not None and recorded(kept).pending and kept.cost_usd == CALL_USD

    again, resumed = resume(listener, [1, 2, 3, 4, 5])
    assert sorted(resumed.questions) == [1, 2, 3, 4, 5]
    assert all(record.scored for record in resumed.questions.values())
    assert resumed.questions[2].cost_usd == pytest.approx(2 * CALL_USD)
    assert total_cost(resumed) == pytest.approx(model.billed_usd + again.billed_usd)


def test_an_answered_question_releases_the_held_ones_as_unscored_rows_in_order() -> None:
    model = ScriptedModel(threading.Event())
    model.on(1, 1, gave_up(model))
    model.on(2, 1, gave_up(model))
    model.on(4, 1, gave_up(model))
    listener = run_engine(model, [1, 2, 3, 4], concurrency=1)
    assert listener.order == [1, 2, 3, 4]
    scored = {number: record.scored for number, record in listener.questions.items()}
    assert scored == {1: False, 2: False, 3: True, 4: False}
    assert listener.questions[1].results["judge"].failure == FailureKind.TRANSIENT.value


def test_an_answer_in_flight_when_the_outage_stops_the_run_does_not_release_the_held() -> None:
    stop = threading.Event()
    model = ScriptedModel(stop)
    model.on(1, 1, model.until_stopping)
    for number in (2, 3, 4, 5):
        model.on(number, 1, gave_up(model))
    listener = Listener()
    with pytest.raises(JudgeUnavailableError):
        run_engine(model, [1, 2, 3, 4, 5], concurrency=2, listener=listener, outage_after=2)
    # Question 1 was in flight when the outage stopped the run: it is answered and kept. The
    # questions held back are not written as unscored rows: the resume asks them again.
    assert list(listener.questions) == [1]
    again, resumed = resume(listener, [1, 2, 3, 4, 5])
    assert again.asked(1) == 0 and sorted(resumed.questions) == [2, 3, 4, 5]
    assert all(record.scored for record in resumed.questions.values())


# -- properties -----------------------------------------------------------------------------------


def hedged_vote_stage() -> tuple[FamilyRun, RecordedStage]:
    """Question 1's judge, its hedging first verdict delivered: three votes to send; and the
    journal line of that first stage."""
    run = FamilyRun(JUDGE, QuestionJob(1, item(1), (JUDGE,)))
    first_stage = run.start({})
    assert first_stage is not None
    (request,) = first_stage
    first = CallOutcome(
        request.parse(verdict(reasoning=HEDGED)),
        verdict(reasoning=HEDGED),
        usage=CALL_USAGE,
        calls=1,
        cost_usd=CALL_USD,
    )
    outcomes = run.deliver(0, first)
    assert outcomes is not None and run.next_stage(outcomes) is not None
    return run, RecordedStage(stage_digest(first_stage), (recorded(first),))


def answered(run: FamilyRun, index: int, cost: float) -> CallOutcome:
    payload = verdict(summary=f"Vote {index}.")
    return CallOutcome(
        run.stage[index].parse(payload), payload, usage=CALL_USAGE, calls=1, cost_usd=cost
    )


# One step on one vote: an attempt cut short that paid (hold), an answer, or giving up.
STEPS = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.sampled_from(["hold", "answer", "give_up"]),
        st.integers(1, 5).map(lambda cents: cents / 100),
    ),
    max_size=10,
)


@settings(max_examples=60, deadline=None)
@given(steps=STEPS)
def test_any_interleaving_of_paid_attempts_and_answers_is_journaled_whole_and_replayed_once(
    steps: list[tuple[int, str, float]],
) -> None:
    run, first_stage = hedged_vote_stage()
    paid_by_vote = [0.0, 0.0, 0.0]
    final: dict[int, str] = {}
    for index, kind, cost in steps:
        if index in final:
            continue  # a request with a final outcome is never sent again
        if kind == "hold":
            run.hold(index, replace(paid(1), cost_usd=cost))
        elif kind == "answer":
            run.deliver(index, answered(run, index, cost))
            final[index] = kind
        else:
            run.give_up(index, "gave up", FailureKind.QUESTION)
            final[index] = kind
            cost = 0.0
        paid_by_vote[index] += cost
    journaled = run.journal_outcomes()
    for index in range(3):
        outcome = journaled[index]
        if index in final:
            assert outcome is not None and outcome.failure is not FailureKind.TRANSIENT
            assert outcome.ok == (final[index] == "answer")
        elif paid_by_vote[index]:
            assert outcome is not None and recorded(outcome).pending
        else:
            assert outcome is None
        kept = outcome.cost_usd if outcome is not None else 0.0
        assert kept == pytest.approx(paid_by_vote[index])

    # Replayed from the journal: only the votes without a final outcome are sent, carrying
    # what they paid; the result holds every dollar once.
    key = run.key
    journal = {
        (1, "judge", 0): first_stage,
        key: RecordedStage(
            stage_digest(run.stage),
            tuple(None if outcome is None else recorded(outcome) for outcome in journaled),
        ),
    }
    replay = FamilyRun(JUDGE, QuestionJob(1, item(1), (JUDGE,)))
    stage = replay.start(journal)
    if stage is None:
        assert len(final) == 3  # nothing left to ask
    else:
        assert replay.key == key
        assert replay.missing() == [index for index in range(3) if index not in final]
        for index in replay.missing():
            outcomes = replay.deliver(index, answered(replay, index, CALL_USD))
        assert outcomes is not None and replay.next_stage(outcomes) is None
    result = replay.result
    assert result is not None
    new_answers = 3 - len(final)
    expected = CALL_USD + sum(paid_by_vote) + new_answers * CALL_USD
    assert result.cost_usd == pytest.approx(expected)


@dataclass(frozen=True)
class StopPlan:
    kind: str  # "interrupt", "budget", "fatal", "none"
    question: int
    nth: int


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    hedged=st.sets(st.integers(1, 4)),
    concurrency=st.integers(1, 4),
    plan=st.builds(
        StopPlan,
        st.sampled_from(["interrupt", "budget", "fatal", "none"]),
        st.integers(1, 4),
        st.integers(1, 4),
    ),
)
def test_a_run_stopped_anywhere_then_resumed_keeps_every_answer_and_pays_each_once(
    hedged: set[int], concurrency: int, plan: StopPlan
) -> None:
    numbers = [1, 2, 3, 4]
    stop, interrupt = threading.Event(), threading.Event()
    model = ScriptedModel(stop, hedged)
    if plan.kind == "interrupt":
        model.on(plan.question, plan.nth, model.pressing(interrupt))
    elif plan.kind == "budget":
        model.on(
            plan.question, plan.nth, model.raising(with_partial(BudgetExhaustedError("b"), paid(1)))
        )
    elif plan.kind == "fatal":
        model.on(plan.question, plan.nth, model.raising(JudgeFatalError("fatal")))
    listener = Listener()
    with contextlib.suppress(KeyboardInterrupt, BudgetExhaustedError, JudgeFatalError):
        run_engine(model, numbers, concurrency=concurrency, interrupt=interrupt, listener=listener)
    again, resumed = resume(listener, numbers, hedged=hedged, concurrency=concurrency)
    assert sorted([*listener.questions, *resumed.questions]) == numbers
    # No answer paid for twice: as many answers as one uninterrupted run needs.
    assert model.answers + again.answers == len(numbers) + 3 * len(hedged)
    # Every dollar billed is in exactly one record.
    assert total_cost(listener, resumed) == pytest.approx(model.billed_usd + again.billed_usd)
    partial_calls = 1 if plan.kind == "budget" and model.asked(plan.question) >= plan.nth else 0
    assert total_calls(listener, resumed) == model.answers + again.answers + partial_calls


def _request(model: str) -> ModelRequest:
    return ModelRequest(
        "system", f"user for {model}", {"type": "object"}, 100, "judge", model=model
    )


def _outcome(cost: float) -> RecordedOutcome:
    return RecordedOutcome({"label": "CORRECT"}, None, None, CALL_USAGE, 1, cost)


def _costs(saved: SavedForStage) -> list[float]:
    """What every recorded outcome a resume met paid: replayed or spent elsewhere."""
    replayed_ones = [outcome for outcome in saved.outcomes if outcome is not None]
    return sorted(o.cost_usd for o in [*replayed_ones, *(o for _, o in saved.elsewhere)])


@settings(max_examples=80, deadline=None)
@given(
    recorded_models=st.lists(st.sampled_from("abcde"), min_size=1, max_size=5, unique=True),
    answered=st.lists(st.booleans(), min_size=5, max_size=5),
    stage_models=st.lists(st.sampled_from("abcde"), min_size=1, max_size=5, unique=True),
    third_models=st.lists(st.sampled_from("abcde"), min_size=1, max_size=5, unique=True),
)
def test_a_recorded_stage_is_replayed_request_by_request_and_nothing_paid_is_lost(
    recorded_models: list[str],
    answered: list[bool],
    stage_models: list[str],
    third_models: list[str],
) -> None:
    # The stage recorded before a stop, and the stage a resume sends (a juror answered from
    # the cache since is no longer in it; its order may differ).
    recorded_stage = tuple(_request(model) for model in recorded_models)
    outcomes = tuple(
        _outcome(index + 1) if answered[index] else None for index in range(len(recorded_models))
    )
    stage = tuple(_request(model) for model in stage_models)

    saved = saved_for_stage(stage, RecordedStage(stage_digest(recorded_stage), outcomes))

    by_model = dict(zip(recorded_models, outcomes, strict=True))
    assert saved.outcomes == [by_model.get(model) for model in stage_models]
    # Every recorded outcome is replayed or counted as spent elsewhere, once.
    paid = sorted(o.cost_usd for o in outcomes if o)
    assert _costs(saved) == paid

    # The resume stops again before the stage is answered: the line it writes again still
    # holds what the requests no longer in the stage paid, for a third run to count.
    replayed_outcomes = [None if o is None else as_call_outcome(o) for o in saved.outcomes]
    digest, entries = journal_entry(stage, saved.elsewhere, replayed_outcomes)
    rewritten = RecordedStage(digest, tuple(None if e is None else recorded(e) for e in entries))
    third_stage = tuple(_request(model) for model in third_models)
    assert _costs(saved_for_stage(third_stage, rewritten)) == paid


@given(
    failure=st.sampled_from([None, "question", "pending"]),
    payload=st.one_of(st.none(), st.just({"label": "CORRECT"})),
)
def test_a_recorded_outcome_kept_again_is_the_same_record(
    failure: str | None, payload: dict[str, str] | None
) -> None:
    saved = RecordedOutcome(
        None if failure == "pending" else payload, "an error", failure, CALL_USAGE, 2, 0.5, 1
    )
    assert recorded(as_call_outcome(saved)) == saved


def test_a_stage_recorded_with_a_whole_stage_digest_still_replays() -> None:
    stage = (_request("a"), _request("b"))
    legacy_digest = hashlib.sha256(stage_digest(stage).encode("ascii")).hexdigest()[:16]
    outcomes = (_outcome(1), None)

    saved = saved_for_stage(stage, RecordedStage(legacy_digest, outcomes))
    assert saved.outcomes == list(outcomes) and saved.elsewhere == []

    # The stage changed since: nothing is replayed, what was paid is still counted.
    changed = saved_for_stage((_request("b"),), RecordedStage(legacy_digest, outcomes))
    assert changed.outcomes == [None] and changed.elsewhere == [(legacy_digest, outcomes[0])]
