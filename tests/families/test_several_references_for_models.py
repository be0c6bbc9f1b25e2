"""A question with several reference answers: the model-judged families tell the model that
any one of them is a complete answer (RAGAS reads them joined, as ragas does), and their
response-cache keys follow what is sent."""

from __future__ import annotations

import pytest

from rag_evaluator.families.base import SEVERAL_REFERENCES_PREFACE, first_stage
from rag_evaluator.families.grading.classify import ClassifyFamily
from rag_evaluator.families.grading.factual_accuracy import FactualAccuracyFamily
from rag_evaluator.families.grading.match import MatchFamily
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.families.rubric.family import RubricFamily
from rag_evaluator.families.rubric.rubrics import rubric_from_data
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.planning import family_cache_key

ANSWERS = ("Thirty days from delivery.", "A month.")


def _item(reference_answers: tuple[str, ...] | None) -> EvaluationItem:
    return EvaluationItem(
        1,
        "How long is the return window?",
        "\n".join(ANSWERS),
        "You have 30 days.",
        reference_answers=reference_answers,
    )


RUBRIC = rubric_from_data(
    {
        "criteria": [{"name": "correct", "description": "Matches.", "scale": "pass/fail"}],
        "inputs": ["ground_truth"],
    }
)
FAMILIES = [
    JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES),
    ClassifyFamily(),
    MatchFamily(),
    FactualAccuracyFamily(),
    RubricFamily(RUBRIC),
]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_several_reference_answers_are_sent_as_alternatives(family) -> None:
    (request,) = first_stage(family.run(_item(ANSWERS)))

    assert f"{SEVERAL_REFERENCES_PREFACE}\n1. {ANSWERS[0]}\n2. {ANSWERS[1]}" in request.user


@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_one_reference_is_sent_as_before_and_keys_follow_what_is_sent(family) -> None:
    joined, listed = _item(None), _item(ANSWERS)
    (request,) = first_stage(family.run(joined))

    assert SEVERAL_REFERENCES_PREFACE not in request.user
    assert "\n".join(ANSWERS) in request.user
    # The same texts sent otherwise are another cache entry; the same ones, the same entry.
    assert family_cache_key(family, joined, "m") != family_cache_key(family, listed, "m")
    assert family_cache_key(family, listed, "m") == family_cache_key(family, _item(ANSWERS), "m")
