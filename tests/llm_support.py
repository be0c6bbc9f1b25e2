"""Inputs and helpers for the LLM-judged families' tests (RAG answers with their contexts)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluate_support import SAMPLE, write_csv
from fakes.anthropic_server import FakeAnthropicServer, RecordedRequest

# The retrieved contexts of each SAMPLE question: question 3's retriever found nothing ([]),
# question 4 has no Contexts at all (a blank cell).
CONTEXTS: dict[int, list[str] | None] = {
    1: ["Paris is the capital of France.", "Lyon is a large city in France."],
    2: ["The X200 pump comes with a two-year warranty on parts and labour."],
    3: [],
    4: None,
    5: ["The Lyon office opened in March 2019.", "The Paris office opened in 2001."],
}

QUESTION = {number: texts[0] for number, texts in SAMPLE.items()}

RUBRIC_TOML = """\
[[criteria]]
name = "coherence"
description = "The answer is logically organised and easy to follow."
scale = "1-5"

[[criteria]]
name = "harmlessness"
description = "The answer contains nothing offensive, unsafe or biased."
scale = "pass/fail"
"""

ALL_LLM = "judge,ragas,factual_accuracy,classify,match,rubric"


def write_inputs_with_contexts(
    directory: Path,
    sample: Mapping[int, tuple[str, str, str]] = SAMPLE,
    contexts: Mapping[int, Sequence[str] | None] | None = None,
    *,
    with_contexts_column: bool = True,
) -> None:
    """questions.csv, ground_truth.csv and rag_answers.csv (with a Contexts JSON column)."""
    chosen = CONTEXTS if contexts is None else contexts
    numbers = sorted(sample)
    write_csv(
        directory / "questions.csv",
        ["Question Number", "Question"],
        [[n, sample[n][0]] for n in numbers],
    )
    write_csv(
        directory / "ground_truth.csv",
        ["Question Number", "Ground Truth"],
        [[n, sample[n][1]] for n in numbers],
    )
    if with_contexts_column:
        write_csv(
            directory / "rag_answers.csv",
            ["Question Number", "RAG Answer", "Contexts"],
            [
                [n, sample[n][2], "" if chosen.get(n) is None else json.dumps(chosen[n])]
                for n in numbers
            ],
        )
    else:
        write_csv(
            directory / "rag_answers.csv",
            ["Question Number", "RAG Answer"],
            [[n, sample[n][2]] for n in numbers],
        )
    (directory / "rubric.toml").write_text(RUBRIC_TOML, encoding="utf-8")


def paid_requests(server: FakeAnthropicServer) -> list[RecordedRequest]:
    """The Messages calls the API answered with 200 (what a run pays for)."""
    return [request for request in server.requests if request.response_status == 200]


def request_key(request: RecordedRequest) -> tuple[str, str, str]:
    body: Any = request.body
    system = body.get("system") if isinstance(body, dict) else ""
    return (request.role, json.dumps(system), request.user_message or "")


def roles_of(server: FakeAnthropicServer, question: str | None = None) -> list[str]:
    return sorted(
        request.role
        for request in server.requests
        if question is None or (request.question or request.user_message or "").find(question) >= 0
    )


def verdicts_reply(*supported: int) -> dict[str, Any]:
    return {
        "verdicts": [
            {"claim": f"claim {index}", "reason": "", "supported": value}
            for index, value in enumerate(supported, start=1)
        ]
    }


def contexts_reply(*relevant: bool) -> dict[str, Any]:
    return {
        "contexts": [
            {"index": index, "reasoning": "", "relevant": value, "score": 90 if value else 10}
            for index, value in enumerate(relevant, start=1)
        ]
    }


def attributions_reply(*attributed: int) -> dict[str, Any]:
    return {
        "attributions": [
            {"statement": f"s{index}", "attributed": value, "supporting_context": None}
            for index, value in enumerate(attributed, start=1)
        ]
    }


def criteria_reply(coherence: int, harmlessness: int) -> dict[str, Any]:
    return {
        "criteria": [
            {"name": "coherence", "reasoning": "Clear enough.", "score": coherence},
            {"name": "harmlessness", "reasoning": "Nothing unsafe.", "score": harmlessness},
        ]
    }
