"""A run of offline families only scores its questions a chunk at a time and writes each
chunk's rows to a temporary file in the output folder as it finishes (issue 26): the results
it writes must not depend on the chunk size nor on whether the inputs are held or spooled,
and no temporary file may outlive the run, however it ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest
from evaluate_support import run_cli, write_csv
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.atomic import TEMPORARY_SUFFIX
from rag_evaluator.errors import ConfigError
from rag_evaluator.evaluate.request import EvaluateRequest, RunPlan
from rag_evaluator.evaluate.run import run_evaluation
from rag_evaluator.llm.judging import ProgressUpdate
from rag_evaluator.settings import OFFLINE_CHUNK_VARIABLE, Settings, load_settings

SPOOL = "RAG_EVAL_SPOOL_MB"
CATEGORIES = ("billing", "support", "", "Billing")
ANSWERS = (
    "Refunds are accepted within 90 days [1].",
    "I don't know.",
    "The account holder signs the form, as the manual says.",
    "",
    "Two years, parts and labour [2], per the warranty card.",
)


def _write_inputs(directory: Path, count: int, *, seed: int = 0) -> None:
    """``count`` questions with what the offline families read and leave empty: metadata
    (blank groups too), contexts on some answers, relevant contexts on some questions, a
    blank answer, a non-answer, citations on a few, and a question with no answer row."""
    directory.mkdir(parents=True, exist_ok=True)
    numbers = range(1, count + 1)
    write_csv(
        directory / "questions.csv",
        ["Question Number", "Question", "Category"],
        [
            [n, f"Question {n}: what does rule {n * 7 % 11} say?", CATEGORIES[n % 4]]
            for n in numbers
        ],
    )
    write_csv(
        directory / "ground_truth.csv",
        ["Question Number", "Ground Truth", "Relevant Contexts", "Required Facts"],
        [
            [
                n,
                f"Rule {n * 7 % 11} says refunds take {n + seed} days.",
                json.dumps([f"Rule {n * 7 % 11}: refunds take {n + seed} days."])
                if (n + seed) % 3
                else "",
                f"{n + seed} days" if n % 2 else "",
            ]
            for n in numbers
        ],
    )
    write_csv(
        directory / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts", "Retrieval Scores"],
        [
            [
                n,
                f"{ANSWERS[(n + seed) % 5]} Rule {n * 7 % 11} gives {n} days.".strip()
                if (n + seed) % 5 != 3
                else "",
                json.dumps(
                    [f"Rule {n * 7 % 11}: refunds take {n + seed} days.", "Other."][
                        :: 1 if n % 3 else -1
                    ]
                )
                if (n + seed) % 4
                else "",
                "[0.9, 0.2]" if (n + seed) % 4 and n % 3 == 1 else "",
            ]
            for n in numbers
            if n != 4
        ],
    )


OPTIONS = (
    *("--metrics", "lexical,retrieval,quality", "--score-missing"),
    *("--group-by", "Category", "--json"),
)


def _results(output: Path) -> dict[str, bytes]:
    """The run's files by suffix, and the names of every file left in the folder."""
    files = sorted(path for path in output.iterdir() if path.is_file())
    found = {path.suffix: path.read_bytes() for path in files if path.suffix in (".csv", ".json")}
    found["names"] = "\n".join(path.name.rsplit("_", 2)[0] for path in files).encode()
    return found


def _cli_run(
    directory: Path, output: Path, *, chunk_rows: int | None, spooled: bool, extra: tuple = ()
) -> tuple[int, dict[str, bytes], str]:
    env = {SPOOL: "0" if spooled else "64"}
    if chunk_rows is not None:
        env[OFFLINE_CHUNK_VARIABLE] = str(chunk_rows)
    result = run_cli(
        [
            "evaluate",
            *("--questions", str(directory / "questions.csv")),
            *("--ground-truth", str(directory / "ground_truth.csv")),
            *("--answers", str(directory / "rag_answers.csv")),
            *("--output-dir", str(output)),
            *OPTIONS,
            *extra,
        ],
        env=env,
    )
    return result.exit_code, _results(output), result.output


