"""Matching RAG output entries to the rows of questions.csv by question text.

Pure: plain data in, plain data out (rapidfuzz and numpy do the arithmetic).

Scoring. Both texts are normalised (Unicode NFKC, case-folded, runs of whitespace
collapsed to one space) and scored with ``rapidfuzz.fuzz.ratio``: the normalised
InDel similarity ``100 * 2*M / T``, where ``T`` is the total length of the two
texts and ``M`` the length of their longest common subsequence. The original
tool used ``difflib.SequenceMatcher.ratio()``, which has the same form ``2*M/T``
but takes ``M`` as the size of the matching blocks found by a greedy
longest-common-substring search (and, for texts of 200+ characters, ignores
"popular" characters). Those blocks always form a common subsequence, so difflib's
``M`` is never larger than the LCS: rapidfuzz's score is greater than or equal to
difflib's for every pair, and the two are equal whenever the greedy blocks happen
to be a longest common subsequence, which is the usual case for a question and
its lightly edited copy. Keeping the spec's threshold of 85 therefore accepts
every pair the spec accepted; the only pairs decided differently are those whose
difflib score was just under 85 while their LCS reaches 85, and
``benchmarks/convert_bench.py`` measures how rare that is.

Numbers. Two texts each holding a number the other lacks ask different questions
("revenue in 2023" is not "revenue in 2022", "item 11" is not "item 1"), however close the
texts (a leading list label such as "1." or "Q1:" aside; a text with no number, or with more,
may spell one out: "six hours"). When an entry's best-scoring question contradicts its
numbers, the best question that does not is taken if it reaches the threshold, else the
entry is unmatched.

Assignment. Each entry goes to its best-scoring question (lowest question number
on a tie) when the score reaches the threshold. One answer per question: when
several entries claim one question, an entry with answer text beats an empty (or
null) answer, then a text match beats an ID key, then the higher score wins, then
the entry read first; the others are reported as lost claims. A text that
questions.csv repeats under several numbers takes as many entries, in that order:
an entry that loses the first number goes to the next free one.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np
from rapidfuzz import fuzz, process

from rag_evaluator.convert.threshold import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from rag_evaluator.inputs.shapes import RagEntry
from rag_evaluator.text.snippets import quote_snippet

PERFECT_FROM = 99.0
GOOD_FROM = 95.0

# Scores are rounded before comparing so that float noise (84.99999999999999 for
# an exact 85) cannot move a score across a boundary.
_SCORE_DECIMALS = 9
# One block of the score matrix holds at most this many float64 cells (32 MB).
_BLOCK_CELLS = 4_000_000


class Confidence(StrEnum):
    """How sure a match is; ``ID`` marks a flat-mapping key such as ``Q3``."""

    PERFECT = "PERFECT"
    GOOD = "GOOD"
    LOW = "LOW"
    FAILED = "FAILED"
    ID = "ID"


def normalise_question(text: str) -> str:
    """Text as compared: NFKC, case-folded, whitespace runs collapsed, trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


