"""Canonical column names, their accepted spellings, and parsers for field values.

Pure: takes and returns plain data. The CSV reader in ``inputs/tables.py`` uses
``resolve_columns`` to find columns whatever their spelling.
"""

from __future__ import annotations

import ast
import io
import json
import math
import re
import tokenize
import unicodedata
from collections.abc import Iterable, Sequence

QUESTION_NUMBER = "Question Number"
QUESTION = "Question"
GROUND_TRUTH = "Ground Truth"
RAG_ANSWER = "RAG Answer"
CONTEXTS = "Contexts"
RELEVANT_CONTEXTS = "Relevant Contexts"
REQUIRED_FACTS = "Required Facts"
# Several acceptable reference answers of one question, a JSON array (Ground Truth holds them
# joined, one per line): the reference-based offline metrics keep the best.
REFERENCE_ANSWERS = "Reference Answers"
# The retrieval system's score of each context, a JSON array parallel to Contexts (issue 11).
RETRIEVAL_SCORES = "Retrieval Scores"

# Spellings are compared after column_key(): case, spaces, underscores and
# punctuation are ignored, so "Question No." and "question_no" are both "questionno".
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    QUESTION_NUMBER: (
        "questionnumber",
        "questionnum",
        "questionno",
        "questionnr",
        "questionid",
        "questionidx",
        "questionindex",
        "qnumber",
        "qnum",
        "qno",
        "qid",
        "number",
        "num",
        "no",
        "id",
    ),
    QUESTION: ("question", "questiontext", "query", "prompt", "userinput"),
    GROUND_TRUTH: (
        "groundtruth",
        "groundtruthanswer",
        "gt",
        "gtanswer",
        "expectedanswer",
        "expectedoutput",
        "expected",
        "reference",
        "referenceanswer",
        "goldanswer",
        "goldenanswer",
        "correctanswer",
        "answerkey",
    ),
    RAG_ANSWER: (
        "raganswer",
        "answer",
        "response",
        "generatedanswer",
        "modelanswer",
        "output",
        "prediction",
    ),
    CONTEXTS: ("contexts", "context", "retrievedcontexts", "sources", "retrievedchunks"),
    RELEVANT_CONTEXTS: (
        "relevantcontexts",
        "goldencontexts",
        "goldcontexts",
        "groundtruthcontexts",
        "relevantchunks",
        "referencecontexts",
    ),
    REQUIRED_FACTS: ("requiredfacts", "facts", "keyfacts", "mustinclude"),
    REFERENCE_ANSWERS: (
        "referenceanswers",
        "groundtruths",
        "goldanswers",
        "goldenanswers",
        "acceptedanswers",
        "correctanswers",
    ),
    RETRIEVAL_SCORES: ("retrievalscores", "contextscores", "similarityscores", "scores"),
}


