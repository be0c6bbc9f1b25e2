"""Which questions a run evaluates (those in all three files) and in what order."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.records import (
    AnswerRow,
    EvaluationItem,
    GroundTruthRow,
    KeyedRows,
    QuestionRow,
)


@dataclass(frozen=True)
class Exclusion:
    """A question number present in some input files but not all: it is left out."""

    question_number: int
    missing_from: tuple[str, ...]


@dataclass(frozen=True)
class Selection:
    """The questions to evaluate, in question-number order, and those left out.

    ``answerable`` counts the questions that have a question and a ground truth (the
    denominator of coverage), ``answered`` those of them with a non-blank answer.
    """

    items: Sequence[EvaluationItem]
    exclusions: list[Exclusion]
    answerable: int = 0
    answered: int = 0

    @property
    def coverage(self) -> tuple[int, int]:
        return self.answered, self.answerable


def format_numbers(numbers: Iterable[int], limit: int | None = None) -> str:
    """``1-3, 7, 9-10``: sorted, runs of consecutive numbers shortened.

    With ``limit``, only the first ``limit`` numbers are listed, then ``and N more``.
    """
    ordered = sorted(set(numbers))
    hidden = 0
    if limit is not None and len(ordered) > limit:
        hidden = len(ordered) - limit
        ordered = ordered[:limit]
    parts: list[str] = []
    index = 0
    while index < len(ordered):
        start = ordered[index]
        while index + 1 < len(ordered) and ordered[index + 1] == ordered[index] + 1:
            index += 1
        end = ordered[index]
        parts.append(str(start) if start == end else f"{start}-{end}")
        index += 1
    shown = ", ".join(parts)
    return f"{shown} and {hidden} more" if hidden else shown


@dataclass(frozen=True)
class NumberSelection:
    """Which question numbers a run evaluates (sorted), which of them have no answer row
    (``--score-missing``), those left out, and the coverage counts."""

    numbers: list[int]
    without_answer: set[int]
    exclusions: list[Exclusion]
    answerable: int
    answered: int


def select_numbers(
    sources: Sequence[tuple[str, set[int]]],
    answered_numbers: set[int],
    *,
    score_missing: bool = False,
) -> NumberSelection:
    """Join the files' question numbers: ``sources`` are (file name, numbers) of the
    questions, the ground truth (absent without references) and the answers, in that order;
    ``answered_numbers`` the answers' numbers whose answer is not blank."""
    question_numbers, answer_numbers = sources[0][1], sources[-1][1]
    every_number = set().union(*(numbers for _, numbers in sources))
    answerable = set(question_numbers)
    for _, numbers in sources[1:-1]:
        answerable &= numbers
    common = set.intersection(*(numbers for _, numbers in sources))
    missing = answerable - answer_numbers if score_missing else set()
    if not common and not missing:
        found = "; ".join(
            f"{name}: {format_numbers(numbers) or 'none'}" for name, numbers in sources
        )
        files = "three files" if len(sources) == 3 else "files"
        raise InputError(
            f"No question number is in all {files} ({found}). "
            f"Make the Question Number columns of the {files} use the same numbers"
        )
    exclusions = [
        Exclusion(
            number,
            tuple(name for name, numbers in sources if number not in numbers),
        )
        for number in sorted(every_number - common - missing)
    ]
    return NumberSelection(
        sorted(common | missing),
        missing,
        exclusions,
        len(answerable),
        len(answerable & answered_numbers),
    )


def select_items(
    questions: KeyedRows[QuestionRow],
    ground_truth: KeyedRows[GroundTruthRow],
    answers: KeyedRows[AnswerRow],
    *,
    score_missing: bool = False,
    reference_free: bool = False,
) -> Selection:
    """Join the three files on question number; numbers missing from any file are excluded.

    With ``score_missing`` a question that has a question and a ground truth but no answer
    row is kept, with an empty answer and ``answer_missing`` set. With ``reference_free``
    the ground truth takes no part: questions and answers are joined, and every item's
    ground truth is empty.
    """
    sources: list[tuple[str, set[int]]] = [
        (questions.source_name, set(questions.rows)),
        *([] if reference_free else [(ground_truth.source_name, set(ground_truth.rows))]),
        (answers.source_name, set(answers.rows)),
    ]
    answered = {number for number, row in answers.rows.items() if row.rag_answer.strip()}
    chosen = select_numbers(sources, answered, score_missing=score_missing)
    no_truth = GroundTruthRow(0, "")
    items = [
        join_rows(
            questions.rows[number],
            no_truth if reference_free else ground_truth.rows[number],
            answers.rows.get(number),
        )
        for number in chosen.numbers
    ]
    return Selection(items, chosen.exclusions, chosen.answerable, chosen.answered)


def join_rows(
    question: QuestionRow, truth: GroundTruthRow, answer: AnswerRow | None
) -> EvaluationItem:
    """One question's item; without an answer row (``--score-missing``) the answer is empty."""
    # Positional, in the order of EvaluationItem's fields: built once per question of a run,
    # keyword arguments were a third of the time this takes.
    answered = answer is not None
    return EvaluationItem(
        question.question_number,
        question.question,
        truth.ground_truth,
        answer.rag_answer if answered else "",
        answer.contexts if answered else None,
        truth.relevant_contexts,
        truth.required_facts,
        not answered,
        answer.retrieval_scores if answered else None,
        question.metadata,
        truth.reference_answers,
    )


def exclusion_warnings(exclusions: Sequence[Exclusion]) -> list[str]:
    """One warning per set of files lacking questions, naming the question numbers."""
    by_missing: dict[tuple[str, ...], list[int]] = {}
    for exclusion in exclusions:
        by_missing.setdefault(exclusion.missing_from, []).append(exclusion.question_number)
    warnings = []
    for missing_from, numbers in by_missing.items():
        noun = "question" if len(numbers) == 1 else "questions"
        warnings.append(
            f"Left out {noun} {format_numbers(numbers)}: not in {' or '.join(missing_from)}"
        )
    return warnings


def shuffled_order(question_numbers: Iterable[int], seed: int) -> list[int]:
    """The evaluation order: the numbers sorted, then shuffled by ``random.Random(seed)``.

    Sorting first makes the order depend only on the set of numbers and the seed.
    """
    order = sorted(question_numbers)
    random.Random(seed).shuffle(order)
    return order
