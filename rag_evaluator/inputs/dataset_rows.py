"""One dataset file (questions, references and answers together) as canonical rows.

Pure: takes the records a reader found (JSON objects, or CSV rows as header -> cell) and
returns, per record, the cells the three input CSVs would hold for it, under the same
canonical column names (``Question``, ``Ground Truth``, ``RAG Answer``, ``Contexts``,
``Retrieval Scores``...) plus its metadata columns. ``inputs/load.py`` then loads those
cells with the very code that loads the three CSVs.

Field names come from the one alias table in ``inputs/shapes.py``. Rules:

- question numbers come from an id field (``QUESTION_ID_FIELDS``) when the records have
  one, else from the record order (1-based). Ids are whole numbers, or ID-like text such as
  ``Q7``; ids counted from 0 (every id a whole number, the smallest 0) are shifted by one.
  Ids of any other form are keys: the records are numbered in file order and the ids kept
  in a column of their own. A repeated id, or an id on some records but not others, is an
  error;
- a question or reference that is absent, ``null`` or blank is missing, and so is an absent
  answer field: the record is left out of that part (the run reports it like a question
  missing from one of the three files); an answer field that is ``null`` or blank is an empty
  answer (a blank RAG Answer cell); a dataset none of whose records has a reference is
  reference-free;
- two answer fields holding different texts, and a question that is a list (not a chat) or
  an object (a column-oriented file), are errors;
- a field of the wrong type is an error naming the file, the record and the fix;
- every other field holding text, a number or a boolean is a metadata column (so are those
  inside ``metadata``/``additional_metadata``/``meta`` objects); lists and objects are not
  carried.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.fields import (
    CONTEXTS,
    GROUND_TRUTH,
    QUESTION,
    QUESTION_NUMBER,
    RAG_ANSWER,
    REFERENCE_ANSWERS,
    RELEVANT_CONTEXTS,
    REQUIRED_FACTS,
    RETRIEVAL_SCORES,
    bar_joined_warning,
    column_key,
    looks_bar_joined,
    parse_list_literal,
    reference_cell_list,
    several_references_note,
    split_bar_joined,
    unsigned_question_id,
)
from rag_evaluator.inputs.shapes import (
    ANSWER_FIELDS,
    ANSWER_KEYS,
    CONTAINER_FIELDS,
    CONTEXT_KEYS,
    CONTEXT_TEXT_FIELDS,
    CONVERSATION_COLUMN,
    METADATA_CONTAINER_KEYS,
    QUESTION_FIELDS,
    QUESTION_ID_FIELDS,
    QUESTION_ID_KEYS,
    QUESTION_KEYS,
    REFERENCE_CONTEXT_KEYS,
    REFERENCE_KEYS,
    REQUIRED_FACT_KEYS,
    RETRIEVAL_SCORE_KEYS,
    answer_field,
    chat_question,
    clean_text,
    conflicting_answers,
    find_field,
    golden_contexts_field,
    joined_texts,
    json_type,
    listed_references,
    read_contexts,
    reference_text,
    retrieval_scores_field,
    retrieved_contexts_field,
    uses_deepeval_names,
    wrong_question_type,
)
from rag_evaluator.text.snippets import quote_snippet

# Every field an alias names is an input, never metadata.
_INPUT_KEYS = frozenset(
    [
        *QUESTION_KEYS,
        *ANSWER_KEYS,
        *CONTEXT_KEYS,
        *REFERENCE_KEYS,
        *REFERENCE_CONTEXT_KEYS,
        *REQUIRED_FACT_KEYS,
        *QUESTION_ID_KEYS,
        *RETRIEVAL_SCORE_KEYS,
        *METADATA_CONTAINER_KEYS,
    ]
)
_LIST_FIX = 'Write it as a JSON array such as ["first", "second"]'


@dataclass(frozen=True)
class DatasetRecord:
    """One record of a dataset file as its reader found it.

    ``location`` names it in messages (``item 3``, ``line 4``); ``from_csv`` says its values
    are CSV cells (text), whose list fields hold JSON arrays.
    """

    location: str
    fields: Mapping[str, object]
    from_csv: bool = False


@dataclass(frozen=True)
class CanonicalRow:
    """The cells one record gives, by canonical column (and metadata column) name.

    A missing question, reference or answer field has no cell at all (not a blank one), so
    the record is left out of that part only; a ``null`` or blank answer is a blank cell.
    """

    location: str
    cells: dict[str, str]


@dataclass(frozen=True)
class DatasetTable:
    """A dataset's canonical rows, its metadata columns, and how it was read."""

    source_name: str
    rows: list[CanonicalRow]
    metadata_columns: list[str]
    numbering: str  # "the 'query_id' field" or "the record order"
    has_answers: bool
    notes: list[str] = field(default_factory=list)
    # What the user should act on (a CSV list cell that looks "|"-joined).
    warnings: list[str] = field(default_factory=list)

    @property
    def has_references(self) -> bool:
        """Whether any record holds a reference answer (else the run is reference-free)."""
        return any(GROUND_TRUTH in row.cells for row in self.rows)


