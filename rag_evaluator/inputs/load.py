"""Loading the three input CSV files, or one dataset file, into records keyed by question
number.

Both go through the same ``InputSpec`` per file: a dataset's records become rows of the
same canonical cells (``inputs/dataset_rows.py``), so a column added to a spec is read from
both.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, overload

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.dataset_rows import (
    CanonicalRow,
    CanonicalRows,
    DatasetSurvey,
    DatasetTable,
)
from rag_evaluator.inputs.dataset_stream import StreamedDataset
from rag_evaluator.inputs.datasets import (
    log_dataset,
    read_dataset,
    records_dataset,
    warn_constants,
)
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
    QuestionNumberError,
    ScoreListError,
    parse_question_label,
    parse_score_list,
)
from rag_evaluator.inputs.list_cells import (
    CellNotes,
    CellRead,
    read_contexts_cell,
    read_list_cell,
    read_reference,
)
from rag_evaluator.inputs.records import (
    NO_METADATA,
    AnswerRow,
    GroundTruthRow,
    KeyedRows,
    QuestionRow,
    RowT,
)
from rag_evaluator.inputs.selection import Selection, format_numbers, select_numbers
from rag_evaluator.inputs.spool import (
    ANSWERS_TABLE,
    GROUND_TRUTH_TABLE,
    QUESTIONS_TABLE,
    InputSpool,
    SpooledItems,
)
from rag_evaluator.inputs.streamed_csv import stream_csv
from rag_evaluator.inputs.tables import CsvRecord, read_csv

logger = logging.getLogger(__name__)


# RAG output is JSON: convert is what turns it into rag_answers.csv.
_ANSWERS_JSON_FIX = (
    "Turn RAG output JSON into rag_answers.csv with `rag-eval convert` (it reads the *.json "
    "and *.jsonl files in RAG_JSON_Files, or in the folder given with --json-dir, and "
    "matches their answers to questions.csv), then pass that CSV"
)


class _CellError(Exception):
    """A cell a spec's ``build`` cannot use; ``_keyed`` adds the file and row."""

    def __init__(self, column: str, message: str) -> None:
        super().__init__(message)
        self.column = column
        self.message = message


@dataclass(frozen=True)
class InputSpec(Generic[RowT]):
    """One of the three input files: its columns and how a row of canonical cells becomes a
    record. The three CSVs and a ``--dataset`` are both loaded through these specs."""

    required: tuple[str, ...]
    optional: tuple[str, ...]
    # A row's number and cells -> its record; what its cells call for a warning is noted.
    build: Callable[[int, CsvRecord, CellNotes], RowT]
    json_fix: str | None = None
    # Whether the metadata columns (Category, Source, ...) are read into the rows.
    metadata: bool = False
    # A required column another one may stand in for, when the file has only that one.
    stand_ins: tuple[tuple[str, str], ...] = ()

    def reading(self) -> dict[str, Any]:
        """How its file is read: the options the whole-file and the streamed readers share."""
        return {
            "required": list(self.required),
            "optional": list(self.optional),
            "json_fix": self.json_fix,
            "extra_columns": self.metadata,
            "stand_ins": dict(self.stand_ins),
        }


def _keyed(
    source_name: str,
    path: Path,
    column_names: dict[str, str],
    records: Iterable[CsvRecord],
    build: Callable[[int, CsvRecord, CellNotes], RowT],
    where: Callable[[CsvRecord], str] = lambda record: f"line {record.line_number}",
) -> KeyedRows[RowT]:
    keyed = FirstRows(source_name, path, column_names, build, where)
    rows = dict(keyed.rows(records))
    keyed.warn_cells()
    keyed.warn_duplicates()
    return KeyedRows(source_name, rows, keyed.duplicates)


