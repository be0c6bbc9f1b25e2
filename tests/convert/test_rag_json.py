"""Reading RAG output files: every shape and alias, and every way a file can be broken."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.errors import InputError, NothingConvertedError
from rag_evaluator.inputs.rag_json import read_rag_json_dir, read_rag_json_file
from rag_evaluator.inputs.shapes import (
    ANSWER_FIELDS,
    CONTAINER_FIELDS,
    CONTEXT_FIELDS,
    CONTEXT_TEXT_FIELDS,
    QUESTION_FIELDS,
    extract_entries,
)


def write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def read_value(tmp_path: Path, value: object, name: str = "run.json"):
    return read_rag_json_file(write_json(tmp_path / name, value))


# Shapes ------------------------------------------------------------------------------


def test_a_list_of_objects(tmp_path: Path) -> None:
    result = read_value(
        tmp_path,
        [
            {"question": "Q one?", "answer": "A one", "contexts": ["c1", "c2"]},
            {"question": "Q two?", "answer": "A two"},
        ],
    )
    assert result.shape == "list of objects"
    assert [(e.question, e.answer, e.contexts) for e in result.entries] == [
        ("Q one?", "A one", ["c1", "c2"]),
        # No context field: what was retrieved is unknown, not "nothing".
        ("Q two?", "A two", None),
    ]
    assert [e.origin for e in result.entries] == ["run.json item 1", "run.json item 2"]


@pytest.mark.parametrize("container", CONTAINER_FIELDS)
def test_a_list_under_a_container_key(tmp_path: Path, container: str) -> None:
    value = {
        "model": "x",
        container: [{"query": "Q?", "response": "A", "sources": ["s1", {"text": "s2"}]}],
    }
    result = read_value(tmp_path, value)
    assert result.shape == f"list under '{container}'"
    [found] = result.entries
    assert (found.question, found.answer, found.contexts) == ("Q?", "A", ["s1", "s2"])
    assert found.origin == f"run.json {container} item 1"


def test_a_list_two_containers_down(tmp_path: Path) -> None:
    result = read_value(tmp_path, {"data": {"results": [{"question": "Q?", "answer": "A"}]}})
    assert result.shape == "list under 'data.results'"
    assert [e.answer for e in result.entries] == ["A"]


def test_ragchecker_style_results_beside_metrics(tmp_path: Path) -> None:
    value = {
        "results": [
            {
                "query_id": "0",
                "query": "Longest river?",
                "gt_answer": "The Nile",
                "response": "The Nile, probably",
                "retrieved_context": [{"doc_id": "000", "text": "The Nile is long."}],
            }
        ],
        "metrics": {"overall": {"precision": 1.0}},
    }
    [found] = read_value(tmp_path, value).entries
    assert (found.question, found.answer, found.contexts) == (
        "Longest river?",
        "The Nile, probably",
        ["The Nile is long."],
    )


def test_a_single_entry_object(tmp_path: Path) -> None:
    result = read_value(tmp_path, {"question": "Q?", "answer": "A", "data": {"id": 1}})
    assert result.shape == "single object"
    assert [(e.question, e.answer) for e in result.entries] == [("Q?", "A")]


def test_a_flat_mapping_by_question_text(tmp_path: Path) -> None:
    result = read_value(tmp_path, {"What is X?": "X is x.", "What is Y?": "Y is y."})
    assert result.shape == "flat mapping"
    assert [(e.question, e.answer, e.question_id) for e in result.entries] == [
        ("What is X?", "X is x.", None),
        ("What is Y?", "Y is y.", None),
    ]


def test_a_flat_mapping_by_id_keys(tmp_path: Path) -> None:
    result = read_value(tmp_path, {"Q1": "a", "q_2": "b", "3": "c", "Question 4": "d"})
    assert [(e.question, e.question_id, e.answer) for e in result.entries] == [
        (None, 1, "a"),
        (None, 2, "b"),
        (None, 3, "c"),
        (None, 4, "d"),
    ]
    assert result.entries[0].origin == "run.json key 'Q1'"


def test_a_flat_mapping_whose_values_are_objects(tmp_path: Path) -> None:
    value = {
        "What is X?": {"answer": "X", "sources": [{"page_content": "doc x"}]},
        "Q2": {"response": "by id"},
        "q7": {"question": "Text wins over the key?", "answer": "yes"},
    }
    entries = read_value(tmp_path, value).entries
    assert [(e.question, e.question_id, e.answer, e.contexts) for e in entries] == [
        ("What is X?", None, "X", ["doc x"]),
        (None, 2, "by id", None),
        ("Text wins over the key?", None, "yes", None),
    ]


def test_flat_mapping_values_that_are_not_answers_are_skipped(tmp_path: Path) -> None:
    result = read_value(tmp_path, {"What is X?": "X.", "count": 3, "tags": ["a"]})
    assert [e.question for e in result.entries] == ["What is X?"]
    assert result.problems == [
        "run.json key 'count': the value is a number, not an answer text. Write the answer "
        "as a string (entry skipped)",
        "run.json key 'tags': the value is a list, not an answer text. Write the answer as a "
        "string (entry skipped)",
    ]


def test_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(
        '{"user_input": "Q1?", "response": "A1", "retrieved_contexts": ["c"]}\n'
        "\n"
        '{"prompt": "Q2?", "output": "A2"}\r\n',
        encoding="utf-8",
    )
    result = read_rag_json_file(path)
    assert result.shape == "JSON Lines"
    assert [(e.question, e.answer, e.contexts, e.location) for e in result.entries] == [
        ("Q1?", "A1", ["c"], "line 1"),
        ("Q2?", "A2", None, "line 3"),
    ]


def test_json_lines_saved_as_json_are_read_as_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"query": "Q1?", "answer": "A1"}\n{"query": "Q2?", "answer": "A2"}\n')
    assert [e.answer for e in read_rag_json_file(path).entries] == ["A1", "A2"]


def test_one_document_saved_as_jsonl_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps([{"query": "Q?", "answer": "A"}], indent=2))
    assert [e.answer for e in read_rag_json_file(path).entries] == ["A"]


# Aliases -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", QUESTION_FIELDS)
def test_every_question_alias(tmp_path: Path, name: str) -> None:
    [found] = read_value(tmp_path, [{name: "Q?", "answer": "A"}]).entries
    assert found.question == "Q?"


@pytest.mark.parametrize("name", ANSWER_FIELDS)
def test_every_answer_alias(tmp_path: Path, name: str) -> None:
    [found] = read_value(tmp_path, [{"question": "Q?", name: "A"}]).entries
    assert found.answer == "A"


@pytest.mark.parametrize("name", CONTEXT_FIELDS)
def test_every_context_alias(tmp_path: Path, name: str) -> None:
    [found] = read_value(tmp_path, [{"question": "Q?", "answer": "A", name: ["c1", "c2"]}]).entries
    assert found.contexts == ["c1", "c2"]


@pytest.mark.parametrize("name", CONTEXT_TEXT_FIELDS)
def test_every_context_text_field(tmp_path: Path, name: str) -> None:
    value = [{"q": 1, "question": "Q?", "answer": "A", "sources": [{name: "doc", "score": 0.4}]}]
    [found] = read_value(tmp_path, value).entries
    assert found.contexts == ["doc"]


@pytest.mark.parametrize(
    ("question_name", "answer_name", "context_name"),
    [
        ("Question", "Answer", "Contexts"),
        ("userInput", "generatedAnswer", "retrievedContexts"),
        ("USER-INPUT", "RAG Answer", "Source Documents"),
    ],
)
def test_alias_spelling_is_tolerant(
    tmp_path: Path, question_name: str, answer_name: str, context_name: str
) -> None:
    value = [{question_name: "Q?", answer_name: "A", context_name: ["c"]}]
    [found] = read_value(tmp_path, value).entries
    assert (found.question, found.answer, found.contexts) == ("Q?", "A", ["c"])


def test_the_first_alias_in_the_table_wins(tmp_path: Path) -> None:
    # Two answer fields with different texts are refused (test_record_fields); equal ones
    # and a blank one are not.
    [found, blank] = read_value(
        tmp_path,
        [
            {"input": "raw input", "question": "real question", "output": "a", "answer": "a"},
            {"question": "Q2", "output": "o", "answer": " "},
        ],
    ).entries
    assert (found.question, found.answer) == ("real question", "a")
    assert blank.answer == "o"


# Field values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (None, ""),
        (42, "42"),
        (True, "true"),
        ({"text": "nested"}, "nested"),
        ({"answer": "inner"}, "inner"),
        (["line one", "line two"], "line one\nline two"),
    ],
)
def test_answer_values_that_become_text(tmp_path: Path, answer: object, expected: str) -> None:
    [found] = read_value(tmp_path, [{"question": "Q?", "answer": answer}]).entries
    assert found.answer == expected


def test_an_answer_that_holds_no_text_skips_that_entry_only(tmp_path: Path) -> None:
    result = read_value(
        tmp_path,
        [{"question": "Q1?", "answer": {"score": 3}}, {"question": "Q2?", "answer": "fine"}],
    )
    assert [e.answer for e in result.entries] == ["fine"]
    assert result.problems == [
        "run.json item 1: the answer is an object with no text/content/page_content or answer "
        "text in it (fields found: 'score'). Write the answer as a string (entry skipped)"
    ]
    assert result.skipped_entries == 1


@pytest.mark.parametrize(
    ("contexts", "expected"),
    [
        ("one context", ["one context"]),
        # null says nothing about what was retrieved; [] says nothing was.
        (None, None),
        ([], []),
        ([{"doc_id": 1}, {"score": 0.5}], None),
        (["a", "", "  ", "b"], ["a", "b"]),
        ({"page_content": "single doc"}, ["single doc"]),
        ([{"content": "x"}, "y", 3], ["x", "y", "3"]),
    ],
)
def test_context_values(tmp_path: Path, contexts: object, expected: list[str] | None) -> None:
    [found] = read_value(
        tmp_path, [{"question": "Q?", "answer": "A", "contexts": contexts}]
    ).entries
    assert found.contexts == expected


def test_llamaindex_source_nodes_give_their_node_text(tmp_path: Path) -> None:
    value = [
        {
            "query": "Q?",
            "response": "A",
            "source_nodes": [
                {"node": {"id_": "n1", "text": "first chunk", "metadata": {}}, "score": 0.8},
                {"node": {"id_": "n2", "text": "second chunk"}, "score": 0.5},
            ],
        }
    ]
    result = read_value(tmp_path, value)
    assert result.entries[0].contexts == ["first chunk", "second chunk"]
    assert result.problems == []


def test_context_items_without_text_are_dropped_and_counted(tmp_path: Path) -> None:
    value = [{"question": "Q?", "answer": "A", "sources": [{"doc_id": 1}, {"text": "kept"}, [1]]}]
    result = read_value(tmp_path, value)
    assert result.entries[0].contexts == ["kept"]
    assert result.problems == [
        "run.json: 2 context items had no text/content/page_content text and were left out. "
        "Give each context object one of the fields text, content, page_content"
    ]


def test_a_record_without_a_question_field_names_the_accepted_fields(tmp_path: Path) -> None:
    result = read_value(tmp_path, [{"q": "Q?", "answer": "A"}, {"question": "ok?", "answer": "ok"}])
    [problem] = result.problems
    assert problem.startswith("run.json item 1: no question field (fields found: 'q', 'answer').")
    assert "question, query, prompt, input, user_input, question_text" in problem


def test_a_record_without_an_answer_field_names_the_accepted_fields(tmp_path: Path) -> None:
    result = read_value(tmp_path, [{"question": "Q?"}, {"question": "ok?", "answer": "ok"}])
    [problem] = result.problems
    assert problem.startswith("run.json item 1: no answer field (fields found: 'question').")
    assert "answer, response, output, generated_answer, prediction, result, rag_answer" in problem


def test_text_that_no_utf8_file_can_hold_is_cleaned(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('[{"question": "Q\\u0000?", "answer": "bad \\ud800 half"}]')
    [found] = read_rag_json_file(path).entries
    assert found.question == "Q?"
    assert found.answer == "bad ? half"


def test_paths_inside_a_file_are_data_and_never_opened(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET CONTENT")
    value = [
        {
            "question": str(secret),
            "answer": f"file://{secret}",
            "source_documents": [
                {"page_content": str(secret), "metadata": {"source": str(secret)}}
            ],
        }
    ]
    [found] = read_value(tmp_path, value).entries
    assert (found.question, found.answer, found.contexts) == (
        str(secret),
        f"file://{secret}",
        [str(secret)],
    )
    assert "TOP SECRET" not in repr(found)


# Broken files ------------------------------------------------------------------------


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"question": "Q?" "answer": "A"}\n]\n')
    with pytest.raises(InputError) as caught:
        read_rag_json_file(path)
    assert caught.value.message.startswith(
        "broken.json is not valid JSON (line 2, column 21: Expecting ',' delimiter)"
    )
    assert caught.value.path == path


def test_a_trailing_comma_is_pointed_out(tmp_path: Path) -> None:
    path = tmp_path / "trailing.json"
    path.write_text('[{"question": "Q?", "answer": "A"},\n]')
    with pytest.raises(InputError) as caught:
        read_rag_json_file(path)
    assert "trailing.json is not valid JSON (line 2, column 1" in caught.value.message
    assert "a trailing comma before ']'. Remove that comma" in caught.value.message


@pytest.mark.parametrize(
    ("content", "position"),
    [
        ('[{"question": "Q?", "answer": "A"}, {"question": "Q2?", "ans', "line 1, column 57"),
        ('[{"question": "Q?", "answer": "A"},\n  ', "line 2, column 3"),
        ('{"results": [{"question": "Q?", "answer": "A"}', "line 1, column 47"),
    ],
)
def test_a_truncated_file_is_called_truncated(tmp_path: Path, content: str, position: str) -> None:
    path = tmp_path / "cut.json"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        read_rag_json_file(path)
    assert caught.value.message.startswith(f"cut.json is not valid JSON ({position}: ")
    assert "looks truncated" in caught.value.message
    assert "Export it again" in caught.value.message


def test_single_quotes_get_a_quoting_hint(tmp_path: Path) -> None:
    path = tmp_path / "py.json"
    path.write_text("[{'question': 'Q?', 'answer': 'A'}]")
    with pytest.raises(InputError, match="JSON needs double quotes"):
        read_rag_json_file(path)


def test_nan_is_read_as_null_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "nan.json"
    path.write_text('[{"question": "Q?", "answer": NaN, "score": Infinity}]')
    result = read_rag_json_file(path)
    assert [e.answer for e in result.entries] == [""]
    assert result.problems == [
        "nan.json contains Infinity, NaN, which JSON does not allow; read as null (an empty "
        "answer where it was the answer). Have the exporter write null or a number instead"
    ]


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(codecs.BOM_UTF8 + json.dumps([{"question": "Q?", "answer": "A"}]).encode())
    assert [e.answer for e in read_rag_json_file(path).entries] == ["A"]
    assert read_rag_json_file(path).problems == []


def test_utf16_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ps.json"
    path.write_bytes(json.dumps([{"question": "Q?", "answer": "Ä"}]).encode("utf-16"))
    assert [e.answer for e in read_rag_json_file(path).entries] == ["Ä"]


def test_invalid_utf8_falls_back_to_cp1252_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "windows.json"
    path.write_bytes('[{"question": "Café?", "answer": "5 € – “yes”"}]'.encode("cp1252"))
    result = read_rag_json_file(path)
    assert [(e.question, e.answer) for e in result.entries] == [("Café?", "5 € – “yes”")]
    assert result.problems == [
        "windows.json is not valid UTF-8 (byte 18); read it as Windows-1252 (cp1252, Excel's "
        "Windows default). Save it as UTF-8 if characters look wrong"
    ]


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_absurd_nesting_is_refused_without_a_traceback(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * depth + "]" * depth)
    with pytest.raises(InputError) as caught:
        read_rag_json_file(path)
    assert caught.value.message.startswith("deep.json is nested too deeply")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('"just a string"', "the top level is a string"),
        ("42", "the top level is a number"),
        ("[1, 2, 3]", "a list with no objects in it"),
        ('{"metrics": {"a": 1}, "count": 3}', "an object whose values are not answers"),
    ],
)
def test_an_unknown_shape_is_explained(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "odd.json"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        read_rag_json_file(path)
    assert caught.value.message.startswith(
        f"odd.json has a JSON shape rag-eval does not know ({message}"
    )
    assert 'Expected a list of {"question": ..., "answer": ...} objects' in caught.value.message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty.json is empty."),
        ("  \n\t ", "empty.json is empty."),
        ("[]", "empty.json holds an empty list: there is nothing to convert."),
        ("{}", "empty.json holds an empty object: there is nothing to convert."),
        (
            '{"results": []}',
            "empty.json holds an empty 'results' list: there is nothing to convert.",
        ),
    ],
)
def test_empty_files_say_so(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "empty.json"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        read_rag_json_file(path)
    assert caught.value.message == (
        f"{message} Export the RAG output again, or move the file out of the folder"
    )


def test_a_file_whose_every_entry_is_unusable_is_skipped_with_the_first_reason(
    tmp_path: Path,
) -> None:
    with pytest.raises(InputError) as caught:
        read_value(tmp_path, [{"foo": 1}, {"bar": 2}], name="useless.json")
    assert caught.value.message == (
        "useless.json has no usable entries (2 skipped). The first, item 1: no question field "
        "(fields found: 'foo'). Name it one of: question, query, prompt, input, user_input, "
        "question_text, reference_question, synthetic_query, messages"
    )


def test_a_file_with_one_unusable_entry_gives_its_reason_once(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_value(tmp_path, {"question": " ", "answer": "A"}, name="blank.json")
    assert caught.value.message == (
        "blank.json has no usable entries: (single entry): the 'question' field is blank. "
        "Fill in the question"
    )


def test_a_bad_json_lines_line_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(
        '{"question": "Q1?", "answer": "A1"}\n{"question": "Q2?", "answer": \n'
        '{"question": "Q3?", "answer": "A3"}\n'
    )
    result = read_rag_json_file(path)
    assert [e.answer for e in result.entries] == ["A1", "A3"]
    assert result.problems == [
        "run.jsonl line 2 is not valid JSON (column 31: Expecting value). Fix or remove that "
        "line (line skipped)"
    ]
    assert result.skipped_entries == 1


def test_a_json_lines_file_with_no_readable_line_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("not json\nnor this\n")
    with pytest.raises(InputError) as caught:
        read_rag_json_file(path)
    assert caught.value.message == (
        "run.jsonl is not valid JSON Lines (no line could be read; line 1: column 1: "
        "Expecting value). Write one JSON object per line"
    )


def test_huge_integers_are_refused_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('[{"question": "Q?", "answer": ' + "9" * 5000 + "}]")
    with pytest.raises(InputError) as caught:
        read_rag_json_file(path)
    # Not Python's advice to call sys.set_int_max_str_digits(), which no user can follow.
    assert caught.value.message == (
        "big.json could not be read as JSON: it holds a number of more than 4300 digits. "
        "Fix that value, or move the file out of the folder"
    )


def test_a_json_lines_file_whose_readable_lines_are_all_unusable(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('not json\n{"question": "Q?"}\n')
    with pytest.raises(InputError) as caught:
        read_rag_json_file(path)
    # Line 2 was read, so "no line could be read" would be wrong; the first problem is named.
    assert caught.value.message == (
        "run.jsonl has no usable entries (2 skipped). The first, line 1: not valid JSON "
        "(column 1: Expecting value). Fix or remove that line"
    )


@pytest.mark.parametrize(
    ("items", "problem"),
    [
        ([None], "item 1: this item is null, not an object"),
        ([3], "item 1: this item is a number, not an object"),
        ([["x"]], "item 1: this item is a list, not an object"),
        ([{"question": None, "answer": "A"}], "item 1: the 'question' field is null, not"),
        ([{"question": {"a": 1}, "answer": "A"}], "item 1: the 'question' field is an object"),
        ([{"question": "Q?", "answer": [1, 2]}], "item 1: the answer is a list that does not"),
    ],
)
def test_messages_use_the_right_article_and_say_what_to_do(
    tmp_path: Path, items: list[object], problem: str
) -> None:
    result = read_value(tmp_path, [*items, {"question": "ok?", "answer": "ok"}])
    [message] = result.problems
    assert message.startswith(f"run.json {problem}")
    assert " a object" not in message and " a null" not in message
    assert any(fix in message for fix in ("Remove it or make it", "Write the", "Fill in"))
    assert message.endswith(" (entry skipped)")


def test_a_top_level_null_reads_as_null(tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    path.write_text("null")
    with pytest.raises(InputError, match=r"\(the top level is null\)"):
        read_rag_json_file(path)


# Folders -----------------------------------------------------------------------------


def test_a_folder_is_read_in_name_order_and_broken_files_are_skipped(tmp_path: Path) -> None:
    write_json(tmp_path / "b.json", [{"question": "Qb?", "answer": "B"}])
    write_json(tmp_path / "a.JSON", [{"question": "Qa?", "answer": "A"}])
    (tmp_path / "c.jsonl").write_text('{"question": "Qc?", "answer": "C"}\n')
    (tmp_path / "d.json").write_text("{oops")
    (tmp_path / ".hidden.json").write_text("{also broken")
    (tmp_path / "._mac_fork.json").write_bytes(b"\x00\x05\x16\x07")
    (tmp_path / "notes.txt").write_text("ignored")
    batch = read_rag_json_dir(tmp_path)
    assert [file.name for file in batch.files] == ["a.JSON", "b.json", "c.jsonl"]
    assert [entry.answer for entry in batch.entries] == ["A", "B", "C"]
    [skipped] = batch.skipped
    assert skipped.name == "d.json"
    assert skipped.reason.startswith("d.json is not valid JSON (line 1, column 2")


def test_a_folder_without_json_files_says_what_it_holds(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(NothingConvertedError) as caught:
        read_rag_json_dir(tmp_path)
    assert caught.value.message == (
        f"{tmp_path} has no *.json or *.jsonl files (it holds: notes.txt). "
        "Put your RAG system's output files there, or pass --json-dir"
    )
    assert caught.value.exit_code == 1


def test_an_empty_folder_says_it_is_empty(tmp_path: Path) -> None:
    with pytest.raises(NothingConvertedError, match=r"\(it is empty\)"):
        read_rag_json_dir(tmp_path)


def test_a_missing_folder_says_how_to_fix_it(tmp_path: Path) -> None:
    missing = tmp_path / "RAG_JSON_Files"
    with pytest.raises(InputError) as caught:
        read_rag_json_dir(missing)
    assert caught.value.message == (
        f"{missing} not found. Create this folder and put your RAG system's output files "
        "(*.json, *.jsonl) in it, or pass --json-dir"
    )


def test_a_file_given_as_the_folder_is_refused(tmp_path: Path) -> None:
    path = write_json(tmp_path / "run.json", [])
    with pytest.raises(InputError, match="is a file, not a folder"):
        read_rag_json_dir(path)


# Properties --------------------------------------------------------------------------


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".json", ".jsonl"]))
def test_any_bytes_either_load_or_raise_the_tools_error(
    tmp_path: Path, data: bytes, suffix: str
) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(data)
    try:
        result = read_rag_json_file(path)
    except InputError as exc:
        assert exc.message
    else:
        assert result.entries


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["question", "query", "answer", "response", "sources", "results", "Q1", "x"]
            )
            | st.text(max_size=8),
            children,
            max_size=4,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_either_gives_entries_or_raises_the_tools_error(value: object) -> None:
    try:
        result = extract_entries(value, "fuzz.json")
    except InputError as exc:
        assert exc.message.startswith("fuzz.json ")
    else:
        for found in result.entries:
            assert isinstance(found.answer, str)
            assert found.contexts is None or all(
                isinstance(context, str) for context in found.contexts
            )
            assert (found.question is None) != (found.question_id is None)


def test_references_listing_several_answers_are_joined_and_kept_apart(tmp_path: Path) -> None:
    value = [
        {"question": "Capital?", "answer": "Paris", "reference": ["Paris", "Paris, France"]},
        {"question": "Planet?", "answer": "Jupiter", "reference": ["Jupiter", " "]},
        {"question": "Sea?", "answer": "Dead Sea", "reference": [{"text": "A"}, {"text": "B"}]},
    ]
    result = read_value(tmp_path, value)
    assert [entry.reference for entry in result.entries] == [
        "Paris\nParis, France",
        "Jupiter\n ",
        "A\nB",
    ]
    assert [entry.reference_answers for entry in result.entries] == [
        ("Paris", "Paris, France"),
        None,  # one answer besides a blank one: that answer alone
        ("A", "B"),
    ]
    assert result.problems == []
