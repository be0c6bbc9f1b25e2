"""``--junit FILE`` on evaluate and compare: a test case per gate, errors for unscored
questions, valid against the JUnit schema that Jenkins, GitHub and GitLab read."""

from __future__ import annotations

import string
from datetime import datetime
from pathlib import Path

import pytest
from ci_support import compared_runs
from evaluate_support import SAMPLE, Workspace, prepare_workspace, run_cli, write_inputs
from fakes.anthropic_server import FakeAnthropicServer, Fault, verdict
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from rag_evaluator.ci.cases import CaseOutcome, JunitCase, JunitSuite, xml_cases, xml_safe
from rag_evaluator.ci.junit import junit_document

SCHEMA = etree.XMLSchema(etree.parse(str(Path(__file__).parent / "data" / "junit-10.xsd")))
OFFLINE = ["--metrics", "lexical", "--yes"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)
    return space


def valid_junit(path: Path) -> etree._Element:
    """The parsed file, after checking it against the JUnit schema."""
    document = etree.parse(str(path))
    SCHEMA.assertValid(document)
    return document.getroot()


def cases(root: etree._Element) -> dict[str, etree._Element]:
    return {case.get("name"): case for case in root.iter("testcase")}


def test_evaluate_writes_a_case_per_gate_failed_with_figure_interval_and_threshold(
    workspace: Workspace,
) -> None:
    result = run_cli(
        [
            "evaluate",
            *OFFLINE,
            "--fail-under",
            "exact_match=0.5,keyword_coverage=0.3",
            "--fail-over",
            "dont_know=0.1",
            "--junit",
            "junit.xml",
        ]
    )

    assert result.exit_code == 3, result.output  # the exit code is the gate's, as before
    root = valid_junit(workspace.directory / "junit.xml")
    found = cases(root)
    assert list(found) == [
        "--fail-under exact_match=0.5",
        "--fail-under keyword_coverage=0.3",
        "--fail-over dont_know=0.1",
    ]
    failure = found["--fail-under exact_match=0.5"].find("failure")
    assert failure is not None
    assert failure.get("type") == "--fail-under"
    assert failure.get("message") == ("exact_match 0.0000 < minimum 0.5; 0/5 (0%) [95% CI 0–43%]")
    passed = found["--fail-under keyword_coverage=0.3"]
    assert passed.find("failure") is None
    assert passed.findtext("system-out") == (
        "keyword_coverage 0.5500 ≥ minimum 0.3; mean 0.5500 (n=5) [95% CI n/a]"
    )
    assert (
        found["--fail-over dont_know=0.1"]
        .findtext("system-out")
        .startswith("dont_know 0.0000 ≤ maximum 0.1")
    )
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "0")
    assert (root.get("tests"), root.get("failures")) == ("3", "1")


def test_evaluate_without_gates_reports_each_metric_as_a_passing_case(
    workspace: Workspace,
) -> None:
    result = run_cli(["evaluate", *OFFLINE, "--junit", "out/junit.xml"])

    assert result.exit_code == 0, result.output
    root = valid_junit(workspace.directory / "out" / "junit.xml")
    found = cases(root)
    assert "exact_match" in found and "keyword_coverage" in found
    assert found["exact_match"].findtext("system-out") == "0/5 (0%) [95% CI 0–43%]"
    assert not list(root.iter("failure")) and not list(root.iter("error"))
    assert "Total Questions" not in found  # only rates and means are metrics