def _shown_fields(record: Mapping[str, object], limit: int = 10) -> str:
    names = [quote_snippet(name, 30) for name in list(record)[:limit]]
    if len(record) > limit:
        names.append(f"… {len(record) - limit} more")
    return ", ".join(names) if names else "none"


def _record_error(source_name: str, location: str, message: str) -> InputError:
    return InputError(f"{source_name} {location}: {message}")


class _Reader:
    """Reads the fields of one record, raising an error that names the file and record."""

    def __init__(
        self,
        source_name: str,
        record: DatasetRecord,
        bar_cells: dict[str, int] | None = None,
        several_references: dict[str, int] | None = None,
    ) -> None:
        self.source_name = source_name
        self.record = record
        # deepeval joins the lists of its CSV files with "|": split them as deepeval does.
        self.bar_joined_lists = record.from_csv and uses_deepeval_names(record.fields)
        # Elsewhere such cells are one text each, counted by field for one warning.
        self.bar_cells = bar_cells if bar_cells is not None else {}
        # Reference fields listing several answers, counted by field for one note.
        self.several_references = several_references if several_references is not None else {}

    def error(self, message: str) -> InputError:
        return _record_error(self.source_name, self.record.location, message)

    def reference_field(self) -> tuple[str, object]:
        """The reference field; in a CSV dataset a cell spelling a list of strings (a JSON
        array, or a Python list as pandas writes a list column) is that list."""
        name, value = find_field(self.record.fields, REFERENCE_KEYS)
        if self.record.from_csv and isinstance(value, str):
            listed = reference_cell_list(value)
            if listed is not None:
                return name, listed
        return name, value

    def text(self, keys: Sequence[str], what: str) -> tuple[str, str | None]:
        """A text field (question, answer): ``None`` when absent, null or blank."""
        name, value = find_field(self.record.fields, keys)
        return name, self._text_of(name, value, what)

    def reference(self, cells: dict[str, str]) -> None:
        """The reference as the Ground Truth cell; when it lists several answers, also the
        Reference Answers cell (a JSON array), counted for the note."""
        name, value = self.reference_field()
        if not name or value is None:
            return
        text = reference_text(value)
        if text is None:
            raise self.error(
                f"the '{name}' field is {json_type(value)}, not reference text. "
                "Write the reference as a string, or a list of acceptable answers"
            )
        if not text.strip():
            return
        cells[GROUND_TRUTH] = text
        answers = listed_references(value)
        if answers is not None:
            cells[REFERENCE_ANSWERS] = json.dumps(list(answers), ensure_ascii=False)
            self.several_references[name] = self.several_references.get(name, 0) + 1

    def _text_of(self, name: str, value: object, what: str) -> str | None:
        """The text a field holds; ``None`` when absent, null or blank."""
        if not name or value is None:
            return None
        text: str | None = None
        if isinstance(value, str):
            text = clean_text(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            text = json.dumps(value)
        elif isinstance(value, list):
            # ragas writes some references as a list of strings, MTRAG its answers and
            # references as [{"text": ...}].
            text = joined_texts(value)
        elif isinstance(value, dict):
            _, inner = find_field(value, [column_key(n) for n in (*CONTEXT_TEXT_FIELDS, what)])
            if isinstance(inner, str):
                text = clean_text(inner)
        if text is None:
            raise self.error(
                f"the '{name}' field is {json_type(value)}, not {what} text. "
                f"Write the {what} as a string"
            )
        return text if text.strip() else None

    def question(self) -> tuple[str | None, str | None]:
        """The question (``None`` when missing) and, when it is chat-style (a list of
        messages), the turns before it as text. Any other list or object is no question (a
        column of a column-oriented file, say), never texts joined into one."""
        name, value = find_field(self.record.fields, QUESTION_KEYS)
        chat = chat_question(value) if name else None
        if chat is not None:
            return (chat.question if chat.question.strip() else None), chat.conversation
        if isinstance(value, list | dict):
            raise self.error(wrong_question_type(name, value))
        return self.text(QUESTION_KEYS, "question")[1], None

    def answer(self) -> str | None:
        """The answer: ``""`` when its field is ``null`` or blank (an empty answer, as a
        blank RAG Answer cell is), ``None`` when the record has no answer field; an error
        when two answer fields hold different texts."""
        conflict = conflicting_answers(self.record.fields)
        if conflict is not None:
            raise self.error(conflict)
        name, value = answer_field(self.record.fields)
        if not name:
            return None
        return self._text_of(name, value, "answer") or ""

    def listed(self, name: str, value: object, *, texts: bool = True) -> object:
        """A list field's value: a list as it is; text spelling a list (``["a", "b"]`` or
        pandas' ``['a', 'b']``) that list, in JSON as in CSV. A CSV cell that is no list:
        blank is ``None``, ``|``-joined in deepeval's files is split, else one text
        (``texts=False``: a list of scores or facts, never ``|``-joined)."""
        if not isinstance(value, str):
            return value
        parsed = parse_list_literal(value)
        if parsed is not None:
            return parsed
        text = value.strip()
        if not self.record.from_csv:
            return value
        if not text:
            return None
        if text.startswith("["):
            raise self.error(
                f"the '{name}' cell starts with '[' but is not a JSON array. {_LIST_FIX}"
            )
        if texts and looks_bar_joined(text):
            if self.bar_joined_lists:
                return split_bar_joined(text)
            self.bar_cells[name] = self.bar_cells.get(name, 0) + 1
        return text

    def contexts(self, name: str, value: object, parallel: object) -> tuple[str, str]:
        """The Contexts and Retrieval Scores cells of a context field."""
        value = self.listed(name, value)
        if value is None:
            return "", ""
        self._check_context_items(name, value)
        read = read_contexts(value, parallel)
        if read.score_problem:
            raise self.error(f"the retrieval scores do not fit '{name}': {read.score_problem}")
        texts = "" if read.texts is None else json.dumps(read.texts, ensure_ascii=False)
        scores = "" if read.scores is None else json.dumps(read.scores)
        return texts, scores

    def _check_context_items(self, name: str, value: object) -> None:
        items = value if isinstance(value, list) else [value]
        for position, item in enumerate(items, start=1):
            if isinstance(item, str):
                continue
            if isinstance(item, dict):
                node = item.get("node")
                holders = [item, node] if isinstance(node, dict) else [item]
                if any(find_field(holder, _TEXT_KEYS)[0] for holder in holders):
                    continue
                raise self.error(
                    f"item {position} of '{name}' is an object with no "
                    f"{'/'.join(CONTEXT_TEXT_FIELDS)} field (fields found: "
                    f"{_shown_fields(item)}). Give each context object a text field"
                )
            raise self.error(
                f"item {position} of '{name}' is {json_type(item)}, not context text. "
                "Write each context as a string"
            )

    def scores(self, name: str, value: object) -> object:
        value = self.listed(name, value, texts=False)
        if value is None:
            return None
        if not isinstance(value, list) or any(
            isinstance(item, bool) or not isinstance(item, int | float) for item in value
        ):
            raise self.error(
                f"the '{name}' field is {json_type(value)}, not a list of numbers. Give one "
                "retrieval score per context, such as [0.82, 0.61]"
            )
        return value

    def text_list(self, name: str, value: object, *, semicolons: bool = False) -> str:
        """A list-of-texts cell (golden contexts, required facts), as the CSV would hold it."""
        value = self.listed(name, value, texts=not semicolons)
        if value is None:
            return ""
        if isinstance(value, str):
            # Required facts keep "a; b; c" for their own parser; a lone context is a list.
            return value if semicolons else json.dumps([value], ensure_ascii=False)
        if isinstance(value, list):
            self._check_context_items(name, value)
            return json.dumps(read_contexts(value).texts or [], ensure_ascii=False)
        raise self.error(f"the '{name}' field is {json_type(value)}, not a list. {_LIST_FIX}")


_TEXT_KEYS = [column_key(name) for name in CONTEXT_TEXT_FIELDS]


def _scalar_cell(value: object) -> str | None:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, int | float):
        return json.dumps(value)
    return None


