"""convert under bad input and failed writes: a clear message, and never a torn output file."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rag_evaluator.cli.app import app
from rag_evaluator.convert.matching import repeated_questions
from rag_evaluator.errors import InputError
from rag_evaluator.inputs.rag_json import read_rag_json_file

QUESTIONS = (
    "Question Number,Question\n1,How many vacation days do I get?\n2,Who approves overtime?\n"
)


def invoke(*args: str):
    return CliRunner().invoke(app, ["convert", *args])


def read_rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_bytes().decode("utf-8"), newline="")))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "questions.csv").write_text(QUESTIONS, encoding="utf-8")
    (tmp_path / "RAG_JSON_Files").mkdir()
    return tmp_path


def write_answers(project: Path, items: list[dict[str, object]], name: str = "run.json") -> None:
    (project / "RAG_JSON_Files" / name).write_text(json.dumps(items), encoding="utf-8")


# Atomic output -----------------------------------------------------------------------


def test_a_reader_of_the_old_output_keeps_seeing_the_whole_old_file(project: Path) -> None:
    old = project / "rag_answers.csv"
    old.write_text("Question Number,RAG Answer\n1,old answer\n", encoding="utf-8")
    write_answers(project, [{"question": "How many vacation days do I get?", "answer": "25"}])
    with old.open(encoding="utf-8") as reader_of_old:
        assert invoke().exit_code == 0
        # Replaced by a rename: the open file is the untouched old one, the path the new one.
        assert reader_of_old.read() == "Question Number,RAG Answer\n1,old answer\n"
    assert read_rows(old)[1][:2] == ["1", "25"]


@pytest.mark.skipif(sys.platform == "win32", reason="file size limits are POSIX rlimits")
def test_a_write_that_fails_half_way_leaves_the_previous_output_whole(project: Path) -> None:
    old_output = "Question Number,RAG Answer\n1,from the previous run\n"
    (project / "rag_answers.csv").write_text(old_output, encoding="utf-8")
    write_answers(project, [{"question": "Who approves overtime?", "answer": "word " * 40_000}])

    def limit_file_size() -> None:
        import resource

        # Writing past 64 KB fails with EFBIG (SIGXFSZ ignored), like a disk filling up
        # in the middle of the 200 KB output.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64_000, 64_000))

    completed = subprocess.run(
        [sys.executable, "-m", "rag_evaluator", "convert"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
        preexec_fn=limit_file_size,
    )
    assert completed.returncode == 2, completed.stderr
    assert "Error: Cannot write rag_answers.csv: File too large. Pass another --output" in (
        completed.stderr
    )
    assert "Traceback" not in completed.stderr
    assert (project / "rag_answers.csv").read_text(encoding="utf-8") == old_output
    assert [path.name for path in project.iterdir() if path.name.endswith(".tmp")] == []


# Confidence boundaries end to end ----------------------------------------------------


def distinct_text(first_code_point: int) -> str:
    """1000 different characters: each one replaced by a digit lowers fuzz.ratio by 0.1."""
    return "".join(chr(first_code_point + offset) for offset in range(1000))


def with_digits(text: str, count: int) -> str:
    return "".join(str(index % 10) for index in range(count)) + text[count:]


def test_the_confidence_boundaries_84_9_85_95_99_through_the_cli(project: Path) -> None:
    bases = {number: distinct_text(0x4E00 + 0x1000 * number) for number in (1, 2, 3, 4)}
    lines = ["Question Number,Question"] + [f"{n},{text}" for n, text in bases.items()]
    (project / "questions.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    replaced = {1: 151, 2: 150, 3: 50, 4: 10}  # scores 84.9, 85.0, 95.0, 99.0
    write_answers(
        project,
        [
            {"question": with_digits(bases[number], count), "answer": f"answer {number}"}
            for number, count in replaced.items()
        ],
    )
    result = invoke()
    assert result.exit_code == 1, result.output  # the 84.9 entry is unmatched
    rows = read_rows(project / "rag_answers.csv")[1:]
    assert [(row[0], row[4], row[5]) for row in rows] == [
        ("2", "LOW", "85.0"),
        ("3", "GOOD", "95.0"),
        ("4", "PERFECT", "99.0"),
    ]
    assert "the best candidate is question 1 " in result.stderr
    assert "at 84.9, below the threshold 85." in result.stderr


# Bad input through the CLI: one line naming the file and the fix, no traceback ----------


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "empty.json",
            b"",
            "Error: empty.json is empty. Export the RAG output again, or move the file out "
            "of the folder (file skipped)",
        ),
        (
            "cut.json",
            b'[{"question": "Who approves overtime?", "answer": "Man',
            "Error: cut.json is not valid JSON (line 1, column 51: Unterminated string starting "
            "at): a string that is never closed, so the file looks truncated",
        ),
        (
            "comma.json",
            b'[{"question": "Who approves overtime?", "answer": "Managers"},]',
            "a trailing comma before ']'. Remove that comma (file skipped)",
        ),
        (
            "deep.json",
            b"[" * 1000 + b"]" * 1000,
            "Error: deep.json is nested too deeply (about a thousand levels or more) to be RAG "
            "output. Check that it was exported correctly (file skipped)",
        ),
        (
            "shape.json",
            b'{"metrics": {"precision": 0.5}}',
            "Error: shape.json has a JSON shape rag-eval does not know (an object whose values "
            "are not answers; keys: 'metrics'). Expected a list of",
        ),
        (
            "objects.json",
            b'[{"question": "Who approves overtime?", "answer": {"score": 1}}]',
            "Error: objects.json has no usable entries: item 1: the answer is an object with "
            "no text/content/page_content or answer text in it (fields found: 'score'). Write "
            "the answer as a string (file skipped)",
        ),
    ],
)
def test_a_bad_file_is_named_with_the_fix_and_the_rest_converted(
    project: Path, name: str, content: bytes, expected: str
) -> None:
    write_answers(project, [{"question": "How many vacation days do I get?", "answer": "25"}])
    (project / "RAG_JSON_Files" / name).write_bytes(content)
    result = invoke()
    # The rest is written, but a skipped file is not a clean conversion.
    assert result.exit_code == 1, result.output
    assert expected in result.stderr
    assert "Not converted: 1 skipped file (see the messages above); exit code 1" in (result.stderr)
    assert "Traceback" not in result.output
    assert [row[0] for row in read_rows(project / "rag_answers.csv")[1:]] == ["1"]


def test_raw_nul_bytes_in_a_json_file_are_removed_with_a_warning(project: Path) -> None:
    (project / "RAG_JSON_Files" / "nul.json").write_bytes(
        b'[{"question": "Who approves\x00 overtime?", "answer": "Mana\x00gers"}]'
    )
    result = invoke()
    assert result.exit_code == 0, result.output
    assert "Warning: nul.json contains NUL bytes; they were removed." in result.stderr
    assert read_rows(project / "rag_answers.csv")[1][:5] == ["2", "Managers", "", "", "PERFECT"]


def test_a_one_megabyte_answer_converts_whole(project: Path) -> None:
    answer = "The approval chain is long. " * 40_000
    write_answers(project, [{"question": "Who approves overtime?", "answer": answer}])
    assert invoke().exit_code == 0
    assert read_rows(project / "rag_answers.csv")[1][1] == answer


def test_questions_repeated_in_the_questions_file_are_pointed_out(project: Path) -> None:
    (project / "questions.csv").write_text(
        QUESTIONS + "3,who approves  OVERTIME?\n", encoding="utf-8"
    )
    write_answers(project, [{"question": "Who approves overtime?", "answer": "Managers"}])
    result = invoke()
    assert result.exit_code == 0
    assert (
        "Warning: questions.csv has the same question text under numbers 2, 3; the answers to "
        "it are given to them in the order the outputs list them. Make the texts differ if "
        "that is not the order of the questions"
    ) in result.stderr


def test_repeated_questions_are_grouped_after_normalisation() -> None:
    questions = {4: "What?", 1: " what? ", 2: "Other", 9: "WHAT?", 5: "   "}
    assert repeated_questions(questions) == [[1, 4, 9]]
    assert repeated_questions({1: "a", 2: "b"}) == []


def test_the_ragas_csvs_without_a_number_column_are_refused_with_the_columns_found(
    project: Path,
) -> None:
    # The shape of public evaluation sets (ragas): a question column, no question numbers,
    # a trailing empty header and newlines inside quoted cells.
    (project / "questions.csv").write_text(
        'question,expected_answer,\n"What is X?\n",x,\n', encoding="utf-8"
    )
    write_answers(project, [{"question": "What is X?", "answer": "x"}])
    result = invoke()
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "Error: questions.csv has no 'Question Number' column (columns found: 'question', "
        "'expected_answer')."
    )


def test_a_numbered_copy_of_a_ragas_csv_converts(project: Path) -> None:
    (project / "questions.csv").write_text(
        'id,question,expected_answer,\n1,"What is X?\n",x,\n2,"What is\nY?",y,\n',
        encoding="utf-8",
    )
    write_answers(
        project,
        [{"question": "what is x?", "answer": "x"}, {"question": "What is Y?", "answer": "y"}],
    )
    result = invoke()
    assert result.exit_code == 0, result.output
    assert [row[:5] for row in read_rows(project / "rag_answers.csv")[1:]] == [
        ["1", "x", "", "", "PERFECT"],
        ["2", "y", "", "", "PERFECT"],
    ]


# Properties --------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
_json_documents = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["question", "query", "answer", "output", "contexts", "data", "Q1"])
            | st.text(max_size=6),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    document=_json_documents,
    cut=st.integers(min_value=0, max_value=400),
    junk=st.sampled_from(["", ",", "]", "}", "\n{", "NaN", "\x00", "\ufeff", '"', "\\"]),
    suffix=st.sampled_from([".json", ".jsonl"]),
)
def test_damaged_json_text_either_loads_or_raises_the_tools_error(
    tmp_path: Path, document: object, cut: int, junk: str, suffix: str
) -> None:
    """Real JSON, cut short and with junk spliced in: entries or an InputError, nothing else."""
    text = json.dumps(document)
    damaged = text[:cut] + junk + text[cut:] if cut < len(text) else text + junk
    path = tmp_path / f"damaged{suffix}"
    path.write_text(damaged, encoding="utf-8")
    try:
        result = read_rag_json_file(path)
    except InputError as exc:
        assert exc.message.startswith(f"damaged{suffix} ")
        assert exc.path == path
    else:
        assert result.entries
        assert all(isinstance(entry.answer, str) for entry in result.entries)


# Counts in messages read as English ----------------------------------------------------


def test_one_written_answer_is_singular(project: Path) -> None:
    write_answers(project, [{"question": "Who approves overtime?", "answer": "Managers"}])
    result = invoke()
    assert result.exit_code == 0
    assert "Wrote 1 answer to rag_answers.csv\n" in result.stderr


def test_a_single_unreadable_file_is_singular(project: Path) -> None:
    (project / "RAG_JSON_Files" / "run.json").write_text("{")
    result = invoke()
    assert result.exit_code == 1
    assert (
        "Error: No answers could be read from RAG_JSON_Files: its only file was skipped; "
        "nothing was written. Fix the files named above"
    ) in result.stderr


def test_a_single_unmatched_answer_is_singular(project: Path) -> None:
    write_answers(project, [{"question": "What is the capital of France?", "answer": "Paris"}])
    result = invoke()
    assert result.exit_code == 1
    assert (
        "Error: The only answer in RAG_JSON_Files matched no question in questions.csv "
        "(threshold 85); nothing was written."
    ) in result.stderr


def test_one_context_item_without_text_is_singular(project: Path) -> None:
    write_answers(
        project,
        [{"question": "Who approves overtime?", "answer": "Managers", "sources": [{"id": 7}]}],
    )
    result = invoke()
    assert result.exit_code == 0
    assert (
        "Warning: run.json: 1 context item had no text/content/page_content text and was "
        "left out. Give each context object one of the fields text, content, page_content"
    ) in result.stderr
