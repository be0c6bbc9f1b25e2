"""The report's pure parts: diagnostics thresholds, histograms, label columns, the consensus
chart, the contexts, and the escaping of JSON inside a script."""

from __future__ import annotations

import json
import math
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.inputs.records import AnswerRow, GroundTruthRow
from rag_evaluator.report.contexts import RunContexts, contexts_data, match_contexts
from rag_evaluator.report.diagnostics import (
    DIAGNOSTIC_RULES,
    QuestionEvidence,
    apply_rule,
    run_diagnostics,
)
from rag_evaluator.report.distributions import consensus_summary, histogram
from rag_evaluator.report.html import escape_text, script_json
from rag_evaluator.report.model import (
    BINARY,
    CONTINUOUS,
    LABELS,
    RunTable,
    build_report_model,
    compact_number,
    is_label_column,
    label_tone,
    run_date_from_name,
)
from rag_evaluator.results.run_scores import TableRow
from rag_evaluator.text.no_information import opens_with_no_information

RULES = {rule.key: rule for rule in DIAGNOSTIC_RULES}


def evidence(number: int, answer: str = "An answer.", truth: str = "The truth.", **metrics: float):
    return QuestionEvidence(number, answer, truth, metrics)


# -- diagnostics ---------------------------------------------------------------------------------


def test_numbers_wrong_needs_high_keyword_coverage_and_low_number_match_at_the_thresholds() -> None:
    columns = ["keyword_coverage", "number_match"]
    questions = [
        evidence(1, keyword_coverage=0.7, number_match=0.49),  # both at the edge: flagged
        evidence(2, keyword_coverage=0.69, number_match=0.0),  # coverage too low
        evidence(3, keyword_coverage=1.0, number_match=0.5),  # numbers not low enough
        evidence(4, keyword_coverage=1.0),  # no number_match value: not checked
    ]
    result = apply_rule(RULES["numbers"], columns, questions)
    assert result.flagged == (1,)
    assert result.checked == 3
    assert result.criterion() == "keyword_coverage ≥ 0.7 and number_match < 0.5"


def test_thresholds_of_seed_002_are_strict_where_the_guide_says_under_or_over() -> None:
    columns = ["context_relevance", "hallucination", "answer_relevance", "answer_correctness"]
    questions = [
        evidence(1, context_relevance=0.5, hallucination=0.3, answer_relevance=0.6,
                 answer_correctness=0.6),
        evidence(2, context_relevance=0.49, hallucination=0.31, answer_relevance=0.59,
                 answer_correctness=0.59),
    ]  # fmt: skip
    results = {result.rule.key: result for result in run_diagnostics(columns, questions)}
    for key in ("offtopic", "hallucination", "relevance", "correctness"):
        assert results[key].flagged == (2,), key


def test_columns_are_found_in_any_spelling_and_faithfulness_by_its_name() -> None:
    columns = ["Keyword Coverage", "ROUGE_L", "ragas_faithfulness"]
    questions = [
        evidence(1, **{"ROUGE_L": 0.9, "ragas_faithfulness": 0.2}),
        evidence(2, **{"Keyword Coverage": 0.1, "ROUGE_L": 0.2, "ragas_faithfulness": 0.1}),
        evidence(3, **{"ROUGE_L": 0.9, "ragas_faithfulness": 0.9}),
    ]
    result = apply_rule(RULES["grounding"], columns, questions)
    assert result.columns == (("Keyword Coverage", "ROUGE_L"), ("ragas_faithfulness",))
    assert result.flagged == (1,)


def test_a_rule_whose_columns_are_missing_is_not_applied_and_says_what_it_needs() -> None:
    result = apply_rule(RULES["grounding"], ["rouge1"], [evidence(1, rouge1=1.0)])
    assert not result.applied
    assert result.missing == ("a faithfulness column",)
    assert result.flagged == ()


@pytest.mark.parametrize(
    ("answer", "truth", "dont_know_column", "flagged"),
    [
        ("I don't know.", "25 days.", None, True),
        ("I couldn't find any information about pets in the handbook.", "No pets.", None, True),
        ("Unknown", "25 days.", None, True),
        ("25 days of paid time off.", "25 days.", None, False),
        ("I don't know.", "No information is available.", None, False),  # truth has no answer
        ("I don't know.", "", None, False),
        ("Something vague.", "25 days.", 1.0, True),  # the dont_know column says so
    ],
)
def test_dont_know_answers_are_flagged_only_when_the_ground_truth_answers(
    answer: str, truth: str, dont_know_column: float | None, flagged: bool
) -> None:
    columns = ["dont_know"] if dont_know_column is not None else []
    metrics = {"dont_know": dont_know_column} if dont_know_column is not None else {}
    question = QuestionEvidence(1, answer, truth, metrics)
    result = apply_rule(RULES["dontknow"], columns, [question])
    assert result.flagged == ((1,) if flagged else ())


def test_a_dont_know_label_from_a_classification_column_counts() -> None:
    question = QuestionEvidence(1, "It is hard to say.", "25 days.", {}, labels=("DONT_KNOW",))
    assert apply_rule(RULES["dontknow"], [], [question]).flagged == (1,)


