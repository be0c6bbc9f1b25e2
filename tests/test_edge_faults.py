"""Faults at the edges (issue 21): a tampered response cache, a full disk under rag_eval.log,
the response cache's file mode, special files given as inputs, symlinks out of generate's
documents folder and temporary files left by a killed run."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest
from evaluate_support import Workspace, prepare_workspace, run_cli, write_inputs
from fakes.anthropic_server import FakeAnthropicServer

from rag_evaluator import logs

FAST = ["--delay", "0", "--yes", "--seed", "1"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)
    return space


def _cache_file() -> Path:
    return Path(os.environ["RAG_EVAL_CACHE_DIR"]) / "responses.sqlite3"


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Warning:")]


# --- the response cache ----------------------------------------------------------------------


def test_tampered_cache_values_are_one_warning_and_the_run_goes_on(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    first = run_cli(["evaluate", *FAST])
    assert first.exit_code == 0, first.output
    database = sqlite3.connect(_cache_file())
    keys = [key for (key,) in database.execute("SELECT key FROM results ORDER BY key")]
    assert len(keys) == 5
    deep = "[" * 200_000 + "]" * 200_000  # parses only with unbounded recursion
    for key, value in zip(keys, [deep, '{"x": ' * 100_000, "not json", "[1, 2]"], strict=False):
        database.execute("UPDATE results SET value = ? WHERE key = ?", (value, key))
    database.commit()
    database.close()
    asked_before = len(fake_anthropic.requests)

    second = run_cli(["evaluate", *FAST])

    assert second.exit_code == 0, second.output
    assert "Traceback" not in second.output and "RecursionError" not in second.output
    (warning,) = _warnings(second.stderr)
    assert "response cache" in warning and "damaged" in warning
    # The four damaged entries are asked again; the fifth comes from the cache.
    assert len(fake_anthropic.requests) - asked_before == 4


def test_the_response_cache_is_private(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    old = os.umask(0o022)
    try:
        result = run_cli(["evaluate", *FAST])
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    cache = _cache_file()
    for path in cache.parent.iterdir():  # the database and SQLite's -wal/-shm files
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_an_existing_world_readable_cache_is_made_private(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    assert run_cli(["evaluate", *FAST]).exit_code == 0
    _cache_file().chmod(0o644)
    assert run_cli(["evaluate", *FAST]).exit_code == 0
    assert stat.S_IMODE(_cache_file().stat().st_mode) == 0o600


# --- rag_eval.log on a full disk -------------------------------------------------------------


def test_a_full_disk_under_the_log_is_one_warning_and_the_run_goes_on(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /dev/full refuses every write with ENOSPC, as a full disk does.
    monkeypatch.setattr(logs, "LOG_FILE_NAME", "/dev/full")
    result = run_cli(["evaluate", *FAST])
    assert result.exit_code == 0, result.output
    assert "Logging error" not in result.stderr and "Traceback" not in result.stderr
    (warning,) = _warnings(result.stderr)
    assert warning == (
        "Warning: Cannot write the debug log /dev/full (No space left on device); the run goes "
        "on without it. Free some disk space to get rag_eval.log"
    )
    assert len(workspace.results()) == 1
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # never removed as an old log


def test_a_pipe_in_place_of_the_log_is_left_alone(workspace: Workspace) -> None:
    os.mkfifo(workspace.directory / "rag_eval.log")
    result = run_cli(["evaluate", "--metrics", "lexical", "--yes"])
    assert result.exit_code == 0, result.output
    assert "Cannot write the debug log" in result.stderr
    assert stat.S_ISFIFO((workspace.directory / "rag_eval.log").stat().st_mode)
