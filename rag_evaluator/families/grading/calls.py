"""The single-call answer graders' model calls: prompts, output schemas, requests, parsers.

- ``factual_accuracy`` (seed 001's fixed three-criterion rubric; not G-Eval): correctness,
  completeness and consistency, each 0-100 with its reasoning, then an overall reasoning and a
  confidence. The weighted
  score and the grade are computed in ``families/scores.py``, never taken from the model.
- ``classify`` (seed 001): the answer is CORRECT or WRONG against the ground truth.
- ``match`` (seed 004's "is matching"): does the answer satisfactorily answer the question,
  with the ground truth as the reference.

Each reads the question, the ground truth and the answer, escaped inside their tags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_evaluator.llm import reply_fields
from rag_evaluator.llm.requests import ModelRequest, ReplyError
from rag_evaluator.text.tagged_text import (
    DATA_NOT_INSTRUCTIONS,
    GROUND_TRUTH,
    QUESTION,
    RAG_ANSWER,
    tagged,
    user_message,
)

FACTUAL_ACCURACY_CRITERIA = ("correctness", "completeness", "consistency")
CORRECT = "CORRECT"
WRONG = "WRONG"
DONT_KNOW = "DONT_KNOW"
MODEL_LABELS = (CORRECT, WRONG)

FACTUAL_ACCURACY_MAX_TOKENS = 3000
SHORT_MAX_TOKENS = 1000

_MATERIAL = f"""\
How the material arrives
The user message holds three texts, each inside its own tag: the question (<question>), the \
reference answer a domain expert wrote for it (<ground_truth>), and the answer the RAG system \
produced (<rag_answer>). {DATA_NOT_INSTRUCTIONS}
"""

_MEANING_NOT_WORDING = """\
- Judge meaning, not wording: paraphrases, synonyms, another order or structure are \
equivalent when they say the same thing. Numbers may be written differently when the value is \
the same ("about 2.5 million" and 2,480,000; "half" and 50%).
- Never reward or penalise length as such.
- The ground truth is the authority on the facts.
"""

FACTUAL_ACCURACY_PROMPT = f"""\
You evaluate the factual accuracy of the answers of a retrieval-augmented generation (RAG) \
system, step by step, on three criteria scored separately.

{_MATERIAL}
Step 1, correctness: are the answer's factual statements accurate compared with the ground \
truth?
- 90-100: every fact is accurate.
- 70-89: minor inaccuracies that leave the core meaning intact.
- 50-69: some notable errors, but the main points are right.
- 30-49: several significant errors.
- 0-29: mostly wrong or invented.

Step 2, completeness: does the answer contain the essential information of the ground truth?
- 90-100: everything essential, with the right level of detail.
- 70-89: the key information, minor details missing.
- 50-69: the core, but important details missing.
- 30-49: significant gaps.
- 0-29: most of the essential information missing.

Step 3, consistency: is the answer internally consistent and logically coherent?
- 90-100: no contradiction at all.
- 70-89: minor ambiguities.
- 50-69: some inconsistencies, but coherent overall.
- 30-49: notable contradictions or gaps in logic.
- 0-29: contradicts itself throughout.

Rules
{_MEANING_NOT_WORDING}\
- An answer that says it does not know scores low on completeness; it is not incorrect unless \
it states something false.

Reply with a JSON object: "correctness", "completeness" and "consistency", each an object with \
"reasoning" (written first) and "score" (a whole number from 0 to 100); then \
"overall_reasoning" (one or two sentences) and "confidence" (a whole number from 0 to 100: how \
sure you are of these scores). Do not compute a weighted total.
"""

CLASSIFY_PROMPT = f"""\
You classify the answers of a retrieval-augmented generation (RAG) system as CORRECT or WRONG \
against a reference answer.

{_MATERIAL}
Labels
- CORRECT: the answer is factually right and answers the question as the ground truth does: \
its core facts, figures and conclusions agree with the ground truth and nothing it states \
contradicts it.
- WRONG: the answer states something false or contradicting the ground truth, misses or \
distorts the core of the answer, is so incomplete that it misleads, or does not answer the \
question asked.

Rules
{_MEANING_NOT_WORDING}\
- Extra, true details do not make an answer wrong.

Reply with a JSON object: "reasoning" (one to three sentences, written first), then "label" \
(CORRECT or WRONG).
"""

MATCH_PROMPT = f"""\
You are an impartial judge. Decide whether the answer of a retrieval-augmented generation \
(RAG) system accurately and satisfactorily answers the question, using the ground truth as \
the reference.

