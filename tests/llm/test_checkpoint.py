"""The checkpoint file: private, durable, tolerant of a torn last line, strict otherwise."""

from __future__ import annotations

import json
import multiprocessing
import stat
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.errors import CheckpointError
from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores, Vote
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.checkpoint.store import (
    CheckpointHeader,
    CheckpointWriter,
    RecordedOutcome,
    load_checkpoint,
    lock_run,
    record_from_json,
    record_to_json,
    resolve_checkpoint_directory,
)
from rag_evaluator.llm.fingerprint import (
    InputNames,
    RunFingerprint,
    checkpoint_key,
    fingerprint_differences,
    fingerprint_run,
)

FAMILIES = {"judge": JudgeFamily("prompt", ("borderline",))}


def _header() -> CheckpointHeader:
    return CheckpointHeader(
        fingerprint=fingerprint_run(b"q", b"gt", b"a", "claude-haiku-5-5", "prompt"),
        seed=7,
        order=[3, 1, 2],
        prompt_origin="built-in default",
        input_paths=["/data/questions.csv", "/data/ground_truth.csv", "/data/rag_answers.csv"],
        created_at="2026-01-01T10:00:00",
    )


def _result(number: int) -> QuestionRecord:
    return QuestionRecord(
        number,
        {
            "judge": JudgeResult(
                scores=Scores(1, 0, 1),
                summary=f'summary {number}, with "quotes" and a\nnewline',
                usage=TokenUsage(100, 20),
                calls=1,
                cost_usd=0.00002,
            )
        },
    )


def _create(path: Path) -> CheckpointWriter:
    return CheckpointWriter.create(path, _header(), FAMILIES)


def _load(path: Path):  # type: ignore[no-untyped-def]
    return load_checkpoint(path, FAMILIES)


def test_a_new_checkpoint_is_private_in_a_private_folder(tmp_path: Path) -> None:
    path = tmp_path / "state" / "checkpoints" / "run-x.jsonl"
    writer = _create(path)
    writer.append(_result(3))
    writer.close()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_finished_questions_read_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    consensus = QuestionRecord(
        1,
        {
            "judge": JudgeResult(
                scores=Scores(0, 0, 1),
                summary="majority",
                consensus=True,
                initial_scores=Scores(1, 1, 1),
                votes=(Vote(Scores(0, 0, 1)), Vote(None, "overloaded")),
                hedge_phrases=("could go either way",),
                note="1 of 2 consensus calls failed",
                usage=TokenUsage(1, 2, 3, 4),
                calls=4,
                cost_usd=0.5,
            )
        },
    )
    unscored = QuestionRecord(
        2,
        {
            "judge": JudgeResult(
                error="refusal (gave up after 3 calls)", failure="question", calls=3
            )
        },
    )
    writer = _create(path)
    for result in (_result(3), consensus, unscored):
        writer.append(result)
    writer.close()
    loaded = _load(path)
    assert loaded is not None
    assert loaded.header == _header()
    assert loaded.results == {3: _result(3), 1: consensus, 2: unscored}
    assert not loaded.torn_line_ignored


def test_no_checkpoint_is_none(tmp_path: Path) -> None:
    assert _load(tmp_path / "absent.jsonl") is None


def test_a_torn_last_line_is_ignored_and_dropped_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    writer = _create(path)
    writer.append(_result(3))
    writer.close()
    full_line = path.read_bytes().splitlines(keepends=True)[1]
    with path.open("ab") as handle:
        handle.write(full_line.replace(b'"question_number":3', b'"question_number":1')[:40])
    loaded = _load(path)
    assert loaded is not None
    assert loaded.torn_line_ignored
    assert list(loaded.results) == [3]
    resumed = CheckpointWriter.resume(loaded, FAMILIES)
    resumed.append(_result(1))
    resumed.close()
    reloaded = _load(path)
    assert reloaded is not None and list(reloaded.results) == [3, 1]
    assert not reloaded.torn_line_ignored
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def _checkpoint_lines(path: Path, *question_numbers: int) -> list[bytes]:
    """Write a checkpoint finishing ``question_numbers``; its lines, header first."""
    writer = _create(path)
    for number in question_numbers:
        writer.append(_result(number))
    writer.close()
    return path.read_bytes().splitlines(keepends=True)


def test_resuming_an_intact_checkpoint_does_not_rewrite_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _checkpoint_lines(path, 3, 1)
    inode = path.stat().st_ino
    loaded = _load(path)
    assert loaded is not None
    CheckpointWriter.resume(loaded, FAMILIES).close()
    # Appended to in place: the file was not replaced by a rewritten copy.
    assert path.stat().st_ino == inode