class FirstRows(Generic[RowT]):
    """A file's rows by question number as they are read, the first of each number kept;
    the numbers seen and those repeated are remembered (the rows themselves are not)."""

    def __init__(
        self,
        source_name: str,
        path: Path,
        column_names: dict[str, str],
        build: Callable[[int, CsvRecord, CellNotes], RowT],
        where: Callable[[CsvRecord], str] = lambda record: f"line {record.line_number}",
    ) -> None:
        self.source_name = source_name
        self.path = path
        self.column_names = column_names
        self.build = build
        self.where = where
        self.numbers: set[int] = set()
        self._repeated: list[int] = []
        self.cell_notes = CellNotes()

    @property
    def duplicates(self) -> list[int]:
        return sorted(set(self._repeated))

    def rows(self, records: Iterable[CsvRecord]) -> Iterator[tuple[int, RowT]]:
        """Each first row of a question number, built, in the order read."""
        # Once per row of every file: the attributes are looked up once, not per row.
        numbers, repeated, build, notes = self.numbers, self._repeated, self.build, self.cell_notes
        for record in records:
            try:
                number = parse_question_label(record.values[QUESTION_NUMBER])
            except QuestionNumberError as exc:
                raise self._number_error(record, exc) from exc
            if number in numbers:
                repeated.append(number)
                continue
            numbers.add(number)
            try:
                row = build(number, record, notes)
            except _CellError as exc:
                raise InputError(
                    f"{self.source_name} {self.where(record)}: "
                    f"'{self.column_names.get(exc.column, exc.column)}' {exc.message}",
                    self.path,
                ) from exc
            yield number, row

    def _number_error(self, record: CsvRecord, exc: QuestionNumberError) -> InputError:
        return InputError(
            f"{self.source_name} {self.where(record)}: "
            f"'{self.column_names.get(QUESTION_NUMBER, QUESTION_NUMBER)}' {exc}. "
            "Give every row a whole question number such as 1, 2, 3 (or Q1, Q2, Q3); "
            "ids of other forms (hashes, names) are kept by a --dataset file",
            self.path,
        )

    def warn_cells(self) -> None:
        """One warning per column for what its cells called for (``CellNotes``)."""
        for warning in self.cell_notes.warnings(self.source_name, self.column_names):
            logger.warning(warning)
        for note in self.cell_notes.notes(self.source_name, self.column_names):
            logger.info(note)

    def warn_duplicates(self) -> None:
        repeated = self.duplicates
        if repeated:
            logger.warning(
                "%s repeats question %s %s; the first row of each was kept. "
                "Give every row its own number",
                self.source_name,
                "number" if len(repeated) == 1 else "numbers",
                format_numbers(repeated),
            )


def _load_csv(
    path: Path, spec: InputSpec[RowT], texts: QuestionTexts | None = None, holds: str = ""
) -> KeyedRows[RowT]:
    """The file's rows; with ``texts``, its Question cells compared (``holds``: what its
    rows give, for the warning)."""
    table = read_csv(path, **spec.reading())
    # Only a file with a Question column has its rows wrapped: the common case pays nothing.
    compared = texts if texts is not None and QUESTION in table.columns else None
    build = spec.build if compared is None else compared.comparing(spec.build)
    keyed = _keyed(table.path.name, table.path, table.columns, table.records, build)
    if compared is not None:
        compared.warn(table.path.name, table.columns[QUESTION], holds)
    return keyed


@dataclass
class QuestionTexts:
    """The rows of a ground-truth or answers file whose copy of the question's text is not
    the question questions.csv has under their number (``same`` says what is the same
    question): the two files number the questions differently."""

    questions: KeyedRows[QuestionRow]
    same: Callable[[str, str], bool]
    compared: int = 0
    differing: list[int] = field(default_factory=list)

    def comparing(self, build: Callable[[int, CsvRecord, CellNotes], RowT]) -> Callable[..., RowT]:
        """``build``, comparing each row's Question cell on the way."""

        def compared_build(number: int, record: CsvRecord, notes: CellNotes) -> RowT:
            self._compare(number, record.values.get(QUESTION, ""))
            return build(number, record, notes)

        return compared_build

    def _compare(self, number: int, text: str) -> None:
        question = self.questions.rows.get(number)
        if question is None or not text.strip() or not question.question.strip():
            return
        self.compared += 1
        if not self.same(text, question.question):
            self.differing.append(number)

    def warn(self, file_name: str, column: str, holds: str) -> None:
        """One warning when any row's question is another, then ready for the next file."""
        if self.differing:
            logger.warning(
                "%s: the '%s' of %d of %d rows is another question than the one %s has under "
                "the same number (%s %s), yet their %s are paired with those questions. Check "
                "that both files number the questions alike",
                file_name,
                column,
                len(self.differing),
                self.compared,
                self.questions.source_name,
                "question" if len(self.differing) == 1 else "questions",
                format_numbers(sorted(self.differing)),
                holds,
            )
        self.compared, self.differing = 0, []


