"""``--batch`` on its own (issue 21): the batch runner over a scripted API, no HTTP.

Each run goes through the real pipeline (a resumed checkpoint, ``plan_judging``,
``judge_pending`` with a ``BatchRunner`` over a real ``ModelClient``); the API is
``scripted_api.ScriptedApi``, handed to the client in place of its SDK transport. The
checkpoint is a real file in ``tmp_path``, read back line by line.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import random
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import verdict
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted_api import HAIKU, Errored, Reply, ScriptedApi, Unusable, api_error

from rag_evaluator.errors import BudgetExhaustedError, EvaluationInterrupted, JudgeFatalError
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.inputs.selection import shuffled_order
from rag_evaluator.llm import batches
from rag_evaluator.llm.batches import BatchRunner
from rag_evaluator.llm.checkpoint.store import CheckpointHeader, load_checkpoint
from rag_evaluator.llm.client import ClientSettings, ModelClient
from rag_evaluator.llm.cost import call_cost, reserved_call_usd
from rag_evaluator.llm.fingerprint import fingerprint_run
from rag_evaluator.llm.judging import JudgedRecords, judge_pending
from rag_evaluator.llm.limits import SpendingCap
from rag_evaluator.llm.planning import JudgingOptions, PreparedCheckpoint, plan_judging
from rag_evaluator.llm.response_cache import ResponseCache
from rag_evaluator.settings import DEFAULT_BATCH_WINDOW_BYTES

JUDGE = JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES)
HEDGED = "Recall is a close call here."
MAX_RETRIES = 2
MAX_CALLS = 3  # unusable answers a request may use up (the client's default)


def item(number: int) -> EvaluationItem:
    return EvaluationItem(
        number,
        f"What is the limit for item {number}?",
        f"The limit for item {number} is {number * 10} units.",
        f"Item {number} is limited to {number * 10} units.",
    )


def cid(number: int, stage: int = 0, index: int = 0) -> str:
    return f"q{number}-judge-s{stage}-r{index}"


def one_reply_usd() -> float:
    return call_cost(TokenUsage(1000, 100), HAIKU, batch=True)


class Killed(BaseException):
    """The process dying at this point (``kill -9``): nothing after it runs."""


class Interaction:
    """The run's terminal, answering yes (resume) and remembering what it was told."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.progress: list[tuple[str, int, int]] = []

    def can_confirm(self) -> bool:
        return True

    def confirm(self, question: str, *, default: bool) -> bool:
        return True

    def info(self, message: str) -> None:
        self.messages.append(message)

    def question_started(self, position: int, total: int, question_number: int) -> None:
        return None

    def question_finished(self, update: Any) -> None:
        return None

    def work_progress(self, label: str, done: int, total: int) -> None:
        self.progress.append((label, done, total))


def no_direct_call(request: Any, label: str) -> Any:
    raise AssertionError("a --batch run sent a direct call")


