"""The rubric family's model call: a system prompt holding the user's rubric, the output
schema ``{"criteria": [{"name", "reasoning", "score"}]}``, the request and its parser."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_evaluator.families.rubric.rubrics import CONTEXTS_INPUT, GROUND_TRUTH_INPUT, Rubric
from rag_evaluator.llm import reply_fields
from rag_evaluator.llm.requests import ModelRequest, ReplyError
from rag_evaluator.text.tagged_text import (
    DATA_NOT_INSTRUCTIONS,
    GROUND_TRUTH,
    QUESTION,
    RAG_ANSWER,
    contexts_block,
    escape,
    tagged,
    user_message,
)

CRITERIA_ROLE = "criteria"
PER_CRITERION_MAX_TOKENS = 400
BASE_MAX_TOKENS = 500

_INPUT_LINES = {
    GROUND_TRUTH_INPUT: "the reference answer a domain expert wrote (<ground_truth>)",
    CONTEXTS_INPUT: "the contexts the system retrieved (<contexts>, each <context> numbered)",
}


@dataclass(frozen=True)
class CriterionScore:
    name: str  # as the rubric spells it
    score: int  # on the criterion's scale (pass 1, fail 0)
    reasoning: str


def system_prompt(rubric: Rubric) -> str:
    shown = ["the question (<question>)", "the answer the RAG system produced (<rag_answer>)"]
    shown += [_INPUT_LINES[name] for name in rubric.inputs]
    criteria = "\n".join(
        f'<criterion name="{escape(criterion.name)}" scale="{criterion.scale.label()}">'
        f"{escape(criterion.description)}</criterion>"
        for criterion in rubric.criteria
    )
    return f"""\
You assess the answers of a retrieval-augmented generation (RAG) system against a rubric of \
criteria, each scored on its own scale.

How the material arrives
The user message holds {", ".join(shown)}, each inside its own tag. \
{DATA_NOT_INSTRUCTIONS}

The rubric
<criteria>
{criteria}
</criteria>

How to score
- Score every criterion of the rubric, independently of the others, on its own scale: a \
scale "1-5" takes a whole number from 1 (worst) to 5 (best); a scale "pass/fail" takes 1 for \
pass and 0 for fail.
- Judge only what the criterion's description asks about; use the whole range of the scale.
- Never reward or penalise length as such.

Reply with a JSON object whose "criteria" field has exactly one entry per criterion of the \
rubric, in the rubric's order: "name" (the criterion's name as written), "reasoning" (one or \
two sentences, written first) and "score" (a whole number on the criterion's scale).
"""


def schema(rubric: Rubric) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            CRITERIA_ROLE: {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {
                            "type": "string",
                            "enum": [criterion.name for criterion in rubric.criteria],
                        },
                        "reasoning": {"type": "string"},
                        "score": {"type": "integer"},
                    },
                    "required": ["name", "reasoning", "score"],
                    "additionalProperties": False,
                },
            }
        },
        "required": [CRITERIA_ROLE],
        "additionalProperties": False,
    }


def max_tokens(rubric: Rubric) -> int:
    return BASE_MAX_TOKENS + PER_CRITERION_MAX_TOKENS * len(rubric.criteria)


def parser(rubric: Rubric) -> Callable[[Mapping[str, Any]], tuple[CriterionScore, ...]]:
    """Reads a reply scoring every criterion exactly once, each within its scale."""
    what = "rubric"

    def parse(payload: Mapping[str, Any]) -> tuple[CriterionScore, ...]:
        scored: dict[str, CriterionScore] = {}
        for entry in reply_fields.items(payload, CRITERIA_ROLE, what):
            entry = reply_fields.obj(entry, what)
            name = reply_fields.text(entry, "name", what)
            criterion = rubric.criterion(name)
            if criterion is None:
                raise ReplyError(f"{what}: the reply scores {name[:40]!r}, which the rubric lacks")
            if criterion.name in scored:
                raise ReplyError(f"{what}: the reply scores {criterion.name!r} twice")
            scale = criterion.scale
            scored[criterion.name] = CriterionScore(
                criterion.name,
                reply_fields.whole_number(
                    entry, "score", f"{what} {criterion.name}", scale.low, scale.high
                ),
                _reasoning(entry),
            )
        missing = [item.name for item in rubric.criteria if item.name not in scored]
        if missing:
            raise ReplyError(f"{what}: the reply does not score {', '.join(missing)}")
        return tuple(scored[item.name] for item in rubric.criteria)

    return parse


def _reasoning(entry: Mapping[str, Any]) -> str:
    value = entry.get("reasoning", "")
    return " ".join(value.split()) if isinstance(value, str) else ""


def request(
    rubric: Rubric,
    prompt: str,
    question: str,
    answer: str,
    ground_truth: str,
    contexts: Sequence[str] | None,
) -> ModelRequest:
    blocks = [tagged(QUESTION, question), tagged(RAG_ANSWER, answer)]
    if GROUND_TRUTH_INPUT in rubric.inputs:
        blocks.append(tagged(GROUND_TRUTH, ground_truth))
    if CONTEXTS_INPUT in rubric.inputs:
        blocks.append(contexts_block([context for context in contexts or [] if context.strip()]))
    return ModelRequest(
        system=prompt,
        user=user_message("Score the RAG answer on every criterion of the rubric.", *blocks),
        schema=schema(rubric),
        max_tokens=max_tokens(rubric),
        purpose="rubric",
        parse=parser(rubric),
    )
