"""GitHub Actions: the Markdown appended to ``$GITHUB_STEP_SUMMARY`` (compared with golden
files) and the ``::error::`` annotations of failed gates under ``GITHUB_ACTIONS=true``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ci_support import compared_runs
from evaluate_support import SAMPLE, Workspace, prepare_workspace, run_cli, write_inputs
from fakes.anthropic_server import FakeAnthropicServer, Fault, verdict
from hypothesis import given
from hypothesis import strategies as st
from report_support import Question, write_run

from rag_evaluator.ci.annotations import error_command
from rag_evaluator.ci.markdown import cell, weakest_questions
from rag_evaluator.results.reader import read_run_scores

DATA = Path(__file__).parent / "data"
EARLIER = "## An earlier step\n\nIts summary stays.\n"
AFTER_EARLIER = EARLIER + "\n"
GATES = ["--fail-under", "exact_match=0.5,keyword_coverage=0.3", "--fail-over", "dont_know=0.1"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)
    return space


def step_summary(directory: Path) -> tuple[Path, dict[str, str]]:
    """A step summary file holding an earlier step's text, and the variable naming it."""
    path = directory / "step_summary.md"
    path.write_text(EARLIER, encoding="utf-8")
    return path, {"GITHUB_STEP_SUMMARY": str(path)}


def test_evaluate_appends_the_golden_summary_with_links_into_the_report(
    workspace: Workspace,
) -> None:
    path, env = step_summary(workspace.directory)

    result = run_cli(["evaluate", "--metrics", "lexical", "--yes", "--report", *GATES], env=env)

    assert result.exit_code == 3, result.output
    text = path.read_text(encoding="utf-8")
    assert text.startswith(AFTER_EARLIER)  # appended, never replaced
    (results,) = workspace.results()
    assert (workspace.directory / "Evaluation_Runs" / f"{results.stem}.html").is_file()
    # The results file is named after the run's start time: the one part that varies.
    appended = text.removeprefix(AFTER_EARLIER).replace(results.stem, "RESULTS")
    assert appended == (DATA / "evaluate_summary.md").read_text(encoding="utf-8")


def test_the_report_anchors_the_summary_links_to(workspace: Workspace) -> None:
    path, env = step_summary(workspace.directory)

    run_cli(["evaluate", "--metrics", "lexical", "--yes", "--report"], env=env)

    links = re.findall(r"\]\((Evaluation_Runs/[^)#]+\.html)#(r0q\d+)\)", path.read_text())
    assert len(links) == 5
    for page, anchor in links:
        assert f'id="{anchor}"' in (workspace.directory / page).read_text(encoding="utf-8")


def test_without_a_report_the_questions_are_not_linked(workspace: Workspace) -> None:
    path, env = step_summary(workspace.directory)

    result = run_cli(["evaluate", "--metrics", "lexical", "--yes"], env=env)

    assert result.exit_code == 0, result.output
    text = path.read_text(encoding="utf-8")
    assert "No gate was set" in text
    assert "lowest-scoring questions" in text
    assert ".html" not in text


def test_evaluate_summary_lists_unscored_questions(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(SAMPLE[2][0], Fault.invalid_json())
    fake_anthropic.script(SAMPLE[4][0], verdict(0, 1, 1))
    path, env = step_summary(workspace.directory)

    result = run_cli(
        ["evaluate", "--model", "haiku", "--yes", "--delay", "0", "--fail-under", "precision=0.5"],
        env=env,
    )

    assert result.exit_code == 1, result.output
    text = path.read_text(encoding="utf-8")
    assert "### Unscored questions: 1" in text
    assert re.search(r"^\| 2 \| .*3 calls", text, re.MULTILINE)
    assert "✅ every gate passed" in text
    # Gated on Precision, the one question listed is the one whose precision failed.
    assert re.search(
        r"^\| 4 Who approves travel requests\? \| 0\.00 \| Precision 0 \|$", text, re.M
    )
    assert text.count("travel requests") == 1


def test_compare_appends_the_golden_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    compared_runs(tmp_path)
    path, env = step_summary(tmp_path)

    result = run_cli(["compare", "base.csv", "new.csv", "--fail-if-worse"], env=env)

    assert result.exit_code == 3, result.output
    appended = path.read_text(encoding="utf-8").removeprefix(AFTER_EARLIER)
    assert appended == (DATA / "compare_summary.md").read_text(encoding="utf-8")


def test_an_unwritable_step_summary_is_an_error_after_the_results(workspace: Workspace) -> None:
    folder = workspace.directory / "summary-folder"
    folder.mkdir()

    result = run_cli(
        ["evaluate", "--metrics", "lexical", "--yes"], env={"GITHUB_STEP_SUMMARY": str(folder)}
    )

    assert result.exit_code == 2
    assert "GITHUB_STEP_SUMMARY" in result.output
    assert len(workspace.results()) == 1


def annotations(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("::")]


def test_failed_gates_are_annotated_on_github_actions_only(workspace: Workspace) -> None:
    on_github = {"GITHUB_ACTIONS": "true"}

    failed = run_cli(["evaluate", "--metrics", "lexical", "--yes", *GATES], env=on_github)
    passed = run_cli(
        ["evaluate", "--metrics", "lexical", "--yes", "--fail-under", "keyword_coverage=0.3"],
        env=on_github,
    )
    elsewhere = run_cli(["evaluate", "--metrics", "lexical", "--yes", *GATES])

    assert failed.exit_code == 3
    assert annotations(failed.stdout) == [
        "::error title=rag-eval --fail-under failed::exact_match 0.0000 < minimum 0.5; "
        "0/5 (0%25) [95%25 CI 0–43%25]"
    ]
    assert passed.exit_code == 0 and annotations(passed.stdout) == []
    assert elsewhere.exit_code == 3 and annotations(elsewhere.output) == []


def test_compare_annotations_leave_json_on_stdout_clean(tmp_path: Path) -> None:
    base, new = compared_runs(tmp_path)

    result = run_cli(
        ["compare", str(base), str(new), "--fail-if-worse", "--json", "-"],
        env={"GITHUB_ACTIONS": "true"},
    )

    assert result.exit_code == 3
    json.loads(result.stdout)
    (line,) = annotations(result.stderr)
    assert line.startswith("::error title=rag-eval --fail-if-worse failed::exact_match in ")


def _unescape(text: str) -> str:
    for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, plain)
    return text