@dataclass
class Workspace:
    """Input files, a checkpoint and a scripted API: runs of one evaluate ``--batch``."""

    directory: Path
    numbers: list[int]
    api: ScriptedApi = field(default_factory=ScriptedApi)
    interaction: Interaction = field(default_factory=Interaction)
    client: ModelClient | None = None
    finished: list[JudgedRecords] = field(default_factory=list)

    def close(self) -> None:
        """Let go of the checkpoint files the runs' records read from (as a session would)."""
        for judged in self.finished:
            judged.records.close()

    @property
    def checkpoint(self) -> Path:
        return self.directory / "checkpoint.jsonl"

    def inputs(self) -> tuple[Path, Path, Path]:
        paths = tuple(self.directory / name for name in ("q.csv", "g.csv", "a.csv"))
        for path in paths:
            if not path.exists():
                path.write_text(f"{path.name}\n", encoding="utf-8")
        return paths  # type: ignore[return-value]

    def run(
        self,
        *,
        budget: float | None = None,
        stop: threading.Event | None = None,
        window_bytes: int = DEFAULT_BATCH_WINDOW_BYTES,
    ) -> JudgedRecords:
        """One evaluate ``--batch`` run: resumes the checkpoint when there is one."""
        options = JudgingOptions(model=HAIKU, families=(JUDGE,), batch=True, use_cache=False)
        prepared = self.prepared_checkpoint()
        spent = prepared.resume_from.spent_usd if prepared.resume_from is not None else 0.0
        self.client = ModelClient(
            self.api,  # type: ignore[arg-type]
            ClientSettings(
                model=HAIKU,
                max_retries=MAX_RETRIES,
                max_calls_per_question=MAX_CALLS,
                batch=True,
                backoff_base_seconds=0.001,
                backoff_max_seconds=0.01,
            ),
            cap=SpendingCap(budget, already_spent_usd=spent),
            jitter=random.Random(0),
        )
        cache = ResponseCache(None)
        plan = plan_judging(
            options,
            prepared,
            [item(number) for number in self.numbers],
            cache,
            answers_name="a.csv",
            context_window_tokens=self.client.context_window_tokens,
        )
        stop = stop or threading.Event()
        runner = BatchRunner(
            self.client,
            stop,
            poll_seconds=0.0,
            interaction=self.interaction,
            window_bytes=window_bytes,
        )
        judged = judge_pending(
            plan, options, no_direct_call, cache, self.interaction, stop, batches=runner
        )
        self.finished.append(judged)
        return judged

    def prepared_checkpoint(self) -> PreparedCheckpoint:
        """The workspace's checkpoint, resumed when it holds anything (as evaluate would)."""
        loaded = load_checkpoint(self.checkpoint, {JUDGE.name: JUDGE})
        if loaded is not None and (
            loaded.results or loaded.stages or loaded.open_batches or loaded.unconfirmed_intents
        ):
            return PreparedCheckpoint(self.checkpoint, loaded.header, loaded, None)
        header = CheckpointHeader(
            fingerprint=fingerprint_run(b"", b"", b"", HAIKU.model_id, "", families=["judge"]),
            seed=1,
            order=shuffled_order(set(self.numbers), 1),
            prompt_origin="built-in",
            input_paths=[str(path) for path in self.inputs()],
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        return PreparedCheckpoint(self.checkpoint, header, None, None)

    def lines(self) -> list[dict[str, Any]]:
        text = self.checkpoint.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]

    def finish(self, **options: Any) -> JudgedRecords:
        """Run again until a run ends normally (resuming after each fatal stop)."""
        for _ in range(10):
            try:
                return self.run(**options)
            except JudgeFatalError:
                continue
        raise AssertionError("the run never finished")


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    made = Workspace(tmp_path, [1, 2, 3, 4, 5])
    yield made
    made.close()


def judge_result(records: JudgedRecords, number: int) -> Any:
    return records.records[number].results["judge"]


def assert_results_kept_before_their_batch_is_done(
    lines: list[dict[str, Any]], api: ScriptedApi
) -> None:
    """Every billed result of a batch is in the checkpoint (a stage or question line) before
    the line that marks the batch done."""
    for position, line in enumerate(lines):
        if line["type"] != "batch_done" or line["id"] not in api.batches:
            continue
        for result in api.batches[line["id"]].results or []:
            if result["result"]["type"] != "succeeded":
                continue
            number, family, stage, index = parse_custom_id(result["custom_id"])
            assert any(
                (earlier["type"] == "question" and earlier["question_number"] == number)
                or (
                    earlier["type"] == "stage"
                    and (earlier["question_number"], earlier["family"], earlier["stage"])
                    == (number, family, stage)
                    and earlier["outcomes"][index] is not None
                    and earlier["outcomes"][index]["calls"] >= 1
                )
                for earlier in lines[:position]
            ), f"{result['custom_id']} of {line['id']} was not kept before the batch was done"


def parse_custom_id(custom: str) -> tuple[int, str, int, int]:
    question, family, stage, index = custom.split("-")
    return int(question[1:]), family, int(stage[1:]), int(index[1:])


# -- failed entries are retried in follow-up batches ------------------------------------------