QUESTIONS_SPEC: InputSpec[QuestionRow] = InputSpec(
    (QUESTION_NUMBER, QUESTION),
    (),
    lambda number, record, _: QuestionRow(
        number, record.values[QUESTION], dict(record.extra) if record.extra else NO_METADATA
    ),
    metadata=True,
)


# A blank list cell, read: the input is missing (no note to take).
_BLANK_CELL = CellRead(None)


def _list_cell(
    values: Mapping[str, str], column: str, notes: CellNotes, *, semicolons: bool = False
) -> CellRead:
    """A list cell read and noted; a blank one (most rows of most files) costs nothing."""
    raw = values.get(column, "")
    if not raw or raw.isspace():
        return _BLANK_CELL
    read = read_list_cell(raw, semicolons=semicolons)
    notes.note(column, read)
    return read


def _ground_truth_row(number: int, record: CsvRecord, notes: CellNotes) -> GroundTruthRow:
    values = record.values
    contexts = _list_cell(values, RELEVANT_CONTEXTS, notes)
    facts = _list_cell(values, REQUIRED_FACTS, notes, semicolons=True)
    answers = _list_cell(values, REFERENCE_ANSWERS, notes)
    truth = values.get(GROUND_TRUTH)
    if answers is _BLANK_CELL and truth is not None and not truth.lstrip().startswith("["):
        # One reference text (no list to read in it): as written.
        return GroundTruthRow(number, truth, contexts.texts, facts.texts, None)
    # No Ground Truth column: Reference Answers stands in (see GROUND_TRUTH_SPEC).
    reference = read_reference(truth, answers)
    notes.several_references += reference.listed_several
    return GroundTruthRow(number, reference.text, contexts.texts, facts.texts, reference.answers)


GROUND_TRUTH_SPEC: InputSpec[GroundTruthRow] = InputSpec(
    (QUESTION_NUMBER, GROUND_TRUTH),
    # Question: a copy of the question's text some files keep, only compared (QuestionTexts).
    (RELEVANT_CONTEXTS, REQUIRED_FACTS, REFERENCE_ANSWERS, QUESTION),
    _ground_truth_row,
    stand_ins=((GROUND_TRUTH, REFERENCE_ANSWERS),),
)


def _answer_row(number: int, record: CsvRecord, notes: CellNotes) -> AnswerRow:
    values = record.values
    contexts_cell = values.get(CONTEXTS, "")
    scores_cell = values.get(RETRIEVAL_SCORES)
    if not (contexts_cell or scores_cell):
        return AnswerRow(number, values[RAG_ANSWER], None, None)  # nothing retrieved reported
    try:
        scores = parse_score_list(scores_cell) if scores_cell else None
    except ScoreListError as exc:
        raise _CellError(
            RETRIEVAL_SCORES,
            f"{exc}. Write a JSON array of numbers, one per context, such as [0.82, 0.61], "
            "or leave the cell blank when the scores are not known",
        ) from exc
    contexts = read_contexts_cell(contexts_cell, scores)
    # Scores that do not pair with the contexts cannot be trusted for any of them.
    if scores is not None and contexts.items is not None and len(scores) != contexts.items:
        raise _CellError(
            RETRIEVAL_SCORES,
            f"has {len(scores)} score(s) for {contexts.items} context(s). Give one score per "
            "context, in the order of Contexts, or leave the cell blank",
        )
    if contexts.score_problem:
        raise _CellError(
            CONTEXTS,
            f"gives retrieval scores that do not fit: {contexts.score_problem}, or give "
            "them in a Retrieval Scores column",
        )
    notes.note(CONTEXTS, contexts)
    return AnswerRow(number, values[RAG_ANSWER], contexts.texts, contexts.scores)


ANSWERS_SPEC: InputSpec[AnswerRow] = InputSpec(
    (QUESTION_NUMBER, RAG_ANSWER),
    (CONTEXTS, RETRIEVAL_SCORES, QUESTION),
    _answer_row,
    json_fix=_ANSWERS_JSON_FIX,
)