@given(title=st.text(max_size=40), message=st.text(max_size=60))
def test_any_title_and_message_make_one_command_that_reads_back(title: str, message: str) -> None:
    command = error_command(title, message)

    assert "\n" not in command and "\r" not in command
    head, separator, data = command.removeprefix("::error title=").partition("::")
    assert separator
    assert ":" not in head and "," not in head  # nothing ends the property early
    assert _unescape(head) == title
    assert _unescape(data) == message


@given(st.text(max_size=60))
def test_any_text_is_one_markdown_cell(text: str) -> None:
    escaped = cell(text)

    assert not set(escaped) & {"\n", "\r", "<", ">"}
    assert re.search(r"(?<!\\)\|", escaped) is None


def test_the_weakest_questions_follow_each_metrics_direction(tmp_path: Path) -> None:
    values = {
        1: {"exact_match": 1.0, "dont_know": 0.0},  # best on both: never listed
        2: {"exact_match": 0.0, "dont_know": 0.0},
        3: {"exact_match": 0.0, "dont_know": 1.0},  # worst on both
        4: {"exact_match": 1.0, "dont_know": 1.0},
        5: {"exact_match": 0.0, "dont_know": 0.0},
    }
    questions = [Question(n, f"Q{n}?", "A.", "A.", metrics=m) for n, m in values.items()]
    scores = read_run_scores(write_run(tmp_path / "run.csv", questions, judged=False))

    weakest = weakest_questions(scores, [], count=3)

    assert [(q.number, q.score) for q in weakest] == [(3, 0.0), (2, 0.5), (4, 0.5)]
    assert weakest[0].metrics == (("dont_know", 1.0), ("exact_match", 0.0))
    assert [q.number for q in weakest_questions(scores, ["dont_know"])] == [3, 4]


def test_markup_in_a_metric_name_stays_text_in_every_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "a|b <i>&c_d"

    def run(path: Path, ones: bool) -> Path:
        questions = [
            Question(n, f"Q{n}?", "A.", "A.", metrics={name: float((n % 10 != 0) == ones)})
            for n in range(1, 31)
        ]
        return write_run(path, questions, judged=False)

    run(tmp_path / "base.csv", True)
    run(tmp_path / "new.csv", False)
    path, env = step_summary(tmp_path)

    result = run_cli(
        ["compare", "base.csv", "new.csv", "--fail-if-worse", "--junit", "c.xml"],
        env={**env, "GITHUB_ACTIONS": "true"},
    )

    assert result.exit_code == 3, result.output
    text = path.read_text(encoding="utf-8")
    assert r"| a\|b &lt;i&gt;&amp;c\_d | 30 |" in text
    row = next(line for line in text.splitlines() if line.startswith("| a"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 9  # eight cells, no more
    failure = (tmp_path / "c.xml").read_text(encoding="utf-8")
    assert "a|b &lt;i&gt;&amp;c_d in new.csv not worse than the baseline" in failure
    (line,) = annotations(result.stdout)
    assert "::a|b <i>&c_d in new.csv: -0.8000 (95%25 CI" in line
