"""Large inputs are read into an on-disk spool instead of being held (issue 26): a run over
the spool must read, select, order, estimate, judge and write exactly what a run holding
its inputs does. ``RAG_EVAL_SPOOL_MB=0`` spools every run, so small files show it."""

from __future__ import annotations

import json
import logging
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from evaluate_support import only_results, results_files, run_cli, write_csv
from fakes.anthropic_server import FakeAnthropicServer, verdict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.load import load_input_files, spool_input_files
from rag_evaluator.inputs.selection import select_items
from rag_evaluator.inputs.spool import InputSpool, SpooledItems, items_among

SPOOL = "RAG_EVAL_SPOOL_MB"


def _write_inputs(directory: Path) -> None:
    """Inputs with everything a loader must carry: metadata, list columns, retrieval scores,
    a |-joined context cell, a repeated row, numbers missing from one file, a missing answer,
    a blank answer."""
    directory.mkdir(parents=True, exist_ok=True)
    write_csv(
        directory / "questions.csv",
        ["Question Number", "Question", "Category", "Source"],
        [
            [1, "What is the refund window?", "billing", "faq"],
            [2, "Who signs the form?", "", "manual"],
            [3, "How long is the warranty on the kettle?", "billing", ""],
            [3, "A repeated row, left out", "x", "y"],
            [4, "When does the office open?", "support", "faq"],
            [5, "Which colour is the default theme?", "support", "faq"],
            [6, "Is this question answered?", "billing", "faq"],
            [9, "Only in the questions file", "billing", "faq"],
        ],
    )
    write_csv(
        directory / "ground_truth.csv",
        ["Question Number", "Ground Truth", "Relevant Contexts", "Required Facts"],
        [
            [1, "Ninety days from purchase.", json.dumps(["Refunds within 90 days."]), ""],
            [2, "The account holder.", "", "account holder"],
            [3, "Two years.", json.dumps(["Warranty: two years."]), ""],
            [4, "At nine.", "", ""],
            [5, "Blue.", "", ""],
            [6, "Yes.", "", ""],
        ],
    )
    write_csv(
        directory / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts", "Retrieval Scores"],
        [
            [1, "90 days.", json.dumps(["Refunds within 90 days.", "Other."]), "[0.9, 0.2]"],
            [2, "The account holder signs it.", "one | two | three", ""],
            [3, "Two years [1].", json.dumps(["Warranty: two years."]), "[0.7]"],
            [4, "", "", ""],
            [5, "Blue, by default.", "", ""],
            [7, "An answer to no question", "", ""],
        ],
    )


def _run(directory: Path, monkeypatch: pytest.MonkeyPatch, spooled: bool, *extra: str):
    monkeypatch.chdir(directory)
    monkeypatch.setenv("RAG_EVAL_CHECKPOINT_DIR", str(directory / "checkpoints"))
    if spooled:
        monkeypatch.setenv(SPOOL, "0")
    else:
        monkeypatch.delenv(SPOOL, raising=False)
    return run_cli(
        [
            "evaluate",
            *("--model", "haiku", "--yes", "--seed", "5", "--delay", "0", "--no-cache"),
            *("--score-missing", "--metrics", "judge,lexical,retrieval"),
            *extra,
        ]
    )


def _shown(output: str) -> list[str]:
    """The run's output without what differs between two folders or moments."""
    lines = []
    for line in output.splitlines():
        if re.search(r"Evaluation_Runs|checkpoint|\d+(\.\d+)?\s*s\b|\d\d:\d\d", line):
            continue
        lines.append(re.sub(r"\s+", " ", line).strip())
    return lines


def _table(directory: Path) -> tuple[list[dict[str, str]], dict[str, str]]:
    results = only_results(directory)
    summary = {key: value for key, value in results.summary.items() if key not in ("Date", "Time")}
    return results.rows, summary


