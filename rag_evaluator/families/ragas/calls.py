"""The RAGAS family's model calls: system prompts, output schemas, requests, reply parsers.

Seven roles, each named after the top-level property of its output schema (the contract a
stand-in API plays by):

- ``claims``: the atomic claims of the RAG answer (faithfulness, call 1);
- ``verdicts``: each claim supported by the contexts or not (faithfulness, call 2);
- ``contexts``: each retrieved context relevant to the question or not (context precision);
- ``statements``: the atomic statements of the ground truth (context recall, call 1);
- ``attributions``: each statement found in the contexts or not (context recall, call 2);
- ``questions``: three questions the answer would answer, and whether the answer is
  noncommittal (answer relevance, with embeddings);
- ``score``: a direct 0-1 rating of how well the answer addresses the question, and whether
  the answer is noncommittal (answer relevance without embeddings, or when no question could
  be generated).

The scores themselves are computed in ``families/scores.py``, never by the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_evaluator.llm import reply_fields
from rag_evaluator.llm.requests import ModelRequest, ReplyError
from rag_evaluator.text.tagged_text import (
    DATA_NOT_INSTRUCTIONS,
    GROUND_TRUTH,
    QUESTION,
    RAG_ANSWER,
    claims_block,
    contexts_block,
    statements_block,
    tagged,
    user_message,
)

CLAIMS_ROLE = "claims"
VERDICTS_ROLE = "verdicts"
CONTEXTS_ROLE = "contexts"
STATEMENTS_ROLE = "statements"
ATTRIBUTIONS_ROLE = "attributions"
QUESTIONS_ROLE = "questions"
RATING_ROLE = "score"

GENERATED_QUESTIONS = 3
# The answer-relevance replies' flag for an evasive or vague answer (ragas's "noncommittal").
NONCOMMITTAL = "noncommittal"

# max_tokens: generous, so a long list is not cut off; the reply's real size is what is paid.
LIST_MAX_TOKENS = 4000
PER_ITEM_MAX_TOKENS = 250
SHORT_MAX_TOKENS = 1000
MAX_TOKENS_CAP = 32000


def _per_item_max_tokens(count: int) -> int:
    return min(MAX_TOKENS_CAP, 500 + PER_ITEM_MAX_TOKENS * max(count, 1))


# -- system prompts ---------------------------------------------------------------------------

_MATERIAL = f"How the material arrives\n{DATA_NOT_INSTRUCTIONS}\n"

CLAIMS_PROMPT = f"""\
You break the answer of a retrieval-augmented generation (RAG) system into atomic factual \
claims, so that each claim can later be checked on its own against the documents the system \
retrieved.

{_MATERIAL}
The user message holds the question (<question>) for reference and the answer \
(<rag_answer>) to break down.

What a claim is
- Atomic: exactly one piece of information (one fact, figure, relation, condition or date). \
Split "X was founded in 1990 in Lyon" into "X was founded in 1990" and "X was founded in Lyon".
- Self-contained: it makes sense without the question or the other claims. Replace pronouns \
and vague references with what they refer to ("It costs $5" becomes "The X200 pump costs $5").
- Faithful: keep the answer's meaning; do not correct, complete, soften or strengthen it, and \
add nothing from your own knowledge.
- Leave out what is not a factual claim: greetings, questions, opinions, offers of further \
help, statements about the answer itself, and admissions of not knowing.
- An answer that makes no factual claim (for example "I don't know" or a refusal) has no \
claims: reply with an empty list.

Reply with a JSON object whose "claims" field is the list of claims, in the order the answer \
makes them.
"""

VERDICTS_PROMPT = f"""\
You check whether claims made by a retrieval-augmented generation (RAG) system are supported \
by the documents it retrieved.

{_MATERIAL}
The user message holds the question (<question>) for reference, the retrieved contexts \
(<contexts>, each <context> numbered) and the claims to check (<claims>, one <claim> each).

How to decide
- A claim is supported (1) when the contexts state it, or it follows directly and without \
doubt from what they state (a paraphrase, a unit conversion, simple arithmetic).
- A claim is not supported (0) when the contexts contradict it, do not mention it, or only \
make it plausible. Use the contexts alone: your own knowledge does not support a claim, even \
a true one.
- Judge every claim independently; one unsupported part makes the whole claim unsupported.