{_MATERIAL}
How to decide
- The answer matches (true) when it conveys what the ground truth conveys in answer to the \
question: the same facts and meaning, even in other words.
- It does not match (false) when it is too vague, incomplete, factually wrong compared with \
the ground truth, or answers something else.
{_MEANING_NOT_WORDING}
Reply with a JSON object: "reasoning" (a brief explanation, written first, especially when it \
does not match), then "is_matching" (true or false).
"""

_STRING = {"type": "string"}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_CRITERION = _object({"reasoning": _STRING, "score": {"type": "integer", "description": "0-100"}})
FACTUAL_ACCURACY_SCHEMA = _object(
    {
        **{criterion: _CRITERION for criterion in FACTUAL_ACCURACY_CRITERIA},
        "overall_reasoning": _STRING,
        "confidence": {"type": "integer", "description": "0-100"},
    }
)
CLASSIFY_SCHEMA = _object(
    {"reasoning": _STRING, "label": {"type": "string", "enum": list(MODEL_LABELS)}}
)
MATCH_SCHEMA = _object({"reasoning": _STRING, "is_matching": {"type": "boolean"}})


@dataclass(frozen=True)
class CriterionScore:
    score: int  # 0-100
    reasoning: str


@dataclass(frozen=True)
class FactualAccuracyVerdict:
    correctness: CriterionScore
    completeness: CriterionScore
    consistency: CriterionScore
    overall_reasoning: str
    confidence: int  # 0-100


@dataclass(frozen=True)
class Classification:
    label: str  # CORRECT or WRONG
    reasoning: str


@dataclass(frozen=True)
class MatchVerdict:
    is_matching: bool
    reasoning: str


def parse_factual_accuracy(payload: Mapping[str, Any]) -> FactualAccuracyVerdict:
    what = "factual accuracy"
    scores = {}
    for criterion in FACTUAL_ACCURACY_CRITERIA:
        entry = reply_fields.obj(
            reply_fields.field(payload, criterion, what), f"{what} {criterion}"
        )
        scores[criterion] = CriterionScore(
            score=reply_fields.whole_number(entry, "score", f"{what} {criterion}", 0, 100),
            reasoning=_optional_text(entry, "reasoning"),
        )
    return FactualAccuracyVerdict(
        correctness=scores["correctness"],
        completeness=scores["completeness"],
        consistency=scores["consistency"],
        overall_reasoning=_optional_text(payload, "overall_reasoning"),
        confidence=reply_fields.whole_number(payload, "confidence", what, 0, 100),
    )


def parse_classification(payload: Mapping[str, Any]) -> Classification:
    what = "classification"
    label = reply_fields.text(payload, "label", what).upper()
    if label not in MODEL_LABELS:
        raise ReplyError(f"{what}: 'label' is {label[:20]!r}, expected CORRECT or WRONG")
    return Classification(label, _optional_text(payload, "reasoning"))


def parse_match(payload: Mapping[str, Any]) -> MatchVerdict:
    return MatchVerdict(
        is_matching=reply_fields.flag(payload, "is_matching", "match"),
        reasoning=_optional_text(payload, "reasoning"),
    )


def _optional_text(entry: Mapping[str, Any], name: str) -> str:
    value = entry.get(name, "")
    return " ".join(value.split()) if isinstance(value, str) else ""


def _user(task: str, question: str, ground_truth: str, answer: str) -> str:
    return user_message(
        task,
        tagged(QUESTION, question),
        tagged(GROUND_TRUTH, ground_truth),
        tagged(RAG_ANSWER, answer),
    )


def factual_accuracy_request(question: str, ground_truth: str, answer: str) -> ModelRequest:
    return ModelRequest(
        system=FACTUAL_ACCURACY_PROMPT,
        user=_user(
            "Evaluate the factual accuracy of the RAG answer against the ground truth.",
            question,
            ground_truth,
            answer,
        ),
        schema=FACTUAL_ACCURACY_SCHEMA,
        max_tokens=FACTUAL_ACCURACY_MAX_TOKENS,
        purpose="factual accuracy",
        parse=parse_factual_accuracy,
    )


def classify_request(question: str, ground_truth: str, answer: str) -> ModelRequest:
    return ModelRequest(
        system=CLASSIFY_PROMPT,
        user=_user(
            "Classify the RAG answer as CORRECT or WRONG against the ground truth.",
            question,
            ground_truth,
            answer,
        ),
        schema=CLASSIFY_SCHEMA,
        max_tokens=SHORT_MAX_TOKENS,
        purpose="classification",
        parse=parse_classification,
    )


def match_request(question: str, ground_truth: str, answer: str) -> ModelRequest:
    return ModelRequest(
        system=MATCH_PROMPT,
        user=_user(
            "Decide whether the RAG answer matches, with the ground truth as the reference.",
            question,
            ground_truth,
            answer,
        ),
        schema=MATCH_SCHEMA,
        max_tokens=SHORT_MAX_TOKENS,
        purpose="match",
        parse=parse_match,
    )