def test_each_unscored_question_is_a_junit_error(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(SAMPLE[2][0], Fault.invalid_json())
    fake_anthropic.script(SAMPLE[4][0], verdict(0, 1, 1))

    result = run_cli(
        ["evaluate", "--model", "haiku", "--yes", "--delay", "0", "--junit", "junit.xml"]
    )

    assert result.exit_code == 1, result.output
    root = valid_junit(workspace.directory / "junit.xml")
    errors = [case for case in root.iter("testcase") if case.find("error") is not None]
    assert [case.get("name") for case in errors] == ["question 2"]
    error = errors[0].find("error")
    assert error.get("type") == "unscored"
    assert "3 calls" in error.get("message")
    assert SAMPLE[2][0] in error.text
    assert root.find("testsuite").get("errors") == "1"


def test_a_judged_gate_case_fails_on_the_judges_rate(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(SAMPLE[3][0], verdict(0, 1, 1))  # precision 4/5

    result = run_cli(
        [
            "evaluate",
            "--model",
            "haiku",
            "--yes",
            "--delay",
            "0",
            "--fail-under",
            "precision=0.9,recall=0.8",
            "--junit",
            "junit.xml",
        ]
    )

    assert result.exit_code == 3, result.output
    found = cases(valid_junit(workspace.directory / "junit.xml"))
    failure = found["--fail-under Precision=0.9"].find("failure")
    assert failure.get("message") == "Precision 0.8000 < minimum 0.9; 4/5 (80%) [95% CI 38–96%]"
    assert found["--fail-under Recall=0.8"].find("failure") is None


@pytest.mark.parametrize("where", ["questions.csv", "."])
def test_a_junit_path_that_is_an_input_or_a_folder_is_refused_before_the_run(
    workspace: Workspace, where: str
) -> None:
    before = (workspace.directory / "questions.csv").read_bytes()

    result = run_cli(["evaluate", *OFFLINE, "--junit", where])

    assert result.exit_code == 2
    assert "--junit" in result.output
    assert workspace.results() == []
    assert (workspace.directory / "questions.csv").read_bytes() == before


def test_compare_fails_the_case_of_a_significantly_worse_metric(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    base, new = compared_runs(tmp_path)

    result = run_cli(["compare", str(base), str(new), "--fail-if-worse", "--junit", "c.xml"])

    assert result.exit_code == 3, result.output
    root = valid_junit(tmp_path / "c.xml")
    found = cases(root)
    worse = found[f"exact_match in {new} not worse than the baseline"]
    failure = worse.find("failure")
    assert failure.get("type") == "--fail-if-worse"
    assert failure.get("message") == (
        f"exact_match in {new}: -80.0 pts (95% CI -93.1 to -48.8), Holm p <0.0001 ≤ 0.05: "
        f"significantly worse than the baseline {base}"
    )
    held = found[f"rouge1 in {new} not worse than the baseline"]
    assert held.find("failure") is None
    assert "not significantly different" in held.findtext("system-out")
    skipped = found[f"bleu in {new} not worse than the baseline"].find("skipped")
    assert skipped.get("message").startswith("not compared: ")
    suite = root.find("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "1")


def test_compare_without_the_gate_fails_no_case(tmp_path: Path) -> None:
    base, new = compared_runs(tmp_path)

    result = run_cli(["compare", str(base), str(new), "--junit", str(tmp_path / "c.xml")])

    assert result.exit_code == 0, result.output
    root = valid_junit(tmp_path / "c.xml")
    assert not list(root.iter("failure"))
    worse = cases(root)[f"exact_match in {new} not worse than the baseline"]
    assert "significantly worse than the baseline" in worse.findtext("system-out")


def test_compare_refuses_a_junit_path_naming_an_input(tmp_path: Path) -> None:
    base, new = compared_runs(tmp_path)
    before = new.read_bytes()

    result = run_cli(["compare", str(base), str(new), "--junit", str(new)])

    assert result.exit_code == 2
    assert "--junit" in result.output
    assert new.read_bytes() == before


# Any text a metric name, a run's label or an Error cell may hold: controls, markup,
# surrogates and characters outside the BMP included.
ANY_TEXT = st.text(
    st.characters(blacklist_categories=()) | st.sampled_from("<>&\"'\x00\x1b\r\n]]>"),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(
    name=ANY_TEXT,
    message=ANY_TEXT,
    details=ANY_TEXT,
    outcome=st.sampled_from(CaseOutcome),
)
def test_any_text_makes_a_valid_junit_file_that_reads_back(
    name: str, message: str, details: str, outcome: CaseOutcome
) -> None:
    suite = JunitSuite(
        f"suite {name}",
        (JunitCase(f"class.{name}", name, outcome, message, details, kind=name),),
    )
    # As the suites are built: every text made XML-safe first.
    suite = JunitSuite(xml_safe(suite.name), tuple(xml_cases(suite.cases)))
    document = junit_document([suite], timestamp=datetime(2026, 1, 2, 3, 4, 5), hostname="h")

    root = etree.fromstring(document)
    SCHEMA.assertValid(root)
    case = root.find("testsuite/testcase")
    assert case.get("name") == xml_safe(name)
    child = {
        CaseOutcome.FAILED: "failure",
        CaseOutcome.ERROR: "error",
        CaseOutcome.SKIPPED: "skipped",
    }.get(outcome)
    if child is not None:
        assert case.find(child).get("message") == xml_safe(" ".join(message.split()))
    text = case.findtext(child or "system-out") or ""
    # XML parsers read a CR as a line feed; everything else comes back as written.
    assert text == xml_safe(details).replace("\r\n", "\n").replace("\r", "\n")


def test_xml_safe_keeps_printable_text_and_replaces_what_xml_cannot_hold() -> None:
    printable = string.printable.replace("\x0b", "").replace("\x0c", "")
    assert xml_safe(printable + "é😀") == printable + "é😀"
    assert xml_safe("a\x00b\x1bc\ud800d\ufffe") == "a\ufffdb\ufffdc\ufffdd\ufffd"


def test_a_budget_stop_still_writes_the_junit_file_of_what_was_scored(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(
        [
            "evaluate",
            "--model",
            "haiku",
            "--yes",
            "--delay",
            "0",
            "--no-cache",
            "--max-cost",
            "0.0000001",
            "--fail-under",
            "precision=0.5",
            "--junit",
            "junit.xml",
        ]
    )

    assert result.exit_code == 4, result.output  # the budget's code, as before
    root = valid_junit(workspace.directory / "junit.xml")
    (case,) = root.iter("testcase")
    assert case.get("name") == "--fail-under Precision=0.5"
    # Stopped before any question was scored: nothing shows the minimum was met.
    assert case.find("failure").get("message") == ("Precision has no scored question (minimum 0.5)")