Reply with a JSON object whose "verdicts" field has exactly one entry per claim, in the order \
the claims are given: "claim" (the claim's text), "reason" (one sentence naming the context \
that supports it, or what is missing or contradicted) and "supported" (1 or 0).
"""

CONTEXTS_PROMPT = f"""\
You judge the documents that a retrieval-augmented generation (RAG) system retrieved for a \
question: which of them are useful for answering it.

{_MATERIAL}
The user message holds the question (<question>), the reference answer a domain expert wrote \
(<ground_truth>), and the retrieved contexts (<contexts>, each <context> with its index, in \
the order the retriever ranked them).

How to decide
- A context is relevant when it holds information that helps answer the question as the \
reference answer does: a fact, figure, definition or explanation the answer needs, or \
evidence for it.
- A context is not relevant when it is about something else, only shares words with the \
question, or is boilerplate (navigation, copyright lines, tables of contents).
- Judge each context on its own merits, not on its rank and not on the other contexts.
- "score" says how useful the context is, from 0 (useless) to 100 (it alone answers the \
question); a relevant context scores at least 50 and an irrelevant one below 50.

Reply with a JSON object whose "contexts" field has exactly one entry per context: "index" \
(the context's index), "reasoning" (one sentence), "relevant" (true or false) and "score" \
(a whole number from 0 to 100).
"""

STATEMENTS_PROMPT = f"""\
You break a reference answer, written by a domain expert, into the atomic statements a \
complete answer must convey, so each can later be looked for in retrieved documents.

{_MATERIAL}
The user message holds the question (<question>) for reference and the reference answer \
(<ground_truth>) to break down.

What a statement is
- Atomic: one fact, figure, relation, condition, name or date.
- Self-contained: understandable without the question; replace pronouns with what they \
refer to.
- Faithful: the reference answer's meaning, nothing added, nothing left out that matters.
- A reference answer that says no information is available has no statements: reply with \
an empty list.

Reply with a JSON object whose "statements" field is the list of statements, in the order \
the reference answer makes them.
"""

ATTRIBUTIONS_PROMPT = f"""\
You check whether the statements of a reference answer can be found in the documents that a \
retrieval-augmented generation (RAG) system retrieved.

{_MATERIAL}
The user message holds the question (<question>) for reference, the retrieved contexts \
(<contexts>, each <context> numbered) and the statements (<statements>, one <statement> each).

How to decide
- A statement is attributed (1) when the contexts state it or it follows directly from what \
they state; otherwise (0). Use the contexts alone, never your own knowledge.
- "supporting_context" is the index of the context that best supports an attributed \
statement, and null for a statement that is not attributed.

Reply with a JSON object whose "attributions" field has exactly one entry per statement, in \
the order the statements are given: "statement" (its text), "attributed" (1 or 0) and \
"supporting_context" (an index or null).
"""

_NONCOMMITTAL = """\
Noncommittal
- "noncommittal" is true when the answer avoids committing to an answer: it says it does not \
know or cannot tell, hedges between possibilities without settling on one, or stays so vague \
that it answers nothing ("I'm not sure", "it depends", "several factors may play a role").
- It is false when the answer commits to something, even something wrong, partial or off the \
point.
"""

QUESTIONS_PROMPT = f"""\
You read an answer and write the questions it answers. The questions are later compared with \
the question the answer was really given, to measure whether the answer addresses it.

{_MATERIAL}
The user message holds the answer (<rag_answer>) and nothing else: you do not see the \
original question, on purpose.

How to write them
- Write {GENERATED_QUESTIONS} different questions, each of which the answer as a whole would \
be a good, direct response to. Cover different aspects of what the answer says.
- Write natural questions a user might ask, in the answer's language, without quoting the \
answer at length.
- An evasive or noncommittal answer answers no real question: write the questions it \
literally responds to all the same.

{_NONCOMMITTAL}
Reply with a JSON object: "questions" (the list of questions), then "noncommittal" (true or \
false).
"""

RATING_PROMPT = f"""\
You rate how well the answer of a retrieval-augmented generation (RAG) system addresses the \
question it was asked. You rate relevance, not correctness: an on-topic answer with a wrong \
figure is still relevant.

{_MATERIAL}
The user message holds the question (<question>) and the answer (<rag_answer>).

Scale
- 1.0: the answer directly and completely addresses the question.
- 0.75: it mostly addresses the question, with minor gaps or some padding.
- 0.5: it partly addresses the question.
- 0.25: it is only tangentially related to the question.
- 0.0: it is unrelated to the question, or says only that it cannot answer.
Values between these anchors are allowed.

{_NONCOMMITTAL}
Reply with a JSON object: "reasoning" (one or two sentences, written first), then \
"noncommittal" (true or false), then "score" (a number from 0 to 1).
"""

SYSTEM_PROMPTS: dict[str, str] = {
    CLAIMS_ROLE: CLAIMS_PROMPT,
    VERDICTS_ROLE: VERDICTS_PROMPT,
    CONTEXTS_ROLE: CONTEXTS_PROMPT,
    STATEMENTS_ROLE: STATEMENTS_PROMPT,
    ATTRIBUTIONS_ROLE: ATTRIBUTIONS_PROMPT,
    QUESTIONS_ROLE: QUESTIONS_PROMPT,
    RATING_ROLE: RATING_PROMPT,
}

# -- output schemas (property order: reasoning before the decision) ------------------------------

_STRING = {"type": "string"}
_STRING_LIST = {"type": "array", "items": _STRING}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


CLAIMS_SCHEMA = _object({CLAIMS_ROLE: _STRING_LIST})
VERDICTS_SCHEMA = _object(
    {
        VERDICTS_ROLE: {
            "type": "array",
            "items": _object(
                {
                    "claim": _STRING,
                    "reason": _STRING,
                    "supported": {"type": "integer", "enum": [0, 1]},
                }
            ),
        }
    }
)
CONTEXTS_SCHEMA = _object(
    {
        CONTEXTS_ROLE: {
            "type": "array",
            "items": _object(
                {
                    "index": {"type": "integer"},
                    "reasoning": _STRING,
                    "relevant": {"type": "boolean"},
                    "score": {"type": "integer", "description": "0 to 100"},
                }
            ),
        }
    }
)
STATEMENTS_SCHEMA = _object({STATEMENTS_ROLE: _STRING_LIST})
ATTRIBUTIONS_SCHEMA = _object(
    {
        ATTRIBUTIONS_ROLE: {
            "type": "array",
            "items": _object(
                {
                    "statement": _STRING,
                    "attributed": {"type": "integer", "enum": [0, 1]},
                    "supporting_context": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                }
            ),
        }
    }
)
_BOOLEAN = {"type": "boolean"}
QUESTIONS_SCHEMA = _object({QUESTIONS_ROLE: _STRING_LIST, NONCOMMITTAL: _BOOLEAN})
RATING_SCHEMA = _object(
    {
        "reasoning": _STRING,
        NONCOMMITTAL: _BOOLEAN,
        RATING_ROLE: {"type": "number", "description": "0 to 1"},
    }
)

SCHEMAS: dict[str, dict[str, Any]] = {
    CLAIMS_ROLE: CLAIMS_SCHEMA,
    VERDICTS_ROLE: VERDICTS_SCHEMA,
    CONTEXTS_ROLE: CONTEXTS_SCHEMA,
    STATEMENTS_ROLE: STATEMENTS_SCHEMA,
    ATTRIBUTIONS_ROLE: ATTRIBUTIONS_SCHEMA,
    QUESTIONS_ROLE: QUESTIONS_SCHEMA,
    RATING_ROLE: RATING_SCHEMA,
}

# -- parsed answers ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimVerdict:
    claim: str
    supported: bool
    reason: str


@dataclass(frozen=True)
class ContextJudgement:
    index: int  # 1-based, the retriever's rank
    relevant: bool
    score: int  # 0-100
    reasoning: str


@dataclass(frozen=True)
class Attribution:
    statement: str
    attributed: bool
    supporting_context: int | None


@dataclass(frozen=True)
class GeneratedQuestions:
    questions: tuple[str, ...]
    noncommittal: bool  # evasive or vague: answer relevance 0 whatever the questions


@dataclass(frozen=True)
class RelevanceRating:
    score: float  # 0-1
    reasoning: str
    noncommittal: bool  # evasive or vague: answer relevance 0 whatever the score


def parse_claims(payload: Mapping[str, Any]) -> tuple[str, ...]:
    return reply_fields.texts(payload, CLAIMS_ROLE, "faithfulness claims")


def parse_statements(payload: Mapping[str, Any]) -> tuple[str, ...]:
    return reply_fields.texts(payload, STATEMENTS_ROLE, "context recall statements")


def parse_questions(payload: Mapping[str, Any]) -> GeneratedQuestions:
    what = "answer relevance questions"
    return GeneratedQuestions(
        questions=reply_fields.texts(payload, QUESTIONS_ROLE, what),
        noncommittal=reply_fields.flag(payload, NONCOMMITTAL, what),
    )


def _entries(
    payload: Mapping[str, Any], name: str, what: str, expected: int, unit: str
) -> list[Mapping[str, Any]]:
    entries = reply_fields.items(payload, name, what)
    if len(entries) != expected:
        raise ReplyError(
            f"{what}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} for "
            f"{expected} {unit}{'' if expected == 1 else 's'}"
        )
    return [reply_fields.obj(entry, what) for entry in entries]


def verdicts_parser(
    claims: Sequence[str],
) -> Callable[[Mapping[str, Any]], tuple[ClaimVerdict, ...]]:
    """The parser of a verification reply for ``claims`` (one verdict per claim, in order)."""
    what = "faithfulness verdicts"

    def parse(payload: Mapping[str, Any]) -> tuple[ClaimVerdict, ...]:
        entries = _entries(payload, VERDICTS_ROLE, what, len(claims), "claim")
        return tuple(
            ClaimVerdict(
                claim=claim,
                supported=reply_fields.binary(entry, "supported", what) == 1,
                reason=_optional_text(entry, "reason"),
            )
            for claim, entry in zip(claims, entries, strict=True)
        )

    return parse


def contexts_parser(count: int) -> Callable[[Mapping[str, Any]], tuple[ContextJudgement, ...]]:
    """The parser of a context-relevance reply for ``count`` contexts (each index once)."""
    what = "context precision"

    def parse(payload: Mapping[str, Any]) -> tuple[ContextJudgement, ...]:
        entries = _entries(payload, CONTEXTS_ROLE, what, count, "context")
        judged: dict[int, ContextJudgement] = {}
        for entry in entries:
            index = reply_fields.whole_number(entry, "index", what, 1, count)
            if index in judged:
                raise ReplyError(f"{what}: context {index} is judged twice")
            judged[index] = ContextJudgement(
                index=index,
                relevant=reply_fields.flag(entry, "relevant", what),
                score=reply_fields.whole_number(entry, "score", what, 0, 100),
                reasoning=_optional_text(entry, "reasoning"),
            )
        return tuple(judged[index] for index in sorted(judged))

    return parse


def attributions_parser(
    statements: Sequence[str], context_count: int
) -> Callable[[Mapping[str, Any]], tuple[Attribution, ...]]:
    """The parser of an attribution reply (one entry per statement, in order)."""
    what = "context recall attributions"

    def parse(payload: Mapping[str, Any]) -> tuple[Attribution, ...]:
        entries = _entries(payload, ATTRIBUTIONS_ROLE, what, len(statements), "statement")
        result = []
        for statement, entry in zip(statements, entries, strict=True):
            attributed = reply_fields.binary(entry, "attributed", what) == 1
            supporting = reply_fields.optional_whole_number(entry, "supporting_context", what)
            # An index outside the contexts says nothing usable; the attribution itself stands.
            if supporting is not None and not 1 <= supporting <= context_count:
                supporting = None
            result.append(Attribution(statement, attributed, supporting if attributed else None))
        return tuple(result)

    return parse


def parse_rating(payload: Mapping[str, Any]) -> RelevanceRating:
    what = "answer relevance rating"
    return RelevanceRating(
        score=reply_fields.number(payload, RATING_ROLE, what, 0.0, 1.0),
        reasoning=_optional_text(payload, "reasoning"),
        noncommittal=reply_fields.flag(payload, NONCOMMITTAL, what),
    )


def _optional_text(entry: Mapping[str, Any], name: str) -> str:
    value = entry.get(name, "")
    return value.strip() if isinstance(value, str) else ""


# -- requests ------------------------------------------------------------------------------------


def claims_request(question: str, answer: str) -> ModelRequest:
    return ModelRequest(
        system=CLAIMS_PROMPT,
        user=user_message(
            "Break the RAG answer below into atomic factual claims.",
            tagged(QUESTION, question),
            tagged(RAG_ANSWER, answer),
        ),
        schema=CLAIMS_SCHEMA,
        max_tokens=LIST_MAX_TOKENS,
        purpose="faithfulness claims",
        parse=parse_claims,
    )


def verdicts_request(question: str, contexts: Sequence[str], claims: Sequence[str]) -> ModelRequest:
    return ModelRequest(
        system=VERDICTS_PROMPT,
        user=user_message(
            "Check each claim against the contexts.",
            tagged(QUESTION, question),
            contexts_block(contexts),
            claims_block(claims),
        ),
        schema=VERDICTS_SCHEMA,
        max_tokens=_per_item_max_tokens(len(claims)),
        purpose="faithfulness verdicts",
        parse=verdicts_parser(tuple(claims)),
    )


def contexts_request(question: str, ground_truth: str, contexts: Sequence[str]) -> ModelRequest:
    return ModelRequest(
        system=CONTEXTS_PROMPT,
        user=user_message(
            "Judge each retrieved context.",
            tagged(QUESTION, question),
            tagged(GROUND_TRUTH, ground_truth),
            contexts_block(contexts),
        ),
        schema=CONTEXTS_SCHEMA,
        max_tokens=_per_item_max_tokens(len(contexts)),
        purpose="context precision",
        parse=contexts_parser(len(contexts)),
    )


def statements_request(question: str, ground_truth: str) -> ModelRequest:
    return ModelRequest(
        system=STATEMENTS_PROMPT,
        user=user_message(
            "Break the reference answer below into atomic statements.",
            tagged(QUESTION, question),
            tagged(GROUND_TRUTH, ground_truth),
        ),
        schema=STATEMENTS_SCHEMA,
        max_tokens=LIST_MAX_TOKENS,
        purpose="context recall statements",
        parse=parse_statements,
    )


def attributions_request(
    question: str, contexts: Sequence[str], statements: Sequence[str]
) -> ModelRequest:
    return ModelRequest(
        system=ATTRIBUTIONS_PROMPT,
        user=user_message(
            "Check whether each statement can be found in the contexts.",
            tagged(QUESTION, question),
            contexts_block(contexts),
            statements_block(statements),
        ),
        schema=ATTRIBUTIONS_SCHEMA,
        max_tokens=_per_item_max_tokens(len(statements)),
        purpose="context recall attributions",
        parse=attributions_parser(tuple(statements), len(contexts)),
    )


def questions_request(answer: str) -> ModelRequest:
    return ModelRequest(
        system=QUESTIONS_PROMPT,
        user=user_message(
            f"Write {GENERATED_QUESTIONS} questions that this answer answers.",
            tagged(RAG_ANSWER, answer),
        ),
        schema=QUESTIONS_SCHEMA,
        max_tokens=SHORT_MAX_TOKENS,
        purpose="answer relevance questions",
        parse=parse_questions,
    )


def rating_request(question: str, answer: str) -> ModelRequest:
    return ModelRequest(
        system=RATING_PROMPT,
        user=user_message(
            "Rate how well the answer addresses the question.",
            tagged(QUESTION, question),
            tagged(RAG_ANSWER, answer),
        ),
        schema=RATING_SCHEMA,
        max_tokens=SHORT_MAX_TOKENS,
        purpose="answer relevance rating",
        parse=parse_rating,
    )