def load_questions(path: Path) -> KeyedRows[QuestionRow]:
    """Read questions.csv: Question Number, Question (+ metadata columns)."""
    return _load_csv(path, QUESTIONS_SPEC)


def load_ground_truth(path: Path) -> KeyedRows[GroundTruthRow]:
    """Read ground_truth.csv: Question Number, Ground Truth (+ optional list columns)."""
    return _load_csv(path, GROUND_TRUTH_SPEC)


def load_answers(path: Path) -> KeyedRows[AnswerRow]:
    """Read rag_answers.csv: Question Number, RAG Answer (+ optional Contexts, Retrieval
    Scores)."""
    return _load_csv(path, ANSWERS_SPEC)


@dataclass(frozen=True)
class InputSet:
    """The three inputs of a run, from the three CSVs or from one dataset.

    ``reference_free``: the inputs hold no reference answer (a dataset none of whose records
    has one, or no ground-truth file): ``ground_truth`` is then empty and the run computes
    only what needs no reference.
    """

    questions: KeyedRows[QuestionRow]
    ground_truth: KeyedRows[GroundTruthRow]
    answers: KeyedRows[AnswerRow]
    metadata_columns: list[str] = field(default_factory=list)
    dataset: DatasetTable | None = None
    reference_free: bool = False


def _part_record(
    row: CanonicalRow, index: int, spec: InputSpec[Any], metadata: Container[str]
) -> CsvRecord | None:
    """The cells of one of the three files a dataset's row gives (its ``index``-th), as a
    CSV record; ``None`` when the row lacks a required cell of that file."""
    cells = row.cells
    if not all(column in cells for column in spec.required):
        return None
    return CsvRecord(
        index,
        {column: cells.get(column, "") for column in (*spec.required, *spec.optional)},
        {name: cell for name, cell in cells.items() if name in metadata} if spec.metadata else {},
    )


def _dataset_part(
    table: DatasetTable, path: Path, part: str, spec: InputSpec[RowT]
) -> KeyedRows[RowT]:
    """The rows of one of the three files, as the dataset gives them: the records holding
    that file's required cells, loaded by the same spec as the CSV."""
    metadata = set(table.metadata_columns)
    records = [
        record
        for index, row in enumerate(table.rows)
        if (record := _part_record(row, index, spec, metadata)) is not None
    ]
    return _keyed(
        f"{table.source_name} {part}",
        path,
        {},
        records,
        spec.build,
        where=lambda record: table.rows[record.line_number].location,
    )


def load_dataset(path: Path, *, require_answers: bool = True) -> InputSet:
    """Read one dataset file into the three inputs, through the same specs as the CSVs."""
    path = Path(path)
    return _dataset_inputs(read_dataset(path, require_answers=require_answers), path)


def load_dataset_records(name: str, records: Sequence[object]) -> InputSet:
    """The three inputs of records given in memory (mappings with a dataset's field names),
    read as a dataset file's records are; ``name`` names them in errors."""
    return _dataset_inputs(records_dataset(name, records), Path(name))


def _dataset_inputs(table: DatasetTable, path: Path) -> InputSet:
    return InputSet(
        _dataset_part(table, path, "questions", QUESTIONS_SPEC),
        _dataset_part(table, path, "references", GROUND_TRUTH_SPEC),
        _dataset_part(table, path, "answers", ANSWERS_SPEC),
        list(table.metadata_columns),
        table,
        reference_free=not table.has_references,
    )


def load_input_files(
    questions: Path,
    ground_truth: Path | None,
    answers: Path,
    same_question: Callable[[str, str], bool] | None = None,
) -> InputSet:
    """Read the three CSVs; ``ground_truth`` ``None``: a run without references. With
    ``same_question``, a Question column of the other two files is compared with
    questions.csv's texts (a warning names the rows whose question is another)."""
    question_rows = load_questions(questions)
    # Every row has the header's metadata columns, in the file's order.
    first = next(iter(question_rows.rows.values()), None)
    columns = list(first.metadata) if first is not None else []
    texts = None if same_question is None else QuestionTexts(question_rows, same_question)
    truth = (
        _load_csv(ground_truth, GROUND_TRUTH_SPEC, texts, "ground truths")
        if ground_truth is not None
        else KeyedRows[GroundTruthRow]("no ground truth", {})
    )
    given = _load_csv(answers, ANSWERS_SPEC, texts, "answers")
    return InputSet(question_rows, truth, given, columns, reference_free=ground_truth is None)