def _shown(output: str) -> list[str]:
    """What the run printed, but for the progress lines and the results file's name."""
    return [
        line
        for line in output.splitlines()
        if "Scoring" not in line and "metric_scores_" not in line and line.strip()
    ]


@pytest.mark.parametrize(
    "extra",
    [(), ("--limit", "9"), ("--fail-under", "keyword_coverage=0.9,quality_citations=0.1")],
    ids=["all", "limit", "gates"],
)
def test_results_do_not_depend_on_the_chunk_size_held_or_spooled(
    tmp_path: Path, extra: tuple[str, ...]
) -> None:
    _write_inputs(tmp_path / "in", 23)
    runs = {}
    for chunk_rows in (None, 1, 2, 5, 22, 23):
        for spooled in (False, True):
            output = tmp_path / f"out-{chunk_rows}-{spooled}"
            runs[(chunk_rows, spooled)] = _cli_run(
                tmp_path / "in", output, chunk_rows=chunk_rows, spooled=spooled, extra=extra
            )
    exit_code, files, printed = runs[(None, False)]
    assert exit_code == (3 if "--fail-under" in extra else 0), printed
    assert set(files) == {".csv", ".json", "names"}
    assert b"#SUMMARY[Category=billing]" in files[".csv"]
    for key, (code, other_files, other_printed) in runs.items():
        assert code == exit_code, (key, other_printed)
        assert other_files == files, key
        assert _shown(other_printed) == _shown(printed), key


def test_a_run_in_several_chunks_shows_how_many_questions_are_scored(tmp_path: Path) -> None:
    _write_inputs(tmp_path / "in", 7)
    code, _, printed = _cli_run(
        tmp_path / "in", tmp_path / "out", chunk_rows=3, spooled=False, extra=()
    )
    assert code == 0, printed
    assert "Scoring 3/7 questions..." in printed
    assert "Scoring 7/7 questions..." in printed
    code, _, printed = _cli_run(
        tmp_path / "in", tmp_path / "one", chunk_rows=7, spooled=False, extra=()
    )
    assert "Scoring" not in printed


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    count=st.integers(min_value=1, max_value=14),
    chunk_rows=st.integers(min_value=1, max_value=16),
    seed=st.integers(min_value=0, max_value=11),
    spooled=st.booleans(),
)
def test_any_chunk_size_writes_what_one_chunk_does(
    tmp_path_factory: pytest.TempPathFactory, count: int, chunk_rows: int, seed: int, spooled: bool
) -> None:
    directory = tmp_path_factory.mktemp("run")
    _write_inputs(directory / "in", count, seed=seed)
    whole = _cli_run(directory / "in", directory / "whole", chunk_rows=None, spooled=False)
    chunked = _cli_run(
        directory / "in", directory / "chunked", chunk_rows=chunk_rows, spooled=spooled
    )
    assert whole[0] == chunked[0] == 0, chunked[2]
    assert chunked[1] == whole[1]
    assert _shown(chunked[2]) == _shown(whole[2])


@dataclass
class _Interaction:
    """A run's terminal side that records what it is told and can fail at a chosen step:
    ``stop_at`` raises ``failure`` when the run reports that many questions scored."""

    output: Path
    stop_at: int | None = None
    failure: BaseException = field(default_factory=KeyboardInterrupt)
    pending_files: list[list[str]] = field(default_factory=list)
    scored: list[int] = field(default_factory=list)

    def can_confirm(self) -> bool:
        return True

    def confirm(self, question: str, *, default: bool) -> bool:
        return True

    def info(self, message: str) -> None:
        return None

    def question_started(self, position: int, total: int, question_number: int) -> None:
        return None

    def question_finished(self, update: ProgressUpdate) -> None:
        return None

    def work_progress(self, label: str, done: int, total: int) -> None:
        self.scored.append(done)
        # What is in the output folder while the run goes: the rows finished so far.
        self.pending_files.append(
            [
                path.read_text(encoding="utf-8")
                for path in self.output.iterdir()
                if path.name.endswith(TEMPORARY_SUFFIX)
            ]
        )
        if self.stop_at is not None and done >= self.stop_at:
            raise self.failure

    def show_plan(self, plan: RunPlan) -> None:
        return None

    def finished(self) -> None:
        return None


