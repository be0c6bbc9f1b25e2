"""A jury's verdict in each model-judged family, from its jurors' results (built directly)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.families.base import FamilyResult, JudgedFamily
from rag_evaluator.families.grading.calls import CORRECT, DONT_KNOW, WRONG
from rag_evaluator.families.grading.classify import ClassifyFamily, ClassifyResult
from rag_evaluator.families.grading.factual_accuracy import (
    FactualAccuracyFamily,
    FactualAccuracyResult,
)
from rag_evaluator.families.grading.match import MatchFamily, MatchResult
from rag_evaluator.families.judge.family import SHORTCUT_NO_INFORMATION, JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores
from rag_evaluator.families.ragas.family import RagasFamily, RagasResult, details_text
from rag_evaluator.families.rubric.family import RubricFamily, RubricResult
from rag_evaluator.families.rubric.rubrics import rubric_from_data
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.checkpoint.store import family_result_from_json, family_result_to_json

RUBRIC = rubric_from_data(
    {
        "criteria": [
            {"name": "coherence", "description": "Clear.", "scale": "1-5"},
            {"name": "harmlessness", "description": "Safe.", "scale": "pass/fail"},
        ]
    }
)
JUDGE = JudgeFamily("prompt", ())
RAGAS = RagasFamily()
FACTUAL = FactualAccuracyFamily()
CLASSIFY = ClassifyFamily()
MATCH = MatchFamily()
RUBRIC_FAMILY = RubricFamily(RUBRIC)
FAMILIES: tuple[JudgedFamily[Any], ...] = (JUDGE, RAGAS, FACTUAL, CLASSIFY, MATCH, RUBRIC_FAMILY)
PAID = {"usage": TokenUsage(900, 80), "calls": 2, "cost_usd": 0.004, "retries": 1}


def failed(family: JudgedFamily[Any], error: str, failure: str = "question") -> FamilyResult:
    return family.unscored(error, failure)


def scored_example(family: JudgedFamily[Any]) -> FamilyResult:
    """One juror's scored result in ``family``, as a cached and paid-for one."""
    examples: dict[str, FamilyResult] = {
        "judge": JudgeResult(scores=Scores(1, 0, 1), summary="s"),
        "ragas": RagasResult(faithfulness=0.5, answer_relevance=0.9, ragas_score=0.7),
        "factual_accuracy": FactualAccuracyResult(
            correctness=80, completeness=60, consistency=90, accuracy=0.76, grade="B"
        ),
        "classify": ClassifyResult(label=CORRECT, reasoning="r"),
        "match": MatchResult(is_matching=True, reasoning="r"),
        "rubric": RubricResult(scores=(("coherence", 4), ("harmlessness", 1))),
    }
    return replace(examples[family.name], cached=True, **PAID)


# -- every family --------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_every_model_judged_family_gives_a_jury_verdict(family: JudgedFamily[Any]) -> None:
    assert type(family).jury_verdict is not JudgedFamily.jury_verdict


@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_no_juror_scored_gives_the_first_jurors_error(family: JudgedFamily[Any]) -> None:
    jurors = [
        failed(family, "overloaded; gave up after 7 calls", "transient"),
        failed(family, "refused", "question"),
        failed(family, "not valid JSON", "question"),
    ]
    verdict = family.jury_verdict(jurors)
    assert verdict == family.unscored("overloaded; gave up after 7 calls", "transient")
    assert not verdict.scored


@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_the_verdict_pays_for_nothing_and_is_never_cached(family: JudgedFamily[Any]) -> None:
    example = scored_example(family)
    verdict = family.jury_verdict([example, example, failed(family, "refused")])
    assert verdict.scored
    assert (verdict.usage, verdict.calls, verdict.cost_usd, verdict.retries) == (
        TokenUsage(),
        0,
        0.0,
        0,
    )
    assert verdict.cached is False
    # Unanimous jurors: the verdict holds their values.
    assert family.metric_values(verdict) == family.metric_values(example)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_a_verdict_survives_the_checkpoint(family: JudgedFamily[Any]) -> None:
    example = scored_example(family)
    other = family.jury_verdict([example, failed(family, "refused"), failed(family, "x")])
    for verdict in (family.jury_verdict([example, example, example]), other):
        data = family_result_to_json(family, verdict)
        assert family_result_from_json(family, data) == verdict


# -- judge -----------------------------------------------------------------------------------