@dataclass(frozen=True)
class SpooledFile:
    """What reading one file into the spool leaves in memory: its question numbers, those
    with a non-blank answer (the answers file), and its metadata columns."""

    numbers: set[int]
    answered: set[int]
    metadata_columns: list[str]
    sha256: str  # of the file's bytes, hashed as it was read


def _spool_file(spool: InputSpool, table: str, path: Path, spec: InputSpec[RowT]) -> SpooledFile:
    """Read ``path`` row by row into ``table`` of the spool, as ``_load_csv`` reads it."""
    streamed = stream_csv(path, **spec.reading())
    keyed = FirstRows(path.name, path, streamed.columns, spec.build)
    answered: set[int] = set()
    spool.add_rows(table, _noting_answers(keyed.rows(streamed.records()), answered))
    keyed.warn_cells()
    keyed.warn_duplicates()
    return SpooledFile(keyed.numbers, answered, streamed.extra_columns, streamed.sha256)


def _noting_answers(
    rows: Iterable[tuple[int, RowT]], answered: set[int]
) -> Iterator[tuple[int, RowT]]:
    """``rows`` as they pass, noting in ``answered`` the answer rows whose answer is not
    blank (what coverage counts)."""
    for number, row in rows:
        _note_answer(number, row, answered)
        yield number, row


def _note_answer(number: int, row: object, answered: set[int]) -> None:
    """Note ``number`` in ``answered`` when ``row`` is an answer row whose answer is not
    blank (what coverage counts)."""
    if isinstance(row, AnswerRow) and row.rag_answer.strip():
        answered.add(number)


@dataclass(frozen=True)
class SpooledInputs:
    """The three CSVs read into a spool: each file's count of questions, the selection (its
    items read from the spool) and the metadata columns."""

    counts: tuple[int, int, int]
    selection: Selection
    metadata_columns: list[str]
    sha256: dict[Path, str]  # each file's SHA-256, by the path it was read from


def spool_input_files(
    spool: InputSpool,
    questions: Path,
    ground_truth: Path | None,
    answers: Path,
    *,
    score_missing: bool = False,
) -> SpooledInputs:
    """Read the three CSVs into ``spool`` and select the questions to evaluate, as
    ``load_input_files`` and ``select_items`` do, holding only question numbers."""
    asked = _spool_file(spool, QUESTIONS_TABLE, questions, QUESTIONS_SPEC)
    truth = (
        _spool_file(spool, GROUND_TRUTH_TABLE, ground_truth, GROUND_TRUTH_SPEC)
        if ground_truth is not None
        else None
    )
    answered = _spool_file(spool, ANSWERS_TABLE, answers, ANSWERS_SPEC)
    sources = [
        (questions.name, asked.numbers),
        *([] if truth is None or ground_truth is None else [(ground_truth.name, truth.numbers)]),
        (answers.name, answered.numbers),
    ]
    chosen = select_numbers(sources, answered.answered, score_missing=score_missing)
    every = len(chosen.numbers) == len(asked.numbers)
    items = SpooledItems(spool, chosen.numbers, every=every)
    selection = Selection(items, chosen.exclusions, chosen.answerable, chosen.answered)
    counts = (len(asked.numbers), len(truth.numbers) if truth else 0, len(answered.numbers))
    digests = {questions: asked.sha256, answers: answered.sha256}
    if truth is not None and ground_truth is not None:
        digests[ground_truth] = truth.sha256
    return SpooledInputs(counts, selection, asked.metadata_columns, digests)


