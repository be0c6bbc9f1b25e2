"""`rag-eval convert` end to end: real files in tmp_path, the CLI, and a real subprocess."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from evaluate_support import only_results, prepare_workspace, run_cli
from typer.testing import CliRunner

from rag_evaluator.cli.app import app
from rag_evaluator.convert.matching import Confidence
from rag_evaluator.convert.run import convert, output_rows
from rag_evaluator.inputs.load import load_answers, load_ground_truth

REPO_ROOT = Path(__file__).resolve().parents[2]
HEADER = [
    "Question Number",
    "RAG Answer",
    "Contexts",
    "Retrieval Scores",
    "Match Confidence",
    "Match Score",
    "Source File",
]
QUESTIONS = {
    1: "How many vacation days do new employees get?",
    2: "Who approves overtime for hourly staff?",
    3: "What is the per diem for meals on domestic trips?",
    4: "How do I report a lost badge?",
    5: "When is the annual performance review?",
}


def write_questions(folder: Path, questions: dict[int, str] = QUESTIONS) -> Path:
    path = folder / "questions.csv"
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["Question Number", "Question"])
    writer.writerows(sorted(questions.items()))
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def write_json_dir(folder: Path) -> Path:
    json_dir = folder / "RAG_JSON_Files"
    json_dir.mkdir()
    (json_dir / "a_list.json").write_text(
        json.dumps(
            [
                {
                    "question": QUESTIONS[3],
                    "answer": "$60 per day.",
                    "contexts": ["Meals: $60 per day domestic."],
                },
                {"question": "What is the capital of France?", "answer": "Paris."},
            ]
        ),
        encoding="utf-8",
    )
    (json_dir / "b_results.json").write_text(
        json.dumps(
            {
                "results": [
                    {
                        "query": "how many vacation days do new employes get",
                        "response": "25 days.",
                        "sources": [{"page_content": "PTO: 25 days."}, "Holidays: 10."],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    (json_dir / "c_ids.json").write_text(json.dumps({"Q5": "In December."}), encoding="utf-8")
    (json_dir / "d_lines.jsonl").write_text(
        json.dumps(
            {"prompt": "Who approves overtime for hourly staff members?", "output": "Managers."}
        )
        + "\n",
        encoding="utf-8",
    )
    return json_dir


def read_rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_bytes().decode("utf-8"), newline="")))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_questions(tmp_path)
    write_json_dir(tmp_path)
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(app, ["convert", *args])


def test_convert_writes_one_row_per_matched_question_in_order(project: Path) -> None:
    result = invoke()
    # Exit 1: the fixture holds one entry that matches no question (see the summary test).
    assert result.exit_code == 1, result.output
    rows = read_rows(project / "rag_answers.csv")
    assert rows[0] == HEADER
    by_number = {row[0]: row for row in rows[1:]}
    assert [row[0] for row in rows[1:]] == ["1", "2", "3", "5"]
    assert by_number["1"][1:5] == ["25 days.", '["PTO: 25 days.", "Holidays: 10."]', "", "GOOD"]
    assert by_number["1"][6] == "b_results.json"
    assert by_number["2"][4] == "LOW"
    assert by_number["3"][1:7] == [
        "$60 per day.",
        '["Meals: $60 per day domestic."]',
        "",
        "PERFECT",
        "100.0",
        "a_list.json",
    ]
    # A flat mapping carries no contexts: the cell is blank (unknown), not [] (none found).
    assert by_number["5"][1:7] == ["In December.", "", "", "ID", "", "c_ids.json"]
    assert by_number["2"][2] == ""
    assert 85 <= float(by_number["2"][5]) < 95
    # The file the evaluate command reads back is consistent with what was written.
    assert load_answers(project / "rag_answers.csv").rows[1].contexts == [
        "PTO: 25 days.",
        "Holidays: 10.",
    ]


def test_convert_shows_a_summary_and_warns_about_the_unmatched_entry(project: Path) -> None:
    result = invoke()
    assert result.exit_code == 1
    table = result.stdout
    for label, count in [
        ("PERFECT (99-100)", 1),
        ("GOOD (95-99)", 1),
        ("LOW (85-95)", 1),
        ("ID (by ID key)", 1),
        ("Rows written", 4),
        ("Unmatched (below 85, other numbers, unknown ID)", 1),
        ("Files read", 4),
        ("Files skipped", 0),
    ]:
        assert any(
            label in line and line.rstrip(" │").endswith(f" {count}") for line in table.splitlines()
        ), label
    assert (
        "Warning: a_list.json item 2: no question in questions.csv matches 'What is the capital "
        "of France?'; the best candidate is question"
    ) in result.stderr
    assert (
        "below the threshold 85. Add the question to questions.csv or lower --threshold "
        "(entry skipped)"
    ) in result.stderr
    assert "Questions with no answer: 4" in result.stderr
    for label, count in [
        ("Contexts [] (nothing retrieved)", 0),
        ("Contexts blank (no context field)", 2),
    ]:
        assert any(
            label in line and line.rstrip(" │").endswith(f" {count}") for line in table.splitlines()
        ), label
    assert "a_list.json item 2: no question" in (project / "rag_eval.log").read_text()


def test_a_broken_file_is_reported_and_the_rest_converted(project: Path) -> None:
    (project / "RAG_JSON_Files" / "broken.json").write_text('[{"question": "x",]')
    result = invoke()
    assert result.exit_code == 1
    assert result.stderr.rstrip().endswith(
        "Not converted: 1 skipped file, 1 unmatched entry (see the messages above); exit code 1"
    )
    assert (
        "Error: broken.json is not valid JSON (line 1, column 19: Expecting property name "
        "enclosed in double quotes)"
    ) in result.stderr
    assert "(file skipped)" in result.stderr
    assert len(read_rows(project / "rag_answers.csv")) == 5


def test_a_contested_question_keeps_the_better_match(project: Path) -> None:
    (project / "RAG_JSON_Files" / "e_rerun.json").write_text(
        json.dumps([{"question": QUESTIONS[1], "answer": "Exactly 25 days."}])
    )
    result = invoke()
    assert result.exit_code == 1
    rows = {row[0]: row for row in read_rows(project / "rag_answers.csv")[1:]}
    assert rows["1"][1] == "Exactly 25 days."
    assert re.search(
        r"Warning: b_results\.json results item 1 \(at 9\d\.\d\) also answers question 1, "
        r"but e_rerun\.json item 1 \(at 100\.0\) matched better; kept that one\. If it "
        r"answers another question, correct its question text \(entry skipped\)",
        result.stderr,
    )


def test_a_higher_threshold_turns_low_matches_away(project: Path) -> None:
    result = invoke("--threshold", "95")
    assert result.exit_code == 1
    numbers = [row[0] for row in read_rows(project / "rag_answers.csv")[1:]]
    assert numbers == ["1", "3", "5"]
    assert "below the threshold 95" in result.stderr


def test_nothing_matched_exits_1_and_leaves_the_old_output_alone(project: Path) -> None:
    (project / "rag_answers.csv").write_text("previous run\n")
    write_questions(project, {1: "Something nobody asked about at all, ever, really."})
    for extra in (project / "RAG_JSON_Files").iterdir():
        if extra.name == "c_ids.json":
            extra.unlink()
    result = invoke()
    assert result.exit_code == 1
    assert (
        "Error: None of the 4 answers in RAG_JSON_Files matched a question in questions.csv "
        "(threshold 85); nothing was written. Check that the answers belong to this question "
        "set, or lower --threshold"
    ) in result.stderr
    assert (project / "rag_answers.csv").read_text() == "previous run\n"


def test_only_broken_files_exit_1(project: Path) -> None:
    for path in (project / "RAG_JSON_Files").iterdir():
        path.write_text("{")
    result = invoke()
    assert result.exit_code == 1
    assert "Error: No answers could be read from RAG_JSON_Files: all 4 files were skipped" in (
        result.stderr
    )
    assert not (project / "rag_answers.csv").exists()


def test_a_missing_questions_file_says_how_to_create_it(project: Path) -> None:
    (project / "questions.csv").unlink()
    result = invoke()
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "Error: questions.csv not found. Create this file with columns: Question Number, Question"
    )


def test_a_missing_json_folder_says_how_to_fix_it(project: Path) -> None:
    result = invoke("--json-dir", "nowhere")
    assert result.exit_code == 2
    assert "Error: nowhere not found. Create this folder" in result.stderr


def test_a_folder_without_json_exits_1(project: Path) -> None:
    (project / "empty").mkdir()
    result = invoke("--json-dir", "empty")
    assert result.exit_code == 1
    assert "Error: empty has no *.json or *.jsonl files (it is empty)" in result.stderr


@pytest.mark.parametrize("threshold", ["101", "-1"])
def test_a_threshold_outside_0_to_100_is_refused(project: Path, threshold: str) -> None:
    result = invoke("--threshold", threshold)
    assert result.exit_code == 2
    assert "--threshold" in result.output


def test_the_output_may_not_overwrite_the_questions(project: Path) -> None:
    result = invoke("--output", "questions.csv")
    assert result.exit_code == 2
    assert "is the questions file" in result.stderr
    assert (project / "questions.csv").read_text().startswith("Question Number,Question")


@pytest.mark.parametrize("output", ["RAG_JSON_Files/a_list.json", "RAG_JSON_Files/NEW.JSONL"])
def test_the_output_may_not_land_among_the_rag_files(project: Path, output: str) -> None:
    before = (project / "RAG_JSON_Files" / "a_list.json").read_bytes()
    result = invoke("--output", output)
    assert result.exit_code == 2
    assert f"Error: --output {output} is a RAG output file in RAG_JSON_Files" in result.stderr
    assert (project / "RAG_JSON_Files" / "a_list.json").read_bytes() == before
    assert not (project / "RAG_JSON_Files" / "NEW.JSONL").exists()


def test_an_unwritable_output_is_reported_without_a_traceback(project: Path) -> None:
    (project / "taken").mkdir()
    result = invoke("--output", "taken")
    assert result.exit_code == 2
    assert "Error: Cannot write taken:" in result.stderr
    assert "Traceback" not in result.output
    assert [path.name for path in (project / "taken").iterdir()] == []


def test_the_output_is_replaced_atomically(project: Path) -> None:
    (project / "rag_answers.csv").write_text("old\n")
    assert invoke().exit_code == 1
    assert read_rows(project / "rag_answers.csv")[0] == HEADER
    assert sorted(path.name for path in project.iterdir() if path.name.startswith(".")) == []


def test_convert_in_a_real_subprocess(tmp_path: Path) -> None:
    write_questions(tmp_path)
    json_dir = write_json_dir(tmp_path)
    output = tmp_path / "out" / "answers.csv"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "rag_evaluator",
            "convert",
            "--json-dir",
            str(json_dir),
            "--questions",
            str(tmp_path / "questions.csv"),
            "--output",
            str(output),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert completed.returncode == 1, completed.stderr  # the unmatched capital-of-France entry
    assert "Traceback" not in completed.stderr
    assert [row[0] for row in read_rows(output)[1:]] == ["1", "2", "3", "5"]
    assert "Rows written" in completed.stdout
    assert (tmp_path / "rag_eval.log").exists()


def test_the_sample_data_converts_with_only_the_deliberate_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke(
        "--json-dir",
        str(REPO_ROOT / "RAG_JSON_Files"),
        "--questions",
        str(REPO_ROOT / "questions.csv"),
        "--output",
        "rag_answers.csv",
    )
    # The Wi-Fi question is not in the handbook: one unmatched entry, so exit 1.
    assert result.exit_code == 1, result.output
    assert "Not converted: 1 unmatched entry (see the messages above); exit code 1" in (
        result.stderr
    )
    rows = read_rows(tmp_path / "rag_answers.csv")
    assert rows[0] == HEADER
    with (REPO_ROOT / "questions.csv").open(encoding="utf-8") as handle:
        question_numbers = [int(row["Question Number"]) for row in csv.DictReader(handle)]
    assert [int(row[0]) for row in rows[1:]] == sorted(question_numbers)
    assert {row[4] for row in rows[1:]} == {"PERFECT", "GOOD", "LOW", "ID"}
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1
    assert "guest Wi-Fi password" in warnings[0]
    assert "Error:" not in result.stderr

    # The golden chunks of ground_truth.csv are contexts the RAG files really retrieved.
    ground_truth = load_ground_truth(REPO_ROOT / "ground_truth.csv").rows
    assert set(ground_truth) == set(question_numbers)
    retrieved = {int(row[0]): json.loads(row[2]) if row[2] else None for row in rows[1:]}
    # faq_cache.json and legacy_export_ids.json are flat mappings: no context field.
    assert [number for number, chunks in retrieved.items() if chunks is None] == list(range(13, 20))
    checked = 0
    for number, truth in ground_truth.items():
        if truth.relevant_contexts and retrieved[number]:
            assert any(chunk in retrieved[number] for chunk in truth.relevant_contexts), number
            checked += 1
    assert checked >= 10


def test_many_warnings_are_capped_on_the_terminal_but_all_logged(project: Path) -> None:
    unrelated = [
        {
            "question": f"Completely unrelated trivia question number {index} about ships?",
            "answer": "x",
        }
        for index in range(30)
    ]
    (project / "RAG_JSON_Files" / "noise.json").write_text(json.dumps(unrelated))
    result = invoke()
    assert result.exit_code == 1
    assert "Not converted: 31 unmatched entries" in result.stderr
    # 31 unmatched: the capital-of-France entry and the 30 above.
    shown = [line for line in result.stderr.splitlines() if "no question in questions.csv" in line]
    assert len(shown) == 20
    assert "Warning: … and 11 more unmatched entries, listed in the log file" in result.stderr
    log = (project / "rag_eval.log").read_text()
    assert "noise.json item 30: no question" in log


def test_the_pipeline_reports_what_it_did(project: Path) -> None:
    report = convert(
        project / "RAG_JSON_Files", project / "questions.csv", project / "out.csv", threshold=85
    )
    assert [match.question_number for match in report.matched] == [1, 2, 3, 5]
    assert report.count(Confidence.ID) == 1
    assert report.entries_found == 5
    assert report.files_read == ["a_list.json", "b_results.json", "c_ids.json", "d_lines.jsonl"]
    assert report.questions_without_answer == [4]
    assert [item.entry.origin for item in report.unmatched] == ["a_list.json item 2"]
    assert output_rows(report.matched)[0] == HEADER


def test_questions_without_any_text_are_refused(project: Path) -> None:
    (project / "questions.csv").write_text("Question Number,Question\n1,\n2,  \n")
    result = invoke()
    assert result.exit_code == 2
    assert (
        "Error: questions.csv has no question text to match answers against. "
        "Fill in its Question column"
    ) in result.stderr


def test_an_unreadable_json_file_is_named_and_the_rest_converted(project: Path) -> None:
    # A dangling link is globbed like any file but cannot be read.
    (project / "RAG_JSON_Files" / "gone.json").symlink_to(project / "nowhere.json")
    result = invoke()
    assert result.exit_code == 1
    message = " ".join(result.stderr.split())
    assert "Error: Cannot read RAG_JSON_Files/gone.json: No such file or directory." in message
    assert "Check that it exists and that you may read it" in message
    assert len(read_rows(project / "rag_answers.csv")) == 5


def test_nothing_retrieved_and_no_context_field_are_told_apart(project: Path) -> None:
    (project / "RAG_JSON_Files" / "a_list.json").write_text(
        json.dumps(
            [
                {"question": QUESTIONS[3], "answer": "$60 per day.", "contexts": []},
                {"question": QUESTIONS[4], "answer": "Call security.", "contexts": None},
            ]
        )
    )
    result = invoke()
    rows = {row[0]: row for row in read_rows(project / "rag_answers.csv")[1:]}
    # [] is the system saying it retrieved nothing; no field (or null) says nothing at all.
    assert rows["3"][2] == "[]"
    assert [rows[number][2] for number in ("2", "4", "5")] == ["", "", ""]
    answers = load_answers(project / "rag_answers.csv").rows
    assert answers[3].contexts == []
    assert answers[4].contexts is None
    for label, count in [
        ("Contexts [] (nothing retrieved)", 1),
        ("Contexts blank (no context field)", 3),
    ]:
        assert any(
            label in line and line.rstrip(" │").endswith(f" {count}")
            for line in result.stdout.splitlines()
        ), label


CONTEXT_METRICS = (
    "precision_at_k",
    "recall_at_k",
    "f1_at_k",
    "mrr",
    "ndcg_at_k",
    "hybrid_log_rank",
    "context_relevance",
    "context_sufficiency",
    "hallucination",
)


@pytest.mark.needs_extra("semantic")
def test_converted_answers_without_contexts_get_no_context_based_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sample data, plus question 21 whose system reports that it retrieved nothing.
    space = prepare_workspace(tmp_path, monkeypatch)
    shutil.copytree(REPO_ROOT / "RAG_JSON_Files", tmp_path / "RAG_JSON_Files")
    dress_code = "What is the dress code for client meetings?"
    (tmp_path / "RAG_JSON_Files" / "zz_nothing_found.json").write_text(
        json.dumps([{"question": dress_code, "answer": "Business casual.", "contexts": []}])
    )
    (tmp_path / "questions.csv").write_text(
        (REPO_ROOT / "questions.csv").read_text(encoding="utf-8") + f"21,{dress_code}\n",
        encoding="utf-8",
    )
    (tmp_path / "ground_truth.csv").write_text(
        (REPO_ROOT / "ground_truth.csv").read_text(encoding="utf-8")
        + '21,Business attire.,"[""Section 2.4 Dress code: business attire with clients.""]",\n',
        encoding="utf-8",
    )
    invoke()
    assert (tmp_path / "rag_answers.csv").exists()

    result = run_cli(["evaluate", "--metrics", "retrieval,semantic", "--yes"])

    assert result.exit_code == 0, result.output
    results = only_results(space.directory)
    assert set(CONTEXT_METRICS) <= set(results.header)
    for number in range(13, 20):  # converted from files with no context field
        row = results.row(number)
        assert {metric: row[metric] for metric in CONTEXT_METRICS} == dict.fromkeys(
            CONTEXT_METRICS, ""
        ), number
        assert row["semantic_similarity"] != ""
    for number in [*range(1, 13), 20]:
        row = results.row(number)
        assert all(row[metric] != "" for metric in CONTEXT_METRICS), number
    nothing_found = results.row(21)
    assert {
        metric: nothing_found[metric] for metric in ("precision_at_k", "recall_at_k", "mrr")
    } == (dict.fromkeys(("precision_at_k", "recall_at_k", "mrr"), "0.0000"))
    assert nothing_found["hallucination"] == "1.0000"
    assert results.summary["hallucination"].endswith("(n=14)")
    assert results.summary["precision_at_k"].endswith("(n=14)")


def test_a_null_answer_loses_to_a_real_one_with_a_warning(project: Path) -> None:
    # Read first and matched word for word, yet it has nothing to evaluate.
    (project / "RAG_JSON_Files" / "a0_null.json").write_text(
        json.dumps([{"question": QUESTIONS[1], "answer": None}])
    )
    result = invoke()
    rows = {row[0]: row for row in read_rows(project / "rag_answers.csv")[1:]}
    assert rows["1"][1] == "25 days."
    assert re.search(
        r"Warning: a0_null\.json item 1 \(at 100\.0\) also answers question 1, but its answer "
        r"is empty and b_results\.json results item 1 \(at 9\d\.\d\) has one; kept that one "
        r"\(entry skipped\)",
        result.stderr,
    )


def test_everything_converted_exits_0(project: Path) -> None:
    write_json_dir_without_the_miss(project)
    result = invoke()
    assert result.exit_code == 0, result.output
    assert "Not converted" not in result.stderr


def write_json_dir_without_the_miss(project: Path) -> None:
    path = project / "RAG_JSON_Files" / "a_list.json"
    path.write_text(json.dumps(json.loads(path.read_text())[:1]))


def test_a_question_answered_twice_keeps_the_better_match_and_exits_1(project: Path) -> None:
    # Issue 22: the other answer is left out, which is left-out input (it was exit 0).
    write_json_dir_without_the_miss(project)
    (project / "RAG_JSON_Files" / "e_rerun.json").write_text(
        json.dumps([{"question": QUESTIONS[1], "answer": "Exactly 25 days."}])
    )
    result = invoke()
    assert result.exit_code == 1, result.output
    assert "also answers question 1" in result.stderr
    assert "Not converted: 1 lost answer" in result.stderr


@pytest.mark.parametrize(
    ("name", "content", "not_converted"),
    [
        ("broken.json", "[1,", "1 skipped file"),
        ("lines.jsonl", '{"question": "Q?", "answer": "A"}\n{oops\n', "1 unreadable entry"),
        (
            "partial.json",
            json.dumps([{"question": QUESTIONS[4], "answer": "Call security."}, {"answer": "?"}]),
            "1 unreadable entry",
        ),
    ],
)
def test_any_skipped_file_line_or_entry_exits_1(
    project: Path, name: str, content: str, not_converted: str
) -> None:
    write_json_dir_without_the_miss(project)
    (project / "RAG_JSON_Files" / name).write_text(content)
    result = invoke()
    assert result.exit_code == 1, result.output
    assert f"Not converted: {not_converted}" in result.stderr
    assert (project / "rag_answers.csv").exists()
