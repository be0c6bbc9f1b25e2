"""Lexical metrics: word, number and phrase checks of an answer against its ground truth.

Pure functions on strings (seed 000, plus the uncertainty phrases of seed 001). Every score
is on 0-1; a score that cannot be defined for its inputs (no keywords, no numbers, no list
items, no facts in the ground truth) is ``None``, never 0 or NaN.

Text is compared as a sequence of tokens: words (case-folded) and numbers, where a number is
compared by value, so ``$604``, ``604`` and ``604.0`` are the same token and ``1,234`` is
``1234``. A phrase, fact or list item is present when its token sequence occurs,
contiguously, in the answer's token sequence.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import regex

from rag_evaluator.text import non_answers
from rag_evaluator.text.citations import blank_citations, find_citations

# A number: digits with optional thousands separators and decimals, then "%" or a scale word
# ("2 million"); after a currency sign also a scale abbreviation ("$1.2M", "£3bn": without the
# sign "5k" or "4K" is as often a distance or a resolution as a thousand).
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_CURRENCY_SIGNS = "$€£¥"
_SCALE_EXPONENTS = {
    "thousand": 3,
    "k": 3,
    "million": 6,
    "m": 6,
    "mn": 6,
    "mm": 6,
    "billion": 9,
    "b": 9,
    "bn": 9,
    "trillion": 12,
    "t": 12,
    "tn": 12,
}
_SCALE_WORD = r"[ \u00a0]?(?i:thousand|million|billion|trillion)\b"
_SCALE_ABBREVIATION = r"(?:(?i:k|mn|mm|m|bn|b|tn|t)\b|[ \u00a0](?i:mn|bn|tn)\b)"
_AMOUNT = (
    rf"(?:[{_CURRENCY_SIGNS}]{_DIGITS}(?:{_SCALE_WORD}|{_SCALE_ABBREVIATION}|%)?"
    rf"|{_DIGITS}(?:%|{_SCALE_WORD})?)"
)
# The sign counts only when the dash is not glued to a word or to a number before it: "C-1"
# is 1 and "5%-10%" is a range of 5 and 10, not 5 and -10.
_NUMBER_PATTERN = rf"(?:(?<![\w.%])-|(?<![\w.])){_AMOUNT}"
_NUMBER_PARTS = re.compile(
    rf"(?P<sign>-)?[{_CURRENCY_SIGNS}]?(?P<digits>[\d,]+(?:\.\d+)?)"
    r"(?:%|[ \u00a0]?(?P<scale>[A-Za-z]+))?"
)
# A word: letters, marks and digits of any script; in scripts written without spaces (Han,
# kana, Thai...) each character is a word.
_CHARACTER_SCRIPTS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
_WORD_PATTERN = (
    rf"[{_CHARACTER_SCRIPTS}]\p{{M}}*|(?:(?![{_CHARACTER_SCRIPTS}])[\p{{L}}\p{{M}}\p{{N}}])+"
)
_TOKEN = regex.compile(rf"(?P<number>{_NUMBER_PATTERN})|(?P<word>{_WORD_PATTERN})")
_NUMBER = re.compile(_NUMBER_PATTERN)
_CHARACTER_WORD = regex.compile(rf"[{_CHARACTER_SCRIPTS}]\p{{M}}*")
_LETTERS = regex.compile(r"[\p{L}\p{M}]+")
# A capitalised phrase: a capitalised word (an upper-case letter of any script) followed by
# capitalised words or numbers on the same line ("Territory 118", "Rule C-1", "New York
# City", "Красная Площадь").
_CAPITALISED_PHRASE = regex.compile(
    rf"(?<![\w-])\p{{Lu}}[\w'’-]*(?:[ \t]+(?:\p{{Lu}}[\w'’-]*|{_AMOUNT}))*"
)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d+[.)])[ \t]+(?P<text>\S.*)$", re.MULTILINE)
# Where a list item's label ends: "* Rule C-1: territory definitions" is labelled "Rule C-1".
_LABEL_END = re.compile(r":|\s[-–—]\s")
_MARKDOWN_EMPHASIS = re.compile(r"[*_`]+")

_STOP_WORD_TEXT = """
a about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing down during each
either else ever every few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just like many may me might
more most much must my myself neither no nor not now of off on once only or other
ought our ours ourselves out over own per same shall she should since so some such
than that the their theirs them themselves then there these they this those through
thus to too under until up upon us very was we were what when where whether which
while who whom whose why will with within without would yet you your yours yourself
yourselves
"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())