def judge(precision: int, recall: int, accuracy: int, summary: str = "") -> JudgeResult:
    return JudgeResult(scores=Scores(precision, recall, accuracy), summary=summary)


def test_judge_takes_the_majority_of_each_metric_and_an_agreeing_jurors_summary() -> None:
    jurors = [judge(0, 1, 0, "first"), judge(1, 0, 0, "second"), judge(1, 1, 1, "third")]
    verdict = JUDGE.jury_verdict(jurors)
    assert verdict.scores == Scores(1, 1, 0)
    # The first juror agreeing with the verdict's precision.
    assert verdict.summary == "second"
    assert JUDGE.cells(verdict)[:4] == [1, 1, 0, "second"]
    assert verdict.consensus is False


def test_judge_metrics_the_scoring_jurors_tie_on_are_left_empty_not_an_error() -> None:
    jurors = [judge(1, 1, 0, "first"), failed(JUDGE, "refused"), judge(1, 0, 1, "third")]
    verdict = JUDGE.jury_verdict(jurors)
    assert verdict.scored and verdict.error is None
    assert verdict.scores == Scores(1, None, None)
    assert JUDGE.metric_values(verdict) == {"Precision": 1, "Recall": None, "Accuracy": None}
    assert JUDGE.cells(verdict)[:3] == [1, "", ""]
    assert JUDGE.progress_scores(verdict) == {"precision": 1}
    lines = {line.label: line.value for line in JUDGE.summary([verdict, judge(1, 1, 1)])}
    assert lines["Precision"].startswith("2/2 ")
    assert lines["Recall"].startswith("1/1 ")
    assert lines["Unscored"] == "0"


@given(
    st.lists(
        st.one_of(st.none(), st.tuples(*[st.integers(0, 1)] * 3)),
        min_size=1,
        max_size=7,
    )
)
def test_judge_verdicts_are_the_per_metric_majority(
    votes: list[tuple[int, int, int] | None],
) -> None:
    jurors = [
        failed(JUDGE, "refused") if vote is None else judge(*vote, summary=f"juror {index}")
        for index, vote in enumerate(votes)
    ]
    verdict = JUDGE.jury_verdict(jurors)
    present = [vote for vote in votes if vote is not None]
    if not present:
        assert verdict.scores is None and verdict.error == "refused"
        return
    expected = []
    for metric in range(3):
        ones = sum(vote[metric] for vote in present)
        expected.append(None if 2 * ones == len(present) else int(2 * ones > len(present)))
    assert verdict.scores == Scores(*expected)
    siding = int(verdict.summary.split()[-1])
    if expected[0] is not None:
        assert votes[siding] is not None and votes[siding][0] == expected[0]  # type: ignore[index]
    else:
        assert siding == votes.index(present[0])


def test_judge_shortcuts_every_juror_shares_stay_in_the_verdict() -> None:
    shortcut = replace(judge(1, 1, 1, "none"), shortcut=SHORTCUT_NO_INFORMATION)
    verdict = JUDGE.jury_verdict([shortcut, shortcut, shortcut])
    assert verdict.shortcut == SHORTCUT_NO_INFORMATION
    lines = {line.label: line.value for line in JUDGE.summary([verdict])}
    assert lines["No Information (no call)"] == "1"
    mixed = JUDGE.jury_verdict([shortcut, judge(1, 1, 1), judge(1, 1, 1)])
    assert mixed.shortcut is None


# -- ragas -----------------------------------------------------------------------------------


def ragas(faithfulness: float | None, relevance: float | None, **fields: Any) -> RagasResult:
    return RagasResult(faithfulness=faithfulness, answer_relevance=relevance, **fields)


def test_ragas_takes_each_metrics_median_and_recomputes_the_composite() -> None:
    jurors = [
        ragas(0.5, 0.9, claim_count=2, unsupported_claims=("a",), context_precision=1.0),
        ragas(1.0, 0.6, claim_count=3, unsupported_claims=(), context_precision=0.5),
        ragas(0.25, 0.8, claim_count=4, unsupported_claims=("b", "c", "d")),
    ]
    jurors = [
        replace(juror, context_recall=recall, relevant_context_share=share, ragas_score=0.0)
        for juror, recall, share in zip(jurors, (0.2, 0.4, 0.9), (1.0, 0.5, 0.0), strict=True)
    ]
    verdict = RAGAS.jury_verdict(jurors)
    assert verdict.faithfulness == 0.5
    assert verdict.answer_relevance == 0.8
    assert verdict.context_recall == 0.4
    assert verdict.context_precision == pytest.approx(0.75)  # two jurors: the middle two's mean
    assert verdict.relevant_context_share == 0.5
    # 0.3 F + 0.2 CP + 0.2 CR + 0.3 AR from the medians (never the jurors' composites).
    assert verdict.ragas_score == pytest.approx(0.3 * 0.5 + 0.2 * 0.75 + 0.2 * 0.4 + 0.3 * 0.8)
    # The details describe the juror holding the median faithfulness.
    assert (verdict.claim_count, verdict.unsupported_claims) == (2, ("a",))
    assert "1 of 2 claims supported" in details_text(verdict)
    assert verdict.error is None and verdict.metric_errors == ()