# A list label before a question ("1. ", "Q1: ", "3) "): numbering, not part of the question.
_LIST_LABEL = re.compile(r"^(?:q(?:uestion)?\s*)?#?\d+\s*[.):-]\s+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def numbers_in(normalised: str) -> tuple[str, ...]:
    """The numbers a normalised question holds, sorted: thousands separators and leading
    zeros aside (``1,000`` is ``1000``, ``007`` is ``7``), a leading list label left out."""
    text = _LIST_LABEL.sub("", normalised, count=1)
    found = (number.replace(",", "").lstrip("0") or "0" for number in _NUMBER.findall(text))
    return tuple(sorted(found))


def same_question(text: str, question: str, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """Whether ``text`` is ``question`` as convert matches them: a score at the threshold and
    no number of one contradicting the other's."""
    first, second = normalise_question(text), normalise_question(question)
    if first == second:
        return True
    numbers = frozenset(numbers_in(first)), frozenset(numbers_in(second))
    score = round(fuzz.ratio(first, second), _SCORE_DECIMALS)
    return score >= threshold and not other_numbers(*numbers)


def confidence_label(score: float, threshold: float = DEFAULT_THRESHOLD) -> Confidence:
    """PERFECT from 99, GOOD from 95, LOW from the threshold (85), FAILED below it."""
    score = round(score, _SCORE_DECIMALS)
    if math.isnan(score) or score < threshold:
        return Confidence.FAILED
    if score >= PERFECT_FROM:
        return Confidence.PERFECT
    if score >= GOOD_FROM:
        return Confidence.GOOD
    return Confidence.LOW


def display_score(score: float) -> str:
    """A score with one decimal, cut rather than rounded so 84.96 shows as 84.9, not 85.0."""
    tenths = math.floor(round(score, _SCORE_DECIMALS) * 10 + 1e-6)
    return f"{tenths / 10:.1f}"


@dataclass(frozen=True)
class BestCandidate:
    """The best-scoring question for one text, whether or not it reaches the threshold."""

    index: int
    score: float


def best_candidates(texts: Sequence[str], choices: Sequence[str]) -> list[BestCandidate | None]:
    """For each normalised text, its best normalised choice (``None`` when there are none).

    Texts equal to a choice score 100 without further work (the usual case: most RAG
    files repeat the question verbatim), and repeated texts are scored once. The rest
    are scored block by block with ``process.cdist`` on all cores, without a
    ``score_cutoff``: the best choice of every text is then known from this one pass,
    including the nearest candidate named in the warning for a text under the
    threshold. (A cutoff saves rapidfuzz no time on question-length texts, and would
    zero the scores under it, so those texts had to be scored a second time.)
    """
    results: list[BestCandidate | None] = [None] * len(texts)
    if not texts or not choices:
        return results
    first_choice: dict[str, int] = {}
    for index, choice in enumerate(choices):
        first_choice.setdefault(choice, index)
    # Each distinct text still to score, and every position it appears at.
    pending: dict[str, list[int]] = {}
    for position, text in enumerate(texts):
        if text in first_choice:
            # Only an identical string scores 100, and argmax would take its first copy.
            results[position] = BestCandidate(first_choice[text], 100.0)
        else:
            pending.setdefault(text, []).append(position)
    distinct = list(pending)
    for start, scores in _score_blocks(distinct, choices):
        # argmax takes the first maximum: a tie goes to the lower question number.
        best_columns = scores.argmax(axis=1)
        for row, column in enumerate(best_columns.tolist()):
            best = BestCandidate(column, round(float(scores[row, column]), _SCORE_DECIMALS))
            for position in pending[distinct[start + row]]:
                results[position] = best
    return results


def _score_blocks(texts: Sequence[str], choices: Sequence[str]) -> Iterator[tuple[int, np.ndarray]]:
    """The score matrix of ``texts`` against ``choices``, in blocks of rows (first row, block)."""
    rows_per_block = max(1, _BLOCK_CELLS // len(choices))
    for start in range(0, len(texts), rows_per_block):
        scores = process.cdist(
            texts[start : start + rows_per_block],
            choices,
            scorer=fuzz.ratio,
            dtype=np.float64,
            workers=-1,
        )
        yield start, scores


@dataclass(frozen=True)
class MatchedEntry:
    """An entry assigned to a question; ``score`` is ``None`` for an ID key."""

    question_number: int
    entry: RagEntry
    confidence: Confidence
    score: float | None
    order: int

    @property
    def has_answer(self) -> bool:
        """Whether the answer holds any text (``null`` was read as an empty answer)."""
        return bool(self.entry.answer.strip())

    def describe(self) -> str:
        how = "by its ID key" if self.score is None else f"at {display_score(self.score)}"
        return f"{self.entry.origin} ({how})"


@dataclass(frozen=True)
class UnmatchedEntry:
    """An entry no question was assigned to, with its nearest candidate if there is one
    (``other_numbers``: it scored enough but holds other numbers)."""

    entry: RagEntry
    best_question_number: int | None
    best_question: str | None
    best_score: float | None
    other_numbers: bool = False

    def message(self, threshold: float, questions_name: str) -> str:
        """The warning shown for this entry."""
        entry = self.entry
        if entry.question is None:
            return (
                f"{entry.origin}: question number {entry.question_id} is not in "
                f"{questions_name}. Add question {entry.question_id} to {questions_name} or "
                "correct the key (entry skipped)"
            )
        shown = quote_snippet(entry.question)
        if self.best_question_number is None or self.best_score is None:
            return (
                f"{entry.origin}: {questions_name} has no question to match {shown} against. "
                "Fill in its Question column (entry skipped)"
            )
        nearest = (
            f"question {self.best_question_number} {quote_snippet(self.best_question or '')} "
            f"at {display_score(self.best_score)}"
        )
        if self.other_numbers:
            return (
                f"{entry.origin}: no question in {questions_name} matches {shown}; the nearest, "
                f"{nearest}, holds other numbers, so it asks another question. Add the "
                f"question to {questions_name} or correct the numbers (entry skipped)"
            )
        return (
            f"{entry.origin}: no question in {questions_name} matches {shown}; the best "
            f"candidate is {nearest}, below the threshold {threshold:g}. Add the question to "
            f"{questions_name} or lower --threshold (entry skipped)"
        )


@dataclass(frozen=True)
class LostClaim:
    """An entry that matched a question another entry matched better (or first)."""

    loser: MatchedEntry
    winner: MatchedEntry

    @property
    def decided_by_read_order(self) -> bool:
        """Whether nothing but the read order chose the winner: both have answer text (or
        both none), both matched by text at the same score or both by ID key."""
        return self.loser.has_answer == self.winner.has_answer and (
            self.loser.score == self.winner.score
        )

    def message(self) -> str:
        """The warning shown for the losing entry."""
        loser, winner = self.loser, self.winner
        if winner.has_answer and not loser.has_answer:
            # Nothing to correct: an empty answer simply has nothing to evaluate.
            return (
                f"{loser.describe()} also answers question {loser.question_number}, but its "
                f"answer is empty and {winner.describe()} has one; kept that one (entry skipped)"
            )
        if winner.score is None and loser.score is None:
            why = "was read first"
        elif loser.score is None:
            why = "matched by question text, which wins over an ID key"
        elif winner.score is not None and winner.score > loser.score:
            why = "matched better"
        else:
            why = "matched as well and was read first"
        return (
            f"{loser.describe()} also answers question {loser.question_number}, but "
            f"{winner.describe()} {why}; kept that one. If it answers another question, "
            f"correct its {'key' if loser.score is None else 'question text'} (entry skipped)"
        )


@dataclass(frozen=True)
class Assignment:
    """The outcome of matching: one entry per question, and what was left over."""

    matched: list[MatchedEntry]
    unmatched: list[UnmatchedEntry]
    lost_claims: list[LostClaim]


def repeated_questions(questions: Mapping[int, str]) -> list[list[int]]:
    """Groups of question numbers whose texts are the same after normalisation.

    Matching sends every answer to such a text to the lowest number of its group, so
    the others can never be answered by text.
    """
    numbers_by_text: dict[str, list[int]] = {}
    for number, text in sorted(questions.items()):
        normalised = normalise_question(text)
        if normalised:
            numbers_by_text.setdefault(normalised, []).append(number)
    return [numbers for numbers in numbers_by_text.values() if len(numbers) > 1]


def assign_entries(
    entries: Sequence[RagEntry],
    questions: Mapping[int, str],
    threshold: float = DEFAULT_THRESHOLD,
) -> Assignment:
    """Assign each entry to a question of ``questions`` (number -> text); see module doc."""
    numbers = [number for number, text in sorted(questions.items()) if normalise_question(text)]
    choices = [normalise_question(questions[number]) for number in numbers]
    text_positions = [i for i, entry in enumerate(entries) if entry.question is not None]
    found = best_candidates(
        [normalise_question(entries[i].question or "") for i in text_positions], choices
    )
    best_by_position = dict(zip(text_positions, found, strict=True))

    claims: list[MatchedEntry] = []
    unmatched: list[UnmatchedEntry] = []
    same_numbers = _SameNumbers(choices)
    for order, entry in enumerate(entries):
        if entry.question is None:
            if entry.question_id in questions:
                claims.append(MatchedEntry(entry.question_id, entry, Confidence.ID, None, order))
            else:
                unmatched.append(UnmatchedEntry(entry, None, None, None))
            continue
        best = best_by_position[order]
        if best is None:
            unmatched.append(UnmatchedEntry(entry, None, None, None))
            continue
        nearest = best
        if confidence_label(best.score, threshold) is not Confidence.FAILED:
            best = same_numbers.best(normalise_question(entry.question), best, threshold)
        if best is None or confidence_label(best.score, threshold) is Confidence.FAILED:
            number = numbers[nearest.index]
            unmatched.append(
                UnmatchedEntry(entry, number, questions[number], nearest.score, best is None)
            )
        else:
            confidence = confidence_label(best.score, threshold)
            claims.append(MatchedEntry(numbers[best.index], entry, confidence, best.score, order))

    winners: dict[int, MatchedEntry] = {}
    lost: list[LostClaim] = []
    same_text = _same_text_numbers(questions, numbers)
    for claim in sorted(claims, key=_claim_strength):
        current = winners.get(claim.question_number)
        if current is not None and claim.score is not None:
            # A text questions.csv repeats: the next entry takes its next free number.
            free = [n for n in same_text.get(claim.question_number, ()) if n not in winners]
            if free:
                claim = replace(claim, question_number=free[0])
                current = None
        if current is None:
            winners[claim.question_number] = claim
        else:
            lost.append(LostClaim(claim, current))
    lost.sort(key=lambda item: item.loser.order)
    matched = [winners[number] for number in sorted(winners)]
    return Assignment(matched, unmatched, lost)


class _SameNumbers:
    """Candidates whose numbers do not contradict a text's, the questions' numbers read once."""

    def __init__(self, choices: Sequence[str]) -> None:
        self._choices = choices
        self._numbers: list[frozenset[str]] | None = None

    def best(self, text: str, best: BestCandidate, threshold: float) -> BestCandidate | None:
        """``best`` unless its question holds other numbers than ``text``; then the best
        question that does not, when it reaches ``threshold``; else ``None``."""
        wanted = frozenset(numbers_in(text))
        if not other_numbers(wanted, frozenset(numbers_in(self._choices[best.index]))):
            return best
        if self._numbers is None:
            self._numbers = [frozenset(numbers_in(choice)) for choice in self._choices]
        indices = [i for i, held in enumerate(self._numbers) if not other_numbers(wanted, held)]
        found = process.extractOne(
            text,
            [self._choices[i] for i in indices],
            scorer=fuzz.ratio,
            score_cutoff=max(0.0, threshold - 1e-6),  # the label rounds; float noise at 85
        )
        if found is None:
            return None
        # extractOne keeps the first of equal scores: the lower question number.
        return BestCandidate(indices[found[2]], round(float(found[1]), _SCORE_DECIMALS))


def other_numbers(first: frozenset[str], second: frozenset[str]) -> bool:
    """Whether two texts' numbers say they ask different questions: each holds a number the
    other lacks (``2023`` against ``2022``). One holding none, or only more of them, is no
    contradiction: "6 hours" may be "six hours"."""
    return bool(first - second) and bool(second - first)


def _same_text_numbers(
    questions: Mapping[int, str], numbers: Sequence[int]
) -> dict[int, list[int]]:
    """For each question whose text questions.csv repeats, every number of that text."""
    groups = repeated_questions({number: questions[number] for number in numbers})
    return {number: group for group in groups for number in group}


def _claim_strength(claim: MatchedEntry) -> tuple[bool, bool, float, int]:
    # Sorted ascending, so the strongest claim on each question comes first: an answer
    # with text, then a text match over an ID key, then the higher score, then read first.
    if claim.score is None:
        return (not claim.has_answer, True, 0.0, claim.order)
    return (not claim.has_answer, False, -claim.score, claim.order)