# Seed 001: a very short answer (under 10 characters) holding one of these is a non-answer.
SHORT_NON_ANSWER_WORDS = ("unknown", "n/a", "none", "null")
SHORT_ANSWER_LENGTH = 10


def _whole_words(phrases: Sequence[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(phrase) for phrase in phrases)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


_SHORT_NON_ANSWER = _whole_words(SHORT_NON_ANSWER_WORDS)

# Seed 000's source indicators; each distinct indicator found counts once. Words that are
# common in prose count only where they point at a source: "from" and "based on" followed
# by a source ("from the handbook", "based on the provided documents", "from page 4"), not
# "launched from Sriharikota" or "based on five factors"; "page" with its number ("page 4",
# "p. 4"); "document" and "pdf" with a number, a file name or a word that makes them the
# source ("Document 2", "handbook.pdf", "the provided documents", "this PDF"), not "bring
# your documents".
_SOURCE_DETERMINERS = (
    r"(?:the|this|that|these|those|a|an|our|your|its|their|provided|given|attached|above|"
    r"following|retrieved|cited|same|relevant|official|original|available)"
)
_SOURCE_NOUNS = (
    r"(?:sources?|documents?|docs?|contexts?|passages?|excerpts?|references?|citations?|"
    r"records?|pdfs?|files?|manuals?|handbooks?|reports?|articles?|knowledge\s+base|"
    r"documentation|guidelines?|polic(?:y|ies)|text)"
)
_LOCATOR = r"(?:table|page|pp?\.|section|chapter|figure|fig\.|appendix)\s*(?:\d|[a-z]\b)"
_POINTS_AT_SOURCE = rf"(?:{_SOURCE_DETERMINERS}\s+){{0,2}}(?:{_SOURCE_NOUNS}\b|{_LOCATOR})"
_MAKES_IT_THE_SOURCE = (
    r"(?:this|these|provided|given|attached|above|retrieved|cited|source|reference|"
    r"referenced|original|same|supplied)"
)
SOURCE_INDICATORS: dict[str, re.Pattern[str]] = {
    "source:": re.compile(r"\bsource\s*:", re.IGNORECASE),
    "table:": re.compile(r"\btable\s*:", re.IGNORECASE),
    "page": re.compile(r"\b(?:pages?\s*\d|pp?\.\s*\d)", re.IGNORECASE),
    "document": re.compile(
        rf"\b(?:documents?\s*(?:[#:]|no\.|\d)|{_MAKES_IT_THE_SOURCE}\s+documents?\b)",
        re.IGNORECASE,
    ),
    "pdf": re.compile(rf"(?:\w\.pdf\b|\b{_MAKES_IT_THE_SOURCE}\s+pdfs?\b)", re.IGNORECASE),
    "according to": re.compile(r"\baccording\s+to\b", re.IGNORECASE),
    "based on": re.compile(rf"\bbased\s+on\s+{_POINTS_AT_SOURCE}", re.IGNORECASE),
    "from": re.compile(rf"\bfrom\s+{_POINTS_AT_SOURCE}", re.IGNORECASE),
}
CITATIONS_FOR_FULL_SCORE = 3

KEYWORD_MIN_LETTERS = 4

Token = str | Decimal


@dataclass(frozen=True)
class Keywords:
    """The keywords of a text: each is a token sequence (a phrase, a number or a word)."""

    items: tuple[tuple[Token, ...], ...]


def _normalise_text(text: str) -> str:
    """Curly apostrophes straightened, the minus sign (U+2212) a hyphen-minus, and one Unicode
    form (NFC: "é" typed as e and a combining accent is "é")."""
    text = text.replace("’", "'").replace("‘", "'").replace("\u2212", "-")
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def parse_number(text: str) -> Decimal | None:
    """The value of a number as written in text: ``$1,234.50`` -> 1234.50, ``0.3%`` -> 0.3,
    ``2 million`` and ``$2M`` -> 2000000."""
    parts = _NUMBER_PARTS.fullmatch(text.strip())
    if parts is None:
        return None
    try:
        value = Decimal(parts["digits"].replace(",", ""))
    except InvalidOperation:
        return None
    scale = parts["scale"]
    if scale is not None:
        exponent = _SCALE_EXPONENTS.get(scale.casefold())
        if exponent is None:
            return None
        value = value.scaleb(exponent)
    return -value if parts["sign"] else value


def tokenize(text: str) -> list[Token]:
    """Words (case-folded; one per character in scripts without spaces) and numbers (as
    values) of ``text``, in order."""
    tokens: list[Token] = []
    for match in _TOKEN.finditer(_normalise_text(text)):
        number_text = match.group("number")
        if number_text is not None:
            value = parse_number(number_text)
            if value is not None:
                tokens.append(value)
                continue
        tokens.append(match.group(0).casefold())
    return tokens


def extract_numbers(text: str) -> set[Decimal]:
    """Every number in ``text``, by value (``$604`` and ``604.0`` are both 604)."""
    numbers: set[Decimal] = set()
    for match in _NUMBER.finditer(_normalise_text(text)):
        value = parse_number(match.group(0))
        if value is not None:
            numbers.add(value)
    return numbers


def contains_sequence(tokens: Sequence[Token], wanted: Sequence[Token]) -> bool:
    """Whether ``wanted`` occurs contiguously in ``tokens`` (numbers compared by value)."""
    if not wanted:
        return False
    width = len(wanted)
    first = wanted[0]
    for start in range(len(tokens) - width + 1):
        if tokens[start] == first and list(tokens[start : start + width]) == list(wanted):
            return True
    return False


def _is_number(token: Token) -> bool:
    return isinstance(token, Decimal)


def _is_content_word(token: Token) -> bool:
    return (
        isinstance(token, str)
        and len(token) >= KEYWORD_MIN_LETTERS
        and _LETTERS.fullmatch(token) is not None
        and token not in STOP_WORDS
    )


def _is_character_word(token: Token) -> bool:
    return isinstance(token, str) and _CHARACTER_WORD.fullmatch(token) is not None


def _character_bigrams(tokens: Sequence[Token]) -> list[tuple[Token, ...]]:
    """The keywords of text in scripts without spaces: each pair of neighbouring
    characters of a run (a run of one character is its own keyword)."""
    keywords: list[tuple[Token, ...]] = []
    run: list[Token] = []
    for token in [*tokens, ""]:
        if _is_character_word(token):
            run.append(token)
            continue
        if len(run) == 1:
            keywords.append((run[0],))
        keywords += [tuple(run[index : index + 2]) for index in range(len(run) - 1)]
        run = []
    return keywords


def extract_keywords(text: str) -> Keywords:
    """Seed 000's keywords: capitalised phrases, numbers (with $ or %), and words of 4+ letters
    that are not stop words; in scripts written without spaces (Chinese, Japanese, Thai...),
    each pair of neighbouring characters. Leading stop words are dropped from a phrase ("The
    Territory 118" -> "Territory 118"); duplicates are kept once."""
    found: dict[tuple[Token, ...], None] = {}
    for match in _CAPITALISED_PHRASE.finditer(_normalise_text(text)):
        phrase = tokenize(match.group(0))
        while phrase and not _is_number(phrase[0]) and phrase[0] in STOP_WORDS:
            phrase = phrase[1:]
        if phrase:
            found[tuple(phrase)] = None
    tokens = tokenize(text)
    for token in tokens:
        if _is_number(token) or _is_content_word(token):
            found[(token,)] = None
    for bigram in _character_bigrams(tokens):
        found[bigram] = None
    return Keywords(tuple(found))


def _normalised_for_equality(text: str) -> str:
    return " ".join(_normalise_text(text).casefold().split())


def exact_match(answer: str, ground_truth: str) -> float:
    """1.0 when the texts are equal ignoring case and whitespace runs, else 0.0."""
    return (
        1.0 if _normalised_for_equality(answer) == _normalised_for_equality(ground_truth) else 0.0
    )


def keyword_coverage(answer: str, ground_truth: str) -> float | None:
    """Share of the ground truth's keywords found in the answer; ``None`` if it has none."""
    keywords = extract_keywords(ground_truth).items
    if not keywords:
        return None
    answer_tokens = tokenize(answer)
    found = sum(1 for keyword in keywords if contains_sequence(answer_tokens, keyword))
    return found / len(keywords)


def number_match(answer: str, ground_truth: str) -> float | None:
    """Share of the ground truth's distinct numbers present in the answer, compared as
    numbers; ``None`` when the ground truth has no number."""
    expected = extract_numbers(ground_truth)
    if not expected:
        return None
    present = extract_numbers(answer)
    return len(expected & present) / len(expected)


def answer_completeness(answer: str, ground_truth: str) -> float | None:
    """Mean of the word-count ratio (capped at 1) and keyword coverage; ``None`` when the
    ground truth has no keyword (and so no words)."""
    return completeness_from_coverage(answer, ground_truth, keyword_coverage(answer, ground_truth))


def completeness_from_coverage(
    answer: str, ground_truth: str, coverage: float | None
) -> float | None:
    """``answer_completeness`` from the row's ``keyword_coverage``, already computed (the
    evaluate run computes coverage once per row for both columns)."""
    if coverage is None:
        return None
    expected_words = len(ground_truth.split())
    length_score = min(len(answer.split()) / expected_words, 1.0)
    return (length_score + coverage) / 2


def citation_markers(answer: str) -> set[str]:
    """The distinct citation markers of ``answer`` (``text/citations``), compared without
    case or spaces; a bracket listing several reference numbers ("[2, 3]") cites each."""
    return {citation.key for citation in find_citations(answer)}


def citation_quality(answer: str) -> float:
    """Distinct source indicators in the answer divided by 3, capped at 1.

    Indicators: each distinct citation marker ("[ID:3]", "[1]", "[doc2]", "(Source: ...)"),
    and seed 000's words and phrases where they point at a source, found in the text
    outside the markers (a marker is one citation, whatever words it holds).
    """
    markers = citation_markers(answer)
    prose = blank_citations(answer)
    words = sum(1 for pattern in SOURCE_INDICATORS.values() if pattern.search(prose))
    return min((len(markers) + words) / CITATIONS_FOR_FULL_SCORE, 1.0)


def dont_know(answer: str) -> float:
    """1.0 when the answer admits it does not know or declines to answer (seed 001's
    phrases and the abstentions and refusals of ``text/non_answers``, as whole words), or is
    shorter than 10 characters and says ``unknown``, ``n/a``, ``none`` or ``null``; else
    0.0."""
    if non_answers.non_answer_phrase(answer) is not None:
        return 1.0
    folded = non_answers.folded(answer)
    if len(folded) < SHORT_ANSWER_LENGTH and _SHORT_NON_ANSWER.search(folded):
        return 1.0
    return 0.0


def list_items(text: str) -> list[str]:
    """The labels of the markdown list items (``*``, ``-``, ``+``, ``1.``, ``1)``) in text.

    A label is the item's text up to a ``:`` or a spaced dash, without emphasis marks.
    """
    labels: list[str] = []
    for match in _LIST_ITEM.finditer(text):
        item = _MARKDOWN_EMPHASIS.sub("", match.group("text"))
        label = _LABEL_END.split(item, maxsplit=1)[0].strip()
        if label:
            labels.append(label)
    return labels


def _share_present(answer: str, phrases: Sequence[str]) -> float | None:
    sequences = [tokens for tokens in (tokenize(phrase) for phrase in phrases) if tokens]
    unique = list(dict.fromkeys(tuple(tokens) for tokens in sequences))
    if not unique:
        return None
    answer_tokens = tokenize(answer)
    return sum(1 for wanted in unique if contains_sequence(answer_tokens, wanted)) / len(unique)


def list_coverage(answer: str, ground_truth: str) -> float | None:
    """Share of the ground truth's markdown list items whose label appears in the answer;
    ``None`` when the ground truth has no list."""
    return _share_present(answer, list_items(ground_truth))


def fact_score(answer: str, required_facts: Sequence[str]) -> float | None:
    """Share of the required facts present in the answer (numbers compared as numbers);
    ``None`` when no fact is given."""
    return _share_present(answer, required_facts)
