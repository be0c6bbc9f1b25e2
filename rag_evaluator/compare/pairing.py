"""Which row of one run goes with which row of another: the rows that hold the same question.

Question numbers pair the rows when they agree with the question texts the files carry.
They need not: a dataset without an id field is numbered by its order, so the same set in
another order gives every question another number. The rule:

- a question's **key** is its text, whitespace runs collapsed and case ignored; for a text
  that several rows of either file hold, the key adds the ground truth (so the same
  follow-up question of two conversations is told apart);
- a number both files hold pairs its two rows when their keys agree (or when either row has
  no question text to check);
- the rows left (numbers that hold another question, or a number in one file only) are
  paired by key; rows still alike (same question, same ground truth) are paired in file
  order, alike with alike. A row whose question is in one file only is left out and named;
- when no row can be paired, the comparison is refused.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.results.run_scores import RunScores
from rag_evaluator.text.snippets import quote_snippet

BY_NUMBER = "question number"
BY_TEXT = "question text"
_SHOWN_NUMBERS = 15


@dataclass(frozen=True)
class Mismatch:
    """A question number that holds different questions in the two files."""

    question_number: int
    baseline_question: str
    run_question: str


@dataclass(frozen=True)
class QuestionPairing:
    """The rows of a run paired with the baseline's: (baseline number, run number) in the
    baseline's order, and the rows of each file left without a partner."""

    pairs: tuple[tuple[int, int], ...]
    only_in_baseline: tuple[int, ...]
    only_in_run: tuple[int, ...]
    by_text: bool = False
    mismatch: Mismatch | None = None  # the first number found holding two questions

    @property
    def paired_by(self) -> str:
        return BY_TEXT if self.by_text else BY_NUMBER

    def run_numbers(self) -> dict[int, int]:
        """Baseline question number -> the run's number of the same question."""
        return dict(self.pairs)


def normalised_question(text: str) -> str:
    """A question as compared: whitespace runs collapsed, case ignored."""
    return " ".join(text.split()).casefold()


def pair_questions(baseline: RunScores, run: RunScores) -> QuestionPairing:
    """Pair the rows of ``run`` with those of ``baseline`` (see the module's rule).

    Raises ``InputError`` when no row can be paired.
    """
    before_texts, after_texts = _texts(baseline), _texts(run)
    repeated = _repeated(before_texts) | _repeated(after_texts)
    before_keys = _keys(baseline, before_texts, repeated)
    after_keys = _keys(run, after_texts, repeated)
    run_numbers = set(run.question_numbers)
    pairs: list[tuple[int, int]] = []
    mismatch: Mismatch | None = None
    for number in baseline.question_numbers:
        if number not in run_numbers:
            continue
        before, after = before_keys.get(number), after_keys.get(number)
        if before is None or after is None or before == after:
            pairs.append((number, number))
        elif mismatch is None:
            mismatch = Mismatch(number, baseline.questions[number], run.questions[number])
    by_number = len(pairs)
    pairs += _pairs_by_key(baseline, run, before_keys, after_keys, pairs)
    if not pairs:
        raise InputError(_unpairable(baseline, run, mismatch))
    paired_baseline = {number for number, _ in pairs}
    paired_run = {number for _, number in pairs}
    return QuestionPairing(
        pairs=tuple(sorted(pairs)),
        only_in_baseline=tuple(
            sorted(number for number in baseline.question_numbers if number not in paired_baseline)
        ),
        only_in_run=tuple(sorted(run_numbers - paired_run)),
        by_text=len(pairs) > by_number,
        mismatch=mismatch,
    )


def _texts(scores: RunScores) -> dict[int, str]:
    return {
        number: normalised_question(text)
        for number, text in scores.questions.items()
        if text.strip()
    }


def _repeated(texts: Mapping[int, str]) -> set[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for text in texts.values():
        (repeated if text in seen else seen).add(text)
    return repeated


def _keys(
    scores: RunScores, texts: Mapping[int, str], repeated: set[str]
) -> dict[int, tuple[str, str]]:
    """Each row's key (see the module's rule); rows without a question text have none."""
    keys: dict[int, tuple[str, str]] = {}
    for number, text in texts.items():
        truth = scores.ground_truths.get(number, "") if text in repeated else ""
        keys[number] = (text, normalised_question(truth))
    return keys


def _pairs_by_key(
    baseline: RunScores,
    run: RunScores,
    before_keys: Mapping[int, tuple[str, str]],
    after_keys: Mapping[int, tuple[str, str]],
    paired: Sequence[tuple[int, int]],
) -> list[tuple[int, int]]:
    """The rows not paired by number, paired by key in file order."""
    taken_before = {number for number, _ in paired}
    taken_after = {number for _, number in paired}
    waiting: dict[tuple[str, str], deque[int]] = defaultdict(deque)
    for number in run.question_numbers:
        if number not in taken_after and number in after_keys:
            waiting[after_keys[number]].append(number)
    pairs: list[tuple[int, int]] = []
    for number in baseline.question_numbers:
        if number in taken_before or number not in before_keys:
            continue
        partners = waiting.get(before_keys[number])
        if partners:
            pairs.append((number, partners.popleft()))
    return pairs


def _unpairable(baseline: RunScores, run: RunScores, mismatch: Mismatch | None) -> str:
    if mismatch is None:
        before = format_numbers(sorted(baseline.question_numbers), _SHOWN_NUMBERS)
        after = format_numbers(sorted(run.question_numbers), _SHOWN_NUMBERS)
        return (
            f"{baseline.label} and {run.label} have no question number in common "
            f"({baseline.label}: {before}; {run.label}: {after}) and no question text in "
            "common. Compare runs over the same questions"
        )
    return (
        f"{baseline.label} and {run.label} hold different questions under the same numbers "
        f"(question {mismatch.question_number} is "
        f"{quote_snippet(mismatch.baseline_question)} in {baseline.label} and "
        f"{quote_snippet(mismatch.run_question)} in {run.label}) and have no question text in "
        "common, so no row can be paired. Compare runs over the same questions"
    )
