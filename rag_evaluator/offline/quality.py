"""Answer quality control (seed 002): heuristic checks of one answer, no model call.

Each check returns 1 (passes), 0 (fails) or ``None`` (does not apply to this answer). The
checks of the answer's content (citations, no_fallback, list_format) do not apply to an
empty answer, which not_empty already fails:

- not_empty: the answer has a non-blank character.
- has_contexts: at least one non-blank context was retrieved.
- citations: the answer cites its sources as ``[n]`` and every ``n`` is between 1 and the
  number of contexts. An answer without any citation fails (seed 002 checks that the answer
  has citations) unless citations are not required (``--no-require-citations``, for RAG
  systems not asked to cite: then only the numbers it does cite are checked); an
  out-of-range number fails. Does not apply when no context was retrieved and the answer
  cites nothing (there is nothing it could cite).
- no_fallback: none of the fallback phrases occurs, case-folded, whitespace collapsed, as
  whole words; by default the phrases are seed 002's and the abstentions and refusals of
  ``text/non_answers`` (an answer that gives up fails). Does not apply when the phrase
  list is empty (the check is turned off).
- retrieval_score: every retrieval score is at least the minimum. Does not apply when no
  score is reported (an empty list).
- list_format: a question asking for a list (``LIST_QUESTION``) gets at least two markdown
  or numbered list items. Does not apply to other questions.

``quality_pass`` is 1 when every applicable check passes, and the failures are named.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rag_evaluator.offline.lexical import list_items
from rag_evaluator.offline.options import DEFAULT_FALLBACK_PHRASES, DEFAULT_MIN_RETRIEVAL_SCORE
from rag_evaluator.text import non_answers
from rag_evaluator.text.citations import find_citations

# Seed 002's fallback phrase ("Unable to generate"), the AI disclaimers and cannot-answer
# phrases; by default the check also fails every abstention and refusal of
# ``text/non_answers`` ("I do not have specific information", "this model is unable to
# respond"): an answer that gives up is a fallback, whatever its words.
# A list answer has at least this many list items: one bullet is not a list.
MIN_LIST_ITEMS = 2

NOT_EMPTY = "quality_not_empty"
HAS_CONTEXTS = "quality_has_contexts"
CITATIONS = "quality_citations"
NO_FALLBACK = "quality_no_fallback"
RETRIEVAL_SCORE = "quality_retrieval_score"
LIST_FORMAT = "quality_list_format"
PASS = "quality_pass"
FAILURES = "Quality Failures"
CHECKS = (NOT_EMPTY, HAS_CONTEXTS, CITATIONS, NO_FALLBACK, RETRIEVAL_SCORE, LIST_FORMAT)

_WORDS_OF_A_SENTENCE = r"[^.?!\n]*"
# A question asks for a list when it says so ("list", "enumerate", "itemise"), asks for
# steps (or step by step), asks "which ... are/were" in one sentence, or asks to "name"
# several things ("name three", "name all").
LIST_QUESTION = re.compile(
    r"\b(?:list|lists|listing|enumerate|itemi[sz]e|steps|step[\s-]+by[\s-]+step)\b"
    rf"|\bwhich\b{_WORDS_OF_A_SENTENCE}\b(?:are|were)\b"
    r"|\bname\s+(?:all|some|several|the\s+main|\d+|two|three|four|five|six|seven|eight|nine|ten)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FallbackPhrases:
    """Fallback phrases compiled once: whole words, case-folded, whitespace collapsed.

    ``FallbackPhrases.of(phrases)`` holds exactly the phrases given (``--fallback-phrases``
    replaces the defaults); ``DEFAULT_FALLBACKS`` holds the default phrases and the
    abstention and refusal patterns of ``text/non_answers``.
    """

    phrases: tuple[str, ...]
    pattern: re.Pattern[str] | None

    @classmethod
    def of(cls, phrases: Sequence[str], extra_patterns: Sequence[str] = ()) -> FallbackPhrases:
        folded = tuple(
            dict.fromkeys(non_answers.folded(phrase) for phrase in phrases if phrase.strip())
        )
        alternatives = [re.escape(phrase) for phrase in folded] + list(extra_patterns)
        if not alternatives:
            return cls((), None)
        return cls(folded, re.compile(rf"(?<!\w)(?:{'|'.join(alternatives)})(?!\w)"))

    @classmethod
    def for_option(cls, phrases: Sequence[str]) -> FallbackPhrases:
        """The detector for ``--fallback-phrases``: the defaults (with the non-answer
        patterns) when the phrases are the default ones, else exactly the phrases given."""
        if tuple(phrases) == DEFAULT_FALLBACK_PHRASES:
            return DEFAULT_FALLBACKS
        return cls.of(phrases)

    def found_in(self, text: str) -> str | None:
        """The first fallback phrase in ``text`` (folded), or ``None``."""
        if self.pattern is None:
            return None
        found = self.pattern.search(non_answers.folded(text))
        return None if found is None else found.group(0)


DEFAULT_FALLBACKS = FallbackPhrases.of(DEFAULT_FALLBACK_PHRASES, non_answers.NON_ANSWER_PATTERNS)


def parse_phrase_list(raw: str) -> tuple[str, ...]:
    """``--fallback-phrases``: a comma list; blank items dropped, an empty list is none."""
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def cited_numbers(answer: str) -> list[int]:
    """The context numbers the answer's citations point to, in order, counted from 1
    (``text/citations``: "[2]" is 2, ragflow's "[ID:0]" is 1; a range "[4-6]" gives its two
    ends, every number between them is in range when they are)."""
    return [number for citation in find_citations(answer) for number in citation.contexts]


def not_empty(answer: str) -> bool:
    """Whether the answer has text."""
    return bool(answer.strip())


def has_contexts(contexts: Sequence[str]) -> bool:
    """Whether at least one non-blank context was retrieved."""
    return any(context.strip() for context in contexts)


def citations(answer: str, context_count: int, required: bool = True) -> bool | None:
    """True when the answer cites ``[n]`` and every n is in 1..context_count; False when it
    cites out of range, or nothing while citations are ``required``; ``None`` for an empty answer,
    or no citation when there is no context or citations are not required."""
    if not answer.strip():
        return None
    found = find_citations(answer)
    if not found:
        return None if context_count == 0 or not required else False
    numbers = [number for citation in found for number in citation.contexts]
    if context_count == 0:
        return False  # a citation with nothing retrieved cites nothing real
    return all(1 <= number <= context_count for number in numbers)


def no_fallback(answer: str, phrases: FallbackPhrases = DEFAULT_FALLBACKS) -> bool | None:
    """True when no fallback phrase occurs in the answer; ``None`` for an empty answer or
    when there is no phrase."""
    if phrases.pattern is None or not answer.strip():
        return None
    return phrases.found_in(answer) is None


def retrieval_score(
    scores: Sequence[float], minimum: float = DEFAULT_MIN_RETRIEVAL_SCORE
) -> bool | None:
    """True when every retrieval score is at least ``minimum``; ``None`` without scores."""
    if not scores:
        return None
    return all(score >= minimum for score in scores)


def asks_for_list(question: str) -> bool:
    """Whether the question asks for a list (``LIST_QUESTION``)."""
    return LIST_QUESTION.search(question) is not None


def list_format(question: str, answer: str) -> bool | None:
    """True when a list question gets a list (at least two markdown or numbered items);
    ``None`` when the question does not ask for a list, or for an empty answer."""
    if not asks_for_list(question) or not answer.strip():
        return None
    return len(list_items(answer)) >= MIN_LIST_ITEMS


@dataclass(frozen=True)
class QualityAssessment:
    """Every check of one answer by column name (``True``, ``False`` or ``None``: does not
    apply), ``passed`` (every applicable check passes) and the checks that failed, in column
    order; ``not_applicable`` says why each ``None`` check does not apply. The run writes the
    checks as 1 / 0 columns."""

    checks: dict[str, bool | None]
    passed: bool
    failures: tuple[str, ...]
    not_applicable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _CheckedAnswer:
    """What decides whether a check applies to one answer."""

    answer: str
    contexts: Sequence[str] | None
    retrieval_scores: Sequence[float] | None
    phrases: FallbackPhrases
    require_citations: bool


def _why_not_applicable(check: str, checked: _CheckedAnswer) -> str:
    """Why ``check`` gave no value for this answer (it returned ``None``)."""
    if check in (HAS_CONTEXTS, CITATIONS) and checked.contexts is None:
        return "no contexts are reported"
    if check == RETRIEVAL_SCORE:
        return (
            "no retrieval scores are reported"
            if checked.retrieval_scores is None
            else "the retrieval scores are empty"
        )
    if not checked.answer.strip():
        return "the answer is empty (quality_not_empty fails)"
    if check == CITATIONS:
        if not checked.require_citations:
            return "the answer cites nothing and citations are not required"
        return "nothing was retrieved and the answer cites nothing"
    if check == NO_FALLBACK:
        return "the fallback phrase list is empty"
    return "the question does not ask for a list"  # list_format, the one check left


def assess_answer(
    question: str,
    answer: str,
    contexts: Sequence[str] | None,
    retrieval_scores: Sequence[float] | None = None,
    *,
    fallback_phrases: FallbackPhrases | Sequence[str] = DEFAULT_FALLBACKS,
    min_retrieval_score: float = DEFAULT_MIN_RETRIEVAL_SCORE,
    require_citations: bool = True,
) -> QualityAssessment:
    """Seed 002's quality control of one answer. ``contexts`` / ``retrieval_scores``
    ``None`` mean "not reported": the checks needing them do not apply."""
    phrases = (
        fallback_phrases
        if isinstance(fallback_phrases, FallbackPhrases)
        else FallbackPhrases.for_option(fallback_phrases)
    )
    checks: dict[str, bool | None] = {
        NOT_EMPTY: not_empty(answer),
        HAS_CONTEXTS: None if contexts is None else has_contexts(contexts),
        CITATIONS: (
            None if contexts is None else citations(answer, len(contexts), require_citations)
        ),
        NO_FALLBACK: no_fallback(answer, phrases),
        RETRIEVAL_SCORE: (
            None
            if retrieval_scores is None
            else retrieval_score(retrieval_scores, min_retrieval_score)
        ),
        LIST_FORMAT: list_format(question, answer),
    }
    failed = tuple(name for name, value in checks.items() if value is False)
    checked = _CheckedAnswer(answer, contexts, retrieval_scores, phrases, require_citations)
    why = {
        name: _why_not_applicable(name, checked) for name, value in checks.items() if value is None
    }
    return QualityAssessment(checks, not failed, failed, why)