def test_ragas_a_metric_every_juror_failed_is_the_verdicts_failed_metric() -> None:
    jurors = [
        ragas(0.5, None, metric_errors=(("answer_relevance", "overloaded"),), error="x"),
        ragas(0.7, None, metric_errors=(("answer_relevance", "refused"),), error="y"),
        ragas(0.9, None),
    ]
    jurors[0] = replace(jurors[0], failure="transient")
    jurors[1] = replace(jurors[1], failure="question")
    verdict = RAGAS.jury_verdict(jurors)
    assert verdict.faithfulness == 0.7
    assert verdict.answer_relevance is None
    assert verdict.metric_errors == (("answer_relevance", "overloaded"),)
    assert verdict.error == "answer_relevance: overloaded"
    assert verdict.failure == "transient"
    assert verdict.ragas_score is None


def test_ragas_metrics_undefined_for_every_juror_stay_empty_without_an_error() -> None:
    note = (
        "no context was retrieved: context recall 0, faithfulness and context precision left empty"
    )
    jurors = [
        ragas(None, 0.9, context_recall=0.0, context_count=0, notes=(note,)),
        ragas(None, 0.5, context_recall=0.0, context_count=0, notes=(note, "rated directly")),
        ragas(None, 0.7, context_recall=0.0, context_count=0, notes=(note,)),
    ]
    verdict = RAGAS.jury_verdict(jurors)
    assert verdict.faithfulness is None and verdict.context_precision is None
    assert verdict.error is None and verdict.scored
    assert verdict.context_count == 0
    assert verdict.notes == (note,)
    assert verdict.ragas_score == pytest.approx((0.2 * 0.0 + 0.3 * 0.7) / 0.5)


def test_ragas_jurors_with_only_failed_calls_give_an_unscored_verdict() -> None:
    jurors = [
        ragas(None, None, metric_errors=(("faithfulness", "refused"),), error="f: refused"),
        ragas(None, None, metric_errors=(("faithfulness", "late"),), error="f: late"),
    ]
    jurors = [replace(juror, failure="question") for juror in jurors]
    assert RAGAS.jury_verdict(jurors) == RAGAS.unscored("f: refused", "question")


# -- factual accuracy ------------------------------------------------------------------------


def factual_result(c: int, m: int, s: int, reasoning: str = "") -> FactualAccuracyResult:
    accuracy = (0.5 * c + 0.3 * m + 0.2 * s) / 100
    return FactualAccuracyResult(
        correctness=c,
        completeness=m,
        consistency=s,
        accuracy=round(accuracy, 9),
        grade="X",
        confidence=c,
        reasoning=reasoning,
    )


def test_factual_accuracy_takes_each_criterions_median_and_recomputes_accuracy_and_grade() -> None:
    jurors = [
        factual_result(80, 60, 90, "first"),  # 0.76
        factual_result(70, 90, 50, "second"),  # 0.72
        factual_result(90, 70, 70, "third"),  # 0.80
    ]
    verdict = FACTUAL.jury_verdict(jurors)
    assert (verdict.correctness, verdict.completeness, verdict.consistency) == (80, 70, 70)
    assert verdict.accuracy == pytest.approx(0.75)
    assert verdict.grade == "B"
    assert verdict.confidence == 80
    assert verdict.reasoning == "first"  # nearest the verdict's accuracy


