"""Human review of a golden set: the pairs to review, the decisions, the editor's file.

``ReviewTable`` holds the two CSV files as read (every column kept, whatever its order) and
applies decisions to them in memory; the pipeline saves both after every decision. A pair is
reviewed when its ``Reviewed`` cell (ground_truth.csv) is not blank: ``accepted``. A rejected
pair leaves both files. An edited pair gets its new texts and ``, edited in review`` after its
Source, and is reviewed again (accept, reject, edit, skip) like any other.

Saving is two atomic writes, questions.csv first: a stop between them can only leave a
rejected pair's row in ground_truth.csv, which the next review removes (a ground-truth row
without a question is a rejection cut short), or an edited question before its answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.errors import InputError, MissingColumnError
from rag_evaluator.generate.filters import locate
from rag_evaluator.generate.golden import (
    QUESTION_TYPE,
    REVIEWED,
    SOURCE,
    SOURCE_SPANS,
    SUPPORTING_SENTENCES,
    SourceSpan,
    parse_spans,
)
from rag_evaluator.inputs.fields import (
    GROUND_TRUTH,
    QUESTION,
    QUESTION_NUMBER,
    REFERENCE_ANSWERS,
    RELEVANT_CONTEXTS,
    REQUIRED_FACTS,
    QuestionNumberError,
    parse_question_number,
    resolve_columns,
)
from rag_evaluator.inputs.list_cells import read_list_cell

ACCEPTED = "accepted"
EDITED_MARK = "edited in review"

QUESTION_MARKER = "[Question]"
GROUND_TRUTH_MARKER = "[Ground Truth]"
FACTS_MARKER = "[Required Facts]"
_MARKERS = (QUESTION_MARKER, GROUND_TRUTH_MARKER, FACTS_MARKER)


class EditError(ValueError):
    """An edited file that cannot be read back; the message says what is wrong."""


@dataclass
class RawTable:
    """A CSV file as read: its header and rows, every cell as text."""

    name: str
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class ContextView:
    """A relevant context as review shows it: where it comes from and what to highlight."""

    label: str
    text: str
    highlights: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class ReviewCard:
    """Everything shown for one pair."""

    question_number: int
    position: int  # 1-based among the pairs still to review when the session started
    total: int
    question: str
    question_type: str
    source: str
    ground_truth: str
    required_facts: tuple[str, ...]
    contexts: tuple[ContextView, ...]
    supporting_sentences: tuple[str, ...]


@dataclass(frozen=True)
class EditedPair:
    question: str
    ground_truth: str
    required_facts: tuple[str, ...]


def highlights(text: str, sentences: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """Where each sentence is in ``text`` (whitespace-normalised match), sorted."""
    found = {span for sentence in sentences if (span := locate(sentence, text)) is not None}
    return tuple(sorted(found))


def render_edit_file(card: ReviewCard) -> str:
    """The text the editor opens: help lines, then the three sections under their markers."""
    help_lines = [
        f"# rag-eval review: question {card.question_number}. Edit the texts under the markers,",
        "# save and close the editor. Only the three marker lines are special; text above the",
        "# first one (like these lines) is ignored. Required Facts: one fact per line.",
        "# An empty question or ground truth cancels the edit.",
    ]
    return "\n".join(
        [
            *help_lines,
            "",
            QUESTION_MARKER,
            card.question,
            "",
            GROUND_TRUTH_MARKER,
            card.ground_truth,
            "",
            FACTS_MARKER,
            *card.required_facts,
            "",
        ]
    )


def parse_edit_file(text: str) -> EditedPair:
    """The texts of an edited file; ``EditError`` when a marker is gone or repeated."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        marker = line.strip()
        if marker in _MARKERS:
            if marker in sections:
                raise EditError(f"the marker line {marker} appears twice")
            current = sections[marker] = []
        elif current is not None:
            current.append(line)
    for marker in _MARKERS:
        if marker not in sections:
            raise EditError(f"the marker line {marker} is missing")
    question = "\n".join(sections[QUESTION_MARKER]).strip()
    ground_truth = "\n".join(sections[GROUND_TRUTH_MARKER]).strip()
    facts = tuple(line.strip() for line in sections[FACTS_MARKER] if line.strip())
    if not question or not ground_truth:
        raise EditError("the question or the ground truth is empty")
    return EditedPair(question, ground_truth, facts)


def _json_list(items: Sequence[str]) -> str:
    return json.dumps(list(items), ensure_ascii=False)


