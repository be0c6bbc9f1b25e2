"""``rag-eval report`` and ``evaluate --report`` through the CLI, on real files; the page
checked with an HTML parser (the browser tests open it in Chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from evaluate_support import (
    SAMPLE,
    prepare_workspace,
    read_results,
    results_files,
    run_cli,
    write_inputs,
    write_retrieval_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer, verdict
from report_support import (
    HOSTILE,
    Question,
    add_columns,
    parse_page,
    sample_questions,
    write_run,
)
from report_support import (
    write_inputs as write_report_inputs,
)

from rag_evaluator.report.html import script_hash
from rag_evaluator.report.page_files import read_page_files

SCRIPT = read_page_files().script


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def report(*arguments: str) -> tuple[int, str]:
    result = run_cli(["report", *arguments])
    return result.exit_code, " ".join(result.output.split())


def test_report_is_written_beside_the_results_file_with_every_question(tmp_path: Path) -> None:
    questions = sample_questions()
    results = write_run(tmp_path / "runs" / "precision_scores_20261123_014412.csv", questions)
    code, output = report(str(results))
    page_path = results.with_suffix(".html")
    assert code == 0, output
    assert f"Report written to {page_path}" in output
    assert "12 questions" in output
    page = parse_page(page_path.read_text(encoding="utf-8"))
    assert page.body_rows == {"t0": len(questions)}
    # The header holds the run's facts and the date.
    for fact in ("claude-haiku-5-5", "Run date", "2026-11-23 01:44:12", "Judge Calls", "$0.0123"):
        assert fact in page.text, fact
    # Cards with the interval carried by the results file.
    assert re.search(r"Precision\s*\d+%\s*95% CI \d+–\d+%", page.text)


def test_output_option_names_the_file_and_must_end_in_html(tmp_path: Path) -> None:
    results = write_run(tmp_path / "run.csv", sample_questions())
    code, output = report(str(results), "-o", "out/page.html")
    assert code == 0, output
    assert (tmp_path / "out" / "page.html").is_file()
    (tmp_path / "ground_truth.csv").write_text("Question Number,Ground Truth\n1,x\n")
    code, output = report(str(results), "-o", "ground_truth.csv")
    assert code == 2
    assert "does not end in .html" in output
    assert (tmp_path / "ground_truth.csv").read_text() == "Question Number,Ground Truth\n1,x\n"
    (tmp_path / "folder.html").mkdir()
    code, output = report(str(results), "-o", "folder.html")
    assert code == 2 and "is a folder" in output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        ("Question Number,Question\n1,What?\n", "does not start with the #SUMMARY: rows"),
        ("#SUMMARY: Total Questions: 1\nQuestion,Answer\nWhat?,x\n", "no 'Question Number'"),
    ],
)
def test_a_file_that_is_not_a_results_file_is_one_line_with_the_fix(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "questions.csv"
    if content is not None:
        path.write_text(content)
    code, output = report(str(path))
    assert code == 2
    assert output.startswith("Error:") and message in output
    assert "Traceback" not in output
    assert not list(tmp_path.glob("*.html"))


def test_more_answers_files_than_results_files_is_a_usage_error(tmp_path: Path) -> None:
    results = write_run(tmp_path / "run.csv", sample_questions())
    answers, _ = write_report_inputs(tmp_path, sample_questions())
    code, output = report(str(results), "--answers", str(answers), "--answers", str(answers))
    assert code == 2 and "at most one answers file per results file" in output


def test_contexts_are_embedded_once_compressed_and_left_out_where_answers_differ(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    questions = sample_questions()
    results = write_run(tmp_path / "run.csv", questions)
    other = [
        Question(q.number, q.question, q.ground_truth, "Another answer.", contexts=q.contexts)
        if q.number == 2
        else q
        for q in questions
    ]
    answers, truth = write_report_inputs(tmp_path, other)
    code, output = report(str(results), "--answers", str(answers), "--ground-truth", str(truth))
    assert code == 0, output
    assert "answers of question 2 differ from" in output
    page = parse_page((tmp_path / "run.html").read_text(encoding="utf-8"))
    (payload,) = [text for attrs, text in page.scripts if attrs.get("id") == "contexts"]
    import base64
    import gzip

    data = json.loads(gzip.decompress(base64.b64decode(payload)))
    pool = data["pool"]
    # The paid-time-off chunk is retrieved for questions 1 and 6-12 and stored once.
    assert pool.count("Section 4.1 Paid time off: 25 days per calendar year.") == 1
    assert "2" not in data["retrieved"][0]
    assert data["retrieved"][0]["1"] == [[pool.index(questions[0].contexts[0]), 1],
                                         [pool.index(questions[0].contexts[1]), 0]]  # fmt: skip
    assert "Contexts" in page.text


def test_hostile_texts_and_column_names_are_escaped_everywhere(tmp_path: Path) -> None:
    questions = [
        Question(
            1,
            HOSTILE,
            HOSTILE,
            HOSTILE,
            scores=(0, 1, 1),
            reasoning=HOSTILE,
            votes=((0, 1, 1), (1, 1, 1), (0, 1, 1)),
            first=(1, 1, 1),
            metrics={"rouge1": 0.9, "hallucination": 0.9},
            contexts=[HOSTILE, "plain"],
            relevant_contexts=[HOSTILE],
        ),
        Question(2, "Fine?", "Yes.", "I don't know.", metrics={"rouge1": 0.1, "hallucination": 0}),
    ]
    baseline = write_run(tmp_path / "base.csv", questions)
    run = write_run(tmp_path / "run.csv", questions)
    add_columns(run, {HOSTILE: {1: "CORRECT", 2: HOSTILE[:20]}, "<b>label</b>": {1: "<i>", 2: "A"}})
    answers, truth = write_report_inputs(tmp_path, questions)
    code, output = report(
        str(baseline), str(run), "--answers", str(answers), "--answers", str(answers),
        "--ground-truth", str(truth), "--title", HOSTILE, "-o", "page.html",
    )  # fmt: skip
    assert code == 0, output
    html = (tmp_path / "page.html").read_text(encoding="utf-8")
    page = parse_page(html)
    # Only the page's own three script elements, and only the last one is code.
    scripts = [attrs for tag, attrs in page.tags if tag == "script"]
    assert [attrs.get("type") for attrs in scripts] == [
        "application/json",
        "application/octet-stream",
        None,
    ]
    assert page.scripts[-1][1] == SCRIPT
    for tag, attrs in page.tags:
        assert tag not in ("img", "iframe", "object", "embed", "form", "base"), tag
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        for name in ("href", "src", "action", "formaction", "xlink:href"):
            value = attrs.get(name)
            assert value is None or value.startswith("#"), (tag, name, value)
    # The hostile text is there, as text.
    assert "<script>window.__pwned = 1" in page.text
    assert html.count("&lt;script&gt;window.__pwned") >= 4
    # JSON inside the data script cannot end the element.
    (data,) = [text for attrs, text in page.scripts if attrs.get("id") == "report-data"]
    assert "<" not in data and "\u2028" not in data
    assert [HOSTILE, "labels"] in json.loads(data)["runs"][1]["columns"]


def test_the_page_requests_nothing_and_allows_only_its_own_script(tmp_path: Path) -> None:
    results = write_run(tmp_path / "run.csv", sample_questions())
    answers, truth = write_report_inputs(tmp_path, sample_questions())
    report(str(results), "--answers", str(answers), "--ground-truth", str(truth))
    html = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert not re.search(
        r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:|//|data:|javascript:)""", html, re.I
    )
    assert "@import" not in html and "url(" not in html
    (policy,) = [
        attrs["content"]
        for tag, attrs in parse_page(html).tags
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    assert policy is not None
    assert "default-src 'none'" in policy
    assert f"script-src {script_hash(SCRIPT)};" in policy


def test_two_runs_show_compare_statistics_and_flipped_questions(tmp_path: Path) -> None:
    questions = sample_questions()
    baseline = write_run(tmp_path / "base.csv", questions)
    worse = [
        Question(q.number, q.question, q.ground_truth, q.answer + " Maybe.",
                 scores=(0, 1, 1) if q.number in (6, 7, 8) else q.scores,
                 reasoning=f"new reasoning {q.number}", metrics=q.metrics)
        for q in questions
    ]  # fmt: skip
    run = write_run(tmp_path / "new.csv", worse)
    code, output = report(str(baseline), str(run))
    assert code == 0, output
    html = (tmp_path / "base.html").read_text(encoding="utf-8")
    page = parse_page(html)
    assert page.body_rows["t0"] == page.body_rows["t1"] == 12
    compared = run_cli(["compare", str(baseline), str(run), "--json", "-"])
    data = json.loads(compared.stdout)
    precision = next(m for m in data["comparisons"][0]["metrics"] if m["metric"] == "Precision")
    assert f"{precision['holm_p_value']:.4f}" in page.text
    assert f"{precision['p_value']:.4f}" in page.text
    assert "Precision: 3 question(s) got worse" in page.text
    for number in (6, 7, 8):
        assert f"new reasoning {number}" in page.text
        assert f'id="r1q{number}"' in html
    assert re.search(r'<tr id="r1q6"[^>]*data-f="w\d+"', html)


def test_the_page_shows_each_runs_metric_settings_and_what_they_leave_uncompared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepare_workspace(tmp_path, monkeypatch)
    write_retrieval_inputs(tmp_path, lambda golden: ["x", golden])
    runs = []
    for folder, k in (("a", "3"), ("b", "1")):
        result = run_cli(["evaluate", "--metrics", "retrieval", "--k", k, "--output-dir", folder])
        assert result.exit_code == 0, result.output
        runs += results_files(tmp_path / folder)
    code, output = report(*map(str, runs), "-o", "page.html")
    assert code == 0, output
    page = parse_page((tmp_path / "page.html").read_text(encoding="utf-8"))
    assert "Metric Settings" in page.text
    assert "k=3; match=exact" in page.text and "k=1; match=exact" in page.text
    assert f"precision_at_k: not compared (--k differs: 3 in {runs[0]}" in page.text


def test_evaluate_report_writes_the_page_beside_the_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory)
    fake_anthropic.script(SAMPLE[3][0], verdict(0, 0, 1, summary="Wrong port: 8080, not 8443."))
    result = run_cli(
        ["evaluate", "--metrics", "judge,lexical", "--yes", "--delay", "0", "--report"]
    )
    assert result.exit_code == 0, result.output
    (results,) = results_files(workspace.directory / "Evaluation_Runs")
    page_path = results.with_suffix(".html")
    assert f"Report written to {page_path.relative_to(workspace.directory)}" in " ".join(
        result.output.split()
    )
    page = parse_page(page_path.read_text(encoding="utf-8"))
    assert page.body_rows == {"t0": len(read_results(results).rows)}
    assert "Wrong port: 8080, not 8443." in page.text


def test_evaluate_without_report_writes_no_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory)
    result = run_cli(["evaluate", "--metrics", "lexical", "--yes"])
    assert result.exit_code == 0, result.output
    assert not list((workspace.directory / "Evaluation_Runs").glob("*.html"))
    assert "Report written" not in result.output


def test_evaluate_report_is_written_before_a_failing_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory)
    result = run_cli(
        ["evaluate", "--metrics", "lexical", "--yes", "--report", "--fail-under", "exact_match=0.9"]
    )
    assert result.exit_code == 3, result.output
    (results,) = results_files(workspace.directory / "Evaluation_Runs")
    assert results.with_suffix(".html").is_file()
    output = " ".join(result.output.split())
    assert output.index("Report written to") < output.index("Below --fail-under")


def test_report_help_names_its_options() -> None:
    result = run_cli(["report", "--help"])
    assert result.exit_code == 0
    for option in ("--output", "-o", "--answers", "--ground-truth", "--title"):
        assert option in result.output
    assert "report" in run_cli(["--help"]).output
