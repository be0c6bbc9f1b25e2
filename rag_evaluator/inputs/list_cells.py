"""The list cells of the three input CSVs (``Contexts``, ``Relevant Contexts``, ``Required
Facts``, ``Reference Answers``) and their ``Ground Truth`` cell, read as a dataset's fields.

Pure. A list cell is a list (``fields.parse_list_literal``: JSON, Python or numpy), a JSON
string (one item, unquoted; a string spelling a list is that list, as in a JSON dataset) or
other text (one item; ``Required Facts`` also splits ``a; b; c``). Its items are read by the
dataset reader's item reading (``shapes.read_contexts``): strings as they are, objects by
their text field (the alias table), numbers spelled out; blank items are dropped, and items
without text (``null``, an object with no text field) are left out and counted, so each
column gets one warning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_evaluator.inputs.fields import (
    CONTEXTS,
    GROUND_TRUTH,
    RELEVANT_CONTEXTS,
    bar_joined_warning,
    column_key,
    looks_bar_joined,
    parse_list_literal,
    reference_cell_list,
    several_references_note,
)
from rag_evaluator.inputs.shapes import (
    CONTEXT_SCORE_KEYS,
    CONTEXT_TEXT_FIELDS,
    listed_references,
    read_contexts,
    reference_text,
)

# The columns holding a list of texts, whose cells may come joined by "|" from deepeval.
BAR_JOINED_COLUMNS = (CONTEXTS, RELEVANT_CONTEXTS)


@dataclass(frozen=True)
class CellItems:
    """The items a list cell holds, and whether it spelled a list (else it was one text)."""

    items: list[object]
    is_list: bool


def cell_items(raw: str) -> CellItems | None:
    """The items of a list cell; ``None`` for a blank cell (the input is missing)."""
    text = raw.strip()
    if not text:
        return None
    listed = parse_list_literal(text)
    if listed is not None:
        return CellItems(listed, True)
    if text.startswith('"') and text.endswith('"') and len(text) > 1:
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            value = None
        if isinstance(value, str):
            # A JSON string (a field written with json.dumps): its text, which may in
            # turn spell a list, as a string field of a JSON dataset does.
            inner = parse_list_literal(value)
            return CellItems(inner, True) if inner is not None else CellItems([value], False)
    return CellItems([text], False)


@dataclass(frozen=True)
class CellRead:
    """A list cell read: its texts (``None``: unknown, a blank cell or no item with text),
    the score of each text (``None`` when none is known), how many items it holds (``None``
    for a blank cell), the items left out for lack of text, whether the cell is one text
    holding ``|``, and what is wrong with the items' own scores (empty when nothing)."""

    texts: list[str] | None
    scores: tuple[float, ...] | None = None
    items: int | None = None
    dropped: int = 0
    bar_joined: bool = False
    score_problem: str = ""


def read_list_cell(raw: str, *, semicolons: bool = False) -> CellRead:
    """A list-of-texts cell (golden contexts, required facts, reference answers); with
    ``semicolons`` a cell that is no list splits at ``;``."""
    found = cell_items(raw)
    if found is None:
        return CellRead(None)
    items = found.items
    if semicolons and not found.is_list:
        items = [part.strip() for part in str(items[0]).split(";") if part.strip()]
    read = read_contexts(items)
    return CellRead(read.texts, None, len(items), read.dropped, _bar_joined(found))


def read_contexts_cell(raw: str, column_scores: Sequence[float] | None) -> CellRead:
    """A ``Contexts`` cell with its scores: the ``Retrieval Scores`` column when it gives
    them (parallel to the cell's items: when they are not as many, ``score_problem`` says
    so and the caller names the fix), else the scores the context objects carry."""
    found = cell_items(raw)
    if found is None:
        return CellRead(None, None if column_scores is None else tuple(column_scores))
    items = found.items
    if column_scores is not None:
        # The column is the scores: those of the objects are not read beside it.
        items = [_without_score(item) for item in items]
    read = read_contexts(items, None if column_scores is None else list(column_scores))
    scores = None if read.scores is None else tuple(read.scores)
    return CellRead(
        read.texts, scores, len(items), read.dropped, _bar_joined(found), read.score_problem
    )


def _without_score(item: object) -> object:
    if not isinstance(item, dict):
        return item
    return {name: value for name, value in item.items() if column_key(name) not in _SCORE_KEYS}


_SCORE_KEYS = frozenset(CONTEXT_SCORE_KEYS)


def _bar_joined(found: CellItems) -> bool:
    return not found.is_list and looks_bar_joined(str(found.items[0]))


@dataclass(frozen=True)
class Reference:
    """A ground-truth row's reference: its text and, when several, the answers apart."""

    text: str
    answers: tuple[str, ...] | None
    listed_several: bool = False  # the Ground Truth cell listed several answers


def read_reference(truth_cell: str | None, answers_cell: CellRead) -> Reference:
    """The reference of a ground-truth row: its ``Ground Truth`` cell (``None`` when the
    file has no such column and ``Reference Answers`` stands in) and its ``Reference
    Answers`` cell as ``read_list_cell`` reads it. A Ground Truth cell spelling a list of
    strings is read as a dataset's reference field is: the answers joined by lines, and,
    when two or more are not blank, also kept apart (unless Reference Answers gives them)."""
    # Repeats dropped, as a dataset's reference field drops them.
    answers = tuple(dict.fromkeys(text for text in answers_cell.texts or () if text.strip()))
    given = answers or None
    if truth_cell is None:
        return Reference(reference_text(list(answers)) or "", given)
    listed = reference_cell_list(truth_cell)
    if listed is None:
        return Reference(truth_cell, given)
    several = listed_references(listed)
    return Reference(reference_text(listed) or "", given or several, several is not None)


@dataclass
class CellNotes:
    """What reading one file's cells found worth one message per column: cells read as one
    text though they hold ``|``, items left out for lack of text, Ground Truth cells
    listing several answers."""

    bar_joined: dict[str, int] = field(default_factory=dict)
    without_text: dict[str, int] = field(default_factory=dict)
    several_references: int = 0

    def note(self, column: str, read: CellRead) -> None:
        if read.bar_joined and column in BAR_JOINED_COLUMNS:
            self.bar_joined[column] = self.bar_joined.get(column, 0) + 1
        if read.dropped:
            self.without_text[column] = self.without_text.get(column, 0) + read.dropped

    def warnings(self, file_name: str, headers: Mapping[str, str]) -> list[str]:
        """One warning per column: ``headers`` gives each canonical column's header."""
        warnings = [
            bar_joined_warning(file_name, headers.get(column, column), rows)
            for column, rows in self.bar_joined.items()
        ]
        for column, items in self.without_text.items():
            warnings.append(
                f"{file_name}: {items} item{'' if items == 1 else 's'} of the "
                f"'{headers.get(column, column)}' cells had no text (null, or an object "
                f"without a {'/'.join(CONTEXT_TEXT_FIELDS)} field) and "
                f"{'was' if items == 1 else 'were'} left out. Write each item as a string, "
                f"or as an object with one of the fields {', '.join(CONTEXT_TEXT_FIELDS)}"
            )
        return warnings

    def notes(self, file_name: str, headers: Mapping[str, str]) -> list[str]:
        """The notes for the log (not warnings: nothing is lost)."""
        if not self.several_references:
            return []
        column = headers.get(GROUND_TRUTH, GROUND_TRUTH)
        return [several_references_note(file_name, column, self.several_references)]