def _metadata(fields: Mapping[str, object], skipped: dict[str, None]) -> dict[str, str]:
    """The record's metadata cells: scalar fields no alias names, then those inside a
    metadata object (a top-level field of the same name wins)."""
    cells: dict[str, str] = {}
    nested: dict[str, str] = {}
    for name, value in fields.items():
        key = column_key(name)
        if key in METADATA_CONTAINER_KEYS and isinstance(value, dict):
            for inner_name, inner_value in value.items():
                cell = _scalar_cell(inner_value)
                if cell is None:
                    skipped.setdefault(f"{name}.{inner_name}")
                elif inner_name.strip():
                    nested.setdefault(inner_name.strip(), cell)
            continue
        if key in _INPUT_KEYS or not name.strip():
            continue
        cell = _scalar_cell(value)
        if cell is None:
            skipped.setdefault(name)
        else:
            cells.setdefault(name.strip(), cell)
    for name, cell in nested.items():
        cells.setdefault(name, cell)
    return cells


# Whole numbers from here on have more digits than a question number may have.
_MAX_ID_NUMBER = 10**18


@dataclass(frozen=True)
class _Numbering:
    """The records' question numbers, what they came from and notes for the log.

    ``key_column`` is set when the ids are keys (text such as a hash): the records are then
    numbered in file order and ``keys`` (one per record) are carried in that column.
    """

    numbers: list[int]
    source: str
    notes: list[str] = field(default_factory=list)
    key_column: str = ""
    keys: list[str] = field(default_factory=list)


