"""Parsing the judge's JSON reply into a Verdict, as a run does: the reply's JSON object
(``read_reply``), then its fields (``verdict_from_payload``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.errors import JudgeQuestionError
from rag_evaluator.families.judge.verdicts import (
    VERDICT_SCHEMA,
    VerdictError,
    verdict_from_payload,
)
from rag_evaluator.inputs.records import Verdict
from rag_evaluator.llm.requests import ReplyError, read_reply


def parse_verdict(text: str) -> Verdict:
    """The verdict of a complete reply's text, or ``ReplyError`` (``VerdictError`` for its
    fields) saying why there is none."""
    return verdict_from_payload(read_reply("end_turn", text, max_tokens=4096))


GOOD = {
    "reasoning": "Both state a two-year warranty.",
    "summary": "Matches the ground truth.",
    "precision": 1,
    "recall": 0,
    "accuracy": 1,
}


def test_a_complete_reply_parses() -> None:
    assert parse_verdict(json.dumps(GOOD)) == Verdict(
        precision=1,
        recall=0,
        accuracy=1,
        reasoning="Both state a two-year warranty.",
        summary="Matches the ground truth.",
    )


def test_a_code_fence_and_surrounding_space_are_tolerated() -> None:
    fenced = "\n```json\n" + json.dumps(GOOD) + "\n```\n"
    assert parse_verdict(fenced).recall == 0


def test_extra_fields_are_ignored() -> None:
    assert parse_verdict(json.dumps({**GOOD, "confidence": "high"})).precision == 1


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "judge output was empty"),
        ("Precision 1, recall 1.", "judge output was not valid JSON"),
        ('{"reasoning": "cut off', "judge output was not valid JSON"),
        ("[1, 0, 1]", "judge output was JSON but not an object"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "recall"}), "lacks the 'recall' field"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "summary"}), "lacks the 'summary'"),
        (json.dumps({**GOOD, "precision": 2}), "precision = 2, expected 0 or 1"),
        (json.dumps({**GOOD, "accuracy": True}), "accuracy = true"),
        (json.dumps({**GOOD, "recall": 1.0}), "recall = 1.0"),
        (json.dumps({**GOOD, "recall": "1"}), 'recall = "1"'),
        (json.dumps({**GOOD, "reasoning": None}), "non-text 'reasoning'"),
        ("[" * 100_000, "judge output was not valid JSON"),
    ],
)
def test_unusable_replies_raise_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(ReplyError) as raised:
        parse_verdict(text)
    assert reason in str(raised.value)


def test_a_verdict_error_is_a_per_question_failure() -> None:
    assert issubclass(VerdictError, JudgeQuestionError)


def test_schema_requires_every_field_and_nothing_else() -> None:
    assert VERDICT_SCHEMA["required"] == ["reasoning", "summary", "precision", "recall", "accuracy"]
    assert VERDICT_SCHEMA["additionalProperties"] is False
    assert next(iter(VERDICT_SCHEMA["properties"])) == "reasoning"
    for name in ("precision", "recall", "accuracy"):
        assert VERDICT_SCHEMA["properties"][name] == {"type": "integer", "enum": [0, 1]}


@given(st.text())
def test_any_text_parses_or_raises_reply_error(text: str) -> None:
    try:
        verdict = parse_verdict(text)
    except ReplyError:
        return
    assert {verdict.precision, verdict.recall, verdict.accuracy} <= {0, 1}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "reasoning": json_values,
            "summary": json_values,
            "precision": json_values,
            "recall": json_values,
            "accuracy": json_values,
        },
    )
)
def test_any_json_object_parses_or_raises_verdict_error(payload: dict[str, object]) -> None:
    try:
        verdict = parse_verdict(json.dumps(payload))
    except VerdictError:
        return
    assert verdict.precision == payload["precision"]
    assert isinstance(payload["reasoning"], str)


@given(
    st.text(),
    st.text(),
    st.sampled_from([0, 1]),
    st.sampled_from([0, 1]),
    st.sampled_from([0, 1]),
)
def test_every_valid_reply_round_trips(
    reasoning: str, summary: str, precision: int, recall: int, accuracy: int
) -> None:
    text = json.dumps(
        {
            "reasoning": reasoning,
            "summary": summary,
            "precision": precision,
            "recall": recall,
            "accuracy": accuracy,
        }
    )
    verdict = parse_verdict(text)
    assert (verdict.precision, verdict.recall, verdict.accuracy) == (precision, recall, accuracy)
    assert verdict.reasoning == reasoning.strip()
    assert verdict.summary == summary.strip()
