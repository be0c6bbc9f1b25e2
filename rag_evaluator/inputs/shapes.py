"""The shapes RAG systems write their output in, and the entries found in them.

Pure: works on values that ``json.loads`` already produced. Holds the one alias
table for question, answer and context field names; ``inputs/rag_json.py`` reads
the files and ``convert/matching.py`` matches the entries to questions.csv.

Shapes, tried in this order on each file's top-level value:

1. a list of objects ``[{"question": ..., "answer": ...}, ...]``;
2. an object holding such a list under a container key (``results``, ``data``, ...),
   possibly one or two container levels down (``{"data": {"results": [...]}}``);
3. a single object that is itself an entry (has a question and an answer field);
4. a flat mapping ``{"question text or ID": "answer", ...}``; a value may also be an
   object with answer/context fields.

JSON Lines files are split by the reader; each line is one entry object.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.fields import column_key, parse_list_literal, parse_question_id
from rag_evaluator.text.snippets import quote_snippet

# Field names are compared after column_key(): case, spaces, underscores and
# punctuation are ignored, so "userInput", "user-input" and "USER_INPUT" all match
# "user_input". Earlier names win when an object has several of them.
QUESTION_FIELDS: tuple[str, ...] = (
    "question",
    "query",
    "prompt",
    "input",
    "user_input",
    "question_text",
    # Tonic Validate runs.
    "reference_question",
    # ARES synthetic queries.
    "synthetic_query",
    # Chat-style input: a list of messages whose last user turn is the question.
    "messages",
)
ANSWER_FIELDS: tuple[str, ...] = (
    "answer",
    "response",
    "output",
    "generated_answer",
    "prediction",
    "result",
    "rag_answer",
    # deepeval's LLMTestCase.
    "actual_output",
    # Tonic Validate runs.
    "llm_answer",
    # MTRAG: [{"text": ...}].
    "predictions",
)
# The retrieved chunks, by the names RAG tools give them. Preferred over the generic names
# below, which RAG outputs often fill with references (file names, URLs, {"title", "url"})
# beside the chunks themselves.
CHUNK_CONTEXT_FIELDS: tuple[str, ...] = (
    "retrieved_contexts",
    "contexts",
    # deepeval's LLMTestCase; it must come before "context", which deepeval uses for the
    # golden context (see GOLDEN_CONTEXT_WHEN_RETRIEVAL_CONTEXT).
    "retrieval_context",
    # RAGChecker writes the singular form.
    "retrieved_context",
    "context",
    # Tonic Validate runs (llm_context_list in its callbacks).
    "llm_context",
    "llm_context_list",
)
# Names that may hold the chunks or only references to documents; those most often holding
# text come first.
GENERIC_CONTEXT_FIELDS: tuple[str, ...] = (
    # LlamaIndex responses: [{"node": {"text": ...}, "score": ...}].
    "source_nodes",
    # LangChain: [{"page_content": ...}].
    "source_documents",
    "documents",
    # ARES: the one retrieved document.
    "document",
    "sources",
)
# Among the context fields a record has, the first (in this order) holding an item with text
# is read; when none holds one, the first present (its [] still says "nothing retrieved").
CONTEXT_FIELDS: tuple[str, ...] = (*CHUNK_CONTEXT_FIELDS, *GENERIC_CONTEXT_FIELDS)
# The reference (ground-truth) answer carried beside the answer: ragas "reference" (a
# string, or a list of strings in some exports), seed 002 "reference_answer", RAGChecker
# "gt_answer", deepeval "expected_output", older ragas "ground_truth(s)".
REFERENCE_FIELDS: tuple[str, ...] = (
    "reference",
    "ground_truth",
    "reference_answer",
    "gt_answer",
    "expected_output",
    "expected_answer",
    "golden_answer",
    "gold_answer",
    "correct_answer",
    "ground_truths",
    "answer_key",
    # MTRAG: [{"speaker": "agent", "text": ...}].
    "targets",
    # SQuAD and the HF datasets built like it: {"text": [...], "answer_start": [...]}.
    "answers",
)
# The golden chunks: ragas "reference_contexts", and rag-eval's own "Relevant Contexts".
REFERENCE_CONTEXT_FIELDS: tuple[str, ...] = (
    "reference_contexts",
    "relevant_contexts",
    "golden_contexts",
    "gold_contexts",
    "ground_truth_contexts",
    "relevant_chunks",
)
# deepeval writes the retrieved chunks to "retrieval_context" and the ideal ones to
# "context": in a record with one of deepeval's own field names, "context" holds golden chunks.
DEEPEVAL_FIELDS: tuple[str, ...] = ("retrieval_context", "actual_output", "expected_output")
DEEPEVAL_GOLDEN_CONTEXT_FIELD = "context"
REQUIRED_FACT_FIELDS: tuple[str, ...] = ("required_facts", "key_facts", "must_include")
# Fields that number a record's question (RAGChecker "query_id"). "id" comes last: some
# exports use it for other things, a more specific name wins.
QUESTION_ID_FIELDS: tuple[str, ...] = (
    "question_number",
    "question_id",
    "query_id",
    # MTRAG: "<conversation hash><::><turn>".
    "task_id",
    "qid",
    "question_no",
    "id",
)
# Retrieval scores as a list parallel to the contexts, on the record itself.
RETRIEVAL_SCORE_FIELDS: tuple[str, ...] = (
    "retrieval_scores",
    "scores",
    "similarity_scores",
    "similarities",
    "context_scores",
)
# A retrieval score on a context object itself (LlamaIndex's NodeWithScore: "score").
CONTEXT_SCORE_FIELDS: tuple[str, ...] = (
    "score",
    "similarity",
    "similarity_score",
    "relevance_score",
    "scores",
)
# Objects whose scalar fields are a record's metadata (deepeval "additional_metadata").
METADATA_CONTAINER_FIELDS: tuple[str, ...] = ("metadata", "additional_metadata", "meta")
# Where the text of a context item lives when the item is an object
# (LangChain documents use page_content, LlamaIndex nodes text). A LlamaIndex
# NodeWithScore keeps its text one level down, under "node".
CONTEXT_TEXT_FIELDS: tuple[str, ...] = ("text", "content", "page_content")
CONTEXT_NODE_FIELD = "node"
# Keys of an object that holds the list of entries.
CONTAINER_FIELDS: tuple[str, ...] = (
    "results",
    "data",
    "items",
    "records",
    "outputs",
    "samples",
    # deepeval's saved test runs ("testCases").
    "test_cases",
    # Tonic Validate runs.
    "run_data",
)
# Chat messages: who speaks, and what they say (OpenAI "role"/"content", MTRAG
# "speaker"/"text", ShareGPT "from"/"value"). The question is the last user turn.
MESSAGE_ROLE_FIELDS: tuple[str, ...] = ("role", "speaker", "from", "author")
MESSAGE_TEXT_FIELDS: tuple[str, ...] = ("content", "text", "value", "message")
USER_ROLES: tuple[str, ...] = ("user", "human")
# The metadata column holding the turns before a chat-style question.
CONVERSATION_COLUMN = "Conversation"

# Containers nest in practice ({"data": {"results": [...]}}) but not deeply.
MAX_CONTAINER_DEPTH = 3


@dataclass(frozen=True)
class RagEntry:
    """One answer found in a RAG output file, before matching.

    ``question`` is the text to match; it is ``None`` when the file only gave an ID
    key (flat mapping ``{"Q3": "..."}``), in which case ``question_id`` is set.
    ``contexts`` is ``[]`` when the system reported that it retrieved nothing and
    ``None`` when its output does not say what it retrieved (no context field, ``null``,
    or only context items without text).
    """

    source_file: str
    location: str
    question: str | None
    answer: str
    contexts: list[str] | None = None
    question_id: int | None = None
    # Parallel to ``contexts``; ``None`` when the output reports no retrieval score.
    retrieval_scores: list[float] | None = None
    # The reference carried beside the answer (ragas "reference", RAGChecker "gt_answer").
    reference: str | None = None
    reference_contexts: list[str] | None = None
    # Several reference answers the reference field listed (``reference`` joins them).
    reference_answers: tuple[str, ...] | None = None

    @property
    def origin(self) -> str:
        """Where the entry came from, for messages: ``results.json item 3``."""
        return f"{self.source_file} {self.location}"


@dataclass(frozen=True)
class ExtractedEntries:
    """The entries of one file, what shape they were in, and what had to be skipped."""

    shape: str
    entries: list[RagEntry]
    problems: list[str] = field(default_factory=list)
    skipped_entries: int = 0
    # "item 1: <why, and the fix>" for the first skipped entry: the reason given when a
    # file has no usable entry at all.
    first_skip_reason: str = ""


def _alias_keys(aliases: Iterable[str]) -> list[str]:
    return [column_key(alias) for alias in aliases]


_QUESTION_KEYS = _alias_keys(QUESTION_FIELDS)
_ANSWER_KEYS = _alias_keys(ANSWER_FIELDS)
_CONTEXT_KEYS = _alias_keys(CONTEXT_FIELDS)
_CONTEXT_TEXT_KEYS = _alias_keys(CONTEXT_TEXT_FIELDS)
_CONTAINER_KEYS = _alias_keys(CONTAINER_FIELDS)
REFERENCE_KEYS = _alias_keys(REFERENCE_FIELDS)
REFERENCE_CONTEXT_KEYS = _alias_keys(REFERENCE_CONTEXT_FIELDS)
REQUIRED_FACT_KEYS = _alias_keys(REQUIRED_FACT_FIELDS)
QUESTION_ID_KEYS = _alias_keys(QUESTION_ID_FIELDS)
RETRIEVAL_SCORE_KEYS = _alias_keys(RETRIEVAL_SCORE_FIELDS)
CONTEXT_SCORE_KEYS = _alias_keys(CONTEXT_SCORE_FIELDS)
METADATA_CONTAINER_KEYS = _alias_keys(METADATA_CONTAINER_FIELDS)
QUESTION_KEYS = _QUESTION_KEYS
ANSWER_KEYS = _ANSWER_KEYS
CONTEXT_KEYS = _CONTEXT_KEYS
_DEEPEVAL_KEYS = _alias_keys(DEEPEVAL_FIELDS)
_DEEPEVAL_GOLDEN_KEY = column_key(DEEPEVAL_GOLDEN_CONTEXT_FIELD)

# Said when a dataset holds answers but no reference: a golden set's lone "answer" field is
# read as the RAG system's answer (as ragas names it), so its references seem missing.
GOLDEN_SET_HINT = (
    "if its answers are your reference answers (a golden set), name that field reference, "
    "ground_truth or expected_answer: answer is read as the RAG system's"
)


def clean_text(text: str) -> str:
    """Make decoded JSON text safe to write: no NUL characters, no lone surrogates."""
    # JSON allows "\ud800" on its own, which no UTF-8 file can hold.
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def find_field(record: Mapping[str, object], alias_keys: Sequence[str]) -> tuple[str, object]:
    """The first field of ``record`` (in alias order) whose name is one of the aliases."""
    by_key: dict[str, str] = {}
    for name in record:
        by_key.setdefault(column_key(name), name)
    for alias_key in alias_keys:
        if alias_key in by_key:
            name = by_key[alias_key]
            return name, record[name]
    return "", None


def _has_field(record: Mapping[str, object], alias_keys: Sequence[str]) -> bool:
    return any(column_key(name) in alias_keys for name in record)


def _scalar_text(value: object) -> str | None:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def _answer_text(value: object) -> str | None:
    """The answer text a field holds, or ``None`` when it holds no usable text."""
    if value is None:
        return ""
    scalar = _scalar_text(value)
    if scalar is not None:
        return scalar
    if isinstance(value, dict):
        # {"answer": {"text": "..."}} and {"output": {"answer": "..."}} both occur.
        _, inner = find_field(value, [*_CONTEXT_TEXT_KEYS, *_ANSWER_KEYS])
        return _scalar_text(inner)
    if isinstance(value, list):
        return joined_texts(value)
    return None


def _list_texts(items: Sequence[object]) -> list[str] | None:
    """The texts of a list: strings, and objects holding a text or answer field (MTRAG's
    ``[{"text": ...}]``); ``None`` when an item holds neither."""
    parts: list[str] = []
    for part in items:
        if isinstance(part, dict):
            _, part = find_field(part, [*_CONTEXT_TEXT_KEYS, *_ANSWER_KEYS])
        if not isinstance(part, str):
            return None
        parts.append(part)
    return parts


def joined_texts(items: Sequence[object]) -> str | None:
    """The texts of a list joined by newlines; ``None`` when an item holds no text."""
    parts = _list_texts(items)
    return None if parts is None else clean_text("\n".join(parts))


def reference_items(value: object) -> list[str] | None:
    """The answers a reference field gives, repeats dropped (SQuAD lists one per annotator):
    a text, a list of texts or of objects holding one (MTRAG's ``[{"text": ...}]``), or an
    object whose text field holds either (SQuAD's ``{"text": [...], "answer_start": [...]}``);
    ``None`` when it holds no text."""
    if isinstance(value, dict):
        _, value = find_field(value, [*_CONTEXT_TEXT_KEYS, *_ANSWER_KEYS])
    if isinstance(value, list):
        items = _list_texts(value)
    else:
        scalar = _scalar_text(value)
        items = None if scalar is None else [scalar]
    return None if items is None else list(dict.fromkeys(clean_text(item) for item in items))


def listed_references(value: object) -> tuple[str, ...] | None:
    """The reference answers a reference field lists, when it lists two or more distinct
    non-blank ones (they are also joined into one text); else ``None``."""
    if not isinstance(value, list | dict):
        return None
    answers = tuple(part for part in reference_items(value) or () if part.strip())
    return answers if len(answers) > 1 else None


@dataclass(frozen=True)
class ChatQuestion:
    """A chat-style question: the last user turn, and the turns before it as text."""

    question: str
    conversation: str


_ROLE_KEYS = _alias_keys(MESSAGE_ROLE_FIELDS)
_MESSAGE_TEXT_KEYS = _alias_keys(MESSAGE_TEXT_FIELDS)


def chat_question(value: object) -> ChatQuestion | None:
    """The question of a list of messages (``[{"role": "user", "content": ...}, ...]``): its
    last user turn, with the turns before it one ``role: text`` a line. ``None`` when the
    value is no such list or has no user turn."""
    if not isinstance(value, list) or not value:
        return None
    turns: list[tuple[str, str]] = []
    for message in value:
        if not isinstance(message, dict):
            return None
        _, role = find_field(message, _ROLE_KEYS)
        _, text = find_field(message, _MESSAGE_TEXT_KEYS)
        if isinstance(text, list):
            # OpenAI's content parts: [{"type": "text", "text": ...}].
            text = joined_texts([part for part in text if not _is_non_text_part(part)])
        if not isinstance(role, str) or not isinstance(text, str):
            return None
        turns.append((role.strip(), clean_text(text)))
    users = [index for index, (role, _) in enumerate(turns) if role.casefold() in USER_ROLES]
    if not users:
        return None
    last = users[-1]
    conversation = "\n".join(f"{role}: {text}" for role, text in turns[:last])
    return ChatQuestion(turns[last][1], conversation)


def _is_non_text_part(part: object) -> bool:
    return isinstance(part, dict) and part.get("type") not in (None, "text")


def _context_object_text(item: Mapping[str, object]) -> str | None:
    for name, value in item.items():
        if column_key(name) in _CONTEXT_TEXT_KEYS and isinstance(value, str):
            return value
    return None


def _context_texts(value: object) -> tuple[list[str] | None, int]:
    """The context strings a field holds, and how many items had no text to take.

    ``None`` (unknown) for a ``null`` field and for items none of which has text: what was
    retrieved cannot be told, which is not the same as retrieving nothing (``[]``).
    """
    read = read_contexts(value)
    return read.texts, read.dropped


@dataclass(frozen=True)
class ContextsRead:
    """The contexts of a field, their retrieval scores, and what could not be taken.

    ``scores`` is parallel to ``texts``, or ``None`` when the output reports no score (or
    not one for every kept context: ``score_problem`` then says why, with the fix).
    """

    texts: list[str] | None
    scores: list[float] | None
    dropped: int
    score_problem: str = ""


def score_number(value: object) -> float | None:
    """A retrieval score as a float: a finite JSON number (not a boolean), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _item_score(item: object) -> tuple[bool, object]:
    """Whether a context item carries a score field, and its value."""
    if not isinstance(item, dict):
        return False, None
    name, value = find_field(item, CONTEXT_SCORE_KEYS)
    return bool(name), value


def _context_items(value: object) -> list[object]:
    """The items of a context field: a list as it is; a string spelling a list (pandas
    ``to_json`` of a column read from CSV) that list; anything else a list of one."""
    parsed = parse_list_literal(value) if isinstance(value, str) else None
    if parsed is not None:
        return parsed
    return value if isinstance(value, list) else [value]


def read_contexts(value: object, parallel_scores: object = None) -> ContextsRead:
    """The context texts of a field with the retrieval score of each kept item.

    A score is read from the item itself (``score``, ``similarity``, ... on a context
    object) or, when no item has one, from ``parallel_scores`` (a list as long as the
    items). Items without text are dropped with their scores.
    """
    if value is None:
        return ContextsRead(None, None, 0)
    items = _context_items(value)
    scores_by_item, problem = _scores_by_item(items, parallel_scores)
    texts: list[str] = []
    scores: list[float | None] = []
    dropped = 0
    for index, item in enumerate(items):
        text = _context_item_text(item)
        if text is None:
            dropped += 1
        elif text.strip():
            texts.append(clean_text(text))
            scores.append(None if scores_by_item is None else score_number(scores_by_item[index]))
    if dropped and dropped == len(items):
        return ContextsRead(None, None, dropped, problem)
    if scores_by_item is None:
        return ContextsRead(texts, None, dropped, problem)
    kept_scores, problem = _kept_scores(scores)
    return ContextsRead(texts, kept_scores, dropped, problem)


def _scores_by_item(
    items: list[object], parallel_scores: object
) -> tuple[list[object] | None, str]:
    """The score value of each item (``None`` when the field gives no scores) and the
    problem with ``parallel_scores`` when they cannot go with the items."""
    own = [_item_score(item) for item in items]
    if any(has for has, _ in own):
        return [score for _, score in own], ""
    if parallel_scores is None:
        return None, ""
    if isinstance(parallel_scores, list) and len(parallel_scores) == len(items):
        return list(parallel_scores), ""
    count = (
        f"{len(parallel_scores)} scores"
        if isinstance(parallel_scores, list)
        else json_type(parallel_scores)
    )
    return None, (
        f"the retrieval scores are {count} for {_count(len(items), 'context')}. "
        "Give one number per context, in the same order"
    )


def _context_item_text(item: object) -> str | None:
    """The text of one context item: a string, a context object's text field (or its
    node's), a scalar spelled out; ``None`` when it holds none."""
    if isinstance(item, dict):
        text = _context_object_text(item)
        node = item.get(CONTEXT_NODE_FIELD)
        if text is None and isinstance(node, dict):
            text = _context_object_text(node)
        return text
    if isinstance(item, str):
        return item
    return _scalar_text(item)


def _kept_scores(scores: list[float | None]) -> tuple[list[float] | None, str]:
    """The kept contexts' scores when every one is a number; else none, and why."""
    if all(score is not None for score in scores):
        return [score for score in scores if score is not None], ""
    missing = sum(1 for score in scores if score is None)
    return None, (
        f"{_count(missing, 'context')} of {len(scores)} "
        f"{'has' if missing == 1 else 'have'} no number as its retrieval score. "
        "Give every context a numeric score, or none"
    )


def reference_text(value: object) -> str | None:
    """The reference answer a field holds: its answers (``reference_items``) joined by lines;
    ``None`` when it holds none or no text."""
    items = None if value is None else reference_items(value)
    return None if items is None else clean_text("\n".join(items))


def retrieval_scores_field(record: Mapping[str, object]) -> tuple[str, object]:
    """The field holding retrieval scores beside the contexts. An object under one of those
    names (Tonic Validate's ``"scores": {"answer_similarity": 4.0}``) holds another tool's
    metrics, not retrieval scores: it is not taken."""
    name, value = find_field(record, RETRIEVAL_SCORE_KEYS)
    if isinstance(value, dict):
        return "", None
    return name, value


def uses_deepeval_names(record: Mapping[str, object]) -> bool:
    """Whether a record has one of deepeval's own field names (``retrieval_context``,
    ``actual_output``, ``expected_output``)."""
    return _has_field(record, _DEEPEVAL_KEYS)


def golden_contexts_field(record: Mapping[str, object]) -> tuple[str, object]:
    """The field holding the golden chunks: ``reference_contexts`` and its aliases, or
    deepeval's ``context`` in a record that has ``retrieval_context``."""
    name, value = find_field(record, REFERENCE_CONTEXT_KEYS)
    if name:
        return name, value
    if _has_field(record, _DEEPEVAL_KEYS):
        return find_field(record, [_DEEPEVAL_GOLDEN_KEY])
    return "", None


def present_fields(
    record: Mapping[str, object], alias_keys: Sequence[str]
) -> list[tuple[str, object]]:
    """Every field of ``record`` an alias names, in alias order (a name spelled twice,
    ``answer`` and ``Answer``: each spelling, the earlier first)."""
    by_key: dict[str, list[str]] = {}
    for name in record:
        by_key.setdefault(column_key(name), []).append(name)
    return [(name, record[name]) for key in alias_keys for name in by_key.get(key, ())]


def has_context_text(value: object) -> bool:
    """Whether a context field holds at least one item with (non-blank) text."""
    if value is None:
        return False
    for item in _context_items(value):
        text = _context_item_text(item)
        if text is not None and text.strip():
            return True
    return False


def retrieved_contexts_field(record: Mapping[str, object]) -> tuple[str, object]:
    """The field holding the retrieved contexts (never deepeval's golden ``context``): of
    the context fields present, the first in ``CONTEXT_FIELDS`` order holding an item with
    text; when none holds one, the first present."""
    keys = _CONTEXT_KEYS
    if _has_field(record, _DEEPEVAL_KEYS):
        keys = [key for key in _CONTEXT_KEYS if key != _DEEPEVAL_GOLDEN_KEY]
    present = present_fields(record, keys)
    for name, value in present:
        if has_context_text(value):
            return name, value
    return present[0] if present else ("", None)


def answer_field(record: Mapping[str, object]) -> tuple[str, object]:
    """The answer field: of the answer fields present, the first in ``ANSWER_FIELDS`` order
    holding non-blank text; when none does, the first present (``("", None)``: none)."""
    present = present_fields(record, _ANSWER_KEYS)
    for name, value in present:
        text = _answer_text(value)
        if text is not None and text.strip():
            return name, value
    return present[0] if present else ("", None)


def conflicting_answers(record: Mapping[str, object]) -> str | None:
    """Why the record's answer cannot be told, with the fix, when two answer fields hold
    different non-blank texts (a gold ``answer`` beside a model's ``prediction``); else
    ``None``."""
    first: tuple[str, str] | None = None
    for name, value in present_fields(record, _ANSWER_KEYS):
        text = _answer_text(value)
        if text is None or not text.strip():
            continue
        if first is None:
            first = (name, text.strip())
        elif text.strip() != first[1]:
            return (
                f"the answer fields '{first[0]}' and '{name}' hold different texts, and only "
                "one can be the RAG system's answer. Name the reference answer reference, "
                "ground_truth or expected_answer, or drop one of the two fields"
            )
    return None


def wrong_question_type(name: str, value: object) -> str:
    """Why a question field of the wrong type cannot be read, with the fix; a list or an
    object of several values (one column of a column-oriented file: ``Dataset.to_dict()``,
    pandas' ``orient="list"`` or ``"columns"``) is named as such."""
    said = f"the '{name}' field is {json_type(value)}, not question text"
    values = list(value.values()) if isinstance(value, dict) else value
    if (
        isinstance(values, list)
        and len(values) > 1
        and not any(isinstance(item, list | dict) for item in values)
    ):
        return (
            f"{said}: it holds {len(values)} values, so the file looks column-oriented (one "
            "list or object per field, as Dataset.to_dict(), pandas to_dict(orient='list') "
            "or to_json() write). Write one object per record: a JSON array of objects or "
            "JSON Lines (pandas: to_json(orient='records', lines=True))"
        )
    return f"{said}. Write the question as a string"


@dataclass(frozen=True)
class CarriedFields:
    """What a RAG output record carries besides its question and answer."""

    contexts: ContextsRead
    reference: str | None
    reference_contexts: list[str] | None
    problems: list[str]
    reference_answers: tuple[str, ...] | None = None  # when the field lists several


def carried_fields(record: Mapping[str, object]) -> CarriedFields:
    """The contexts (with scores), reference and golden chunks of a record, read leniently:
    a field of the wrong type is left out with a problem naming it and the fix."""
    problems: list[str] = []
    _, contexts_value = retrieved_contexts_field(record)
    _, parallel = retrieval_scores_field(record)
    contexts = read_contexts(contexts_value, parallel)
    if contexts.score_problem:
        problems.append(f"{contexts.score_problem} (scores left out)")
    reference_name, reference_value = find_field(record, REFERENCE_KEYS)
    reference = reference_text(reference_value)
    if reference_name and reference_value is not None and reference is None:
        problems.append(
            f"the '{reference_name}' field is {json_type(reference_value)}, not reference "
            "text (left out). Write the reference as a string"
        )
    _, golden_value = golden_contexts_field(record)
    golden, _ = _context_texts(golden_value)
    answers = listed_references(reference_value) if reference else None
    return CarriedFields(contexts, reference, golden, problems, answers)


@dataclass
class _Collector:
    source_file: str
    entries: list[RagEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dropped_contexts: int = 0
    skipped_entries: int = 0
    first_skip_reason: str = ""

    def problem(self, location: str, message: str) -> None:
        self.skipped_entries += 1
        self.first_skip_reason = self.first_skip_reason or f"{location}: {message}"
        self.problems.append(f"{self.source_file} {location}: {message} (entry skipped)")

    def add(
        self,
        location: str,
        question: str | None,
        answer_value: object,
        record: Mapping[str, object] | None,
        question_id: int | None = None,
    ) -> None:
        answer = _answer_text(answer_value)
        if answer is None:
            self.problem(location, _no_answer_text(answer_value))
            return
        carried = carried_fields(record or {})
        self.dropped_contexts += carried.contexts.dropped
        for note in carried.problems:
            # The answer is still usable: only the carried field is left out.
            self.problems.append(f"{self.source_file} {location}: {note}")
        self.entries.append(
            RagEntry(
                self.source_file,
                location,
                question,
                answer,
                carried.contexts.texts,
                question_id,
                retrieval_scores=carried.contexts.scores,
                reference=carried.reference,
                reference_contexts=carried.reference_contexts,
                reference_answers=carried.reference_answers,
            )
        )

    def add_record(self, location: str, record: object) -> None:
        if not isinstance(record, dict):
            self.problem(
                location,
                f"this item is {json_type(record)}, not an object with question and answer "
                "fields. Remove it or make it such an object",
            )
            return
        question_name, question_value = find_field(record, _QUESTION_KEYS)
        if not question_name:
            self.problem(
                location,
                f"no question field (fields found: {_shown_fields(record)}). "
                f"Name it one of: {', '.join(QUESTION_FIELDS)}",
            )
            return
        question = _scalar_text(question_value)
        chat = chat_question(question_value)
        if chat is not None:
            question = chat.question
        if question is None:
            self.problem(location, wrong_question_type(question_name, question_value))
            return
        if not question.strip():
            self.problem(location, f"the '{question_name}' field is blank. Fill in the question")
            return
        self.add_answer(location, question, record)

    def add_answer(
        self,
        location: str,
        question: str | None,
        record: Mapping[str, object],
        question_id: int | None = None,
    ) -> None:
        """The entry of a record with its answer field; skipped when it has none, or two
        answer fields holding different texts."""
        answer_name, answer_value = answer_field(record)
        if not answer_name:
            self.problem(
                location,
                f"no answer field (fields found: {_shown_fields(record)}). "
                f"Name it one of: {', '.join(ANSWER_FIELDS)}",
            )
            return
        conflict = conflicting_answers(record)
        if conflict is not None:
            self.problem(location, conflict)
            return
        self.add(location, question, answer_value, record, question_id)

    def add_mapping_item(self, key: str, value: object) -> None:
        location = f"key {quote_snippet(key, 40)}"
        if isinstance(value, dict) and _has_field(value, _QUESTION_KEYS):
            # The value carries its own question text: match by that, not the key.
            self.add_record(location, value)
            return
        question_id = parse_question_id(key)
        question = None if question_id is not None else clean_text(key)
        if question is not None and not question.strip():
            self.problem(
                location,
                "the key is blank. Use the question text or its number (such as Q1) as the key",
            )
            return
        if isinstance(value, dict):
            self.add_answer(location, question, value, question_id)
        elif isinstance(value, str) or value is None:
            self.add(location, question, value, None, question_id)
        else:
            self.problem(
                location,
                f"the value is {json_type(value)}, not an answer text. Write the answer as a "
                "string",
            )

    def result(self, shape: str) -> ExtractedEntries:
        problems = list(self.problems)
        if self.dropped_contexts:
            problems.append(
                f"{self.source_file}: {_count(self.dropped_contexts, 'context item')} had no "
                f"{'/'.join(CONTEXT_TEXT_FIELDS)} text and "
                f"{'was' if self.dropped_contexts == 1 else 'were'} left out. Give each context "
                f"object one of the fields {', '.join(CONTEXT_TEXT_FIELDS)}"
            )
        return ExtractedEntries(
            shape, self.entries, problems, self.skipped_entries, self.first_skip_reason
        )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def json_type(value: object) -> str:
    """The JSON type of ``value`` with its article, for messages: ``an object``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _no_answer_text(value: object) -> str:
    """Why an answer field's value gave no text, and the fix."""
    fix = "Write the answer as a string"
    if isinstance(value, dict):
        return (
            f"the answer is an object with no {'/'.join(CONTEXT_TEXT_FIELDS)} or answer text "
            f"in it (fields found: {_shown_fields(value)}). {fix}"
        )
    if isinstance(value, list):
        return f"the answer is a list that does not hold only strings. {fix}"
    return f"the answer is {json_type(value)}, not text. {fix}"


def _shown_fields(record: Mapping[str, object], limit: int = 8) -> str:
    names = [quote_snippet(name, 30) for name in list(record)[:limit]]
    if len(record) > limit:
        names.append(f"… {len(record) - limit} more")
    return ", ".join(names) if names else "none"


def container_list(value: Mapping[str, object]) -> tuple[str, list] | None:
    """The list of entries under a container key, with the key path that led to it."""
    names = container_path(value)
    if names is None:
        return None
    inner: Any = value
    for name in names:
        inner = inner[name]
    return ".".join(names), inner


def container_path(value: Mapping[str, object], depth: int = 1) -> tuple[str, ...] | None:
    """The keys leading to the list of entries under a container key (the first container
    key, in the order of ``CONTAINER_FIELDS``, holding a list, or an object holding one up to
    ``MAX_CONTAINER_DEPTH`` levels down); ``None`` when there is none. Only whether a value
    is a list or an object is looked at: an outline of the document will do."""
    for container_key in _CONTAINER_KEYS:
        for name, inner in value.items():
            if column_key(name) != container_key:
                continue
            if isinstance(inner, list):
                return (name,)
            if isinstance(inner, dict) and depth < MAX_CONTAINER_DEPTH:
                found = container_path(inner, depth + 1)
                if found is not None:
                    return (name, *found)
    return None


def _could_be_answer(value: object) -> bool:
    """Whether a flat-mapping value looks like an answer: text, or an object with one."""
    return isinstance(value, str) or (isinstance(value, dict) and _has_field(value, _ANSWER_KEYS))


def _holds_entries(items: list) -> bool:
    return any(isinstance(item, dict) and _has_field(item, _QUESTION_KEYS) for item in items)


_EMPTY_FIX = "Export the RAG output again, or move the file out of the folder"


def _unknown_shape(source_file: str, detail: str) -> InputError:
    return InputError(
        f"{source_file} has a JSON shape rag-eval does not know ({detail}). Expected a "
        'list of {"question": ..., "answer": ...} objects, such a list under "results" '
        f"(or {', '.join(CONTAINER_FIELDS[1:])}), or a flat mapping of question to answer"
    )


def extract_entries(value: object, source_file: str) -> ExtractedEntries:
    """Find the entries in a parsed JSON document; raise ``InputError`` for an unknown shape."""
    collector = _Collector(source_file)
    if isinstance(value, list):
        if not value:
            raise InputError(
                f"{source_file} holds an empty list: there is nothing to convert. {_EMPTY_FIX}"
            )
        if not any(isinstance(item, dict) for item in value):
            raise _unknown_shape(source_file, "a list with no objects in it")
        for index, item in enumerate(value, start=1):
            collector.add_record(f"item {index}", item)
        return collector.result("list of objects")
    if not isinstance(value, dict):
        raise _unknown_shape(source_file, f"the top level is {json_type(value)}")
    if not value:
        raise InputError(
            f"{source_file} holds an empty object: there is nothing to convert. {_EMPTY_FIX}"
        )
    container = container_list(value)
    # A single entry may itself have a "data"/"result" field; it is still one
    # entry unless that container holds entry-like objects.
    if (
        _has_field(value, _QUESTION_KEYS)
        and _has_field(value, _ANSWER_KEYS)
        and (container is None or not _holds_entries(container[1]))
    ):
        collector.add_record("(single entry)", value)
        return collector.result("single object")
    if container is not None:
        path, items = container
        if not items:
            raise InputError(
                f"{source_file} holds an empty '{path}' list: there is nothing to convert. "
                f"{_EMPTY_FIX}"
            )
        for index, item in enumerate(items, start=1):
            collector.add_record(f"{path} item {index}", item)
        return collector.result(f"list under '{path}'")
    if not any(_could_be_answer(item) for item in value.values()):
        raise _unknown_shape(
            source_file, f"an object whose values are not answers; keys: {_shown_fields(value)}"
        )
    for key, item in value.items():
        collector.add_mapping_item(key, item)
    return collector.result("flat mapping")


def extract_line_entry(value: object, source_file: str, line_number: int) -> ExtractedEntries:
    """The entry on one JSON Lines line (an object with question and answer fields)."""
    collector = _Collector(source_file)
    collector.add_record(f"line {line_number}", value)
    return collector.result("JSON Lines")
