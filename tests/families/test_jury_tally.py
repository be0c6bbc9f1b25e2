"""A jury's summary lines: the family's own lines over the verdicts, each juror's rates,
pairwise agreement, Fleiss' kappa and the split questions; written and read back."""

from __future__ import annotations

import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from results_support import tally_rows
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from rag_evaluator.families.base import FamilyResult, QuestionRecord
from rag_evaluator.families.grading.factual_accuracy import (
    FactualAccuracyFamily,
    FactualAccuracyResult,
)
from rag_evaluator.families.grading.match import MatchFamily, MatchResult
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores
from rag_evaluator.families.jury.results import JuryResult
from rag_evaluator.families.jury.tally import (
    JuryAgreement,
    JuryTally,
    MetricAgreement,
    PairAgreement,
    jury_table,
)
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.results.reader import read_run_scores
from rag_evaluator.results.rows import ResultRow
from rag_evaluator.results.summary import fraction_line, mean_line
from rag_evaluator.results.writer import results_json, write_results

JUDGE = JudgeFamily("prompt", ())
MATCH = MatchFamily()
FACTUAL = FactualAccuracyFamily()
LABELS = ("haiku", "openai/llama3.1:8b", "sonnet")


def jury_result(family: Any, jurors: list[FamilyResult]) -> JuryResult:
    verdict = family.jury_verdict(jurors)
    return JuryResult(verdict=verdict, jurors=tuple(jurors))


def match(value: bool | None) -> MatchResult:
    if value is None:
        return MatchFamily().unscored("refused", "question")
    return MatchResult(is_matching=value, reasoning="r")


def lines_of(tally: JuryTally) -> dict[str, str]:
    return {line.label: line.value for line in tally.lines()}


# The juror verdicts on "is_matching" of five questions (None: the juror failed).
VOTES = [
    (True, True, True),
    (True, False, True),
    (False, False, None),
    (True, None, False),
    (False, True, True),
]


def test_the_family_lines_describe_the_verdicts_and_the_jury_lines_follow() -> None:
    tally = JuryTally(MATCH, LABELS)
    results = [jury_result(MATCH, [match(value) for value in votes]) for votes in VOTES]
    for number, result in zip((3, 5, 8, 13, 21), results, strict=True):
        tally.add_question(number, result)
    lines = tally.lines()
    own = MATCH.summary([result.verdict for result in results])  # type: ignore[misc]
    assert lines[: len(own)] == own
    values = lines_of(tally)
    # Verdicts: 1, 1, 0, tie (empty), 1 -> 3 of 4 judged.
    assert values["is_matching"].startswith("3/4 (75%)")
    assert values["Juror haiku is_matching"].startswith("3/5 (60%)")
    assert values["Juror openai/llama3.1:8b is_matching"].startswith("2/4 (50%)")
    assert values["Juror sonnet is_matching"].startswith("3/4 (75%)")
    # haiku and sonnet both rated 1, 2, 4 and 5: alike on 1 and 2, each with three 1s:
    # p_o = 1/2, p_e = (3/4)^2 + (1/4)^2 = 5/8, kappa = (1/2 - 5/8) / (3/8) = -1/3.
    assert values["Agreement haiku / sonnet is_matching"] == "50.0% (2/4) kappa -0.33"
    # haiku and the llama on 1, 2, 3 and 5: alike on 1 and 3, each half 1s: kappa 0.
    assert values["Agreement haiku / openai/llama3.1:8b is_matching"] == "50.0% (2/4) kappa 0.00"
    # Every juror rated 1, 2 and 5: P = (1 + 1/3 + 1/3) / 3 = 5/9 against chance
    # (7/9)^2 + (2/9)^2 = 53/81, kappa = (45/81 - 53/81) / (28/81) = -2/7.
    assert values["Fleiss Kappa is_matching"] == "-0.29 over 3 questions"
    assert values["Jury Split is_matching"] == "3 of 5 questions: 5 / 13 / 21"
    assert all("," not in line.value for line in lines)
    labels = [line.label for line in lines]
    assert len(labels) == len(set(labels))