def test_errored_expired_and_canceled_entries_go_out_again_in_one_follow_up_batch(
    workspace: Workspace,
) -> None:
    workspace.api.script = {
        cid(1): [Errored("overloaded_error")],
        cid(2): ["expired"],
        cid(3): ["canceled"],
        cid(4): [Errored("api_error")],
    }
    finished = workspace.run()
    first, follow_up = workspace.api.created()
    assert len(workspace.api.custom_ids(first)) == 5
    assert sorted(workspace.api.custom_ids(follow_up)) == [cid(n) for n in (1, 2, 3, 4)]
    for number in workspace.numbers:
        result = judge_result(finished, number)
        # Errored, expired and canceled requests were not billed: one call each.
        assert result.scored and result.calls == 1
        assert result.retries == (0 if number == 5 else 1)
    assert workspace.api.paid_twice() == []
    assert_results_kept_before_their_batch_is_done(workspace.lines(), workspace.api)


@pytest.mark.parametrize(
    ("reply", "failure", "billed", "reason"),
    [
        (Errored("overloaded_error"), "transient", False, "API overloaded (529)"),
        (Errored("rate_limit_error"), "transient", False, "rate limit"),
        ("expired", "transient", False, "the batch request was expired"),
        ("canceled", "transient", False, "the batch request was canceled"),
        (Unusable(), "question", True, "not valid JSON"),
        (Errored("invalid_request_error", "bad schema"), "question", False, "bad schema"),
    ],
    ids=["overloaded", "rate-limited", "expired", "canceled", "unusable", "invalid"],
)
def test_a_request_failing_past_the_retry_limits_is_recorded_unscored_with_what_it_paid(
    workspace: Workspace, reply: Reply, failure: str, billed: bool, reason: str
) -> None:
    workspace.api.script = {cid(2): [reply] * 10}
    finished = workspace.run()
    attempts = MAX_RETRIES + 1 if failure == "transient" else MAX_CALLS
    created = workspace.api.created()
    assert len(created) == attempts
    assert all(workspace.api.custom_ids(batch_id) == [cid(2)] for batch_id in created[1:])
    result = judge_result(finished, 2)
    assert not result.scored and result.failure == failure
    assert reason in result.error and f"gave up after {attempts} attempts" in result.error
    # What the unusable answers were billed is in the record; nothing else was billed.
    assert result.calls == (attempts if billed else 0)
    assert result.cost_usd == pytest.approx(attempts * one_reply_usd() if billed else 0.0)
    total = sum(record.cost_usd for record in finished.records.values())
    assert total == pytest.approx(workspace.api.billed_usd)
    assert all(judge_result(finished, n).scored for n in (1, 3, 4, 5))
    assert_results_kept_before_their_batch_is_done(workspace.lines(), workspace.api)


@pytest.mark.parametrize(
    "error_type", ["authentication_error", "permission_error", "billing_error", "not_found_error"]
)
def test_a_refused_entry_stops_the_run_once_its_batch_is_kept_and_is_sent_again_on_rerun(
    workspace: Workspace, error_type: str
) -> None:
    workspace.api.script = {cid(3): [Errored(error_type, "Refused for this workspace.")]}
    with pytest.raises(JudgeFatalError) as stopped:
        workspace.run()
    assert "The Message Batch refused a request" in stopped.value.message
    lines = workspace.lines()
    [done] = [index for index, line in enumerate(lines) if line["type"] == "batch_done"]
    assert done == len(lines) - 1  # the batch is done, nothing came after the stop
    assert_results_kept_before_their_batch_is_done(lines, workspace.api)

    finished = workspace.run()
    _, again = workspace.api.created()
    assert workspace.api.custom_ids(again) == [cid(3)]  # the others were kept, not re-sent
    assert workspace.api.paid_twice() == []
    assert all(judge_result(finished, number).scored for number in workspace.numbers)


# -- creating and collecting ----------------------------------------------------------------


