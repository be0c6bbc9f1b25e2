"""The checkpoint file: private, durable, tolerant of a torn last line, strict otherwise."""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.core.fingerprint import (
    InputNames,
    RunFingerprint,
    checkpoint_key,
    fingerprint_differences,
    fingerprint_run,
)
from rag_evaluator.core.question_results import QuestionResult, Scores, Vote
from rag_evaluator.core.records import TokenUsage
from rag_evaluator.errors import CheckpointError
from rag_evaluator.storage.checkpoint import (
    CheckpointHeader,
    CheckpointWriter,
    load_checkpoint,
    lock_run,
    resolve_checkpoint_directory,
    result_from_json,
    result_to_json,
)


def _header() -> CheckpointHeader:
    return CheckpointHeader(
        fingerprint=fingerprint_run(b"q", b"gt", b"a", "claude-haiku-5-5", "prompt"),
        seed=7,
        order=[3, 1, 2],
        prompt_origin="built-in default",
        input_paths=["/data/questions.csv", "/data/ground_truth.csv", "/data/rag_answers.csv"],
        created_at="2026-01-01T10:00:00",
    )


def _result(number: int) -> QuestionResult:
    return QuestionResult(
        number,
        Scores(1, 0, 1),
        summary=f'summary {number}, with "quotes" and a\nnewline',
        usage=TokenUsage(100, 20),
        calls=1,
    )


def test_a_new_checkpoint_is_private_in_a_private_folder(tmp_path: Path) -> None:
    path = tmp_path / "state" / "checkpoints" / "run-x.jsonl"
    writer = CheckpointWriter.create(path, _header())
    writer.append(_result(3))
    writer.close()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_finished_questions_read_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    consensus = QuestionResult(
        1,
        Scores(0, 0, 1),
        "majority",
        consensus=True,
        initial_scores=Scores(1, 1, 1),
        votes=(Vote(Scores(0, 0, 1)), Vote(None, "overloaded")),
        hedge_phrases=("could go either way",),
        note="1 of 2 consensus calls failed",
        usage=TokenUsage(1, 2, 3, 4),
        calls=4,
    )
    unscored = QuestionResult(2, None, error="refusal (gave up after 3 calls)", calls=3)
    writer = CheckpointWriter.create(path, _header())
    for result in (_result(3), consensus, unscored):
        writer.append(result)
    writer.close()
    loaded = load_checkpoint(path)
    assert loaded is not None
    assert loaded.header == _header()
    assert loaded.results == {3: _result(3), 1: consensus, 2: unscored}
    assert not loaded.torn_line_ignored


def test_no_checkpoint_is_none(tmp_path: Path) -> None:
    assert load_checkpoint(tmp_path / "absent.jsonl") is None


def test_a_torn_last_line_is_ignored_and_dropped_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    writer = CheckpointWriter.create(path, _header())
    writer.append(_result(3))
    writer.close()
    full_line = path.read_bytes().splitlines(keepends=True)[1]
    with path.open("ab") as handle:
        handle.write(full_line.replace(b'"question_number":3', b'"question_number":1')[:40])
    loaded = load_checkpoint(path)
    assert loaded is not None
    assert loaded.torn_line_ignored
    assert list(loaded.results) == [3]
    resumed = CheckpointWriter.resume(loaded)
    resumed.append(_result(1))
    resumed.close()
    reloaded = load_checkpoint(path)
    assert reloaded is not None and list(reloaded.results) == [3, 1]
    assert not reloaded.torn_line_ignored
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def _checkpoint_lines(path: Path, *question_numbers: int) -> list[bytes]:
    """Write a checkpoint finishing ``question_numbers``; its lines, header first."""
    writer = CheckpointWriter.create(path, _header())
    for number in question_numbers:
        writer.append(_result(number))
    writer.close()
    return path.read_bytes().splitlines(keepends=True)


def test_a_damaged_middle_line_names_the_file_to_delete(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    lines = _checkpoint_lines(path, 3, 1)
    path.write_bytes(lines[0] + b"{garbage\n" + lines[2])
    with pytest.raises(CheckpointError) as raised:
        load_checkpoint(path)
    assert "line 2" in raised.value.message
    assert f"Delete {path}" in raised.value.message


@pytest.mark.parametrize("bad_value", [b"1e999", b"Infinity", b"NaN"])
def test_a_count_too_large_for_an_integer_is_damage_too(tmp_path: Path, bad_value: bytes) -> None:
    path = tmp_path / "run.jsonl"
    lines = _checkpoint_lines(path, 3, 1)
    path.write_bytes(lines[0] + lines[1].replace(b'"calls":1', b'"calls":' + bad_value) + lines[2])
    with pytest.raises(CheckpointError, match="line 2"):
        load_checkpoint(path)


@pytest.mark.parametrize("content", [b"", b"not json\n", b'{"type":"question"}\n'])
def test_a_file_without_a_header_is_damaged(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match="Delete"):
        load_checkpoint(path)


@given(st.binary(max_size=300))
def test_any_bytes_after_the_header_load_or_raise_checkpoint_error(tail: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "run.jsonl"
        CheckpointWriter.create(path, _header()).close()
        with path.open("ab") as handle:
            handle.write(tail)
        try:
            loaded = load_checkpoint(path)
        except CheckpointError:
            return
        assert loaded is not None and loaded.header == _header()


def test_results_serialise_without_reasoning_or_secrets() -> None:
    data = result_to_json(_result(5))
    assert "reasoning" not in data
    assert result_from_json(data) == _result(5)


def test_the_checkpoint_folder_option_wins_over_the_environment(tmp_path: Path) -> None:
    option, environment = tmp_path / "option", tmp_path / "env"
    assert resolve_checkpoint_directory(option, environment) == option
    assert resolve_checkpoint_directory(None, environment) == environment
    default = resolve_checkpoint_directory(None, None)
    assert default.parts[-2:] == ("rag-eval", "checkpoints")


def test_fingerprint_differences_say_what_changed() -> None:
    saved = fingerprint_run(b"q", b"gt", b"a", "claude-sonnet-5-5", "prompt")
    names = InputNames("questions.csv", "ground_truth.csv", "rag_answers.csv")
    assert fingerprint_differences(saved, saved, names) == []
    changed = fingerprint_run(b"q", b"gt2", b"a", "claude-haiku-5-5", "prompt 2")
    assert fingerprint_differences(saved, changed, names) == [
        "the content of ground_truth.csv",
        "the model (was claude-sonnet-5-5, now claude-haiku-5-5)",
        "the system prompt",
    ]
    assert RunFingerprint.from_dict(saved.to_dict()) == saved


def test_the_checkpoint_key_depends_on_the_paths_only() -> None:
    paths = ["/a/questions.csv", "/a/ground_truth.csv", "/a/rag_answers.csv"]
    assert checkpoint_key(paths) == checkpoint_key(list(paths))
    assert checkpoint_key(paths) != checkpoint_key(["/b/questions.csv", *paths[1:]])


def test_a_run_lock_is_exclusive_until_released(tmp_path: Path) -> None:
    checkpoint = tmp_path / "checkpoints" / "run-abc.jsonl"
    with lock_run(checkpoint), pytest.raises(CheckpointError, match="in progress"):
        lock_run(checkpoint)
    with lock_run(checkpoint) as lock:
        assert lock.path.exists()
        assert stat.S_IMODE(lock.path.stat().st_mode) == 0o600
    assert not lock.path.exists()
