"""One citation detector for citation_quality (lexical) and quality_citations (quality)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.offline import quality
from rag_evaluator.offline.lexical import citation_markers, citation_quality
from rag_evaluator.text.citations import Citation, find_citations

# Shapes of real answers: ragflow's [ID:n] (counted from 0), numbered references, labels.
RAGFLOW = "PharmaCann was founded in 2014 and is headquartered in Illinois, United States [ID:7]."
SCRATCH = (
    "To keep score in Scratch:\n"
    "when green flag clicked\n"
    "set [Score v] to [0]\n"
    "change [Score v] by (1)"
)


def test_both_checks_accept_what_the_other_accepts() -> None:
    for answer, contexts in ((RAGFLOW, 10), ("Rates rose [2].", 3), ("It rose [doc 1].", 2)):
        assert citation_quality(answer) > 0
        assert quality.citations(answer, contexts) == 1, answer


def test_ragflow_ids_count_contexts_from_zero() -> None:
    assert find_citations("Launched in 2023 [ID:0], from Sriharikota ##2$$.") == [
        Citation("[id:0]", (1,)),
        Citation("[id:2]", (3,)),
    ]
    assert quality.citations("It opened in 2001 [ID:0].", 1) == 1
    assert quality.citations("It opened in 2001 [ID:3].", 3) == 0  # the 4th of 3 contexts


def test_brackets_in_code_and_block_notation_are_not_citations() -> None:
    assert find_citations(SCRATCH) == []
    assert citation_quality(SCRATCH) == 0.0
    assert quality.citations(SCRATCH, 3) == 0  # cites nothing: fails while required
    assert find_citations("Use `items[0]` or\n```\nx = a[1]\n```\nthen [2].") == [
        Citation("[2]", (2,))
    ]
    # A labelled marker is a citation even on such a line.
    assert citation_markers("set [Score v] to [0] [ID:1]") == {"[id:1]"}


def test_markdown_links_and_checkboxes_do_not_hide_citations() -> None:
    assert find_citations("- [x] Filed the form [1]\n- See [the guide](https://a.b) [2]") == [
        Citation("[1]", (1,)),
        Citation("[2]", (2,)),
    ]
    assert find_citations("Rates rose [1](https://example.com/a).") == [Citation("[1]", (1,))]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("The premium is based on five factors.", 0.0),
        ("Bring your documents and two pages of notes.", 0.0),
        ("Based on the provided documents, the premium is $604.", 2 / 3),  # both words
        ("See Document 2 and handbook.pdf, page 4.", 1.0),
        ("According to the report, sales rose.", 1 / 3),
    ],
)
def test_source_words_count_only_where_they_point_at_a_source(answer: str, expected: float) -> None:
    assert citation_quality(answer) == pytest.approx(expected)


@given(st.text(max_size=200))
def test_every_citation_quality_checks_is_one_it_counts(text: str) -> None:
    found = find_citations(text)
    assert {citation.key for citation in found} == citation_markers(text)
    assert quality.cited_numbers(text) == [n for c in found for n in c.contexts]
    if text.strip() and not found:
        assert quality.citations(text, 3) == 0