def column_key(name: str) -> str:
    """Reduce a header to letters and digits, case-folded, for spelling-tolerant lookup."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    # "#" means number in headers ("Question #", "Q#"); keep that meaning before
    # punctuation is dropped, or "Question #" would read as "Question".
    folded = folded.replace("#", "number")
    return re.sub(r"[^0-9a-z]", "", folded)


def resolve_columns(headers: Sequence[str], wanted: Iterable[str]) -> dict[str, int]:
    """Map each wanted canonical column to the index of the header that spells it.

    The exact canonical spelling wins, then a spelling differing only in case, spaces or
    punctuation, then the aliases in the table's order; among equal spellings the first
    column. Columns that are not found are left out.
    """
    names = list(wanted)
    exact = {header.strip(): index for index, header in reversed(list(enumerate(headers)))}
    resolved = {name: exact[name] for name in names if name in exact}
    taken = set(resolved.values())
    keys = [column_key(header) for header in headers]
    for canonical in names:
        if canonical in resolved:
            continue
        candidates = (column_key(canonical), *COLUMN_ALIASES.get(canonical, ()))
        for candidate in candidates:
            index = next(
                (i for i, key in enumerate(keys) if key == candidate and i not in taken),
                None,
            )
            if index is not None:
                resolved[canonical] = index
                taken.add(index)
                break
    # In the order asked for, as callers list them.
    return {name: resolved[name] for name in names if name in resolved}


def spells_column(header: str, canonical: str) -> bool:
    """Whether ``header`` is a spelling (exact, case and spacing aside, or an alias) of the
    canonical column."""
    key = column_key(header)
    return key == column_key(canonical) or key in COLUMN_ALIASES.get(canonical, ())


def shadowed_columns(
    headers: Sequence[str], resolved: dict[str, int]
) -> list[tuple[str, int, int]]:
    """The columns that spell a resolved canonical column but lost to another header: for
    each, the canonical name, the index of the header read and the index of the one not."""
    read = set(resolved.values())
    shadowed: list[tuple[str, int, int]] = []
    for index, header in enumerate(headers):
        if index in read or not header.strip():
            continue
        canonical = next((name for name in resolved if spells_column(header, name)), None)
        if canonical is not None:
            shadowed.append((canonical, resolved[canonical], index))
    return shadowed


def metadata_headers(headers: Sequence[str]) -> list[tuple[int, str]]:
    """The columns of a table that are metadata (``Category``, ``Source``...): every named
    header that spells none of the canonical columns, first occurrence of a name kept."""
    known = set(resolve_columns(headers, COLUMN_ALIASES).values())
    seen: set[str] = set()
    extra: list[tuple[int, str]] = []
    for index, header in enumerate(headers):
        name = header.strip()
        if index in known or not name or name in seen:
            continue
        seen.add(name)
        extra.append((index, name))
    return extra


# Far beyond any real question set, and well inside int()'s digit limit.
_MAX_QUESTION_NUMBER_DIGITS = 18


class QuestionNumberError(ValueError):
    """A question number cell that is not a whole number."""


_WHOLE_NUMBER = re.compile(r"[+]?([0-9]+)(?:\.0*)?")


def parse_question_number(raw: str) -> int:
    """Parse a question number cell: ``7``, `` 7 ``, ``7.0`` (spreadsheet export)."""
    # The common cell, plain ASCII digits, skips the normalisation and the pattern: read once
    # per row of each of three files, they were a large part of reading 100,000 questions.
    if raw.isascii() and raw.isdigit() and len(raw) <= _MAX_QUESTION_NUMBER_DIGITS:
        return int(raw)
    # NFKC turns full-width digits (from East Asian spreadsheets) into ASCII ones.
    text = unicodedata.normalize("NFKC", raw).strip()
    if not text:
        raise QuestionNumberError("is blank")
    found = _WHOLE_NUMBER.fullmatch(text)
    if found is None:
        raise QuestionNumberError(f"{text[:40]!r} is not a whole number")
    digits = found.group(1).lstrip("0") or "0"
    if len(digits) > _MAX_QUESTION_NUMBER_DIGITS:
        raise QuestionNumberError(f"{text[:40]!r} is too large for a question number")
    return int(digits)


_QUESTION_ID = re.compile(
    r"(?:q|ques|question|qid|id|question[\s_-]*(?:number|num|no|nr|id))?[\s_#.:-]*0*(\d{1,9})",
    re.IGNORECASE,
)


def parse_question_id(key: str) -> int | None:
    """The question number an ID-like key names (``Q1``, ``q_1``, ``1``, ``Question 1``)."""
    text = unicodedata.normalize("NFKC", key).strip()
    found = _QUESTION_ID.fullmatch(text)
    if found is None or not found.group(1).isascii():
        return None
    return int(found.group(1))


def unsigned_question_id(key: str) -> int | None:
    """``parse_question_id`` for an id a user wrote: a sign is no ID prefix (``-3`` names no
    question; ``parse_question_id`` alone reads it as 3)."""
    return None if key.strip().startswith(("-", "+")) else parse_question_id(key)


def parse_question_label(raw: str) -> int:
    """A question number cell of a file the user wrote: a whole number
    (``parse_question_number``), or ID-like text (``Q7``, ``q_007``, ``Question 7``) naming
    one as a dataset's id does; a sign is no ID prefix (``-3`` is not question 3)."""
    try:
        return parse_question_number(raw)
    except QuestionNumberError:
        named = unsigned_question_id(raw)
        if named is None:
            raise
        return named


class ScoreListError(ValueError):
    """A Retrieval Scores cell that is not a JSON array of numbers."""


def parse_score_list(raw: str) -> tuple[float, ...] | None:
    """Parse a Retrieval Scores cell: a JSON array of finite numbers, ``None`` when blank.

    Raises ``ScoreListError`` saying what is wrong (not JSON, not an array, an item that is
    not a finite number). Booleans, ``null``, numbers written as strings and NaN/Infinity
    are refused: a score that cannot be compared with a threshold is not a score.
    """
    text = raw.strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        value = _numpy_numbers(text)
        if value is None:
            raise ScoreListError(f"{text[:40]!r} is not JSON") from exc
    if not isinstance(value, list):
        raise ScoreListError(f"{text[:40]!r} is not a JSON array")
    scores: list[float] = []
    for position, item in enumerate(value, start=1):
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise ScoreListError(f"item {position} ({json.dumps(item)[:40]}) is not a number")
        number = float(item)
        if not math.isfinite(number):
            raise ScoreListError(f"item {position} ({item}) is not a finite number")
        scores.append(number)
    return tuple(scores)