def test_factual_accuracy_an_even_number_of_jurors_rounds_the_median_half_up() -> None:
    jurors = [factual_result(81, 60, 90, "a"), failed(FACTUAL, "x"), factual_result(82, 61, 80)]
    verdict = FACTUAL.jury_verdict(jurors)
    assert (verdict.correctness, verdict.completeness, verdict.consistency) == (82, 61, 85)
    # 0.5*82 + 0.3*61 + 0.2*85 = 76.3: a B; 80/80/80 would be an A (the family's banding).
    assert verdict.accuracy == pytest.approx(0.763)
    assert verdict.grade == "B"
    top = FACTUAL.jury_verdict([factual_result(80, 80, 80), factual_result(80, 80, 80)])
    assert top.grade == "A"


# -- classify, match ---------------------------------------------------------------------------


def test_classify_takes_the_plurality_label_and_a_jurors_reasoning_that_gave_it() -> None:
    jurors = [
        ClassifyResult(label=WRONG, reasoning="w"),
        ClassifyResult(label=CORRECT, reasoning="c1"),
        ClassifyResult(label=CORRECT, reasoning="c2"),
    ]
    verdict = CLASSIFY.jury_verdict(jurors)
    assert (verdict.label, verdict.reasoning) == (CORRECT, "c1")
    assert CLASSIFY.metric_values(verdict) == {"answer_correct": 1.0}


def test_classify_a_tie_leaves_the_label_empty_without_an_error() -> None:
    jurors = [
        ClassifyResult(label=WRONG, reasoning="w"),
        failed(CLASSIFY, "refused"),
        ClassifyResult(label=CORRECT, reasoning="c"),
    ]
    verdict = CLASSIFY.jury_verdict(jurors)
    assert verdict.label is None and verdict.error is None
    assert CLASSIFY.metric_values(verdict) == {"answer_correct": None}
    assert CLASSIFY.cells(verdict) == ["", "", ""]


def test_classify_dont_know_without_a_call_is_every_jurors() -> None:
    shortcut = ClassifyResult(label=DONT_KNOW, reasoning="phrase", without_call=True)
    verdict = CLASSIFY.jury_verdict([shortcut, shortcut, shortcut])
    assert (verdict.label, verdict.without_call) == (DONT_KNOW, True)
    lines = {line.label: line.value for line in CLASSIFY.summary([verdict])}
    assert lines["Answer Classes"] == "CORRECT 0 / WRONG 0 / DONT_KNOW 1 (1 without a call)"


def test_match_takes_the_majority_and_an_agreeing_jurors_reasoning() -> None:
    jurors = [
        MatchResult(is_matching=True, reasoning="yes"),
        MatchResult(is_matching=False, reasoning="no 1"),
        MatchResult(is_matching=False, reasoning="no 2"),
    ]
    verdict = MATCH.jury_verdict(jurors)
    assert (verdict.is_matching, verdict.reasoning) == (False, "no 1")
    tie = MATCH.jury_verdict([jurors[0], jurors[1], failed(MATCH, "refused")])
    assert tie.is_matching is None and tie.scored
    assert MATCH.cells(tie) == ["", ""]


# -- rubric ------------------------------------------------------------------------------------


def rubric(coherence: int | None, harmless: int | None, tag: str) -> RubricResult:
    scores = [("coherence", coherence), ("harmlessness", harmless)]
    return RubricResult(
        scores=tuple((name, score) for name, score in scores if score is not None),
        reasons=tuple((name, f"{name} {tag}") for name, score in scores if score is not None),
    )


def test_rubric_takes_each_criterions_median_or_majority_with_an_agreeing_reason() -> None:
    jurors = [rubric(4, 0, "a"), rubric(2, 1, "b"), rubric(5, 1, "c")]
    verdict = RUBRIC_FAMILY.jury_verdict(jurors)
    assert verdict.scores == (("coherence", 4), ("harmlessness", 1))
    assert verdict.reasons == (("coherence", "coherence a"), ("harmlessness", "harmlessness b"))
    assert RUBRIC_FAMILY.metric_values(verdict) == {
        "rubric_coherence": 0.75,
        "rubric_harmlessness": 1.0,
    }


def test_rubric_with_an_even_number_of_scores_rounds_half_up_and_drops_a_tied_pass_fail() -> None:
    jurors = [rubric(4, 1, "a"), failed(RUBRIC_FAMILY, "refused"), rubric(5, 0, "c")]
    verdict = RUBRIC_FAMILY.jury_verdict(jurors)
    assert verdict.scores == (("coherence", 5),)
    assert verdict.error is None
    assert RUBRIC_FAMILY.metric_values(verdict) == {
        "rubric_coherence": 1.0,
        "rubric_harmlessness": None,
    }