def test_a_stage_split_into_several_batches_creates_them_all_before_polling(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batches, "MAX_REQUESTS_PER_BATCH", 2)
    # Two verdicts hedge: their six votes are the next stage, in three batches again.
    workspace.api.script = {
        cid(1): [verdict(reasoning=HEDGED)],
        cid(4): [verdict(reasoning=HEDGED)],
    }
    finished = workspace.run()
    events = [(kind, batch_id) for kind, batch_id in workspace.api.events if kind != "results"]
    kinds = "".join("c" if kind == "create" else "p" for kind, _ in events)
    # Three creates, polls until all ended, three creates (the votes), polls.
    assert kinds.startswith("cccp") and kinds.count("c") == 6
    second = kinds.index("c", 3)
    assert kinds[second : second + 4] == "cccp"
    votes = sorted(
        custom
        for batch_id in workspace.api.created()[3:]
        for custom in workspace.api.custom_ids(batch_id)
    )
    assert votes == sorted(cid(n, 1, index) for n in (1, 4) for index in range(3))
    for number in (1, 4):
        result = judge_result(finished, number)
        assert result.consensus and len(result.votes) == 3 and result.calls == 4
    assert_results_kept_before_their_batch_is_done(workspace.lines(), workspace.api)


def test_polling_reports_progress_and_a_poll_error_is_retried(workspace: Workspace) -> None:
    workspace.api.polls_until_ended = 3
    failures = [api_error(529, "overloaded_error")]

    def flaky(batch_id: str) -> None:
        if failures:
            raise failures.pop()

    workspace.api.on_poll = flaky
    finished = workspace.run()
    assert len(workspace.api.created()) == 1
    # One overloaded poll, retried by the client; then three polls until the batch ended.
    assert [kind for kind, _ in workspace.api.events].count("retrieve") == 4
    assert workspace.interaction.progress == [("Batch", 0, 5), ("Batch", 0, 5), ("Batch", 5, 5)]
    assert all(judge_result(finished, number).scored for number in workspace.numbers)


# -- --max-cost -------------------------------------------------------------------------------


def reserved_usd() -> float:
    """The reservation of one judge request of these questions (all the same length)."""
    amounts = {reserved_call_usd(JUDGE.request(item(n)), HAIKU, batch=True) for n in range(1, 6)}
    assert len(amounts) == 1
    return amounts.pop()


def test_max_cost_sends_what_fits_settles_each_result_and_stops_after_collecting(
    workspace: Workspace,
) -> None:
    budget = reserved_usd() * 2.5
    stopped = workspace.run(budget=budget)
    assert isinstance(stopped.budget_stop, BudgetExhaustedError)
    [batch_id] = workspace.api.created()
    assert len(workspace.api.custom_ids(batch_id)) == 2
    # What was created was collected and kept, and the cap holds what was really spent.
    assert len(stopped.records) == 2
    client = workspace.client
    assert client is not None
    assert client.cap.spent_usd == pytest.approx(workspace.api.billed_usd)
    # Every reservation was settled: what is left of the budget can all be booked.
    client.cap.reserve(budget - client.cap.spent_usd - 1e-12)

    finished = workspace.run(budget=budget * 10)
    assert sorted(finished.records) == workspace.numbers
    assert workspace.api.paid_twice() == []


def _one_question_characters() -> int:
    """What one question of the workspace holds in a window: its texts and its request."""
    one = item(1)
    return len(one.question + one.ground_truth + one.rag_answer) + len(JUDGE.request(one).user)


def test_questions_go_a_window_at_a_time_each_run_to_its_end_before_the_next(
    workspace: Workspace,
) -> None:
    workspace.numbers = list(range(1, 8))
    workspace.api.script = {cid(number): [verdict(reasoning=HEDGED)] for number in (2, 6)}
    # A window closes once its questions hold this much text: three questions each.
    finished = workspace.run(window_bytes=3 * _one_question_characters() - 10)
    order = shuffled_order(set(workspace.numbers), 1)
    windows = [sorted(order[start : start + 3]) for start in (0, 3, 6)]
    created = workspace.api.created()
    first_stage = [
        batch_id
        for batch_id in created
        if all("-s0-" in custom for custom in workspace.api.custom_ids(batch_id))
    ]
    assert [
        sorted(int(custom.split("-")[0][1:]) for custom in workspace.api.custom_ids(batch_id))
        for batch_id in first_stage
    ] == windows
    # A window's batches (its votes too) are collected before the next window's go out.
    events = workspace.api.events

    def when(kind: str, batch_id: str) -> int:
        return next(i for i, event in enumerate(events) if event == (kind, batch_id))

    for later in first_stage[1:]:
        for earlier in created[: created.index(later)]:
            assert when("results", earlier) < when("create", later)
    assert sorted(finished.records) == workspace.numbers
    for number in workspace.numbers:
        assert judge_result(finished, number).calls == (4 if number in (2, 6) else 1)
    assert workspace.api.paid_twice() == []
    assert_results_kept_before_their_batch_is_done(workspace.lines(), workspace.api)