def _id_key(source_name: str, location: str, name: str, value: object) -> tuple[str, int | None]:
    """An id as text, and the question number it names (``None``: it names none, a key)."""
    if isinstance(value, bool | list | dict) or value is None:
        raise _record_error(
            source_name,
            location,
            f"the id field '{name}' is {json_type(value)}. Give every record an id (text or a "
            f"whole number) in '{name}', or remove that field from all records so they are "
            "numbered in file order",
        )
    number: int | None = None
    if isinstance(value, int):
        key, number = str(value), value
    elif isinstance(value, float):
        key, number = json.dumps(value), int(value) if value.is_integer() else None
    else:
        key = clean_text(str(value))
        if not key.strip():
            raise _record_error(
                source_name,
                location,
                f"the id field '{name}' is blank. Give every record its own id",
            )
        number = unsigned_question_id(key)
    if number is not None and not 0 <= number < _MAX_ID_NUMBER:
        number = None
    return key, number


def number_records(
    source_name: str, locations: Sequence[str], found: Sequence[tuple[str, object]]
) -> _Numbering:
    """Each record's question number, from its location and id field (name, value; the
    name empty where it has none): the ids when every id names one, else the record order
    with the ids kept as keys (an id is a key, not a number to guess at)."""
    with_id = [index for index, (name, _) in enumerate(found) if name]
    if not with_id:
        return _Numbering(list(range(1, len(found) + 1)), "the record order")
    if len(with_id) != len(found):
        missing = next(index for index, (name, _) in enumerate(found) if not name)
        named = found[with_id[0]][0]
        raise InputError(
            f"{source_name} {locations[missing]}: no '{named}' field, while "
            f"{locations[with_id[0]]} has one. Give every record an id in '{named}', "
            "or remove the field from all of them so the records are numbered in file order"
        )
    ids = [
        _id_key(source_name, location, name, value)
        for location, (name, value) in zip(locations, found, strict=True)
    ]
    id_names = ", ".join(repr(name) for name in sorted({name for name, _ in found}))
    numbers = [number for _, number in ids]
    if any(number is None for number in numbers):
        return _keyed_numbering(source_name, locations, [key for key, _ in ids], found[0][0])
    whole = [number for number in numbers if number is not None]
    notes: list[str] = []
    kept_column, kept = "", []
    if min(whole) == 0:
        whole = [number + 1 for number in whole]
        note = (
            f"{source_name}: the ids in {id_names} start at 0; question numbers are the ids "
            "plus one"
        )
        if column_key(found[0][0]) != column_key(QUESTION_NUMBER):
            # The ids themselves are kept beside, so each row still shows the record's own id
            # (a field named Question Number would clash with the column it becomes).
            kept_column, kept = found[0][0], [key for key, _ in ids]
            note += f", the ids kept in the column '{kept_column}'"
        notes.append(note)
    first_at: dict[int, int] = {}
    for index, number in enumerate(whole):
        if number in first_at:
            raise InputError(
                f"{source_name} {locations[index]}: question number {number} repeats "
                f"that of {locations[first_at[number]]} (id field {id_names}). Give "
                "every record its own id"
            )
        first_at[number] = index
    return _Numbering(whole, f"the {id_names} field", notes, kept_column, kept)


