"""Answers that do not answer: abstentions ("I do not have specific information") and
refusals ("Sorry - this model is unable to respond to this request"), in one place.

Every check that asks whether a text gives up reads these lists: the lexical ``dont_know``
(and classify's DONT_KNOW without a call), the quality family's ``quality_no_fallback``
defaults, the judge's "no information on both sides" rule (``text/no_information``) and the
report's diagnostics. The lists are English.

Texts are compared case-folded, with curly apostrophes made straight and whitespace runs
collapsed; every phrase and pattern matches whole words only ("no data" is not found in "no
database"). The pieces:

- ``SEED_UNCERTAINTY_PHRASES``: seed 001's uncertainty phrases, as written.
- ``ABSTENTION_PATTERNS``: the ways answers say the information is missing: "I do not have
  (specific) information", "cannot find sufficient information", "the context does not
  mention", "is not mentioned in the provided documents", "cannot be determined", "there is
  no mention of", "no relevant information was found", "I am not aware of".
- ``REFUSAL_PATTERNS``: the ways a system declines: "(I / the model / this model) is unable
  to respond / answer / help / provide", "cannot / won't help / assist / comply", "unable to
  respond to this request", "must decline".
- ``SEED_FALLBACK_PHRASES``: seed 002's "Unable to generate" and the AI-disclaimer and
  cannot-answer phrases of the quality family (``quality_no_fallback`` only: "As an AI"
  often precedes a real answer, so it is a generation fault, not an abstention).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Seed 001's uncertainty phrases (dont_know, classify's DONT_KNOW).
SEED_UNCERTAINTY_PHRASES = (
    "i don't know",
    "i do not know",
    "unknown",
    "not sure",
    "cannot determine",
    "no information",
    "insufficient data",
    "unable to answer",
    "cannot answer",
    "don't have enough information",
    "not available",
    "no data",
)
# Seed 002's fallback phrase and the usual AI disclaimers and cannot-answer phrases.
SEED_FALLBACK_PHRASES = (
    "Unable to generate",
    "As an AI",
    "As a language model",
    "I cannot answer",
    "I can't answer",
    "I am unable to answer",
    "I'm unable to answer",
)

# Who declines or lacks the information ("it" is left out: "it cannot provide power").
_SUBJECT = (
    r"(?:i|we|the model|this model|the assistant|this assistant|the system|this system|"
    r"the ai|this ai|the chatbot|the bot|the tool)"
)
# Words that may stand between "have" / "find" and the information.
_QUALIFIER = (
    r"(?:any|enough|sufficient|specific|the|that|this|such|relevant|more|detailed|further|"
    r"reliable|accurate|up-to-date|current|real-time|access to|necessary|complete|exact|"
    r"precise|concrete|clear|definitive|direct|explicit|additional|an|a)"
)
_INFORMATION = r"(?:information|data|details|knowledge|context|records?|answers?|facts)"
_SOURCE_ADJECTIVE = r"(?:provided|given|retrieved|available|supplied|attached|above|cited)"
_SOURCE = (
    r"(?:contexts?|documents?|sources?|passages?|texts?|excerpts?|information|knowledge base|"
    r"search results|results|data|documentation|materials?|records)"
)
_NOT_HAVE = r"(?:do not|don't|does not|doesn't|did not|didn't)"
_CANNOT = (
    r"(?:cannot|can't|can not|could not|couldn't|was unable to|were unable to|am unable to|"
    r"are unable to|is unable to|am not able to|is not able to|are not able to|"
    r"was not able to|unable to|did not|didn't|failed to)"
)
# What a system declines to do ("help" not when "help but": "I couldn't help but smile").
_DECLINED_ACTION = (
    r"(?:respond|answer|reply|help(?! but\b)|assist|comply|provide|generate|complete|fulfil|"
    r"fulfill|process|create|produce)"
)

ABSTENTION_PATTERNS = (
    rf"(?:{_SUBJECT} )?{_NOT_HAVE} have (?:{_QUALIFIER} )*{_INFORMATION}",
    rf"(?:{_SUBJECT} )?{_CANNOT} (?:find|locate|identify|retrieve|determine|confirm|verify|"
    rf"access) (?:{_QUALIFIER} )*(?:{_INFORMATION}|evidence|mentions?|references?|sources?)",
    rf"(?:not enough|insufficient) (?:{_QUALIFIER} )*(?:information|data|details|context)",
    rf"(?:the |this |these |that |my )?(?:{_SOURCE_ADJECTIVE} )?{_SOURCE} (?:does|do|did) not "
    r"(?:contain|include|provide|mention|specify|say|state|cover|address|discuss|give|offer|"
    rf"have)(?: (?:{_QUALIFIER} )*{_INFORMATION})?",
    r"(?:the |this |that |such )?(?:answer|information|data|details) (?:is|was|are|were) not "
    r"(?:available|provided|found|known|given|mentioned|specified|stated)",
    r"(?:is|are|was|were) not (?:explicitly |specifically |directly |clearly )?(?:mentioned|"
    r"specified|stated|provided|given|found|included|covered|discussed|available|listed|"
    rf"described|addressed) in (?:the |this |these |any of the |any )?(?:{_SOURCE_ADJECTIVE} )?"
    rf"{_SOURCE}",
    r"(?:cannot|can't|can not|could not|couldn't) be (?:determined|answered|found|confirmed|"
    r"verified)",
    rf"there (?:is|are|was|were) no (?:{_QUALIFIER} )*(?:mention|information|data|records?|"
    r"references?|indication|details)",
    r"no (?:relevant |matching |specific )?(?:answer|results?|documents?|information|data) "
    r"(?:was |were |is |are |could be )?found",
    r"(?:i|we) (?:am|'m|are|'re) not (?:sure|certain|aware)",
    r"(?:beyond|outside) (?:my|the) (?:knowledge|scope)",
)
REFUSAL_PATTERNS = (
    rf"{_SUBJECT} (?:am |is |are |was |were )?(?:unable|not able|not allowed|not permitted|"
    rf"not authori[sz]ed) to {_DECLINED_ACTION}",
    rf"{_SUBJECT} (?:cannot|can't|can not|will not|won't) {_DECLINED_ACTION}",
    r"(?:unable to|cannot|can't) (?:respond|answer|reply|comply|process) (?:to )?"
    r"(?:this|your|the|that) (?:request|query|question|prompt)",
    r"unable to (?:generate|produce|provide) (?:a |an |the )?(?:response|answer|reply)",
    r"(?:i|we) (?:must|have to) (?:decline|refuse)",
)

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def folded(text: str) -> str:
    """``text`` as the lists compare it: case-folded, straight apostrophes, single spaces."""
    if not text.isascii():  # the curly apostrophes are not ASCII; translate is the slow part
        text = text.translate(_APOSTROPHES)
    return " ".join(text.casefold().split())


def _whole_words(alternatives: Sequence[str]) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w)(?:{'|'.join(alternatives)})(?!\w)")


def phrase_pattern(phrase: str) -> str:
    """A literal phrase as a pattern: folded, escaped."""
    return re.escape(folded(phrase))


# Abstentions and refusals, beside seed 001's phrases: what dont_know finds.
NON_ANSWER_PATTERNS = (
    *(phrase_pattern(phrase) for phrase in SEED_UNCERTAINTY_PHRASES),
    *ABSTENTION_PATTERNS,
    *REFUSAL_PATTERNS,
)
_NON_ANSWER = _whole_words(NON_ANSWER_PATTERNS)


def non_answer_phrase(text: str) -> str | None:
    """The first abstention or refusal found in ``text`` (folded), or ``None``."""
    found = _NON_ANSWER.search(folded(text))
    return None if found is None else found.group(0)
