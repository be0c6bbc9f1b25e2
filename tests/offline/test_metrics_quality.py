"""The quality family (seed 002's quality control): each check passing, failing and not
applicable, through the library and through ``rag-eval evaluate --metrics quality``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluate_support import (
    Workspace,
    only_results,
    prepare_workspace,
    read_results,
    results_files,
    run_cli,
    write_csv,
)
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.inputs.fields import ScoreListError, parse_score_list
from rag_evaluator.metrics import assess_answer, cited_numbers
from rag_evaluator.offline import quality
from rag_evaluator.results.run_scores import TableRow, build_run_scores

# --- the checks, one by one -------------------------------------------------------------------


def test_not_empty() -> None:
    assert quality.not_empty("Paris.") == 1
    assert quality.not_empty("  \n\t") == 0
    assert quality.not_empty("") == 0


def test_has_contexts_and_not_applicable_without_the_column() -> None:
    assert quality.has_contexts(["Paris is in France."]) == 1
    assert quality.has_contexts([]) == 0
    assert quality.has_contexts(["", "  "]) == 0  # blank chunks are nothing retrieved
    # No Contexts at all (blank cell, no column): the check does not apply.
    assert assess_answer("Q?", "A.", None).checks[quality.HAS_CONTEXTS] is None


@pytest.mark.parametrize(
    ("answer", "context_count", "expected"),
    [
        ("Paris [1].", 2, 1),
        ("Paris [1][2], in France [2].", 2, 1),
        ("Paris [1, 2].", 2, 1),
        ("Paris [1-2].", 2, 1),
        ("Paris [^2].", 2, 1),
        # Out of range: above the number of contexts, or 0.
        ("Paris [3].", 2, 0),
        ("Paris [1][3].", 2, 0),
        ("Paris [0].", 2, 0),
        ("Paris [1-3].", 2, 0),
        ("Paris [1].", 0, 0),  # cites a context when none was retrieved
        # No citation at all: seed 002 checks that the answer has citations.
        ("Paris.", 2, 0),
        ("See [the handbook](https://example.com).", 2, 0),  # a link is not a citation
        # Not applicable: an empty answer (not_empty fails it), or nothing to cite and no
        # citation.
        ("", 2, None),
        ("Paris.", 0, None),
    ],
)
def test_citations(answer: str, context_count: int, expected: int | None) -> None:
    assert quality.citations(answer, context_count) == expected


def test_cited_numbers_in_order_ranges_by_their_ends() -> None:
    assert cited_numbers("a [2] b [1, 3] c [4-6] d [^7]\ne [x] f") == [2, 1, 3, 4, 6, 7]
    assert cited_numbers("no citation") == []


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("The premium is $604.", 1),
        ("Unable to generate an answer.", 0),  # seed 002's phrase
        ("AS AN AI, I have no opinion.", 0),  # any case
        ("I  cannot\nanswer that.", 0),  # any whitespace
        ("I can’t answer this.", 0),  # a curly apostrophe is an apostrophe
        ("As an AIrline, we fly.", 1),  # whole words only
        ("", None),  # an empty answer: not_empty fails it
    ],
)
def test_no_fallback_with_the_default_phrases(answer: str, expected: int | None) -> None:
    assert quality.no_fallback(answer) == expected


def test_no_fallback_with_own_phrases_replaces_the_defaults_and_none_turns_it_off() -> None:
    own = quality.FallbackPhrases.of(["Sorry, I could not find", "no results"])
    assert quality.no_fallback("Sorry, I could not find it.", own) == 0
    assert quality.no_fallback("No results.", own) == 0
    assert quality.no_fallback("Unable to generate.", own) == 1  # defaults replaced
    assert quality.no_fallback("Unable to generate.", quality.FallbackPhrases.of([])) is None
    assert quality.parse_phrase_list(" a , ,b c,") == ("a", "b c")


@pytest.mark.parametrize(
    ("scores", "minimum", "expected"),
    [
        ((0.9, 0.7), 0.5, 1),
        ((0.9, 0.5), 0.5, 1),  # equal passes
        ((0.9, 0.49), 0.5, 0),
        ((0.3,), 0.2, 1),
        ((-0.1,), 0.0, 0),
        ((), 0.5, None),  # no score reported
    ],
)
def test_retrieval_score(scores: tuple[float, ...], minimum: float, expected: int | None) -> None:
    assert quality.retrieval_score(scores, minimum) == expected


@pytest.mark.parametrize(
    "question",
    [
        "List the rules that apply.",
        "Can you enumerate the discounts?",
        "What are the steps to reset a password?",
        "Explain step by step how to file a claim.",
        "Which offices are open on Sunday?",
        "Name three rivers in France.",
    ],
)
def test_list_questions_need_a_list(question: str) -> None:
    assert quality.asks_for_list(question)
    assert quality.list_format(question, "- Rule C-1\n- Rule C-2") == 1
    assert quality.list_format(question, "1. Open the form\n2) Sign it") == 1
    assert quality.list_format(question, "Rule C-1 and Rule C-2 apply.") == 0
    assert quality.list_format(question, "- Rule C-1 only") == 0  # one item is not a list
    assert quality.list_format(question, "") is None  # not_empty fails it


@pytest.mark.parametrize(
    "question",
    [
        "What is the premium?",
        "Which office is in Paris?",  # one thing
        "Who is on the board? Are they paid?",  # "which … are" must be in one sentence
        "Name the author.",
    ],
)
def test_other_questions_are_not_list_questions(question: str) -> None:
    assert not quality.asks_for_list(question)
    assert quality.list_format(question, "Paris.") is None


def test_assess_answer_passes_when_every_applicable_check_passes() -> None:
    assessment = assess_answer(
        "What is the premium?", "It is $604 [1].", ["Rate table: $604."], [0.91]
    )
    assert assessment.checks == {
        quality.NOT_EMPTY: 1,
        quality.HAS_CONTEXTS: 1,
        quality.CITATIONS: 1,
        quality.NO_FALLBACK: 1,
        quality.RETRIEVAL_SCORE: 1,
        quality.LIST_FORMAT: None,
    }
    assert (assessment.passed, assessment.failures) == (1, ())


def test_assess_answer_names_the_failed_checks_in_column_order() -> None:
    assessment = assess_answer(
        "List the rules.",
        "As an AI I think rule C-1 [4].",
        ["Rules: C-1, C-2."],
        [0.2],
        fallback_phrases=["as an ai"],
        min_retrieval_score=0.3,
    )
    assert assessment.passed == 0
    assert assessment.failures == (
        quality.CITATIONS,
        quality.NO_FALLBACK,
        quality.RETRIEVAL_SCORE,
        quality.LIST_FORMAT,
    )


@pytest.mark.parametrize(
    ("arguments", "options", "check", "why"),
    [
        (("Q?", "A.", None), {}, quality.HAS_CONTEXTS, "no contexts are reported"),
        (("Q?", "A.", None), {}, quality.CITATIONS, "no contexts are reported"),
        (("Q?", "A.", ["c"]), {}, quality.RETRIEVAL_SCORE, "no retrieval scores are reported"),
        (("Q?", "A.", ["c"], []), {}, quality.RETRIEVAL_SCORE, "the retrieval scores are empty"),
        (("List them.", " ", ["c"]), {}, quality.CITATIONS, "the answer is empty"),
        (("List them.", " ", ["c"]), {}, quality.NO_FALLBACK, "the answer is empty"),
        (("List them.", " ", ["c"]), {}, quality.LIST_FORMAT, "the answer is empty"),
        (("Q?", "A.", []), {}, quality.CITATIONS, "nothing was retrieved"),
        (
            ("Q?", "A.", ["c"]),
            {"require_citations": False},
            quality.CITATIONS,
            "citations are not required",
        ),
        (
            ("Q?", "A.", ["c"]),
            {"fallback_phrases": []},
            quality.NO_FALLBACK,
            "phrase list is empty",
        ),
        (("Q?", "A.", ["c"]), {}, quality.LIST_FORMAT, "does not ask for a list"),
    ],
)
def test_a_check_that_does_not_apply_says_why(
    arguments: tuple, options: dict, check: str, why: str
) -> None:
    assessment = assess_answer(*arguments, **options)

    assert assessment.checks[check] is None
    assert why in assessment.not_applicable[check]
    # Exactly the checks without a value have a reason.
    assert set(assessment.not_applicable) == {
        name for name, value in assessment.checks.items() if value is None
    }


def test_quality_failures_is_never_a_metric_of_a_results_table() -> None:
    headers = ["Question Number", "quality_pass", quality.FAILURES]
    rows = [
        TableRow(1, {"Question Number": "1", "quality_pass": "1", quality.FAILURES: ""}),
        TableRow(2, {"Question Number": "2", "quality_pass": "1", quality.FAILURES: ""}),
    ]
    scores = build_run_scores("run.csv", headers, rows)
    assert list(scores.metrics) == ["quality_pass"]
    assert scores.empty_columns == ()


# --- the Retrieval Scores cell ----------------------------------------------------------------


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=12))
def test_score_lists_read_back_as_written(scores: list[float]) -> None:
    assert parse_score_list(json.dumps(scores)) == tuple(scores)


@given(st.text(max_size=40))
def test_a_score_cell_is_scores_none_or_a_score_list_error(text: str) -> None:
    try:
        parsed = parse_score_list(text)
    except ScoreListError:
        return
    assert parsed is None or all(isinstance(score, float) for score in parsed)


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("0.9", "is not a JSON array"),
        ("[0.9, high]", "is not JSON"),
        ('[0.9, "0.8"]', 'item 2 ("0.8") is not a number'),
        ("[0.9, null]", "item 2 (null) is not a number"),
        ("[true]", "item 1 (true) is not a number"),
        ("[NaN]", "item 1 (nan) is not a finite number"),
    ],
)
def test_malformed_score_cells(cell: str, reason: str) -> None:
    with pytest.raises(ScoreListError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse_score_list(cell)
    assert parse_score_list("  ") is None
    assert parse_score_list("[]") == ()
    assert parse_score_list("[1, 0.25]") == (1.0, 0.25)


# --- through rag-eval evaluate --metrics quality ----------------------------------------------

QUESTIONS = {
    1: "What is the annual premium?",
    2: "List the rules that apply.",
    3: "Which offices are open on Sunday?",
    4: "Who approves travel?",
    5: "When did the Lyon office open?",
}
ANSWERS = {
    # every applicable check passes
    1: ("The premium is $604 [1][2].", ["Rate table.", "Factor table."], [0.82, 0.61]),
    # citation out of range, a low score, but a list
    2: ("- Rule C-1 [1]\n- Rule C-2 [3]", ["Rules C-1 and C-2."], [0.31]),
    # a fallback, nothing retrieved, no list, no score reported
    3: ("As an AI, I cannot say.", [], None),
    # empty answer; Contexts not reported
    4: ("", None, None),
    # no citation
    5: ("In March 2019.", ["The Lyon office opened in March 2019."], [0.77]),
}


def write_quality_inputs(directory: Path, answers: dict = ANSWERS, scores: bool = True) -> None:
    write_csv(directory / "questions.csv", ["Question Number", "Question"], QUESTIONS.items())
    write_csv(
        directory / "ground_truth.csv",
        ["Question Number", "Ground Truth"],
        [[number, "truth"] for number in QUESTIONS],
    )
    header = ["Question Number", "RAG Answer", "Contexts"]
    if scores:
        header.append("Retrieval Scores")
    rows = []
    for number, (answer, contexts, retrieval_scores) in answers.items():
        row = [number, answer, "" if contexts is None else json.dumps(contexts)]
        if scores:
            row.append("" if retrieval_scores is None else json.dumps(retrieval_scores))
        rows.append(row)
    write_csv(directory / "rag_answers.csv", header, rows)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_quality_inputs(tmp_path)
    return space


QUALITY_COLUMNS = [
    "quality_not_empty",
    "quality_has_contexts",
    "quality_citations",
    "quality_no_fallback",
    "quality_retrieval_score",
    "quality_list_format",
    "quality_pass",
    "Quality Failures",
]


def checks(row: dict[str, str]) -> list[str]:
    return [row[column] for column in QUALITY_COLUMNS]


def test_quality_family_without_a_key_or_a_call(workspace: Workspace) -> None:
    result = run_cli(["evaluate", "--metrics", "quality", "--json", "--yes"])

    assert result.exit_code == 0, result.output
    assert "Proceed?" not in result.stderr
    results = only_results(workspace.directory)
    item_columns = ["Question Number", "Question", "Ground Truth", "RAG Answer"]
    assert results.header == [*item_columns, *QUALITY_COLUMNS]
    assert checks(results.row(1)) == ["1", "1", "1", "1", "1", "", "1", ""]
    assert checks(results.row(2)) == [
        *("1", "1", "0", "1", "0", "1", "0"),
        "quality_citations; quality_retrieval_score",
    ]
    assert checks(results.row(3)) == [
        *("1", "0", "", "0", "", "0", "0"),
        "quality_has_contexts; quality_no_fallback; quality_list_format",
    ]
    assert checks(results.row(4)) == ["0", "", "", "", "", "", "0", "quality_not_empty"]
    assert checks(results.row(5)) == ["1", "1", "0", "1", "1", "", "0", "quality_citations"]

    # Each check's pass rate over the questions it applies to.
    assert results.summary["quality_not_empty"] == "4/5 (80%)"
    assert results.summary["quality_has_contexts"] == "3/4 (75%)"
    assert results.summary["quality_citations"] == "1/3 (33%)"
    assert results.summary["quality_no_fallback"] == "3/4 (75%)"
    assert results.summary["quality_retrieval_score"] == "2/3 (67%)"
    assert results.summary["quality_list_format"] == "1/2 (50%)"
    assert results.summary["quality_pass"] == "1/5 (20%)"
    assert "Quality Failures" not in results.summary
    assert "quality_pass" in result.stdout  # the terminal table
    payload = json.loads(results.path.with_suffix(".json").read_text("utf-8"))
    assert payload["summary"]["quality_pass"]["rate"] == pytest.approx(0.2)
    assert payload["rows"][0]["Quality Failures"] is None
    assert payload["rows"][1]["quality_citations"] == 0
    # Not-applicable cells are normal, not warnings: each is noted with why, in the table
    # after the summary and in the log.
    assert "quality_list_format" not in result.stderr
    assert "left empty" not in result.stderr
    table = " ".join(result.stdout[result.stdout.index("Not applicable") :].split())
    assert "quality_list_format │ 2 of 5 │ the question does not ask for a list" in table
    log = " ".join((Path.cwd() / "rag_eval.log").read_text(encoding="utf-8").split())
    assert "quality_has_contexts: left empty for 1 of 5 question(s): no Contexts in " in log
    assert (
        "quality_list_format: left empty for 3 of 5 question(s): the question does not ask "
        "for a list (question 1, 5); the answer is empty (quality_not_empty fails) (question 4)"
    ) in log


def test_without_a_retrieval_scores_column_the_check_is_empty(workspace: Workspace) -> None:
    write_quality_inputs(workspace.directory, scores=False)

    result = run_cli(["evaluate", "--metrics", "quality", "--yes"])

    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    assert [row["quality_retrieval_score"] for row in results.rows] == [""] * 5
    assert results.summary["quality_retrieval_score"] == "0/0 (n/a)"
    log = (workspace.directory / "rag_eval.log").read_text(encoding="utf-8")
    assert "no Retrieval Scores in rag_answers.csv" in " ".join(log.split())
    assert "Not applicable" in result.stdout


def test_min_retrieval_score(workspace: Workspace) -> None:
    result = run_cli(["evaluate", "--metrics", "quality", "--min-retrieval-score", "0.3", "--yes"])

    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    assert results.row(2)["quality_retrieval_score"] == "1"  # 0.31 >= 0.3
    assert results.row(2)["Quality Failures"] == "quality_citations"


def test_fallback_phrases_as_a_comma_list_a_file_or_none(workspace: Workspace) -> None:
    answers = {**ANSWERS, 5: ("Sorry, nothing found [1].", ["Lyon."], [0.9])}
    write_quality_inputs(workspace.directory, answers)
    phrase_file = workspace.directory / "fallbacks.txt"
    phrase_file.write_text("# one phrase per line\nsorry, nothing found\n\n", "utf-8")

    runs = {
        "list": ["--fallback-phrases", "nothing found,unknown"],
        "file": ["--fallback-phrases", f"@{phrase_file}"],
        "off": ["--fallback-phrases", ""],
    }
    rows = {}
    for name, options in runs.items():
        output = workspace.directory / name
        result = run_cli(
            ["evaluate", "--metrics", "quality", "--output-dir", str(output), "--yes", *options]
        )
        assert result.exit_code == 0, result.output
        (path,) = results_files(output)
        table = read_results(path)
        rows[name] = {number: table.row(number)["quality_no_fallback"] for number in (3, 5)}
    # The list replaces the defaults: "As an AI" passes, "nothing found" fails.
    assert rows["list"] == {3: "1", 5: "0"}
    # A file holds phrases with commas.
    assert rows["file"] == {3: "1", 5: "0"}
    # An empty list turns the check off.
    assert rows["off"] == {3: "", 5: ""}


def test_a_missing_phrase_file_is_a_one_line_error(workspace: Workspace) -> None:
    result = run_cli(["evaluate", "--metrics", "quality", "--fallback-phrases", "@nope.txt"])

    assert result.exit_code == 2
    assert "Error: Cannot read nope.txt" in " ".join(result.stderr.split())
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (
            "[0.9, high]",
            "rag_answers.csv line 2: 'Retrieval Scores' '[0.9, high]' is not JSON. Write a JSON "
            "array of numbers, one per context, such as [0.82, 0.61], or leave the cell blank "
            "when the scores are not known",
        ),
        (
            "[0.9]",
            "rag_answers.csv line 2: 'Retrieval Scores' has 1 score(s) for 2 context(s). Give "
            "one score per context, in the order of Contexts, or leave the cell blank",
        ),
    ],
)
def test_a_malformed_retrieval_scores_cell_is_a_one_line_error(
    workspace: Workspace, cell: str, message: str
) -> None:
    write_csv(
        workspace.directory / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts", "Retrieval Scores"],
        [[1, "Paris [1].", json.dumps(["a", "b"]), cell]],
    )

    result = run_cli(["evaluate", "--metrics", "quality", "--yes"])

    assert result.exit_code == 2
    assert f"Error: {message}" in " ".join(result.stderr.split())
    assert "Traceback" not in result.output
    assert not (workspace.directory / "Evaluation_Runs").exists()


def test_scores_without_contexts_are_kept(workspace: Workspace) -> None:
    write_csv(
        workspace.directory / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Retrieval Scores"],
        [[1, "Paris.", "[0.2, 0.9]"]],
    )

    result = run_cli(["evaluate", "--metrics", "quality", "--yes"])

    assert result.exit_code == 0, result.output
    row = only_results(workspace.directory).row(1)
    assert (row["quality_has_contexts"], row["quality_retrieval_score"]) == ("", "0")


def test_quality_pass_as_a_ci_gate(workspace: Workspace) -> None:
    gated = run_cli(["evaluate", "--metrics", "quality", "--fail-under", "quality_pass=0.5"])
    assert gated.exit_code == 3
    assert "quality_pass" in gated.stderr

    text_column = run_cli(
        ["evaluate", "--metrics", "quality", "--fail-under", "Quality Failures=0.5"]
    )
    assert text_column.exit_code == 2


def test_citations_not_required_checks_only_the_numbers_cited() -> None:
    assert quality.citations("Paris.", 2, required=False) is None
    assert quality.citations("Paris [2].", 2, required=False) == 1
    assert quality.citations("Paris [3].", 2, required=False) == 0


def test_a_run_whose_answers_never_cite_says_how_to_turn_the_check_off(
    workspace: Workspace,
) -> None:
    uncited = {
        number: (answer.split(" [")[0], contexts, scores)
        for number, (answer, contexts, scores) in ANSWERS.items()
    }
    write_quality_inputs(workspace.directory, uncited)

    required = run_cli(["evaluate", "--metrics", "quality", "--yes"])
    assert required.exit_code == 0, required.output
    assert (
        "quality_citations: none of the 5 answer(s) cites a source as [n], so the check fails "
        "for 3. If your RAG system is not asked to cite, run with --no-require-citations"
    ) in " ".join(required.stderr.split())

    output = workspace.directory / "optional"
    optional = run_cli(
        [
            "evaluate",
            "--metrics",
            "quality",
            "--no-require-citations",
            "--output-dir",
            str(output),
            "--yes",
        ]
    )
    assert optional.exit_code == 0, optional.output
    assert "--no-require-citations" not in optional.stderr
    (path,) = results_files(output)
    table = read_results(path)
    assert [row["quality_citations"] for row in table.rows] == [""] * 5
    assert table.row(1)["quality_pass"] == "1"