def test_opening_no_information_statements_are_recognised_however_they_go_on() -> None:
    assert opens_with_no_information("I couldn't find any information about pets.")
    assert opens_with_no_information("Paris. There is no information about Lyon.")
    assert not opens_with_no_information("The information is in section 4.")


# -- distributions -------------------------------------------------------------------------------


def test_histogram_bins_hold_their_lower_edge_and_the_last_holds_one() -> None:
    chart = histogram("rouge1", 5, [0.0, 0.1, 0.0999, 0.95, 1.0, 1.0, 0.5])
    counts = [bin_.count for bin_ in chart.bins]
    assert counts == [2, 1, 0, 0, 0, 1, 0, 0, 0, 3]
    assert chart.bins[-1].last and not chart.bins[0].last
    assert chart.count == 7
    assert chart.mean == pytest.approx(sum([0.0, 0.1, 0.0999, 0.95, 1.0, 1.0, 0.5]) / 7)


def test_histogram_of_values_outside_zero_one_spans_their_range() -> None:
    chart = histogram("latency", 1, [2.0, 4.0, 12.0])
    assert chart.bins[0].low == 2.0 and chart.bins[-1].high == 12.0
    assert sum(bin_.count for bin_ in chart.bins) == 3
    single = histogram("constant", 1, [3.0, 3.0])
    assert [bin_.count for bin_ in single.bins] == [2]


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=50))
def test_every_value_lands_in_exactly_one_bin(values: list[float]) -> None:
    chart = histogram("m", 1, values)
    assert sum(bin_.count for bin_ in chart.bins) == len(values)


def test_label_columns_are_few_short_values() -> None:
    assert is_label_column(["CORRECT", "WRONG", "DONT_KNOW", "", "CORRECT"])
    assert is_label_column(["A", "B+", "C"])
    assert not is_label_column(["The answer states the same facts as the ground truth."])
    assert not is_label_column([str(n) for n in range(13)])
    assert not is_label_column(["", " "])
    assert label_tone("CORRECT", 0) == "pass"
    assert label_tone("wrong", 1) == "fail"
    assert label_tone("DON'T KNOW", 2) == "none"
    assert label_tone("B", 9) == "l1"


def test_consensus_counts_splits_and_overturned_first_verdicts() -> None:
    headers = ["Question Number", "Precision", "Recall", "Accuracy", "Consensus", "Votes", "Error"]

    def row(number: int, scores: str, consensus: str, votes: str = "", error: str = "") -> TableRow:
        p, r, a = scores.split("/") if scores else ("", "", "")
        cells = {"Precision": p, "Recall": r, "Accuracy": a, "Consensus": consensus}
        return TableRow(number, {**cells, "Votes": votes, "Error": error})

    rows = [
        row(1, "1/1/1", "no"),
        row(2, "0/1/1", "yes", "first 1/1/1; votes 0/1/1, 1/1/1, 0/1/1"),
        row(3, "1/1/1", "yes", "first 1/0/1; votes 1/1/1, 1/1/1, error"),
        row(4, "", "no", error="the model refused"),
    ]
    summary = consensus_summary(headers, rows)
    assert summary is not None
    assert (summary.hedged, summary.judged, summary.vote_errors) == (2, 3, 1)
    precision, recall, accuracy = summary.splits
    assert (precision.unanimous, precision.split, precision.overturned) == (1, 1, 1)
    assert (recall.unanimous, recall.split, recall.overturned) == (2, 0, 1)
    assert (accuracy.unanimous, accuracy.split, accuracy.overturned) == (2, 0, 0)
    assert consensus_summary(["Question Number", "rouge1"], rows) is None


# -- small parsers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [("1.0000", "1"), ("0.5000", "0.5"), ("0.6291", "0.6291"), ("0.0000", "0"),
     ("-0.1200", "-0.12"), ("10", "10"), ("1e-05", "1e-05"), ("", ""), ("n/a", "n/a")],
)  # fmt: skip
def test_metric_cells_drop_trailing_zeros_only(text: str, shown: str) -> None:
    assert compact_number(text) == shown


@given(st.floats(min_value=-1000, max_value=1000, allow_nan=False))
def test_a_compacted_number_keeps_its_value(value: float) -> None:
    text = f"{value:.4f}"
    assert float(compact_number(text)) == float(text)


def test_the_run_date_comes_from_the_results_file_name() -> None:
    assert run_date_from_name("precision_scores_20261123_014412") == "2026-11-23 01:44:12"
    assert run_date_from_name("precision_scores_20261123_014412_2") == "2026-11-23 01:44:12"
    assert run_date_from_name("baseline") is None


@given(
    st.recursive(
        st.text() | st.integers() | st.none(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)
    )
)
def test_json_for_a_script_element_holds_no_character_that_could_end_it(data: object) -> None:
    text = script_json(data)
    for character in ("<", ">", "&", "\u2028", "\u2029"):
        assert character not in text
    assert json.loads(text) == data


