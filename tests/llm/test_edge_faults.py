"""Faults at the edges (issue 21): a tampered response cache, a full disk under rag_eval.log,
the response cache's file mode, special files given as inputs, symlinks out of generate's
documents folder and temporary files left by a killed run."""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from evaluate_support import Workspace, prepare_workspace, run_cli, write_inputs
from fakes.anthropic_server import FakeAnthropicServer
from generate_support import copy_docs, generate_arguments

from rag_evaluator.atomic import write_text_atomic
from rag_evaluator.cli import logs
from rag_evaluator.generate.reading import read_documents

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


def test_a_cached_result_that_is_json_but_not_a_result_is_one_warning(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    assert run_cli(["evaluate", *FAST]).exit_code == 0
    database = sqlite3.connect(_cache_file())
    (key,) = database.execute("SELECT key FROM results ORDER BY key LIMIT 1").fetchone()
    database.execute("UPDATE results SET value = ? WHERE key = ?", ('{"usage": 7}', key))
    database.commit()
    database.close()
    asked_before = len(fake_anthropic.requests)
    second = run_cli(["evaluate", *FAST])
    assert second.exit_code == 0, second.output
    (warning,) = _warnings(second.stderr)
    assert "response cache" in warning and "damaged" in warning
    assert len(fake_anthropic.requests) - asked_before == 1


def test_a_deeply_nested_checkpoint_header_is_damage_not_a_crash(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    first = run_cli(["evaluate", *FAST, "--limit", "2"])
    assert first.exit_code == 0, first.output
    (checkpoint,) = workspace.checkpoint_files()
    lines = checkpoint.read_text(encoding="utf-8").splitlines(keepends=True)
    checkpoint.write_text("[" * 100_000 + "]" * 100_000 + "\n" + "".join(lines[1:]))
    second = run_cli(["evaluate", *FAST])
    assert second.exit_code == 2, second.output
    assert "Traceback" not in second.output
    assert "is damaged" in " ".join(second.stderr.split())


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


# --- special files given as inputs -----------------------------------------------------------


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _link_to_zero(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (_fifo, "a named pipe (FIFO)"),
        (_link_to_zero, "a device"),
        (lambda path: path.mkdir() or path, "a directory"),
    ],
    ids=["fifo", "link-to-dev-zero", "directory"],
)
@pytest.mark.parametrize(
    "arguments",
    [
        ["evaluate", "--metrics", "lexical", "--yes", "--answers", "{special}"],
        ["evaluate", "--metrics", "lexical", "--yes", "--dataset", "{special}"],
        ["evaluate", "--metrics", "lexical", "--yes", "--fallback-phrases", "@{special}"],
        ["evaluate", "--yes", "--prompt", "{special}"],
        ["evaluate", "--yes", "--metrics", "rubric", "--rubric", "{special}.toml"],
        ["compare", "{special}", "{special}"],
        ["calibrate", "{special}", "--labels", "labels.csv"],
        ["report", "{special}"],
    ],
    ids=["answers", "dataset", "phrases", "prompt", "rubric", "compare", "calibrate", "report"],
)
def test_a_special_file_is_named_for_what_it_is_and_never_read(
    workspace: Workspace, make, kind: str, arguments: list[str]
) -> None:
    special = workspace.directory / "special"
    make(special)
    (workspace.directory / "special.toml").symlink_to(special)
    result = run_cli(
        [argument.replace("{special}", str(special)) for argument in arguments],
        env={"ANTHROPIC_API_KEY": "sk-ant-test-key"},
    )
    assert result.exit_code == 2, result.output
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert f"special is {kind}" in error or f"special.toml is {kind}" in error, error
    if kind != "a directory":
        assert "directory" not in error


def test_dev_null_as_answers_is_an_empty_file(workspace: Workspace) -> None:
    result = run_cli(["evaluate", "--metrics", "lexical", "--yes", "--answers", os.devnull])
    assert result.exit_code == 2, result.output
    assert "Error: null is empty. Add a header row with columns: Question Number, RAG Answer" in (
        result.stderr
    )


def test_a_pipe_among_converts_json_files_is_skipped_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "questions.csv").write_text("Question Number,Question\n1,Why?\n")
    json_dir = tmp_path / "RAG_JSON_Files"
    json_dir.mkdir()
    (json_dir / "a.json").write_text('[{"question": "Why?", "answer": "Because."}]')
    os.mkfifo(json_dir / "b.json")
    (json_dir / "c.json").symlink_to("/dev/zero")
    result = run_cli(["convert"])
    assert result.exit_code == 1, result.output
    assert "b.json is a named pipe (FIFO), not a file" in result.stderr
    assert "c.json is a device, not a file" in result.stderr
    assert (tmp_path / "rag_answers.csv").read_text().count("Because.") == 1


