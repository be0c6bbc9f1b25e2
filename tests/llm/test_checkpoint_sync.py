"""When the checkpoint's lines reach the disk: a finished question's line is written at once
and fsynced within the sync interval (at most one fsync per interval); a Message Batch's
lines are fsynced at once; a failed fsync stops the run at its next line."""

from __future__ import annotations

import errno
import os
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.errors import CheckpointError
from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.checkpoint import store
from rag_evaluator.llm.checkpoint.store import CheckpointHeader, CheckpointWriter, load_checkpoint
from rag_evaluator.llm.fingerprint import fingerprint_run

FAMILIES = {"judge": JudgeFamily("prompt", ("borderline",))}


class FsyncLog:
    """Records each fsync (when, and of which file) and makes it for real, or fails it."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.failure: int | None = None
        self._real = os.fsync
        self._lock = threading.Lock()

    def __call__(self, fd: int) -> None:
        with self._lock:
            self.times.append(time.monotonic())
        if self.failure is not None:
            raise OSError(self.failure, os.strerror(self.failure))
        self._real(fd)

    def clear(self) -> None:
        with self._lock:
            self.times.clear()

    def count(self) -> int:
        with self._lock:
            return len(self.times)


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> FsyncLog:
    log = FsyncLog()
    monkeypatch.setattr(store.os, "fsync", log)
    return log


def _record(number: int) -> QuestionRecord:
    result = JudgeResult(
        scores=Scores(1, 1, 1),
        summary=f"question {number}",
        usage=TokenUsage(10, 2),
        cost_usd=0.001,
    )
    return QuestionRecord(number, {"judge": result})


def _writer(path: Path, interval: float, fsyncs: FsyncLog | None = None) -> CheckpointWriter:
    """A new checkpoint's writer; ``fsyncs`` counts from after its creation (which fsyncs
    the new file and its folder)."""
    header = CheckpointHeader(
        fingerprint=fingerprint_run(b"q", b"gt", b"a", "claude-haiku-5-5", "prompt"),
        seed=1,
        order=list(range(1, 101)),
        prompt_origin="built-in default",
        input_paths=["q.csv", "gt.csv", "a.csv"],
        created_at="2026-01-01T10:00:00",
    )
    writer = CheckpointWriter.create(path, header, FAMILIES, sync_interval=interval)
    if fsyncs is not None:
        fsyncs.clear()
    return writer


def _wait_for(condition: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_questions_finishing_fast_share_one_fsync_per_interval(
    tmp_path: Path, fsyncs: FsyncLog
) -> None:
    path = tmp_path / "run.jsonl"
    writer = _writer(path, interval=2.0, fsyncs=fsyncs)
    try:
        writer.append(_record(1))  # no fsync before it: made at once
        assert fsyncs.count() == 1
        for number in range(2, 51):
            writer.append(_record(number))
        # Written at once (a killed process loses nothing), fsynced by one waiting fsync.
        loaded = load_checkpoint(path, FAMILIES)
        assert loaded is not None and len(loaded.results) == 50
        assert fsyncs.count() == 1
        assert _wait_for(lambda: fsyncs.count() == 2, seconds=10)
        assert fsyncs.times[1] - fsyncs.times[0] >= 1.95
    finally:
        writer.close()
    assert fsyncs.count() == 3  # and one on close


def test_a_question_after_a_quiet_interval_is_fsynced_at_once(
    tmp_path: Path, fsyncs: FsyncLog
) -> None:
    with _writer(tmp_path / "run.jsonl", interval=0.05, fsyncs=fsyncs) as writer:
        for number in range(1, 4):
            time.sleep(0.06)
            writer.append(_record(number))
            assert fsyncs.count() == number
    assert not [t for t in threading.enumerate() if isinstance(t, threading.Timer)]


def test_message_batch_lines_are_fsynced_at_once(tmp_path: Path, fsyncs: FsyncLog) -> None:
    with _writer(tmp_path / "run.jsonl", interval=60, fsyncs=fsyncs) as writer:
        writer.append(_record(1))
        writer.append(_record(2))  # waits for the interval
        assert fsyncs.count() == 1
        writer.append_batch_intent("intent-1", ["q2-judge-s0-r0"], datetime.now(UTC))
        assert fsyncs.count() == 2  # covers question 2 too: nothing waits any more
        writer.append_batch("batch-1", "intent-1")
        assert fsyncs.count() == 3
    assert fsyncs.count() == 4


def test_closing_fsyncs_what_waits_and_stops_the_timer(tmp_path: Path, fsyncs: FsyncLog) -> None:
    writer = _writer(tmp_path / "run.jsonl", interval=60, fsyncs=fsyncs)
    writer.append(_record(1))
    writer.append(_record(2))
    writer.close()
    assert fsyncs.count() == 2
    time.sleep(0.05)
    assert not [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    writer.close()  # a second close does nothing
    assert fsyncs.count() == 2


def test_a_failed_waiting_fsync_stops_the_run_at_its_next_line(
    tmp_path: Path, fsyncs: FsyncLog
) -> None:
    with _writer(tmp_path / "run.jsonl", interval=0.05, fsyncs=fsyncs) as writer:
        writer.append(_record(1))
        fsyncs.failure = errno.EIO
        writer.append(_record(2))  # its fsync waits, then fails on the timer's thread
        assert _wait_for(lambda: fsyncs.count() == 2, seconds=5)
        time.sleep(0.02)
        with pytest.raises(CheckpointError, match=r"checkpoint .*: Input/output error"):
            writer.append(_record(3))
        fsyncs.failure = None


def test_a_failed_fsync_at_once_is_a_checkpoint_error(tmp_path: Path, fsyncs: FsyncLog) -> None:
    with _writer(tmp_path / "run.jsonl", interval=0, fsyncs=fsyncs) as writer:
        fsyncs.failure = errno.ENOSPC
        with pytest.raises(CheckpointError, match="Free some disk space"):
            writer.append(_record(1))
        fsyncs.failure = None


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=0.03), min_size=1, max_size=12))
def test_every_line_is_written_whatever_the_pauses_and_fsynced_by_close(
    pauses: list[float],
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.jsonl"
        writer = _writer(path, interval=0.02)
        for number, pause in enumerate(pauses, start=1):
            time.sleep(pause)
            writer.append(_record(number))
            loaded = load_checkpoint(path, FAMILIES)
            assert loaded is not None and sorted(loaded.results) == list(range(1, number + 1))
        writer.close()
        assert not [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
