"""A check's verdict on plain data: the gates as ``evaluate`` applies them, and the questions the
failure message lists."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.results.gates import Threshold
from rag_evaluator.testing.verdict import ScoredCheck, ScoredQuestion, check_verdict

METRIC = "rouge_l"


def _check(values: list[float | None], threshold: Threshold) -> ScoredCheck:
    questions = [
        ScoredQuestion(
            EvaluationItem(number, f"Question {number}?", f"Truth {number}.", f"Answer {number}."),
            {METRIC: value},
        )
        for number, value in enumerate(values, start=1)
    ]
    scored = [value for value in values if value is not None]
    observed = {METRIC: sum(scored) / len(scored) if scored else None}
    return ScoredCheck("cases", questions, observed, frozenset(), {METRIC: threshold})


# The first example loads scipy for the bootstrap interval.
@settings(deadline=None)
@given(
    values=st.lists(st.none() | st.floats(min_value=0, max_value=1), min_size=1, max_size=30),
    limit=st.floats(min_value=0, max_value=1),
    upper=st.booleans(),
)
def test_a_gate_fails_on_its_mean_and_lists_the_questions_past_its_limit(
    values: list[float | None], limit: float, upper: bool
) -> None:
    threshold = Threshold(METRIC, limit, upper)
    check = _check(values, threshold)
    report = check_verdict(check)
    (gate,) = report.gates
    assert gate.passed == (not threshold.missed_by(check.observed[METRIC]))
    assert report.passed == gate.passed
    expected = [] if gate.passed else [n for n, v in enumerate(values, 1) if threshold.missed_by(v)]
    assert [question.item.question_number for question in report.failing_questions] == expected
    if gate.passed:
        assert report.message == ""
        return
    lines = report.message.splitlines()
    questions = f"{len(values)} question{'s' * (len(values) != 1)}"
    assert lines[0] == f"rag-eval check of cases ({questions}): 1 of 1 thresholds missed"
    bound = "maximum" if upper else "minimum"
    assert lines[1].startswith(f"  FAILED {METRIC}: ") and lines[1].endswith(f", {bound} {limit:g}")
    for number in expected[:20]:
        at = lines.index(f"  question {number}: 'Question {number}?'")
        assert lines[at + 1 : at + 3] == [
            f"    expected: 'Truth {number}.'",
            f"    got:      'Answer {number}.'",
        ]
        value = values[number - 1]
        shown = "no value" if value is None else f"{value:.4f}"
        sign = ">" if upper else "<"
        assert lines[at + 3] == f"    {METRIC} {shown} {sign} {limit:g}"
    assert ("  ... and " in report.message) == (len(expected) > 20)