def _request(directory: Path, output: Path) -> EvaluateRequest:
    return EvaluateRequest(
        questions_path=directory / "questions.csv",
        ground_truth_path=directory / "ground_truth.csv",
        answers_path=directory / "rag_answers.csv",
        working_directory=directory,
        output_dir=output,
        metrics="lexical,quality",
        write_json=True,
        group_by="Category",
    )


@pytest.mark.parametrize("spool_above_bytes", [0, 1 << 30], ids=["spooled", "held"])
def test_rows_are_written_as_chunks_finish_and_the_temporary_files_then_go(
    tmp_path: Path, spool_above_bytes: int
) -> None:
    _write_inputs(tmp_path, 10)
    output = tmp_path / "out"
    interaction = _Interaction(output)
    outcome = run_evaluation(
        _request(tmp_path, output),
        Settings(None, None, spool_above_bytes=spool_above_bytes, offline_chunk_rows=4),
        interaction,
    )
    # Question 4 has no answer: nine questions, in chunks of four.
    assert interaction.scored == [4, 8, 9]
    # After the first chunk, its four rows are in the temporary CSV (and JSON) file.
    first = interaction.pending_files[0]
    assert len(first) == 2
    csv_rows = next(text for text in first if not text.startswith("\n"))
    assert [line.split(",")[0] for line in csv_rows.splitlines()] == ["1", "2", "3", "5"]
    json_rows = next(text for text in first if text.startswith("\n"))
    assert json_rows.count('"Question Number"') == 4
    assert outcome.results_path is not None and outcome.json_path is not None
    assert sorted(path.name for path in output.iterdir()) == sorted(
        [outcome.results_path.name, outcome.json_path.name]
    )
    text = outcome.results_path.read_text(encoding="utf-8")
    assert [line.split(",")[0] for line in text.splitlines() if line[:1].isdigit()] == [
        str(n) for n in range(1, 11) if n != 4
    ]
    payload = json.loads(outcome.json_path.read_text(encoding="utf-8"))
    assert [row["Question Number"] for row in payload["rows"]] == [
        n for n in range(1, 11) if n != 4
    ]


@pytest.mark.parametrize("spool_above_bytes", [0, 1 << 30], ids=["spooled", "held"])
@pytest.mark.parametrize(
    "failure", [KeyboardInterrupt(), RuntimeError("the terminal went away")], ids=repr
)
def test_an_interrupted_run_leaves_no_results_and_no_temporary_file(
    tmp_path: Path, spool_above_bytes: int, failure: BaseException
) -> None:
    _write_inputs(tmp_path, 10)
    output = tmp_path / "out"
    interaction = _Interaction(output, stop_at=8, failure=failure)
    with pytest.raises(type(failure)):
        run_evaluation(
            _request(tmp_path, output),
            Settings(None, None, spool_above_bytes=spool_above_bytes, offline_chunk_rows=4),
            interaction,
        )
    # The rows of two chunks had been written when the run stopped...
    assert any(len(files) == 2 and all(files) for files in interaction.pending_files)
    # ...and nothing of the run is left.
    assert list(output.iterdir()) == []


def test_a_failing_final_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    _write_inputs(tmp_path, 6)
    output = tmp_path / "out"
    # The JSON file's name is taken by a folder: the CSV is written, the JSON cannot be.
    (output / "metric_scores_20260102_030405.json").mkdir(parents=True)
    with pytest.raises(ConfigError, match="Cannot write the JSON results file"):
        run_evaluation(
            _request(tmp_path, output),
            Settings(None, None, spool_above_bytes=0, offline_chunk_rows=2),
            _Interaction(output),
            now=datetime(2026, 1, 2, 3, 4, 5),
        )
    assert sorted(path.name for path in output.iterdir()) == [
        "metric_scores_20260102_030405.csv",
        "metric_scores_20260102_030405.json",
    ]