def test_undefined_kappas_say_n_a() -> None:
    tally = JuryTally(MATCH, LABELS[:2])
    tally.add(jury_result(MATCH, [match(True), match(True)]))
    values = lines_of(tally)
    assert values["Agreement haiku / openai/llama3.1:8b is_matching"] == "100.0% (1/1) kappa n/a"
    assert values["Fleiss Kappa is_matching"] == "n/a over 1 question"
    assert values["Jury Split is_matching"] == "0 of 1 question"


def test_an_unscored_jury_counts_as_unscored_in_the_familys_lines() -> None:
    tally = JuryTally(MATCH, LABELS)
    failed = [match(None)] * 3
    tally.add(JuryResult(verdict=None, jurors=tuple(failed), error="refused"))
    values = lines_of(tally)
    assert values["Match Unscored"] == "1"
    assert values["Juror haiku is_matching"] == "0/0 (n/a)"
    assert values["Agreement haiku / sonnet is_matching"] == "n/a (0/0) kappa n/a"


def test_at_most_ten_split_questions_are_named() -> None:
    tally = JuryTally(MATCH, LABELS)
    for _ in range(12):
        tally.add(jury_result(MATCH, [match(True), match(False), match(True)]))
    assert lines_of(tally)["Jury Split is_matching"] == (
        "12 of 12 questions: 1 / 2 / 3 / 4 / 5 / 6 / 7 / 8 / 9 / 10 / …"
    )
    assert tally.agreement().metrics[0].split_count == 12


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(*[st.sampled_from([True, False, None])] * 3),
        min_size=1,
        max_size=30,
    )
)
def test_agreement_figures_match_scikit_learn_and_statsmodels(
    votes: list[tuple[bool | None, ...]],
) -> None:
    tally = JuryTally(MATCH, LABELS)
    for row in votes:
        tally.add(jury_result(MATCH, [match(value) for value in row]))
    [figures] = tally.agreement().metrics
    for pair in figures.pairs:
        first, second = LABELS.index(pair.first), LABELS.index(pair.second)
        both = [row for row in votes if row[first] is not None and row[second] is not None]
        assert pair.compared == len(both)
        assert pair.agreed == sum(row[first] == row[second] for row in both)
        a = [int(row[first]) for row in both]  # type: ignore[arg-type]
        b = [int(row[second]) for row in both]  # type: ignore[arg-type]
        if len(set(a) | set(b)) < 2:
            assert pair.kappa is None
        else:
            assert pair.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
    complete = [[int(value) for value in row] for row in votes if None not in row]  # type: ignore[arg-type]
    assert figures.rated_by_all == len(complete)
    if len(complete) < 2 or len({value for row in complete for value in row}) < 2:
        assert figures.fleiss_kappa is None
    else:
        counts, _ = aggregate_raters(np.array(complete))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = statsmodels_fleiss(counts, method="fleiss")
        assert figures.fleiss_kappa == pytest.approx(expected, abs=1e-9)
    splits = [
        number
        for number, row in enumerate(votes, start=1)
        if len({value for value in row if value is not None}) > 1
    ]
    assert figures.split_count == len(splits)
    assert figures.split_questions == tuple(splits[:10])
    assert figures.comparable == sum(sum(value is not None for value in row) >= 2 for row in votes)


def factual(correctness: int) -> FactualAccuracyResult:
    accuracy = correctness / 100
    return FactualAccuracyResult(
        correctness=correctness,
        completeness=correctness,
        consistency=correctness,
        accuracy=accuracy,
        grade="C",
    )


def test_scores_give_juror_means_and_agree_once_binarised_at_one_half() -> None:
    tally = JuryTally(FACTUAL, LABELS)
    rows = [(40, 60, 55), (90, 80, 30), (10, 20, 45)]
    for row in rows:
        tally.add(jury_result(FACTUAL, [factual(value) for value in row]))
    values = lines_of(tally)
    haiku = [row[0] / 100 for row in rows]
    assert values["Juror haiku factual_accuracy"] == mean_line("", haiku).value
    # Binarised: (0, 1, 1), (1, 1, 0), (0, 0, 0): haiku and sonnet alike on 1 of 3.
    assert values["Agreement haiku / sonnet factual_accuracy"].startswith("33.3% (1/3)")
    assert values["Jury Split factual_accuracy"] == "2 of 3 questions: 1 / 2"


