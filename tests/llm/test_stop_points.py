"""Stopped anywhere, resumed until done: the same results as an uninterrupted run, and no
request paid for twice (issue 21).

Hypothesis picks the way of calling the model (one call at a time, several, Message Batches)
and a sequence of stops, each at a random point: Ctrl-C, ``kill -9``, the ``--max-cost``
budget, a fatal API error. Malformed 200 replies and a hedged verdict (a second stage of
calls) are always in the mix. The fake API bills each answer by request body; the stopped
sequence must be billed exactly what one uninterrupted run is, and end with the same table.
"""

from __future__ import annotations

import _thread
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from evaluate_support import (
    prepare_workspace,
    read_results,
    run_cli,
    start_cli_process,
    write_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer, Fault, verdict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.cost import reserved_call_usd
from rag_evaluator.llm.models import resolve_model

QUESTIONS = {
    number: (
        f"What is the limit for item {number}?",
        f"The limit for item {number} is {number * 10} units.",
        f"Item {number} is limited to {number * 10} units.",
    )
    for number in range(1, 6)
}
BASE = ["evaluate", "--model", "haiku", "--yes", "--seed", "9", "--no-cache", "--delay", "0"]
MODES = {
    "sequential": [],
    "concurrent": ["--concurrency", "3"],
    "batch": ["--batch", "--batch-poll", "0.01"],
}
# Summary lines that may differ between a resumed run and an uninterrupted one.
VOLATILE = ("Estimated Cost", "Retries")
MAX_RUNS = 8


def script(server: FakeAnthropicServer) -> None:
    """The same answers for every run: a hedged verdict (votes follow), a malformed reply."""
    server.script(
        QUESTIONS[2][0],
        verdict(reasoning="Recall is a close call here."),
        verdict(1, 0, 1, summary="Vote."),
    )
    server.script(QUESTIONS[4][0], Fault.malformed("html"), verdict(0, 1, 1))


def one_call_usd() -> float:
    judge = JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES)
    return reserved_call_usd(
        judge.request(EvaluationItem(1, *QUESTIONS[1])), resolve_model("haiku")
    )


@dataclass(frozen=True)
class Stop:
    """One way a run ends early, at the ``at``-th event of its kind (a call, a batch poll)."""

    kind: str  # "interrupt", "fatal", "budget", "kill"
    at: int


@dataclass
class Finished:
    rows: list[dict[str, str]]
    summary: list[str]
    billed: Counter[str]


def table_of(directory: Path) -> tuple[list[dict[str, str]], list[str]]:
    complete = [
        read_results(path)
        for path in sorted((directory / "Evaluation_Runs").glob("precision_scores_*.csv"))
    ]
    complete = [results for results in complete if "Partial" not in results.summary]
    assert len(complete) == 1, [results.path for results in complete]
    summary = [
        line for line in complete[0].summary_lines if not line.split(": ")[1].startswith(VOLATILE)
    ]
    return complete[0].rows, summary