class ReviewTable:
    """questions.csv and ground_truth.csv in memory, with the review's decisions applied."""

    def __init__(self, questions: RawTable, ground_truth: RawTable) -> None:
        self.questions = questions
        self.ground_truth = ground_truth
        self._q = resolve_columns(
            questions.header, [QUESTION_NUMBER, QUESTION, QUESTION_TYPE, SOURCE]
        )
        for name in (QUESTION_NUMBER, QUESTION):
            if name not in self._q:
                raise MissingColumnError(questions.name, name, questions.header)
        wanted = [
            QUESTION_NUMBER,
            GROUND_TRUTH,
            RELEVANT_CONTEXTS,
            REQUIRED_FACTS,
            REFERENCE_ANSWERS,
            SOURCE_SPANS,
            SUPPORTING_SENTENCES,
            REVIEWED,
        ]
        self._g = resolve_columns(ground_truth.header, wanted)
        for name in (QUESTION_NUMBER, GROUND_TRUTH):
            if name not in self._g:
                raise MissingColumnError(ground_truth.name, name, ground_truth.header)
        if REVIEWED not in self._g:
            ground_truth.header.append(REVIEWED)
            self._g[REVIEWED] = len(ground_truth.header) - 1
        if SOURCE not in self._q:
            questions.header.append(SOURCE)
            self._q[SOURCE] = len(questions.header) - 1
        self._question_rows = self._index(questions, self._q)
        self._truth_rows = self._index(ground_truth, self._g)
        # Rows of ground_truth.csv without a question: a rejection cut short by a stop.
        self.orphans = sorted(set(self._truth_rows) - set(self._question_rows))
        for number in self.orphans:
            ground_truth.rows.remove(self._truth_rows.pop(number))
        # Rows of questions.csv without a ground truth are left alone and not reviewed.
        self.unanswered = sorted(set(self._question_rows) - set(self._truth_rows))

    @staticmethod
    def _index(table: RawTable, columns: dict[str, int]) -> dict[int, list[str]]:
        width = len(table.header)
        rows: dict[int, list[str]] = {}
        for line, row in enumerate(table.rows, start=2):
            row.extend([""] * (width - len(row)))
            try:
                number = parse_question_number(row[columns[QUESTION_NUMBER]])
            except QuestionNumberError as exc:
                raise InputError(
                    f"{table.name} line {line}: the question number {exc}. Give every row a "
                    "whole question number"
                ) from exc
            if number in rows:
                raise InputError(
                    f"{table.name} has question {number} twice (line {line}). Give every row "
                    "its own number before reviewing"
                )
            rows[number] = row
        return rows

    def _cell(self, row: list[str], columns: dict[str, int], name: str) -> str:
        index = columns.get(name)
        return row[index] if index is not None and index < len(row) else ""

    def pending(self) -> list[int]:
        """Question numbers still to review, in ground_truth.csv's order."""
        return [
            number
            for number, row in self._truth_rows.items()
            if number in self._question_rows and not self._cell(row, self._g, REVIEWED).strip()
        ]

    def reviewed_count(self) -> int:
        return sum(
            1 for row in self._truth_rows.values() if self._cell(row, self._g, REVIEWED).strip()
        )

    def card(self, number: int, position: int, total: int) -> ReviewCard:
        question_row = self._question_rows[number]
        truth_row = self._truth_rows[number]
        contexts = read_list_cell(self._cell(truth_row, self._g, RELEVANT_CONTEXTS)).texts or []
        facts = (
            read_list_cell(self._cell(truth_row, self._g, REQUIRED_FACTS), semicolons=True).texts
            or []
        )
        sentences = read_list_cell(self._cell(truth_row, self._g, SUPPORTING_SENTENCES)).texts or []
        try:
            spans: list[SourceSpan] = parse_spans(self._cell(truth_row, self._g, SOURCE_SPANS))
        except ValueError:
            spans = []
        views = []
        for index, text in enumerate(contexts):
            if index < len(spans):
                span = spans[index]
                label = f"{span.file}, characters {span.start}-{span.end}"
            else:
                label = f"context {index + 1}"
            views.append(ContextView(label, text, highlights(text, sentences)))
        return ReviewCard(
            question_number=number,
            position=position,
            total=total,
            question=self._cell(question_row, self._q, QUESTION),
            question_type=self._cell(question_row, self._q, QUESTION_TYPE),
            source=self._cell(question_row, self._q, SOURCE),
            ground_truth=self._cell(truth_row, self._g, GROUND_TRUTH),
            required_facts=tuple(facts),
            contexts=tuple(views),
            supporting_sentences=tuple(sentences),
        )

    def accept(self, number: int) -> None:
        self._truth_rows[number][self._g[REVIEWED]] = ACCEPTED

    def reject(self, number: int) -> None:
        self.questions.rows.remove(self._question_rows.pop(number))
        self.ground_truth.rows.remove(self._truth_rows.pop(number))

    def edit(self, number: int, edited: EditedPair) -> None:
        question_row = self._question_rows[number]
        truth_row = self._truth_rows[number]
        question_row[self._q[QUESTION]] = edited.question
        source_index = self._q[SOURCE]
        if EDITED_MARK not in question_row[source_index]:
            source = question_row[source_index].strip()
            question_row[source_index] = f"{source}, {EDITED_MARK}" if source else EDITED_MARK
        truth_row[self._g[GROUND_TRUTH]] = edited.ground_truth
        if REFERENCE_ANSWERS in self._g:
            # The edited answer is the question's one reference now: no stale alternatives.
            truth_row[self._g[REFERENCE_ANSWERS]] = ""
        if REQUIRED_FACTS in self._g:
            truth_row[self._g[REQUIRED_FACTS]] = _json_list(edited.required_facts)
        elif edited.required_facts:
            self.ground_truth.header.append(REQUIRED_FACTS)
            self._g[REQUIRED_FACTS] = len(self.ground_truth.header) - 1
            for row in self.ground_truth.rows:
                row.append("")
            truth_row[self._g[REQUIRED_FACTS]] = _json_list(edited.required_facts)

    def accept_all(self) -> int:
        pending = self.pending()
        for number in pending:
            self.accept(number)
        return len(pending)
