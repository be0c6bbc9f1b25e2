"""``evaluate --dataset`` and ``--group-by`` end to end against the fake Messages API, and
what convert writes beside the answers: ``Retrieval Scores`` and ``--ground-truth-out``."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from evaluate_support import SAMPLE, Workspace, prepare_workspace, results_files, run_cli
from fakes.anthropic_server import FakeAnthropicServer, Fault, verdict

from rag_evaluator.results.reader import read_run_scores

FAST = ["--delay", "0", "--yes", "--seed", "11", "--no-cache"]
CATEGORY = {1: "geo", 2: "products", 3: "it", 4: "", 5: "products"}
TYPE = {1: "1", 2: "0", 3: "1", 4: "0", 5: "1"}  # a 0/1 metadata column: never a metric
CONTEXTS = {1: ["Paris is the capital.", "France is in Europe."], 3: ["Port 8443, TLS."]}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    return prepare_workspace(tmp_path, monkeypatch)


def write_rows(path: Path, header: list[str], rows: list[list[object]]) -> None:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")


def write_three_csvs(folder: Path) -> None:
    write_rows(
        folder / "questions.csv",
        ["Question Number", "Question", "Category", "Multi Hop"],
        [[n, SAMPLE[n][0], CATEGORY[n], TYPE[n]] for n in SAMPLE],
    )
    write_rows(
        folder / "ground_truth.csv",
        ["Question Number", "Ground Truth"],
        [[n, SAMPLE[n][1]] for n in SAMPLE],
    )
    write_rows(
        folder / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts"],
        [[n, SAMPLE[n][2], json.dumps(CONTEXTS[n]) if n in CONTEXTS else ""] for n in SAMPLE],
    )


def write_ragas_dataset(folder: Path) -> Path:
    path = folder / "eval.jsonl"
    lines = []
    for number in reversed(sorted(SAMPLE)):  # ids, not the line order, number the questions
        question, truth, answer = SAMPLE[number]
        record: dict[str, object] = {
            "question_id": f"Q{number}",
            "user_input": question,
            "reference": truth,
            "response": answer,
            "Category": CATEGORY[number],
            "Multi Hop": TYPE[number],
        }
        if number in CONTEXTS:
            record["retrieved_contexts"] = CONTEXTS[number]
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def script_verdicts(server: FakeAnthropicServer) -> None:
    server.script(SAMPLE[3][0], verdict(0, 0, 1, summary="Wrong port."))
    server.script(SAMPLE[4][0], verdict(1, 0, 1, summary="Misses the finance step."))


def body_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_evaluate_dataset_gives_the_same_results_file_as_the_three_csvs(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    script_verdicts(fake_anthropic)
    folder = workspace.directory
    write_three_csvs(folder)
    dataset = write_ragas_dataset(folder)

    from_csvs = run_cli(["evaluate", "--metrics", "judge,lexical", "--output-dir", "a", *FAST])
    assert from_csvs.exit_code == 0, from_csvs.output
    from_dataset = run_cli(
        [
            "evaluate",
            "--dataset",
            str(dataset),
            "--metrics",
            "judge,lexical",
            "--output-dir",
            "b",
            *FAST,
        ]
    )
    assert from_dataset.exit_code == 0, from_dataset.output
    assert f"Dataset: {dataset}" in from_dataset.stderr

    [csv_results] = results_files(folder / "a")
    [dataset_results] = results_files(folder / "b")
    assert body_of(dataset_results) == body_of(csv_results)
    text = body_of(dataset_results)
    assert "#SUMMARY: Metadata Columns: Category; Multi Hop\n" in text
    assert "Question Number,Question,Ground Truth,RAG Answer,Precision," in text
    assert text.splitlines()[-5].endswith(",geo,1")  # metadata columns come last

    # Readers of results files never take a metadata column for a metric, even a 0/1 one.
    scores = read_run_scores(dataset_results)
    assert "Multi Hop" not in scores.metrics and "Category" not in scores.metrics
    assert scores.metadata_columns == ("Category", "Multi Hop")
    assert {"Precision", "Recall", "Accuracy", "exact_match"} <= set(scores.metrics)
    compared = run_cli(["compare", str(csv_results), str(dataset_results)])
    assert compared.exit_code == 0, compared.output
    assert "Multi Hop" not in compared.stdout


def test_the_dataset_and_the_csv_options_are_exclusive(workspace: Workspace) -> None:
    result = run_cli(
        ["evaluate", "--dataset", "d.json", "--answers", "a.csv", "--ground-truth", "g.csv"]
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "Error: --dataset replaces --ground-truth, --answers: pass either one dataset file or "
        "the CSV files, not both"
    )


def test_group_by_adds_summary_rows_a_table_and_json_per_group(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    script_verdicts(fake_anthropic)
    # The judge never answers for question 1: its group "geo" has no scored row.
    fake_anthropic.script(SAMPLE[1][0], Fault.status(529, "overloaded", retry_after=0.01))
    dataset = write_ragas_dataset(workspace.directory)

    result = run_cli(
        [
            "evaluate",
            "--dataset",
            str(dataset),
            "--metrics",
            "judge,lexical",
            "--group-by",
            "category",  # spelled differently: matched to Category
            "--json",
            "--max-retries",
            "0",
            *FAST,
        ]
    )

    assert result.exit_code == 1, result.output
    assert "Grouped by: Category" in result.stderr
    [path] = workspace.results()
    lines = body_of(path).splitlines()
    groups = [line for line in lines if line.startswith("#SUMMARY[")]
    assert groups[:4] == [
        "#SUMMARY[Category=geo]: Total Questions: 1",
        "#SUMMARY[Category=geo]: Precision: 0/0 (n/a)",
        "#SUMMARY[Category=geo]: Recall: 0/0 (n/a)",
        "#SUMMARY[Category=geo]: Accuracy: 0/0 (n/a)",
    ]
    assert "#SUMMARY[Category=geo]: Unscored: 1" in groups
    assert [line for line in groups if "Total Questions" in line] == [
        "#SUMMARY[Category=geo]: Total Questions: 1",
        "#SUMMARY[Category=it]: Total Questions: 1",
        "#SUMMARY[Category=products]: Total Questions: 2",
        "#SUMMARY[Category=(blank)]: Total Questions: 1",
    ]
    assert "#SUMMARY[Category=products]: Precision: 2/2 (100%) [95% CI 34–100%]" in groups
    assert "#SUMMARY[Category=it]: Precision: 0/1 (0%) [95% CI 0–79%]" in groups
    assert any(
        line.startswith("#SUMMARY[Category=products]: exact_match: 0/2 (0%)") for line in groups
    )
    # The groups' rows sit between the overall summary and the table.
    assert lines.index(groups[-1]) + 1 == next(
        index for index, line in enumerate(lines) if line.startswith("Question Number,")
    )
    # The README's pandas recipe counts the group rows too.
    skip = sum(1 for line in lines if line.lstrip('"').startswith("#SUMMARY"))
    table = list(csv.DictReader(lines[skip:]))
    assert [row["Category"] for row in table] == ["geo", "products", "it", "", "products"]
    assert "By Category" in result.stdout
    assert "products" in result.stdout and "(blank)" in result.stdout

    payload = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert payload["groups"]["column"] == "Category"
    by_value = {group["value"]: group["summary"] for group in payload["groups"]["groups"]}
    assert list(by_value) == ["geo", "it", "products", "(blank)"]
    assert by_value["products"]["Precision"]["count"] == 2
    assert by_value["geo"]["Precision"]["rate"] is None
    assert payload["rows"][0]["Category"] == "geo"


def test_group_by_a_missing_column_names_the_columns_that_exist(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    write_three_csvs(workspace.directory)
    result = run_cli(["evaluate", "--metrics", "lexical", "--group-by", "Source", *FAST])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "Error: --group-by 'Source' is not a column of questions.csv (columns there: "
        "Category, Multi Hop). Pass one of them"
    )
    assert fake_anthropic.requests == []
    assert workspace.results() == []


def test_group_by_without_metadata_columns_says_how_to_add_one(workspace: Workspace) -> None:
    folder = workspace.directory
    write_rows(folder / "questions.csv", ["Question Number", "Question"], [[1, "Q?"]])
    write_rows(folder / "ground_truth.csv", ["Question Number", "Ground Truth"], [[1, "R"]])
    write_rows(folder / "rag_answers.csv", ["Question Number", "RAG Answer"], [[1, "A"]])
    result = run_cli(["evaluate", "--metrics", "lexical", "--group-by", "Category"])
    assert result.exit_code == 2
    assert "questions.csv has no metadata column to group by" in result.stderr


def test_a_metadata_column_named_like_a_results_column_is_not_carried(
    workspace: Workspace,
) -> None:
    folder = workspace.directory
    write_rows(
        folder / "questions.csv",
        ["Question Number", "Question", "exact_match", "Topic"],
        [[1, "Q?", "yes", "a"]],
    )
    write_rows(folder / "ground_truth.csv", ["Question Number", "Ground Truth"], [[1, "R"]])
    write_rows(folder / "rag_answers.csv", ["Question Number", "RAG Answer"], [[1, "R"]])
    result = run_cli(["evaluate", "--metrics", "lexical"])
    assert result.exit_code == 0, result.output
    assert "The metadata column 'exact_match' has the name of a results column" in result.stderr
    [path] = workspace.results()
    header = next(line for line in body_of(path).splitlines() if line.startswith("Question Nu"))
    assert header.count("exact_match") == 1
    assert header.endswith(",Topic")


# -- convert: Retrieval Scores and --ground-truth-out ----------------------------------------

QUESTIONS = {1: "What is the refund window?", 2: "Who signs contracts?", 3: "Where is HQ?"}


def convert_folder(folder: Path, files: dict[str, object]) -> Path:
    write_rows(folder / "questions.csv", ["Question Number", "Question"], list(QUESTIONS.items()))
    json_dir = folder / "RAG_JSON_Files"
    json_dir.mkdir()
    for name, value in files.items():
        (json_dir / name).write_text(json.dumps(value), encoding="utf-8")
    return json_dir


def read_table(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_convert_writes_retrieval_scores_parallel_to_the_contexts(workspace: Workspace) -> None:
    convert_folder(
        workspace.directory,
        {
            "run.json": [
                {
                    "question": QUESTIONS[1],
                    "answer": "30 days.",
                    "contexts": [
                        {"text": "Refunds: 30 days.", "score": 0.91},
                        {"text": "", "score": 0.5},  # no text: dropped with its score
                        {"text": "Shipping: 5 days.", "similarity": 1},
                    ],
                },
                {
                    "question": QUESTIONS[2],
                    "answer": "The CFO.",
                    "contexts": ["Contracts: CFO.", "Org chart."],
                    "scores": [0.7, 0.2],
                },
                {"question": QUESTIONS[3], "answer": "Lyon.", "contexts": ["HQ: Lyon."]},
            ]
        },
    )
    result = run_cli(["convert"])
    assert result.exit_code == 0, result.output
    rows = {
        row["Question Number"]: row for row in read_table(workspace.directory / "rag_answers.csv")
    }
    assert list(rows["1"]) == [
        "Question Number",
        "RAG Answer",
        "Contexts",
        "Retrieval Scores",
        "Match Confidence",
        "Match Score",
        "Source File",
    ]
    assert json.loads(rows["1"]["Contexts"]) == ["Refunds: 30 days.", "Shipping: 5 days."]
    assert rows["1"]["Retrieval Scores"] == "[0.91, 1.0]"
    assert rows["2"]["Retrieval Scores"] == "[0.7, 0.2]"
    assert rows["3"]["Retrieval Scores"] == ""


def test_convert_leaves_out_scores_that_do_not_fit_and_says_why(workspace: Workspace) -> None:
    convert_folder(
        workspace.directory,
        {
            "run.json": [
                {
                    "question": QUESTIONS[1],
                    "answer": "30 days.",
                    "contexts": ["a", "b"],
                    "scores": [0.7],
                }
            ]
        },
    )
    result = run_cli(["convert"])
    assert result.exit_code == 0, result.output
    assert (
        "run.json item 1: the retrieval scores are 1 scores for 2 contexts. Give one number "
        "per context, in the same order (scores left out)"
    ) in result.stderr
    [row] = read_table(workspace.directory / "rag_answers.csv")
    assert row["Retrieval Scores"] == ""
    assert json.loads(row["Contexts"]) == ["a", "b"]


def ragchecker(question_id: str, question: str, truth: str, answer: str) -> dict:
    return {
        "query_id": question_id,
        "query": question,
        "gt_answer": truth,
        "response": answer,
        "retrieved_context": [{"doc_id": "1", "text": "chunk"}],
    }


def test_ground_truth_out_writes_the_references_the_outputs_carry(workspace: Workspace) -> None:
    convert_folder(
        workspace.directory,
        {
            "a.json": {
                "results": [
                    ragchecker("0", QUESTIONS[1], "Thirty days from delivery.", "30 days."),
                    ragchecker("1", QUESTIONS[2], "The CFO signs.", "The CFO."),
                ]
            },
            # The same reference, spaced differently: no disagreement.
            "b.json": [
                {
                    "user_input": QUESTIONS[2],
                    "reference": "The CFO  signs.",
                    # The same answer: two different ones would be two systems (refused).
                    "response": "The CFO.",
                    "reference_contexts": ["Contracts are signed by the CFO."],
                },
                {"question": QUESTIONS[3], "answer": "Lyon."},  # carries no reference
            ],
        },
    )
    result = run_cli(["convert", "--ground-truth-out", "gt.csv"])
    assert result.exit_code == 0, result.output
    assert "carry different" not in result.stderr
    assert read_table(workspace.directory / "gt.csv") == [
        {
            "Question Number": "1",
            "Ground Truth": "Thirty days from delivery.",
            "Relevant Contexts": "",
        },
        {
            "Question Number": "2",
            "Ground Truth": "The CFO signs.",
            "Relevant Contexts": '["Contracts are signed by the CFO."]',
        },
    ]
    assert "Wrote 2 references to gt.csv" in result.stderr
    assert "Matched questions with no reference carried: 3" in result.stderr


def test_ground_truth_out_keeps_several_reference_answers_apart(workspace: Workspace) -> None:
    convert_folder(
        workspace.directory,
        {
            "a.json": [
                {
                    "question": QUESTIONS[1],
                    "answer": "30 days.",
                    "reference": ["30 days", "A month"],
                },
                {"question": QUESTIONS[2], "answer": "The CFO.", "reference": "The CFO signs."},
            ]
        },
    )
    result = run_cli(["convert", "--ground-truth-out", "gt.csv"])
    assert result.exit_code == 0, result.output
    rows = read_table(workspace.directory / "gt.csv")
    assert [row["Ground Truth"] for row in rows] == ["30 days\nA month", "The CFO signs."]
    assert [row["Reference Answers"] for row in rows] == ['["30 days", "A month"]', ""]


def test_two_files_disagreeing_on_a_reference_is_a_warning_naming_both(
    workspace: Workspace,
) -> None:
    convert_folder(
        workspace.directory,
        {
            "a.json": [ragchecker("0", QUESTIONS[1], "Thirty days.", "30 days.")],
            "b.json": [
                {
                    "question": QUESTIONS[1],
                    "expected_output": "Fourteen days.",
                    "answer": "30 days.",
                }
            ],
        },
    )
    result = run_cli(["convert", "--ground-truth-out", "gt.csv"])
    assert result.exit_code == 0, result.output
    assert (
        "a.json item 1 and b.json item 1 carry different reference for question 1; kept "
        "a.json item 1's. Check which is right"
    ) in result.stderr
    assert read_table(workspace.directory / "gt.csv")[0]["Ground Truth"] == "Thirty days."


def test_ground_truth_out_refuses_to_replace_a_file_or_to_write_nothing(
    workspace: Workspace,
) -> None:
    convert_folder(workspace.directory, {"a.json": [{"question": QUESTIONS[1], "answer": "x"}]})
    nothing = run_cli(["convert", "--ground-truth-out", "gt.csv"])
    assert nothing.exit_code == 1
    assert "No matched entry in RAG_JSON_Files carries a reference" in nothing.stderr
    assert not (workspace.directory / "gt.csv").exists()
    assert not (workspace.directory / "rag_answers.csv").exists()

    (workspace.directory / "gt.csv").write_text("golden\n")
    refused = run_cli(["convert", "--ground-truth-out", "gt.csv"])
    assert refused.exit_code == 2
    assert "Error: --ground-truth-out gt.csv already exists; it was not replaced" in refused.stderr
    assert (workspace.directory / "gt.csv").read_text() == "golden\n"
    same = run_cli(["convert", "--ground-truth-out", "questions.csv", "--force"])
    assert same.exit_code == 2
    assert "is the questions file; writing there would destroy it" in same.stderr


def test_the_report_of_a_dataset_run_takes_its_contexts_from_the_dataset(
    workspace: Workspace,
) -> None:
    folder = workspace.directory
    write_three_csvs(folder)
    dataset = write_ragas_dataset(folder)
    common = ["--metrics", "lexical", "--report"]
    assert run_cli(["evaluate", *common, "--output-dir", "a"]).exit_code == 0
    result = run_cli(["evaluate", "--dataset", str(dataset), *common, "--output-dir", "b"])
    assert result.exit_code == 0, result.output

    def contexts_payload(directory: str) -> str:
        [page] = (folder / directory).glob("*.html")
        found = re.search(r'<script[^>]*id="contexts"[^>]*>(.*?)</script>', page.read_text())
        assert found is not None
        return found.group(1)

    payload = contexts_payload("b")
    assert len(payload) > 20
    assert payload == contexts_payload("a")


def test_a_group_value_with_a_comma_stays_a_plain_line_and_results_still_read_back(
    workspace: Workspace,
) -> None:
    folder = workspace.directory
    write_rows(
        folder / "questions.csv",
        ["Question Number", "Question", "Topic"],
        [[1, "Q1?", "billing, refunds"], [2, "Q2?", "returns"]],
    )
    write_rows(
        folder / "ground_truth.csv", ["Question Number", "Ground Truth"], [[1, "R"], [2, "S"]]
    )
    write_rows(folder / "rag_answers.csv", ["Question Number", "RAG Answer"], [[1, "R"], [2, "x"]])
    result = run_cli(["evaluate", "--metrics", "lexical", "--group-by", "Topic"])
    assert result.exit_code == 0, result.output
    [path] = workspace.results()
    # A plain line, never CSV-quoted: it still starts with "#" (issue 21, item 23).
    assert "\n#SUMMARY[Topic=billing, refunds]: Total Questions: 1\n" in body_of(path)
    scores = read_run_scores(path)
    assert scores.question_numbers == (1, 2)
    assert scores.metrics["exact_match"].values == {1: 1.0, 2: 0.0}
    assert "Topic" not in scores.metrics


def test_group_by_gives_each_group_the_pass_rates_of_the_quality_checks(
    workspace: Workspace,
) -> None:
    # The quality family writes 0/1 checks (summarised as pass rates) and a text column
    # (Quality Failures, never summarised): each group's rows follow the overall summary's.
    write_ragas_dataset(workspace.directory)
    result = run_cli(
        [
            *("evaluate", "--dataset", "eval.jsonl", "--metrics", "quality"),
            *("--group-by", "Category", "--no-require-citations", "--yes"),
        ]
    )
    assert result.exit_code == 0, result.stderr
    (results,) = workspace.results()
    summary = [
        row[0]
        for row in csv.reader(results.open(encoding="utf-8"))
        if row and row[0].startswith("#SUMMARY")
    ]
    overall = [line.split(": ", 2)[1] for line in summary if line.startswith("#SUMMARY:")]
    for category in sorted(set(CATEGORY.values())):
        value = category or "(blank)"
        group = [line for line in summary if line.startswith(f"#SUMMARY[Category={value}]:")]
        labels = [line.split(": ", 2)[1] for line in group]
        assert labels == [
            label
            for label in overall
            if label not in ("Coverage", "Metadata Columns", "Metric Kinds", "Metric Settings")
        ]
        members = sum(1 for other in CATEGORY.values() if other == category)
        assert f"#SUMMARY[Category={value}]: quality_not_empty: {members}/{members} (" in "\n".join(
            group
        )
    assert not any("Quality Failures" in line for line in summary)


def test_the_readme_dataset_example_gives_the_figures_it_shows(workspace: Workspace) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "hr_eval.jsonl"
    result = run_cli(
        [
            *("evaluate", "--dataset", str(example), "--metrics", "quality"),
            *("--group-by", "category", "--no-require-citations", "--yes"),
        ]
    )
    assert result.exit_code == 0, result.stderr
    (results,) = workspace.results()
    summary = {
        row[0] for row in csv.reader(results.open(encoding="utf-8")) if row[0].startswith("#")
    }
    # Question 17 ("I couldn't find any information about pets") gives up: a fallback
    # (issue 22).
    assert "#SUMMARY: quality_pass: 17/20 (85%) [95% CI 64–95%]" in summary
    assert "#SUMMARY[category=travel]: quality_pass: 2/3 (67%) [95% CI 21–94%]" in summary
    assert "#SUMMARY[category=office]: quality_list_format: 0/1 (0%) [95% CI 0–79%]" in summary
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "│ quality_pass            │ 3/3 (100%) │ 3/3 (100%) │  2/4 (50%) │" in readme