def new_workspace(base: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    folder = base / name
    folder.mkdir()
    workspace = prepare_workspace(folder, monkeypatch)
    write_inputs(workspace.directory, QUESTIONS)
    return workspace.directory


def use(server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", server.expected_api_key)
    script(server)


# One uninterrupted run per mode, made by the first test that needs it.
_REFERENCES: dict[str, Finished] = {}


def reference(
    mode: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Finished:
    if mode not in _REFERENCES:
        _REFERENCES[mode] = reference_run(tmp_path_factory.mktemp("reference"), monkeypatch, mode)
    return _REFERENCES[mode]


def reference_run(base: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> Finished:
    with FakeAnthropicServer() as server:
        use(server, monkeypatch)
        directory = new_workspace(base, monkeypatch, "reference")
        result = run_cli([*BASE, *MODES[mode]])
        assert result.exit_code == 0, result.output
        return Finished(*table_of(directory), Counter(server.billed))


class Trigger:
    """Counts a kind of event and fires a stop at the chosen one, once."""

    def __init__(self, at: int, fire: Callable[[], Fault | None]) -> None:
        self.count = 0
        self.at = at
        self.fire = fire

    def __call__(self, *_: object) -> Fault | None:
        self.count += 1
        return self.fire() if self.count == self.at else None


def press_ctrl_c() -> None:
    _thread.interrupt_main(signal.SIGINT)


def arm(server: FakeAnthropicServer, stop: Stop, mode: str) -> None:
    """Set the fake to stop the next run at ``stop``."""
    batch = mode == "batch"
    if stop.kind == "interrupt":

        def interrupt() -> None:
            press_ctrl_c()

        trigger = Trigger(stop.at, interrupt)
    elif stop.kind == "fatal":

        def refuse() -> Fault | None:
            if batch:
                server.fail_next(Fault.status(401, "invalid x-api-key"))
                return None
            return Fault.status(401, "invalid x-api-key")

        trigger = Trigger(stop.at, refuse)
    else:
        return
    if batch:
        server.on_batch_poll = trigger
    else:
        server.on_request = trigger


def disarm(server: FakeAnthropicServer) -> None:
    server.on_request = None
    server.on_batch_poll = None
    server.on_batch_created = None


def run_with_stops(
    base: Path, monkeypatch: pytest.MonkeyPatch, mode: str, stops: list[Stop]
) -> Finished:
    with FakeAnthropicServer() as server:
        use(server, monkeypatch)
        directory = new_workspace(base, monkeypatch, "stopped")
        for run in range(MAX_RUNS):
            stop = stops[run] if run < len(stops) else None
            arguments = [*BASE, *MODES[mode]]
            if stop is not None:
                arm(server, stop, mode)
                if stop.kind == "budget":
                    arguments += ["--max-cost", f"{one_call_usd() * (stop.at + 0.5):.8f}"]
            result = run_cli(arguments)
            disarm(server)
            assert "Traceback" not in result.output
            if result.exit_code == 0:
                return Finished(*table_of(directory), Counter(server.billed))
            assert result.exit_code in (2, 4, 130), result.output
        raise AssertionError(f"not finished after {MAX_RUNS} runs")


STOPS = st.lists(
    st.builds(Stop, st.sampled_from(["interrupt", "fatal", "budget"]), st.integers(1, 7)),
    min_size=1,
    max_size=3,
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(mode=st.sampled_from(sorted(MODES)), stops=STOPS)
def test_any_stops_then_resumes_give_the_uninterrupted_results_paid_once(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    stops: list[Stop],
) -> None:
    expected = reference(mode, tmp_path_factory, monkeypatch)
    finished = run_with_stops(tmp_path_factory.mktemp("stops"), monkeypatch, mode, stops)
    assert finished.rows == expected.rows
    assert finished.summary == expected.summary
    assert finished.billed == expected.billed


# -- kill -9: the run is a real process ----------------------------------------------------------


class Killer:
    """Kills the run's process at the chosen event, the way ``kill -9`` would meet it between
    two answers: from then on the API answers nothing (requests are dropped, never billed), a
    moment passes for the answers already sent to be received, then the process dies."""

    def __init__(self, process: subprocess.Popen[str], at: int) -> None:
        self.process = process
        self.at = at
        self.count = 0
        self.frozen = False

    def request(self, _request: object) -> Fault | None:
        if self.frozen:
            return Fault.drop_connection()
        self.count += 1
        if self.count == self.at:
            self.kill()
            return Fault.drop_connection()
        return None

    def event(self, *_: object) -> None:
        self.count += 1
        if self.count == self.at:
            self.kill()

    def kill(self) -> None:
        self.frozen = True
        time.sleep(GRACE_SECONDS)
        self.process.kill()
        self.process.wait(timeout=10)


# Time for the killed run to take in the answers it was sent before the kill.
GRACE_SECONDS = 0.3


def run_killed_then_resumed(
    base: Path, monkeypatch: pytest.MonkeyPatch, mode: str, at: int
) -> Finished:
    """The first run is killed at the ``at``-th call (direct) or batch event (creating the
    first batch, before the run learns its id, or a poll)."""
    with FakeAnthropicServer() as server:
        use(server, monkeypatch)
        directory = new_workspace(base, monkeypatch, "killed")
        arguments = [*BASE, *MODES[mode]]
        process = start_cli_process(arguments, directory)
        killer = Killer(process, at)
        server.on_request = killer.request
        if mode == "batch":
            server.on_batch_created = killer.event
            server.on_batch_poll = killer.event
        try:
            process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        disarm(server)
        for _ in range(MAX_RUNS):
            result = run_cli(arguments)
            if result.exit_code == 0:
                return Finished(*table_of(directory), Counter(server.billed))
        raise AssertionError("not finished")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(mode=st.sampled_from(sorted(MODES)), at=st.integers(1, 6))
def test_a_kill_anywhere_then_resume_gives_the_same_results_paid_once(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    at: int,
) -> None:
    expected = reference(mode, tmp_path_factory, monkeypatch)
    finished = run_killed_then_resumed(tmp_path_factory.mktemp("kill"), monkeypatch, mode, at)
    assert finished.rows == expected.rows
    assert finished.summary == expected.summary
    assert finished.billed == expected.billed


@pytest.mark.parametrize("kind", ["interrupt", "fatal", "budget"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_each_kind_of_stop_then_resume_gives_the_same_results_paid_once(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    mode: str,
) -> None:
    """A fixed example of each stop, so a regression is named plainly, not only shrunk."""
    expected = reference(mode, tmp_path_factory, monkeypatch)
    finished = run_with_stops(tmp_path_factory.mktemp("stop"), monkeypatch, mode, [Stop(kind, 2)])
    assert finished.billed == expected.billed
    assert finished.rows == expected.rows
    assert finished.summary == expected.summary