class _CellText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        self.tags.append("/" + tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@given(st.text())
def test_escaped_cell_text_reads_back_as_itself_and_opens_no_element(text: str) -> None:
    parser = _CellText()
    parser.feed("<td><p>" + escape_text(text) + "<td>")
    parser.close()
    assert parser.tags == ["td", "p", "td"]
    assert "".join(parser.text) == text


def test_json_for_a_script_element_escapes_a_closing_script_tag() -> None:
    text = script_json({"answer": "</script><script>alert(1)</script>"})
    assert "</script" not in text.lower()
    assert "\\u003c/script\\u003e" in text


# -- contexts ------------------------------------------------------------------------------------


def test_contexts_are_taken_only_where_the_files_agree_with_the_results() -> None:
    rows = [
        TableRow(1, {"RAG Answer": "Paris  is the capital.", "Ground Truth": "Paris."}),
        TableRow(2, {"RAG Answer": "Lyon.", "Ground Truth": "Lyon."}),
        TableRow(3, {"RAG Answer": "Nice.", "Ground Truth": "Nice."}),
    ]
    answers = {
        1: AnswerRow(1, "Paris is the capital.", ["chunk a", "chunk b"]),
        2: AnswerRow(2, "Marseille.", ["chunk c"]),  # another run's answer
        3: AnswerRow(3, "Nice.", None),  # no contexts at all
    }
    truth = {
        1: GroundTruthRow(1, "Paris.", ["chunk a"]),
        2: GroundTruthRow(2, "Edited truth.", ["chunk c"]),
    }
    matched = match_contexts(rows, answers, truth)
    assert matched.contexts.retrieved == {1: ("chunk a", "chunk b")}
    assert matched.contexts.golden == {1: ("chunk a",)}
    assert matched.answers_differ == (2,)
    assert matched.ground_truth_differs == (2,)


def test_each_chunk_is_stored_once_and_golden_matches_are_marked() -> None:
    def table(label: str, retrieved: dict[int, list[str]]) -> RunTable:
        return RunTable(
            label,
            label,
            ["Question Number"],
            [TableRow(1, {}), TableRow(2, {})],
            contexts=RunContexts(retrieved, {1: ["shared  chunk"], 2: ["missed"]}),
        )

    tables = [table("a", {1: ["shared chunk", "other"], 2: ["other"]}), table("b", {1: ["other"]})]
    data = contexts_data([([1, 2], run.contexts) for run in tables])
    assert data is not None
    assert sorted(data.pool) == ["missed", "other", "shared  chunk", "shared chunk"]
    pool = list(data.pool)
    assert data.retrieved[0][1] == (
        (pool.index("shared chunk"), True),
        (pool.index("other"), False),
    )
    assert data.golden[0][1] == ((pool.index("shared  chunk"), True),)
    assert data.golden[1][1] == ((pool.index("shared  chunk"), False),)
    assert data.golden[0][2] == ((pool.index("missed"), False),)


# -- the model -----------------------------------------------------------------------------------


def test_columns_get_roles_cards_and_filters_generically() -> None:
    headers = ["Question Number", "Question", "Ground Truth", "RAG Answer", "Precision",
               "rouge1", "Verdict", "Grade", "Judge Notes", "empty_metric"]  # fmt: skip
    rows = [
        TableRow(n, {"Question": f"Q{n}?", "Ground Truth": "T", "RAG Answer": "A",
                     "Precision": str(n % 2), "rouge1": f"{n / 10:.4f}",
                     "Verdict": ["CORRECT", "WRONG", "DONT_KNOW"][n % 3], "Grade": "AB"[n % 2],
                     "Judge Notes": "x" * 70, "empty_metric": ""})
        for n in range(1, 7)
    ]  # fmt: skip
    model = build_report_model(
        [RunTable("run.csv", "runs/run.csv", headers, rows, summary=[("Total Questions", "6")])],
        title="t",
        generated_at="now",
        tool_version="0",
    )
    (run,) = model.runs
    roles = {column.name: column.role for column in run.columns}
    assert roles["Precision"] == BINARY
    assert roles["rouge1"] == CONTINUOUS
    assert roles["Verdict"] == LABELS and roles["Grade"] == LABELS
    assert roles["Judge Notes"] == "long"
    assert "empty_metric" not in roles and "empty_metric" in run.empty_columns
    cards = {card.column: card for card in run.cards}
    assert cards["Precision"].headline == "50%"
    assert cards["Precision"].interval is None
    assert {(s.label, s.count) for s in cards["Verdict"].segments} == {
        ("CORRECT", 2), ("WRONG", 2), ("DONT_KNOW", 2)
    }  # fmt: skip
    assert [chart.column for chart in run.histograms] == ["rouge1"]
    values = {option.value: option.count for option in run.filters}
    precision_index = [column.name for column in run.columns].index("Precision")
    assert values[f"v:{precision_index}:0"] == 3
    verdict_index = [column.name for column in run.columns].index("Verdict")
    assert values[f"v:{verdict_index}:DONT_KNOW"] == 2
    assert math.isclose(
        next(c for c in run.cards if c.column == "rouge1").value or 0, sum(range(1, 7)) / 60
    )