def test_the_lines_are_written_and_read_back_from_the_results_file(tmp_path: Path) -> None:
    tally = JuryTally(JUDGE, LABELS)
    rows = []
    for number, votes in enumerate([(1, 1, 0), (0, 1, 1), (1, 1, 1)], start=1):
        jurors = [JudgeResult(scores=Scores(vote, 1, vote), summary="s") for vote in votes]
        result = jury_result(JUDGE, jurors)  # type: ignore[arg-type]
        tally.add_question(number, result)
        item = EvaluationItem(number, f"Q{number}?", "T.", "A.")
        rows.append(ResultRow(item, QuestionRecord(number, {"judge": result.verdict})))  # type: ignore[dict-item]
    summary = tally.lines()
    path, _ = write_results(
        tmp_path, datetime(2026, 1, 2, 3, 4, 5), summary, rows, families=[JUDGE], metric_columns=[]
    )
    read_back = read_run_scores(path).summary
    assert list(read_back) == [(line.label, line.value) for line in summary]
    assert "Juror openai/llama3.1:8b Precision" in dict(read_back)
    data = results_json(summary, rows, [JUDGE], [])
    assert data["summary"]["Agreement haiku / sonnet Precision"]["compared"] == 3
    assert data["summary"]["Fleiss Kappa Precision"]["questions"] == 3


class _JuryOfMatches(MatchFamily):
    """What a jury wrapper looks like to the run's tally: JuryResults, the verdict's values."""

    def tally(self) -> JuryTally:  # type: ignore[override]
        return JuryTally(MatchFamily(), LABELS)

    def metric_values(self, result: Any) -> Any:
        return MatchFamily().metric_values(result.verdict or match(None))


def test_the_run_tally_names_split_questions_by_their_numbers() -> None:
    family = _JuryOfMatches()
    rows = []
    for number, votes in zip((4, 9), [(True, True, True), (True, False, True)], strict=True):
        result = jury_result(MATCH, [match(value) for value in votes])
        record = QuestionRecord(number, {"match": result})
        rows.append(ResultRow(EvaluationItem(number, "Q?", "T.", "A."), record))
    lines = {line.label: line.value for line in tally_rows(rows, [family]).family_lines()}
    assert lines["Jury Split is_matching"] == "1 of 2 questions: 9"


def test_the_figures_follow_the_questions_added_after_they_were_asked_for() -> None:
    tally = JuryTally(MATCH, LABELS)
    tally.add(jury_result(MATCH, [match(True), match(True), match(True)]))
    assert tally.agreement().metrics[0].split_count == 0
    assert tally.agreement() is tally.agreement()
    tally.add(jury_result(MATCH, [match(True), match(False), match(True)]))
    assert tally.agreement().metrics[0].split_count == 1
    assert lines_of(tally)["Jury Split is_matching"] == "1 of 2 questions: 2"


def test_the_terminal_table_shows_each_jurors_figure_from_its_numbers() -> None:
    pairs = (PairAgreement("a", "b", 3, 5, 0.2), *(PairAgreement("a", "c", 0, 0, None),) * 2)
    rates = (fraction_line("a", 4, 5), fraction_line("b", 1, 8), fraction_line("c", 0, 0))
    means = (mean_line("a", [0.81234, 0.5]), mean_line("b", []), mean_line("c", [1.0]))
    agreement = JuryAgreement(
        ("a", "b", "c"),
        (
            MetricAgreement("Precision", True, rates, pairs, None, 0, 5, 1, ()),
            MetricAgreement("score", False, means, pairs, 0.5, 5, 5, 0, ()),
        ),
    )
    header, rows = jury_table(agreement)
    assert header == ["", "Precision", "score"]
    # 1/8 is 12.5%: a half rounds up, as in the summary's own text.
    assert rows[:3] == [["1 a", "80%", "0.6562"], ["2 b", "13%", "n/a"], ["3 c", "n/a", "1.0000"]]
    assert rows[3] == ["Agreement 1–2", "60% κ 0.20", "60% κ 0.20"]
    assert rows[-2:] == [["Fleiss κ", "n/a", "0.50"], ["Split", "1 of 5", "0 of 5"]]