class _RecordLocations(Sequence[str]):
    """Each record's location (``line 12``, ``'results' item 3``), kept as numbers."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.numbers = array("q")

    def __len__(self) -> int:
        return len(self.numbers)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [f"{self.where} {number}" for number in self.numbers[index]]
        return f"{self.where} {self.numbers[index]}"


# Where a record is, for an error about one of its cells.
_Where = Callable[[CsvRecord], str]
# A dataset's rows written to the spool per table at a time.
_SPOOL_BATCH_ROWS = 500

_DATASET_PARTS = (
    (QUESTIONS_TABLE, "questions", QUESTIONS_SPEC),
    (GROUND_TRUTH_TABLE, "references", GROUND_TRUTH_SPEC),
    (ANSWERS_TABLE, "answers", ANSWERS_SPEC),
)


class _SpooledParts:
    """A dataset's canonical rows written to the spool's three tables as they come, as
    ``_dataset_part`` loads them; only question numbers stay in memory."""

    def __init__(self, spool: InputSpool, source_name: str, path: Path, where: _Where) -> None:
        self.spool = spool
        self.parts = {
            table: (spec, FirstRows(f"{source_name} {part}", path, {}, spec.build, where))
            for table, part, spec in _DATASET_PARTS
        }
        self.waiting: dict[str, list[tuple[int, Any]]] = {table: [] for table in self.parts}
        self.answered: set[int] = set()

    def add(self, index: int, row: CanonicalRow, metadata: Container[str]) -> None:
        for table, (spec, keyed) in self.parts.items():
            record = _part_record(row, index, spec, metadata)
            if record is None:
                continue
            for number, built in keyed.rows((record,)):
                _note_answer(number, built, self.answered)
                self.waiting[table].append((number, built))
            if len(self.waiting[table]) >= _SPOOL_BATCH_ROWS:
                self.flush(table)

    def flush(self, table: str) -> None:
        self.spool.add_rows(table, self.waiting[table])
        self.waiting[table] = []

    def numbers(self, table: str) -> set[int]:
        return self.parts[table][1].numbers


@dataclass(frozen=True)
class SpooledDataset:
    """A dataset read into a spool: its record count, the run's inputs as ``SpooledInputs``
    gives them, and whether it holds no reference answer."""

    records: int
    inputs: SpooledInputs
    reference_free: bool


def spool_dataset(
    spool: InputSpool, streamed: StreamedDataset, *, score_missing: bool = False
) -> SpooledDataset:
    """Read a streamed dataset (``dataset_stream.stream_dataset``) into ``spool`` as
    ``load_dataset`` and ``select_items`` read it, in two passes over the file (one to
    number the records, one to spool their rows), holding question numbers only."""
    try:
        return _spooled_dataset(spool, streamed, score_missing)
    except InputError as exc:
        if exc.path is not None:
            raise
        raise InputError(exc.message, streamed.path) from exc


def _spooled_dataset(
    spool: InputSpool, streamed: StreamedDataset, score_missing: bool
) -> SpooledDataset:
    path, name = streamed.path, streamed.path.name
    locations = _RecordLocations(streamed.where)
    survey = DatasetSurvey(name, locations)
    constants: list[str] = []
    for number, record in streamed.records(constants):
        locations.numbers.append(number)
        survey.add(record)
    warn_constants(name, constants)
    builder = CanonicalRows(name, survey.numbering())
    parts = _SpooledParts(spool, name, path, lambda record: locations[record.line_number])
    for index, (_, record) in enumerate(streamed.records([])):
        parts.add(index, builder.row(index, record), builder.metadata_columns)
    for table, (_, keyed) in parts.parts.items():
        parts.flush(table)
        keyed.warn_cells()
    log_dataset(
        name,
        len(locations),
        builder.numbering.source,
        list(builder.metadata_columns),
        builder.notes(),
        builder.warnings(),
    )
    reference_free = not builder.has_references
    asked, truth, answers = (parts.numbers(table) for table, _, _ in _DATASET_PARTS)
    sources = [
        (f"{name} questions", asked),
        *([] if reference_free else [(f"{name} references", truth)]),
        (f"{name} answers", answers),
    ]
    chosen = select_numbers(sources, parts.answered, score_missing=score_missing)
    items = SpooledItems(spool, chosen.numbers, every=len(chosen.numbers) == len(asked))
    selection = Selection(items, chosen.exclusions, chosen.answerable, chosen.answered)
    counts = (len(asked), len(truth), len(answers))
    inputs = SpooledInputs(
        counts, selection, list(builder.metadata_columns), {path: streamed.sha256}
    )
    return SpooledDataset(len(locations), inputs, reference_free)