# --- generate --docs and symbolic links ------------------------------------------------------


def test_generate_reads_no_file_through_a_link_out_of_the_docs_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    prepare_workspace(tmp_path, monkeypatch)
    docs = copy_docs(tmp_path / "docs")
    outside = tmp_path / "private"
    (outside / "keys").mkdir(parents=True)
    secret = "The vault combination is 31-41-59 and must never leave this machine."
    (outside / "secret.txt").write_text(secret * 20, encoding="utf-8")
    (outside / "keys" / "more.md").write_text(secret * 20, encoding="utf-8")
    (docs / "notes.txt").symlink_to(outside / "secret.txt")
    (docs / "linked-folder").symlink_to(outside / "keys", target_is_directory=True)
    inside = sorted(path for path in docs.rglob("*.md") if not path.is_symlink())[0]
    (docs / "alias.md").symlink_to(inside)  # a link within the folder is read

    result = run_cli([*generate_arguments(docs, count=6), "--yes"])

    assert result.exit_code == 0, result.output
    sent = " ".join(str(request.body) for request in fake_anthropic.requests)
    assert "vault combination" not in sent
    (warning,) = [line for line in result.stderr.splitlines() if "outside" in line]
    assert warning.startswith("Warning: 2 link(s) in ")
    assert warning.endswith(
        "lead outside it and were passed over: linked-folder, notes.txt. Copy the files into "
        "the folder to use them"
    )
    assert read_documents(docs).documents[0].name == "alias.md"


# --- temporary files left by a killed run ----------------------------------------------------

_WRITER = """
import sys, time
from pathlib import Path
from rag_evaluator.atomic import open_atomic
with open_atomic(Path(sys.argv[1])) as handle:
    handle.write(b"Question Number,Question\\n" * 1000)
    handle.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


def _start_writer(target: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "writing\n"
    return process


def _temporary_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.name.endswith(".tmp"))


def test_a_temporary_file_left_by_kill_9_is_removed_by_the_next_write_there(
    workspace: Workspace,
) -> None:
    runs = workspace.directory / "Evaluation_Runs"
    runs.mkdir()
    killed = _start_writer(runs / "precision_scores_20260101_000000.csv")
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    live = _start_writer(runs / "precision_scores_20260101_000001.csv")
    try:
        left = _temporary_files(runs)
        # Both temporary files are an hour old: only the lock tells the live one apart.
        for path in left:
            os.utime(path, (time.time() - 3600, time.time() - 3600))
        (stale,) = [path for path in left if "000000" in path.name]
        (writing,) = [path for path in left if "000001" in path.name]

        result = run_cli(["evaluate", "--metrics", "lexical", "--yes"])

        assert result.exit_code == 0, result.output
        assert not stale.exists()
        assert writing.exists()  # another run is still writing it
    finally:
        live.kill()
        live.wait()
    assert [path.name for path in _temporary_files(runs)] == [writing.name]


def test_a_fresh_temporary_file_is_never_taken_for_a_stale_one(tmp_path: Path) -> None:
    killed = _start_writer(tmp_path / "out.csv")
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    (left,) = _temporary_files(tmp_path)
    write_text_atomic(tmp_path / "other.csv", "x")
    assert left.exists()  # it might be a run's file between its creation and its lock