def test_questions_an_earlier_run_left_in_open_batches_make_the_first_window(
    workspace: Workspace,
) -> None:
    workspace.numbers = list(range(1, 8))
    workspace.api.polls_until_ended = 2
    stop = threading.Event()
    workspace.api.on_poll = lambda batch_id: stop.set()  # Ctrl-C while the batch runs
    with pytest.raises(EvaluationInterrupted):
        workspace.run(stop=stop)  # one window: every question in the one batch
    [left_open] = workspace.api.created()
    workspace.api.on_poll = None
    # A rerun with windows of one question each still collects that batch whole, once.
    finished = workspace.run(window_bytes=1)
    assert workspace.api.created() == [left_open]
    assert sorted(finished.records) == workspace.numbers
    assert workspace.api.paid_twice() == []
    assert sum(workspace.api.usable.values()) == 7
    assert_results_kept_before_their_batch_is_done(workspace.lines(), workspace.api)


def test_a_rerun_with_the_same_budget_counts_the_batch_an_earlier_run_left_open(
    workspace: Workspace,
) -> None:
    # Each answer costs what was reserved for it, so the budget is really reached.
    workspace.api.reply_usage = lambda params: (
        math.ceil((len(params["system"]) + len(params["messages"][0]["content"])) / 3) + 300,
        500,
    )
    workspace.api.polls_until_ended = 2
    budget = reserved_usd() * 2.5
    stop = threading.Event()
    workspace.api.on_poll = lambda batch_id: stop.set()  # Ctrl-C while the batch runs
    with pytest.raises(EvaluationInterrupted):
        workspace.run(budget=budget, stop=stop)
    [left_open] = workspace.api.created()
    assert len(workspace.api.custom_ids(left_open)) == 2

    workspace.api.on_poll = None
    again = workspace.run(budget=budget)
    # The open batch is collected; its two requests already use the budget up.
    assert workspace.api.created() == [left_open]
    assert isinstance(again.budget_stop, BudgetExhaustedError)
    assert len(again.records) == 2
    assert workspace.api.billed_usd <= budget


@pytest.mark.parametrize("when", ["polled", "collected"])
def test_a_batch_the_api_no_longer_knows_is_sent_again_within_the_budget(
    workspace: Workspace, caplog: pytest.LogCaptureFixture, when: str
) -> None:
    # The first batch is unknown (404) when it is polled, or once ended when its results are
    # read.
    unknown = workspace.api.gone if when == "polled" else workspace.api.vanishing
    workspace.api.on_create = lambda batch_id: (
        unknown.add(batch_id) if batch_id == "msgbatch_001" else None
    )
    # Room for the five requests once, and a little more.
    budget = reserved_usd() * 5.5
    with caplog.at_level(logging.WARNING, logger="rag_evaluator"):
        finished = workspace.run(budget=budget)
    assert "no longer knows Message Batch msgbatch_001" in caplog.text
    lost, again = workspace.api.created()
    assert sorted(workspace.api.custom_ids(again)) == [cid(n) for n in workspace.numbers]
    assert finished.budget_stop is None
    assert all(judge_result(finished, number).scored for number in workspace.numbers)
    assert {"type": "batch_done", "id": lost} in workspace.lines()


# -- a batch created by a run that died before recording it ------------------------------------


