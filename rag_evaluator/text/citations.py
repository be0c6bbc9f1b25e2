"""Citation markers in an answer: the one detector behind ``citation_quality`` (lexical) and
``quality_citations`` (quality).

A citation is a marker pointing at a source:

- reference numbers in square brackets: ``[1]``, ``[2, 3]`` (two citations), ``[2; 3]``,
  ``[^1]``, a range ``[4-6]`` (one citation of 4 to 6); also as a link label, ``[1](url)``;
- a source label with a colon or a number, in square brackets or parentheses: ``[ID:3]``,
  ``[doc2]``, ``[Source 1]``, ``(Source: Employee Handbook, p. 4)``, ``(ref. 3)`` (labels
  ``id``, ``doc``, ``document``, ``source``, ``src``, ``ref``, ``reference``, ``chunk``,
  ``context``, ``passage``, ``citation``, ``cite``, any case);
- full-width brackets ``【1】``, ``【4:0†source】`` and ragflow's older ``##3$$`` (the same
  chunk as ``[ID:3]``).

Brackets that are not citations: anything inside code (fenced blocks, inline backticks), and
bare numbers in square brackets on a line that uses square brackets for something else
(a template or block code such as ``set [Score v] to [0]``; a markdown link label or a
checkbox ``[x]`` at the start of a list item does not count as something else). Labelled
markers (``[ID:3]``) stay citations there.

Each citation says which context it points to when it can: ``[n]``, ``[doc n]``,
``[Source n]`` count from 1; ragflow's ``[ID:n]`` and ``##n$$`` count from 0 (its chunk
index), so ``[ID:0]`` is the first context. A label without a number (``(Source:
Handbook)``) points to none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SOURCE_LABEL = (
    r"(?:id|docs?|documents?|sources?|src|refs?|references?|chunks?|contexts?|passages?|"
    r"citations?|cite)"
)
_MARKER = re.compile(
    r"\[\s*(?P<numbers>\^?\d{1,9}(?:\s*[,;]\s*\^?\d{1,9})*)\s*\]"
    r"|\[\s*(?P<first>\d{1,9})\s*[-–]\s*(?P<last>\d{1,9})\s*\]"
    rf"|\[\s*(?P<square>{_SOURCE_LABEL}(?:\s*:\s*[^\[\]\n]{{1,120}}?|\s*[#.]?\s*\d[\w.-]*))\s*\]"
    rf"|\(\s*(?P<round>{_SOURCE_LABEL}(?:\s*:\s*[^()\n]{{1,120}}?|\s*[#.]?\s*\d[\w.-]*))\s*\)"
    r"|【(?P<lenticular>[^】\n]{1,120})】"
    r"|##(?P<ragflow>\d{1,9})\$\$",
    re.IGNORECASE,
)
_FENCED_CODE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.M | re.S)
_INLINE_CODE = re.compile(r"(`+)[^`\n]+?\1")
_SQUARE_GROUP = re.compile(r"\[[^\[\]\n]*\](?!\()")
_CHECKBOX = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[[ xX]\]")
# ragflow's ids count chunks from 0: "[ID:0]" is the first context.
_ZERO_BASED_LABEL = re.compile(r"^id\s*:?\s*(\d{1,9})$", re.IGNORECASE)
_NUMBERED_LABEL = re.compile(rf"^{_SOURCE_LABEL}\s*[#.:]?\s*(\d{{1,9}})$", re.IGNORECASE)


@dataclass(frozen=True)
class Citation:
    """One citation: ``key`` tells distinct citations apart (case and spaces ignored);
    ``contexts`` are the 1-based context numbers it points to (a range gives its two ends;
    empty when it names no number)."""

    key: str
    contexts: tuple[int, ...]


def _blanked(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def _without_code(text: str) -> str:
    """``text`` with code blocks and inline code blanked out (line breaks kept)."""
    return _INLINE_CODE.sub(_blanked, _FENCED_CODE.sub(_blanked, text))


def _is_notation_line(line: str) -> bool:
    """Whether the line uses square brackets for something other than citations."""
    checked = _CHECKBOX.sub("", line)
    for group in _SQUARE_GROUP.finditer(checked):
        if _MARKER.fullmatch(group.group(0)) is None:
            return True
    return False


def _labelled_citation(key: str, label: str) -> Citation:
    compact = " ".join(label.split())
    if compact.isdigit():
        return Citation(key, (int(compact),))
    zero_based = _ZERO_BASED_LABEL.match(compact)
    if zero_based is not None:
        return Citation(key, (int(zero_based.group(1)) + 1,))
    numbered = _NUMBERED_LABEL.match(compact)
    return Citation(key, (int(numbered.group(1)),) if numbered is not None else ())


def _citations_of(match: re.Match[str], notation_line: bool) -> list[Citation]:
    numbers = match.group("numbers")
    if numbers is not None or match.group("first") is not None:
        if notation_line:
            return []
        if numbers is None:
            first, last = int(match.group("first")), int(match.group("last"))
            return [Citation(f"[{first}-{last}]", (first, last))]
        values = [int(part.strip().lstrip("^")) for part in re.split(r"[,;]", numbers)]
        return [Citation(f"[{value}]", (value,)) for value in values]
    ragflow = match.group("ragflow")
    if ragflow is not None:
        return [Citation(f"[id:{int(ragflow)}]", (int(ragflow) + 1,))]
    key = "".join(match.group(0).casefold().split())
    label = match.group("square") or match.group("round") or match.group("lenticular") or ""
    return [_labelled_citation(key, label)]


def find_citations(text: str) -> list[Citation]:
    """Every citation of ``text``, in order (see the module's rules)."""
    found: list[Citation] = []
    for line in _without_code(text).split("\n"):
        notation_line = _is_notation_line(line)
        for match in _MARKER.finditer(line):
            found += _citations_of(match, notation_line)
    return found


def blank_citations(text: str) -> str:
    """``text`` with every citation marker replaced by a space (the prose around them)."""
    return _MARKER.sub(" ", text)