_NUMPY_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
# str() of a numpy array of numbers, as pandas' to_csv writes a score list that came from HF
# Datasets or Arrow: "[0.9 0.2]", "[9.1e-01 2.0e-01]" (items apart by blanks or line breaks).
_NUMPY_NUMBERS = re.compile(rf"\[\s*(?:{_NUMPY_NUMBER}(?:\s+{_NUMPY_NUMBER})*)?\s*\]")


def _numpy_numbers(text: str) -> list[object] | None:
    """The numbers of a numpy array's text; ``None`` for any other text."""
    if _NUMPY_NUMBERS.fullmatch(text) is None:
        return None
    return [float(part) for part in text[1:-1].split()]


def parse_list_literal(text: str) -> list[object] | None:
    """The list a text spells, or ``None``: a JSON array (``["a", "b"]``, what pandas
    ``to_json`` writes for a column read from CSV), a Python list of literals
    (``['a', 'b']``, what pandas ``to_csv`` writes for a list column) or a numpy array of
    strings (``['a' 'b']``, what pandas ``to_csv`` writes for a list column that came from
    HF Datasets, Arrow or Parquet: old ragas ``result.to_pandas().to_csv()``).

    Every reader of a list cell or field (the three CSVs, datasets, convert) uses this one
    rule, so a list reads the same whichever path it takes.
    """
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return None
    try:
        value = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        # Python would join adjacent string literals into one string: a numpy array's
        # items would become one context, so that form is read first.
        value = _numpy_string_items(stripped) if _ADJACENT_STRINGS.search(stripped) else None
        if value is None:
            try:
                value = ast.literal_eval(stripped)
            except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                return None
    return value if isinstance(value, list) else None


# A string literal's closing quote, blanks, then another's opening quote: only then can a
# cell be a numpy array of several strings (a cheap test before tokenizing it).
_ADJACENT_STRINGS = re.compile(r"""['"]\s+[rRuU]?['"]""")
_BETWEEN_ITEMS = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER})


def _numpy_string_items(text: str) -> list[object] | None:
    """The items of ``str()`` of a numpy array of strings, ``['a' 'b']`` (each item Python's
    repr of it, items apart by blanks or line breaks, no commas); ``None`` for any other
    text. Python's own tokenizer finds the string literals."""
    try:
        tokens = [
            token
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type not in _BETWEEN_ITEMS
        ]
    except (tokenize.TokenError, SyntaxError):
        return None
    if len(tokens) < 3 or tokens[0].string != "[" or tokens[-1].string != "]":
        return None
    items: list[object] = []
    for token in tokens[1:-1]:
        if token.type != tokenize.STRING:
            return None
        try:
            item = ast.literal_eval(token.string)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        if not isinstance(item, str):  # bytes (b'...'): not text
            return None
        items.append(item)
    return items


# deepeval writes the lists of its CSV files joined by "|" (Geography|Mountains).
BAR = "|"


def looks_bar_joined(raw: str) -> bool:
    """Whether a cell that is no list holds texts joined by ``|``, as deepeval writes them.

    A Markdown table (a line starting or ending with ``|``) is one text, not a joined list.
    """
    text = raw.strip()
    if BAR not in text or parse_list_literal(text) is not None:
        return False
    return not any(
        line.strip().startswith(BAR) or line.strip().endswith(BAR) for line in text.splitlines()
    )


def split_bar_joined(raw: str) -> list[str]:
    """The texts of a ``|``-joined cell (blank parts dropped)."""
    return [part for part in raw.split(BAR) if part.strip()]


def bar_joined_warning(source: str, column: str, rows: int) -> str:
    """The warning for a column whose cells look ``|``-joined but are read as one text each."""
    return (
        f"{source}: the '{column}' cell of {rows} row{'' if rows == 1 else 's'} holds '|' "
        "and is read as one context. If '|' separates several contexts, write the cell as a "
        'JSON array such as ["first", "second"]'
    )


def several_references_note(source: str, field: str, records: int) -> str:
    """The note on reference fields listing several answers."""
    return (
        f"{source}: the '{field}' field of {records} record{'' if records == 1 else 's'} "
        "lists several reference answers: the offline metrics score the answer against each "
        "and keep the best, and the judge is told that any one of them is a complete answer"
    )


def reference_cell_list(text: str) -> list[str] | None:
    """The answers a reference cell lists when it spells a non-empty list of strings (a JSON
    array, or a Python or numpy list as pandas writes one: old ragas ``ground_truths``);
    ``None`` when it is one reference text. Every reader of a reference cell uses this."""
    listed = parse_list_literal(text)
    if listed and all(isinstance(item, str) for item in listed):
        return [item for item in listed if isinstance(item, str)]
    return None
