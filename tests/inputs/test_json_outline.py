"""The outline of a JSON document read as parser events, and the watch for lone surrogates."""

from __future__ import annotations

import io
import json
import re

import ijson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.inputs.json_outline import (
    LIST,
    OBJECT,
    OTHER,
    LoneSurrogates,
    outline,
    records_path,
)
from rag_evaluator.inputs.shapes import container_list


def _outline_of(value: object):
    return outline(ijson.basic_parse(io.BytesIO(json.dumps(value).encode()), use_float=True))


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ([{"question": "q"}], ()),
        ({"results": [{"question": "q"}]}, ("results",)),
        ({"data": [], "results": [1]}, ("results",)),  # results comes first among containers
        ({"data": {"results": []}, "n": 1}, ("data", "results")),
        ({"a": {"b": {"testCases": []}}}, None),  # "a" and "b" are no container keys
        ({"data": {"data": {"data": []}}}, ("data", "data", "data")),
        ({"data": {"data": {"data": {"data": []}}}}, None),  # deeper than containers go
        ({"question": "q", "answer": "a"}, None),  # a single record: read whole
        ({"results.v2": []}, None),
        ("text", None),
    ],
)
def test_the_records_are_where_the_whole_reading_finds_them(
    value: object, path: tuple[str, ...] | None
) -> None:
    assert records_path(_outline_of(value)) == path
    if isinstance(value, dict) and path:
        assert container_list(value) == (".".join(path), _at(value, path))


def _at(value: object, path: tuple[str, ...]) -> object:
    for name in path:
        value = value[name]  # type: ignore[index]
    return value


def test_the_outline_keeps_kinds_and_the_last_of_a_repeated_key() -> None:
    events = ijson.basic_parse(io.BytesIO(b'{"a": [], "b": {"c": 1}, "a": {"d": [2]}}'))
    document = outline(events)
    assert document.top == OBJECT
    assert document.fields == {"a": {"d": []}, "b": {"c": None}}
    assert list(document.fields) == list(json.loads('{"a": 1, "b": 2, "a": 3}'))
    assert _outline_of([1, 2]).top == LIST
    assert _outline_of(3).top == OTHER


_ESCAPES = st.sampled_from(["\\ud83d", "\\ude00", "\\uD800", "\\uDFFF", "\\u00e9", "x", "\\\\"])


def _lone_in(text: str) -> bool:
    """Whether json keeps a lone surrogate when it reads ``text`` as a JSON string."""
    value = json.loads(f'"{text}"')
    return bool(re.search(r"[\ud800-\udfff]", value))


@given(parts=st.lists(_ESCAPES, max_size=8), cuts=st.lists(st.integers(0, 60), max_size=6))
def test_a_lone_surrogate_is_found_wherever_the_chunks_are_cut(
    parts: list[str], cuts: list[int]
) -> None:
    text = "".join(parts)
    watch = LoneSurrogates()
    start = 0
    for cut in sorted(cut for cut in cuts if cut <= len(text)):
        watch.feed(text[start:cut])
        start = cut
    watch.feed(text[start:])
    watch.finish()
    if _lone_in(text):
        assert watch.found
    elif "\\\\" not in text:  # an escaped backslash may raise a false alarm, nothing else
        assert not watch.found