def test_a_spooled_run_reads_orders_estimates_and_writes_what_a_held_one_does(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_anthropic.script("kettle", verdict(1, 0, 1, summary="Half right."))
    outcomes = {}
    for spooled in (False, True):
        directory = tmp_path / ("spooled" if spooled else "held")
        _write_inputs(directory)
        before = len(fake_anthropic.requests)
        result = _run(directory, monkeypatch, spooled)
        assert result.exit_code == 0, result.output
        order = [request.question for request in fake_anthropic.requests[before:]]
        outcomes[spooled] = (order, _shown(result.output), _table(directory))
    assert outcomes[True] == outcomes[False]
    order, shown, (rows, summary) = outcomes[True]
    assert len(order) == 5  # no call for question 6, which has no answer row
    assert [row["Question Number"] for row in rows] == ["1", "2", "3", "4", "5", "6"]
    assert rows[0]["Category"] == "billing" and rows[0]["Source"] == "faq"
    assert summary["Coverage"] == "4/6 questions answered"  # 4 is blank, 6 has no row
    assert any("Left out" in line for line in shown)
    assert any("repeats question number 3" in line for line in shown)


def test_a_budget_stop_and_its_resume_are_the_same_spooled_or_held(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = {}
    for spooled in (False, True):
        directory = tmp_path / ("spooled" if spooled else "held")
        _write_inputs(directory)
        stopped = _run(directory, monkeypatch, spooled, "--max-cost", "0.0017")
        assert stopped.exit_code == 4, stopped.output
        partial = _table(directory)
        for path in results_files(directory / "Evaluation_Runs"):
            path.unlink()
        resumed = _run(directory, monkeypatch, spooled, "--max-cost", "5")
        assert resumed.exit_code == 0, resumed.output
        tables[spooled] = (partial, _table(directory))
    assert tables[True] == tables[False]
    (partial_rows, partial_summary), (rows, _) = tables[True]
    assert 0 < len(partial_rows) < len(rows) == 6
    assert partial_summary["Partial"].startswith("stopped at the --max-cost budget")


def test_a_run_stopped_holding_its_inputs_resumes_spooled(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The checkpoint's fingerprint hashes the same bytes whichever way the files are read.
    directory = tmp_path / "run"
    _write_inputs(directory)
    assert _run(directory, monkeypatch, False, "--max-cost", "0.0017").exit_code == 4
    sent = len(fake_anthropic.requests)
    resumed = _run(directory, monkeypatch, True, "--max-cost", "5")
    assert resumed.exit_code == 0, resumed.output
    found = re.search(r"Resuming: (\d+) done, (\d+) still to evaluate", resumed.output)
    assert found is not None, resumed.output
    done, left = int(found[1]), int(found[2])
    assert done > 0 and done + left == 6
    assert len(fake_anthropic.requests) - sent == left - 1  # question 6 has no answer: no call


def test_the_spool_is_removed_after_a_run_and_after_a_bad_file(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    spools = tmp_path / "tmp"
    spools.mkdir()
    monkeypatch.setenv("TMPDIR", str(spools))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile reads TMPDIR again
    directory = tmp_path / "run"
    _write_inputs(directory)
    assert _run(directory, monkeypatch, True).exit_code == 0
    assert list(spools.iterdir()) == []
    with (directory / "rag_answers.csv").open("a", encoding="utf-8") as handle:
        handle.write("eight,An answer,,\n")
    failed = _run(directory, monkeypatch, True)
    assert failed.exit_code == 2
    assert "rag_answers.csv line 8: 'Question Number'" in failed.output
    assert list(spools.iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="spools are marked in use with POSIX locks")
def test_a_spool_left_by_a_killed_run_is_removed_by_the_next_but_one_in_use_is_not(
    tmp_path: Path,
) -> None:
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, signal, sys\n"
            "from pathlib import Path\n"
            "from rag_evaluator.inputs.spool import InputSpool\n"
            "spool = InputSpool(Path(sys.argv[1]))\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n",
            str(tmp_path),
        ],
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    [abandoned] = tmp_path.glob("rag-eval-spool-*")
    in_use = InputSpool(tmp_path)  # removes the abandoned one
    try:
        assert not abandoned.exists()
        [kept] = tmp_path.glob("rag-eval-spool-*")
        later = InputSpool(tmp_path)  # another run at the same time leaves it alone
        later.close()
        assert [*tmp_path.glob("rag-eval-spool-*")] == [kept]
    finally:
        in_use.close()
    assert not any(tmp_path.glob("rag-eval-spool-*"))


def test_a_temporary_folder_that_cannot_hold_the_spool_is_named_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_inputs(tmp_path)
    missing = tmp_path / "no such folder"
    monkeypatch.setenv("TMPDIR", str(missing))
    monkeypatch.setattr(tempfile, "tempdir", str(missing))
    result = _run(tmp_path, monkeypatch, True)
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"Cannot make the inputs' spool in {missing}" in message
    assert "Point TMPDIR at a folder you may write to" in message
    assert "Traceback" not in result.output


def test_a_spool_size_that_is_not_a_number_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(SPOOL, "lots")
    result = run_cli(["evaluate", "--metrics", "lexical"])
    assert result.exit_code == 2
    assert "RAG_EVAL_SPOOL_MB is 'lots', not a size in megabytes" in result.output


def test_spooled_items_read_back_as_sequences_and_lookups(tmp_path: Path) -> None:
    _write_inputs(tmp_path)
    paths = [tmp_path / name for name in ("questions.csv", "ground_truth.csv", "rag_answers.csv")]
    held = select_items(*_keyed(paths)).items
    spool = InputSpool(tmp_path)
    try:
        items = spool_input_files(spool, *paths).selection.items
        assert isinstance(items, SpooledItems)
        assert list(items) == held and len(items) == len(held)
        assert items[1] == held[1] and list(items[1:3]) == held[1:3]
        chosen = items_among(items, {3, 1, 99})
        assert [item.question_number for item in chosen] == [1, 3]
        assert list(chosen) == items_among(held, {1, 3})
        lookup = items.by_number()
        assert lookup[3] == held[2] and 9 not in lookup and sorted(lookup) == [1, 2, 3, 4, 5]
        with pytest.raises(KeyError):
            lookup[9]
    finally:
        spool.close()
    assert not any(tmp_path.glob("rag-eval-spool-*"))


@pytest.mark.parametrize("chosen", [{17}, {3, 40}, set(range(2, 39, 2)), set(range(1, 41))])
def test_a_few_or_many_spooled_items_read_back_in_number_order(
    tmp_path: Path, chosen: set[int]
) -> None:
    # Few of many are looked up one by one, more are found by walking the spool: alike.
    paths = [tmp_path / name for name in ("questions.csv", "ground_truth.csv", "rag_answers.csv")]
    numbers = range(40, 0, -1)  # written out of order
    write_csv(paths[0], ["Question Number", "Question"], [[n, f"q{n}"] for n in numbers])
    write_csv(paths[1], ["Question Number", "Ground Truth"], [[n, f"t{n}"] for n in numbers])
    write_csv(paths[2], ["Question Number", "RAG Answer"], [[n, f"a{n}"] for n in numbers])
    held = select_items(*_keyed(paths)).items
    spool = InputSpool(tmp_path)
    try:
        items = spool_input_files(spool, *paths).selection.items
        assert list(items_among(items, chosen)) == items_among(held, chosen)
        assert [item.question_number for item in items_among(items, chosen)] == sorted(chosen)
    finally:
        spool.close()


def _keyed(paths: list[Path]):
    inputs = load_input_files(*paths)
    return inputs.questions, inputs.ground_truth, inputs.answers


# -- the loaders agree on any small set of files ----------------------------------------------

_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
)
_NUMBERS = st.lists(st.integers(1, 12), max_size=10)


def _cells(draw: st.DrawFn, numbers: list[int], width: int) -> list[list[str]]:
    return [[str(number), *(draw(_TEXT) for _ in range(width))] for number in numbers]


@st.composite
def _input_files(draw: st.DrawFn) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    questions = _cells(draw, draw(_NUMBERS), 2)  # Question, Category
    truths = _cells(draw, draw(_NUMBERS), 1)
    answers = [
        [*row, json.dumps(draw(st.lists(_TEXT, max_size=3)))]
        for row in _cells(draw, draw(_NUMBERS), 1)
    ]
    return questions, truths, answers


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=_input_files(), score_missing=st.booleans(), reference_free=st.booleans())
def test_spooling_selects_the_items_loading_whole_does(
    tmp_path_factory: pytest.TempPathFactory,
    caplog: pytest.LogCaptureFixture,
    files: tuple[list[list[str]], list[list[str]], list[list[str]]],
    score_missing: bool,
    reference_free: bool,
) -> None:
    directory = tmp_path_factory.mktemp("files")
    questions, truths, answers = (
        directory / "questions.csv",
        directory / "ground_truth.csv",
        directory / "rag_answers.csv",
    )
    write_csv(questions, ["Question Number", "Question", "Category"], files[0])
    write_csv(truths, ["Question Number", "Ground Truth"], files[1])
    write_csv(answers, ["Question Number", "RAG Answer", "Contexts"], files[2])
    truth_path = None if reference_free else truths
    held, held_logs = _held(questions, truth_path, answers, score_missing, caplog)
    spool = InputSpool(directory)
    try:
        with caplog.at_level(logging.WARNING):
            caplog.clear()
            try:
                spooled = spool_input_files(
                    spool, questions, truth_path, answers, score_missing=score_missing
                )
            except InputError as exc:
                assert str(exc) == held
                return
            selection = spooled.selection
            assert not isinstance(held, str)
            assert list(selection.items) == held.items
            assert selection.exclusions == held.exclusions
            assert selection.coverage == held.coverage
            assert caplog.messages == held_logs
    finally:
        spool.close()


def _held(questions: Path, truths: Path | None, answers: Path, score_missing: bool, caplog):
    """``select_items`` over the files loaded whole, or the message of its error; and the
    warnings logged."""
    with caplog.at_level(logging.WARNING):
        caplog.clear()
        try:
            inputs = load_input_files(questions, truths, answers)
            selection = select_items(
                inputs.questions,
                inputs.ground_truth,
                inputs.answers,
                score_missing=score_missing,
                reference_free=truths is None,
            )
        except InputError as exc:
            return str(exc), list(caplog.messages)
    return selection, list(caplog.messages)