def _keyed_numbering(
    source_name: str, locations: Sequence[str], keys: list[str], column: str
) -> _Numbering:
    """Record-order numbers for ids that are keys; a key given twice is an error."""
    first_at: dict[str, int] = {}
    for index, key in enumerate(keys):
        if key in first_at:
            raise InputError(
                f"{source_name} {locations[index]}: the id {quote_snippet(key, 40)} in "
                f"'{column}' repeats that of {locations[first_at[key]]}. Give every "
                "record its own id"
            )
        first_at[key] = index
    note = (
        f"{source_name}: the ids in '{column}' are keys, not question numbers: the records are "
        f"numbered in file order and the ids kept in the column '{column}'"
    )
    return _Numbering(
        list(range(1, len(keys) + 1)),
        f"the record order (ids kept in '{column}')",
        [note],
        column,
        keys,
    )


def _blank(value: object) -> bool:
    """Whether an answer field's value holds no text (``null``, blank, an empty list)."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, list | dict) and not value


def _no_field_error(
    source_name: str, first: DatasetRecord, aliases: Sequence[str], what: str
) -> InputError:
    return InputError(
        f"{source_name} has no {what} field in any record (fields of {first.location}: "
        f"{_shown_fields(first.fields)}). Name the {what} field one of: {', '.join(aliases)}"
    )


class DatasetSurvey:
    """What a first pass over a dataset's records keeps, record by record, to number them
    and check its shape without holding them: each record's location and id field, whether
    any has a question and an answer, and the first record (named in errors)."""

    def __init__(self, source_name: str, locations: Sequence[str]) -> None:
        self.source_name = source_name
        self.locations = locations  # each record's, by index (a lazy sequence may do)
        self.ids: list[tuple[str, object]] = []
        self.first: DatasetRecord | None = None
        self.has_question = False
        self.has_answers = False
        # An answer field holding text somewhere: one null or blank everywhere is a golden
        # set's placeholder, not answers that all came back empty.
        self.answer_field = ""
        self.has_answer_text = False

    def add(self, record: DatasetRecord) -> None:
        fields = record.fields
        self.first = self.first or record
        self.ids.append(find_field(fields, QUESTION_ID_KEYS))
        self.has_question = self.has_question or bool(find_field(fields, QUESTION_KEYS)[0])
        if not self.has_answer_text:
            name, value = answer_field(fields)
            self.answer_field = self.answer_field or name
            self.has_answer_text = bool(name) and not _blank(value)
        self.has_answers = self.has_answers or bool(self.answer_field)

    def numbering(self, *, require_answers: bool = True) -> _Numbering:
        """The records' question numbers; ``InputError`` for no records, no question (or
        answer, when ``require_answers``) field in any of them, or ids that cannot number
        them."""
        if self.first is None:
            raise InputError(
                f"{self.source_name} holds no records. Give it one object (or CSV row) per question"
            )
        if not self.has_question:
            raise _no_field_error(self.source_name, self.first, QUESTION_FIELDS, "question")
        if require_answers and not self.has_answers:
            raise _no_field_error(self.source_name, self.first, ANSWER_FIELDS, "answer")
        if require_answers and not self.has_answer_text:
            raise InputError(
                f"{self.source_name} holds no answer: its '{self.answer_field}' field is empty "
                "or null in every record. Fill in the RAG system's answers to evaluate them"
            )
        return number_records(self.source_name, self.locations, self.ids)


class CanonicalRows:
    """Turns numbered records into canonical rows one at a time, keeping what the table
    needs of them all: the metadata columns in order of appearance, the list fields left
    out, the ``|``-joined cells counted, and whether any row has a reference."""

    def __init__(self, source_name: str, numbering: _Numbering) -> None:
        self.source_name = source_name
        self.numbering = numbering
        self.metadata_columns: dict[str, None] = {}
        self.has_references = False
        self._skipped_metadata: dict[str, None] = {}
        self._bar_cells: dict[str, int] = {}
        self._several_references: dict[str, int] = {}

    def row(self, index: int, record: DatasetRecord) -> CanonicalRow:
        """The canonical row of the ``index``-th record (0-based, in file order)."""
        reader = _Reader(self.source_name, record, self._bar_cells, self._several_references)
        cells, derived = _record_cells(reader, self.numbering.numbers[index])
        if self.numbering.key_column:
            derived = {self.numbering.key_column: self.numbering.keys[index], **derived}
        # A field of the record itself wins over a derived column of the same name.
        metadata = {**derived, **_metadata(record.fields, self._skipped_metadata)}
        for name in metadata:
            self.metadata_columns.setdefault(name)
        cells.update(metadata)
        self.has_references = self.has_references or GROUND_TRUTH in cells
        return CanonicalRow(record.location, cells)

    def notes(self) -> list[str]:
        notes = list(self.numbering.notes)
        skipped = self._skipped_metadata
        if skipped:
            notes.append(
                f"{self.source_name}: {', '.join(list(skipped)[:8])} "
                f"{'holds' if len(skipped) == 1 else 'hold'} lists or objects, which are "
                "not carried into the results (only text, numbers and booleans are)"
            )
        notes += [
            several_references_note(self.source_name, name, count)
            for name, count in self._several_references.items()
        ]
        return notes

    def warnings(self) -> list[str]:
        return [
            bar_joined_warning(self.source_name, name, count)
            for name, count in self._bar_cells.items()
        ]


def dataset_table(
    source_name: str, records: Sequence[DatasetRecord], *, require_answers: bool = True
) -> DatasetTable:
    """The canonical rows of a dataset's records; raise ``InputError`` for an unknown shape
    (no question field anywhere, or no answer field when ``require_answers``) and for any
    field of the wrong type."""
    survey = DatasetSurvey(source_name, [record.location for record in records])
    for record in records:
        survey.add(record)
    # No reference field is no error: a dataset of RAG outputs without references (ARES)
    # runs the families that need none.
    builder = CanonicalRows(source_name, survey.numbering(require_answers=require_answers))
    rows = [builder.row(index, record) for index, record in enumerate(records)]
    return DatasetTable(
        source_name,
        rows,
        list(builder.metadata_columns),
        builder.numbering.source,
        survey.has_answers,
        builder.notes(),
        builder.warnings(),
    )


def _record_cells(reader: _Reader, number: int) -> tuple[dict[str, str], dict[str, str]]:
    """One record's canonical cells, and the metadata derived from its inputs (the turns
    before a chat-style question)."""
    fields = reader.record.fields
    cells: dict[str, str] = {QUESTION_NUMBER: str(number)}
    derived: dict[str, str] = {}
    question, conversation = reader.question()
    if question is not None:
        cells[QUESTION] = question
    if conversation is not None:
        derived[CONVERSATION_COLUMN] = conversation
    reader.reference(cells)
    answer = reader.answer()
    if answer is not None:
        cells[RAG_ANSWER] = answer
    scores_name, scores_value = retrieval_scores_field(fields)
    parallel = reader.scores(scores_name, scores_value) if scores_name else None
    contexts_name, contexts_value = retrieved_contexts_field(fields)
    cells[CONTEXTS], cells[RETRIEVAL_SCORES] = (
        reader.contexts(contexts_name, contexts_value, parallel) if contexts_name else ("", "")
    )
    golden_name, golden_value = golden_contexts_field(fields)
    cells[RELEVANT_CONTEXTS] = reader.text_list(golden_name, golden_value) if golden_name else ""
    facts_name, facts_value = find_field(fields, REQUIRED_FACT_KEYS)
    cells[REQUIRED_FACTS] = (
        reader.text_list(facts_name, facts_value, semicolons=True) if facts_name else ""
    )
    return cells, derived


def unknown_dataset_shape(source_name: str, detail: str) -> InputError:
    """The error for a JSON document that holds no list of records."""
    return InputError(
        f"{source_name} has a shape rag-eval does not know as a dataset ({detail}). Expected "
        "a JSON list of records (objects with question, reference and answer fields), such a "
        f"list under one of the keys {', '.join(CONTAINER_FIELDS)}, JSON Lines (one record "
        "per line) or CSV with one row per question"
    )


__all__ = [
    "QUESTION_ID_FIELDS",
    "CanonicalRow",
    "CanonicalRows",
    "DatasetRecord",
    "DatasetSurvey",
    "DatasetTable",
    "dataset_table",
    "unknown_dataset_shape",
]