def test_a_damaged_middle_line_names_the_file_to_delete(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    lines = _checkpoint_lines(path, 3, 1)
    path.write_bytes(lines[0] + b"{garbage\n" + lines[2])
    with pytest.raises(CheckpointError) as raised:
        _load(path)
    assert "line 2" in raised.value.message
    assert f"Delete {path}" in raised.value.message


@pytest.mark.parametrize("bad_value", [b"1e999", b"Infinity", b"NaN"])
def test_a_count_too_large_for_an_integer_is_damage_too(tmp_path: Path, bad_value: bytes) -> None:
    path = tmp_path / "run.jsonl"
    lines = _checkpoint_lines(path, 3, 1)
    path.write_bytes(lines[0] + lines[1].replace(b'"calls":1', b'"calls":' + bad_value) + lines[2])
    with pytest.raises(CheckpointError, match="line 2"):
        _load(path)


@pytest.mark.parametrize("content", [b"", b"not json\n", b'{"type":"question"}\n'])
def test_a_file_without_a_header_is_damaged(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match="Delete"):
        _load(path)


@given(st.binary(max_size=300))
def test_any_bytes_after_the_header_load_or_raise_checkpoint_error(tail: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "run.jsonl"
        _create(path).close()
        with path.open("ab") as handle:
            handle.write(tail)
        try:
            loaded = _load(path)
        except CheckpointError:
            return
        assert loaded is not None and loaded.header == _header()


def test_results_serialise_without_reasoning_or_secrets() -> None:
    data = record_to_json(_result(5), FAMILIES)
    assert "reasoning" not in json.dumps(data)
    assert record_from_json(data, FAMILIES) == _result(5)


def test_a_format_1_checkpoint_still_resumes(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    header = {
        "type": "header",
        "format": 1,
        "created_at": "2026-01-01T10:00:00",
        "fingerprint": {
            "questions_sha256": "a",
            "ground_truth_sha256": "b",
            "answers_sha256": "c",
            "model_id": "claude-haiku-5-5",
            "prompt_sha256": "d",
        },
        "seed": 7,
        "order": [3, 1],
        "prompt_origin": "built-in default",
        "input_paths": ["/q", "/g", "/a"],
    }
    line = {
        "type": "question",
        "question_number": 3,
        "scores": {"precision": 1, "recall": 0, "accuracy": 1},
        "summary": "partly",
        "error": None,
        "consensus": False,
        "initial_scores": None,
        "votes": [],
        "hedge_phrases": [],
        "note": None,
        "usage": {"input_tokens": 10, "output_tokens": 2},
        "calls": 1,
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    loaded = _load(path)
    assert loaded is not None
    assert loaded.header.fingerprint.families is None  # unknown: not held against a resume
    result = loaded.results[3].results["judge"]
    assert isinstance(result, JudgeResult)
    assert result.scores == Scores(1, 0, 1) and result.usage == TokenUsage(10, 2)
    # Resuming upgrades the file to the current format, keeping what it holds.
    CheckpointWriter.resume(loaded, FAMILIES).close()
    upgraded = _load(path)
    assert upgraded is not None and upgraded.header.format == 2
    assert upgraded.results == loaded.results


def test_finished_stages_of_unfinished_questions_read_back(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    writer = _create(path)
    outcome = RecordedOutcome({"reasoning": "arguably"}, None, None, TokenUsage(5, 1), 1, 0.1)
    writer.append_stage((1, "judge", 0), "digest", [outcome])
    writer.append_stage((3, "judge", 0), "digest3", [outcome])
    writer.append(_result(3))  # question 3 finished after its stage: its stage is spent
    writer.append_batch_intent("intent1", ["q1-judge-s1-r0"], datetime.now(UTC))
    writer.append_batch("msgbatch_1", "intent1")
    writer.append_batch_intent("intent2", ["q2-judge-s0-r0"], datetime.now(UTC))
    writer.append_batch("msgbatch_2", "intent2")
    writer.append_batch_done("msgbatch_1")
    writer.close()
    loaded = _load(path)
    assert loaded is not None
    assert list(loaded.stages) == [(1, "judge", 0)]
    assert loaded.stages[(1, "judge", 0)].outcomes == (outcome,)
    assert loaded.open_batches == {"msgbatch_2": ("q2-judge-s0-r0",)}


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


def test_the_hedge_phrases_and_other_verdict_settings_are_in_the_fingerprint() -> None:
    names = InputNames("questions.csv", "ground_truth.csv", "rag_answers.csv")
    saved = fingerprint_run(b"q", b"gt", b"a", "m", "p", settings={"hedge": ["unclear"]})
    same = fingerprint_run(b"q", b"gt", b"a", "m", "p", settings={"hedge": ["unclear"]})
    other = fingerprint_run(b"q", b"gt", b"a", "m", "p", settings={"hedge": ["borderline"]})
    assert fingerprint_differences(saved, same, names) == []
    assert fingerprint_differences(saved, other, names) == [
        "the judging settings (--hedge-phrases, --score-missing or a family's options)"
    ]


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
    # The lock file stays (unheld): deleting it would let two runs hold two different files.
    assert lock.path.exists()
    with lock_run(checkpoint):
        pass


def _hold_the_lock(checkpoint: str, log: str, rounds: int) -> None:
    """Take the run lock repeatedly; record each hold's start and end in ``log``."""
    for _ in range(rounds):
        try:
            lock = lock_run(Path(checkpoint))
        except CheckpointError:
            time.sleep(0.001)
            continue
        with lock:
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(f"start {time.monotonic_ns()}\n")
            time.sleep(0.002)
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(f"end {time.monotonic_ns()}\n")


def test_racing_processes_never_hold_the_run_lock_at_once(tmp_path: Path) -> None:
    checkpoint = tmp_path / "checkpoints" / "run-race.jsonl"
    log = tmp_path / "holds.log"
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_hold_the_lock, args=(str(checkpoint), str(log), 40))
        for _ in range(8)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    events = log.read_text(encoding="utf-8").split()
    kinds = events[0::2]
    # Holds alternate start, end, start, end...: never two holders at the same time.
    assert len(kinds) >= 2
    assert kinds == ["start", "end"] * (len(kinds) // 2)
