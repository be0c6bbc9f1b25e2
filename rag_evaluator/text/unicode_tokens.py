"""Words of a text in any script: the tokens ROUGE, overlap matching and containment compare.

A token is a run of letters, combining marks and digits of any script, case-folded (so
``Größe``, ``Москва`` and ``القاهرة`` are one word each, where an ASCII-only tokenizer cut
them into pieces or dropped them). Scripts written without spaces between words (Han,
Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) give one token per character, the usual unit
for comparing such text without a word segmenter. Everything else (spaces, punctuation,
symbols) separates tokens. On ASCII text this is rouge-score's own tokenizer: lowercase, runs
of ``a-z0-9``.

The text is put in Unicode NFKC form first, so full-width digits and letters (``２５``,
``ＡＢＣ``) are the ordinary ones.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import regex

# Scripts without spaces between words: each character is a token.
_CHARACTER_SCRIPTS = (
    r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
    r"\N{KATAKANA-HIRAGANA PROLONGED SOUND MARK}"
)
_TOKEN = regex.compile(
    rf"[{_CHARACTER_SCRIPTS}]\p{{M}}*|(?:(?![{_CHARACTER_SCRIPTS}])[\p{{L}}\p{{M}}\p{{N}}])+"
)
_NON_LATIN_LETTER = regex.compile(r"(?![\p{Latin}])\p{L}")
_ASCII_WORD = regex.compile(r"[a-z0-9]+")


def normalised(text: str) -> str:
    """``text`` in NFKC form and case-folded: what tokens are cut from."""
    return unicodedata.normalize("NFKC", text).casefold()


def word_tokens(text: str) -> list[str]:
    """The case-folded words of ``text`` (characters for scripts without spaces)."""
    return _TOKEN.findall(normalised(text))


def is_ascii_word(token: str) -> bool:
    """Whether a token is made of ASCII letters and digits (the ones English stemming fits)."""
    return _ASCII_WORD.fullmatch(token) is not None


def has_non_latin_letter(text: str) -> bool:
    """Whether ``text`` holds a letter of a script other than Latin (Cyrillic, Arabic...)."""
    return _NON_LATIN_LETTER.search(text) is not None


def contains_tokens(tokens: Sequence[str], wanted: Sequence[str]) -> bool:
    """Whether ``wanted`` occurs contiguously in ``tokens`` (an empty ``wanted`` never does)."""
    haystack = tuple(tokens)
    needle = tuple(wanted)
    if not needle or len(needle) > len(haystack):
        return False
    width = len(needle)
    first = needle[0]
    return any(
        haystack[start] == first and haystack[start : start + width] == needle
        for start in range(len(haystack) - width + 1)
    )
