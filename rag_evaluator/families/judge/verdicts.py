"""The judge's answer format: the JSON schema sent to the API and the parser of its reply."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rag_evaluator.inputs.records import Verdict
from rag_evaluator.llm.requests import ReplyError

SCORE_FIELDS = ("precision", "recall", "accuracy")
TEXT_FIELDS = ("reasoning", "summary")

# Property order matters: the model writes its reasoning before it commits to scores.
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {
            "type": "string",
            "description": "Step-by-step comparison of the RAG answer with the ground truth.",
        },
        "summary": {
            "type": "string",
            "description": "One or two sentences condensing the reasoning.",
        },
        "precision": {"type": "integer", "enum": [0, 1]},
        "recall": {"type": "integer", "enum": [0, 1]},
        "accuracy": {"type": "integer", "enum": [0, 1]},
    },
    "required": [*TEXT_FIELDS, *SCORE_FIELDS],
    "additionalProperties": False,
}


class VerdictError(ReplyError):
    """The judge's reply is not a usable verdict; the message is the reason."""


def _score(payload: Mapping[str, Any], name: str) -> int:
    value = payload[name]
    # bool is an int subclass in Python; JSON true/false is not a 0/1 score.
    if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1):
        raise VerdictError(f"judge output has {name} = {json.dumps(value)[:40]}, expected 0 or 1")
    return value


def verdict_from_payload(payload: Mapping[str, Any]) -> Verdict:
    """Read the judge's JSON object into a Verdict, or raise VerdictError saying what is wrong.

    Fields beyond the five of ``VERDICT_SCHEMA`` are ignored.
    """
    for name in (*TEXT_FIELDS, *SCORE_FIELDS):
        if name not in payload:
            raise VerdictError(f"judge output lacks the '{name}' field")
    for name in TEXT_FIELDS:
        if not isinstance(payload[name], str):
            raise VerdictError(f"judge output has a non-text '{name}' field")
    return Verdict(
        precision=_score(payload, "precision"),
        recall=_score(payload, "recall"),
        accuracy=_score(payload, "accuracy"),
        reasoning=payload["reasoning"].strip(),
        summary=payload["summary"].strip(),
    )