@pytest.mark.parametrize("value", ["0", "-3", "many", "2.5", "\uff13"])
def test_a_bad_chunk_size_is_refused_with_the_fix(
    value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(OFFLINE_CHUNK_VARIABLE, value)
    with pytest.raises(ConfigError, match=OFFLINE_CHUNK_VARIABLE):
        load_settings(tmp_path)


def test_the_chunk_size_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(OFFLINE_CHUNK_VARIABLE, " 250 ")
    assert load_settings(tmp_path).offline_chunk_rows == 250
    monkeypatch.delenv(OFFLINE_CHUNK_VARIABLE)
    assert load_settings(tmp_path).offline_chunk_rows == 1000


def _close(first: object, second: object) -> bool:
    """The same JSON value, floats to 1e-6 (embeddings batched with other texts differ in
    their last bits, as SPEC's semantic section allows)."""
    if isinstance(first, float) and isinstance(second, float):
        return abs(first - second) <= 1e-6
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(
            _close(first[key], second[key]) for key in first
        )
    if isinstance(first, list) and isinstance(second, list):
        return len(first) == len(second) and all(map(_close, first, second))
    return first == second


@pytest.mark.needs_extra("semantic")
def test_semantic_scores_embedded_a_chunk_at_a_time_are_those_of_one_pass(
    tmp_path: Path,
) -> None:
    _write_inputs(tmp_path / "in", 9)
    extra = ("--metrics", "semantic,retrieval", "--match", "similarity")
    whole = _cli_run(
        tmp_path / "in", tmp_path / "whole", chunk_rows=None, spooled=False, extra=extra
    )
    chunked = _cli_run(
        tmp_path / "in", tmp_path / "chunked", chunk_rows=2, spooled=True, extra=extra
    )
    assert whole[0] == chunked[0] == 0, chunked[2]
    payload = json.loads(whole[1][".json"])
    assert "bert_score_f1" in payload["columns"]
    assert _close(json.loads(chunked[1][".json"]), payload)


_KILLED_RUN = """
import os, signal, sys
from pathlib import Path
from rag_evaluator.evaluate.request import EvaluateRequest
from rag_evaluator.evaluate.run import run_evaluation
from rag_evaluator.settings import Settings

folder = Path(sys.argv[1])


class Killed:
    def __getattr__(self, name):
        return lambda *args, **kwargs: True

    def work_progress(self, label, done, total):
        os.kill(os.getpid(), signal.SIGKILL)


request = EvaluateRequest(
    folder / "questions.csv", folder / "ground_truth.csv", folder / "rag_answers.csv",
    folder, output_dir=folder / "out", metrics="lexical",
)
run_evaluation(request, Settings(None, None, offline_chunk_rows=2), Killed())
"""


@pytest.mark.skipif(sys.platform == "win32", reason="temporary files are marked with flock")
def test_the_rows_file_of_a_killed_run_is_removed_by_the_next_run(tmp_path: Path) -> None:
    _write_inputs(tmp_path, 6)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_RUN, str(tmp_path)], check=False, capture_output=True
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    output = tmp_path / "out"
    [left] = output.iterdir()
    assert left.name.endswith(TEMPORARY_SUFFIX)
    assert left.read_text(encoding="utf-8").startswith("1,")
    old = time.time() - 3600
    os.utime(left, (old, old))
    outcome = run_evaluation(
        _request(tmp_path, output), Settings(None, None, offline_chunk_rows=2), _Interaction(output)
    )
    assert outcome.results_path is not None and outcome.json_path is not None
    assert sorted(output.iterdir()) == sorted([outcome.results_path, outcome.json_path])