def test_an_unconfirmed_intent_is_found_by_listing_and_collected_instead_of_paid_again(
    workspace: Workspace,
) -> None:
    # Another run's batch of the same size, made just before: not ours, never taken.
    workspace.api.other_run_batch([f"q{n}-judge-s0-r9" for n in range(1, 6)])

    def die(batch_id: str) -> None:
        raise Killed

    workspace.api.on_create = die  # the batch exists, the run dies before writing its id
    with pytest.raises(Killed):
        workspace.run()
    lines = workspace.lines()
    assert [line["type"] for line in lines[1:]] == ["batch_intent"]

    workspace.api.on_create = None
    finished = workspace.run()
    assert workspace.api.created() == ["msgbatch_001"]
    assert any(
        "Found Message Batch msgbatch_001" in text for text in workspace.interaction.messages
    )
    intent = lines[1]["intent"]
    assert {"type": "batch", "id": "msgbatch_001", "intent": intent} in workspace.lines()
    assert all(judge_result(finished, number).scored for number in workspace.numbers)
    assert workspace.api.paid_twice() == []


def test_an_intent_whose_batch_was_never_created_is_voided_and_sent_anew(
    workspace: Workspace,
) -> None:
    workspace.api.other_run_batch([f"q{n}-judge-s0-r9" for n in range(1, 6)])
    workspace.api.refuse_create = Killed()  # the run dies before the create request arrives
    with pytest.raises(Killed):
        workspace.run()
    [intent_line] = [line for line in workspace.lines() if line["type"] == "batch_intent"]
    assert workspace.api.created() == []

    finished = workspace.run()
    assert workspace.api.created() == ["msgbatch_001"]
    assert {"type": "batch_intent_void", "intent": intent_line["intent"]} in workspace.lines()
    assert all(judge_result(finished, number).scored for number in workspace.numbers)


# -- any mix of entry results --------------------------------------------------------------------

ENTRY_RESULTS = st.sampled_from(
    [
        "ok",
        Errored("overloaded_error"),
        Errored("api_error"),
        Errored("invalid_request_error"),
        Errored("billing_error"),
        Unusable(),
        "expired",
        "canceled",
    ]
)


def expected_outcome(script: list[Any]) -> tuple[str | None, int]:
    """What one request ends as under the retry limits (one run): its failure (``None``:
    scored) and the answers billed."""
    transient = unusable = billed = 0
    for reply in [*script, "ok"]:
        if reply == "ok":
            return None, billed + 1
        if isinstance(reply, Unusable):
            billed += 1
            unusable += 1
        elif isinstance(reply, Errored) and reply.error_type == "invalid_request_error":
            unusable += 1
        else:
            transient += 1
        if transient > MAX_RETRIES:
            return "transient", billed
        if unusable >= MAX_CALLS:
            return "question", billed
    raise AssertionError("unreachable")


@settings(max_examples=40, deadline=None)
@given(
    scripts=st.lists(st.lists(ENTRY_RESULTS, max_size=5), min_size=3, max_size=3),
    window_bytes=st.sampled_from([1, DEFAULT_BATCH_WINDOW_BYTES]),
)
def test_any_mix_of_entry_results_ends_each_request_once_with_every_dollar_kept(
    scripts: list[list[Any]], window_bytes: int
) -> None:
    with (
        tempfile.TemporaryDirectory() as folder,
        contextlib.closing(Workspace(Path(folder), [1, 2, 3])) as workspace,
    ):
        workspace.api.script = {
            cid(number): [verdict() if reply == "ok" else reply for reply in script]
            for number, script in zip(workspace.numbers, scripts, strict=True)
        }
        refused = any(
            isinstance(reply, Errored) and reply.error_type == "billing_error"
            for script in scripts
            for reply in script
        )
        finished = workspace.finish(window_bytes=window_bytes)
        records = finished.records
        assert sorted(records) == workspace.numbers
        assert workspace.api.paid_twice() == []
        total = sum(record.cost_usd for record in records.values())
        assert total == pytest.approx(workspace.api.billed_usd)
        assert_results_kept_before_their_batch_is_done(workspace.lines(), workspace.api)
        if refused:
            return  # a refusal stops the run: the counts start again on the rerun
        for number, script in zip(workspace.numbers, scripts, strict=True):
            failure, billed = expected_outcome(script)
            result = judge_result(finished, number)
            assert (result.failure, result.calls) == (failure, billed), script
