"""A JSON Lines dataset too large to hold is read into the on-disk spool in two passes: the
same records, numbers, items, exclusions, warnings and errors as reading it whole, and the
same run."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from evaluate_support import only_results, run_cli
from fakes.anthropic_server import FakeAnthropicServer, verdict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.dataset_stream import stream_dataset
from rag_evaluator.inputs.load import load_dataset, spool_dataset
from rag_evaluator.inputs.selection import select_items
from rag_evaluator.inputs.spool import InputSpool

SPOOL = "RAG_EVAL_SPOOL_MB"

_RECORDS = [
    {
        "id": 3,
        "question": "How long is the warranty?",
        "ground_truth": "Two years.",
        "answer": "Two years [1].",
        "contexts": ["Warranty: two years."],
        "category": "product",
    },
    {
        "id": 1,
        "question": "What is the refund window?",
        "ground_truth": "90 days.",
        "answer": "90 days.",
        "contexts": ["Refunds within 90 days.", "Other."],
        "metadata": {"source": "faq"},
        "tags": ["a", "b"],
    },
    {
        "id": 2,
        "question": "Who signs the form?",
        "ground_truth": "The account holder.",
        "answer": "",
        "category": "billing",
    },
    {"id": 4, "question": "What colour is the default theme?", "answer": "Blue."},
    {
        "id": 5,
        "question": "Is there a \u2028 separator?",
        "ground_truth": "Yes.",
        "answer": "Yes, there is.",
        "score": float("nan"),
    },
]


def _write_lines(path: Path, records: list[dict[str, object]], newline: str = "\n") -> Path:
    lines = [json.dumps(record) for record in records]
    path.write_text(newline.join(["", *lines[:2], "  ", *lines[2:], ""]), encoding="utf-8")
    return path


def _held(path: Path, score_missing: bool, caplog: pytest.LogCaptureFixture):
    """The whole-file reading: selection, record count, metadata columns, reference-free,
    and the log; or the error's message."""
    with caplog.at_level(logging.INFO):
        caplog.clear()
        try:
            inputs = load_dataset(path)
            selection = select_items(
                inputs.questions,
                inputs.ground_truth,
                inputs.answers,
                score_missing=score_missing,
                reference_free=inputs.reference_free,
            )
        except InputError as exc:
            return str(exc), list(caplog.messages)
    assert inputs.dataset is not None
    facts = (len(inputs.dataset.rows), inputs.metadata_columns, inputs.reference_free)
    return (selection, facts), list(caplog.messages)


def _spooled(
    path: Path,
    score_missing: bool,
    caplog: pytest.LogCaptureFixture,
    folder: Path,
    chunk_size: int = 1024 * 1024,
):
    """The streamed reading into a spool, as ``_held`` gives the whole-file one; ``None``
    when the file is not streamed."""
    spool = InputSpool(folder)
    try:
        with caplog.at_level(logging.INFO):
            caplog.clear()
            try:
                streamed = stream_dataset(path, chunk_size=chunk_size)
                if streamed is None:
                    return None
                dataset = spool_dataset(spool, streamed, score_missing=score_missing)
            except InputError as exc:
                return str(exc), list(caplog.messages)
            selection = dataset.inputs.selection
            facts = (dataset.records, dataset.inputs.metadata_columns, dataset.reference_free)
            value = (selection.exclusions, selection.coverage, list(selection.items), facts)
            return value, list(caplog.messages)
    finally:
        spool.close()


def _same(held: object, spooled: object) -> None:
    (held_value, held_log), (spooled_value, spooled_log) = held, spooled
    if isinstance(held_value, str):
        assert spooled_value == held_value
    else:
        selection, facts = held_value
        exclusions, coverage, items, spooled_facts = spooled_value
        assert items == list(selection.items)
        assert exclusions == selection.exclusions
        assert coverage == selection.coverage
        assert spooled_facts == facts
    assert spooled_log == held_log


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("score_missing", [False, True])
def test_a_streamed_dataset_gives_what_reading_it_whole_does(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, newline: str, score_missing: bool
) -> None:
    path = _write_lines(tmp_path / "set.jsonl", _RECORDS, newline)
    held = _held(path, score_missing, caplog)
    assert not isinstance(held[0], str)
    assert held[0][1] == (5, ["category", "source", "score"], False)
    spooled = _spooled(path, score_missing, caplog, tmp_path)
    assert spooled is not None
    _same(held, spooled)


def test_json_lines_csv_and_lists_of_records_stream_and_other_json_does_not(
    tmp_path: Path,
) -> None:
    lines = _write_lines(tmp_path / "set.json", _RECORDS)
    table = tmp_path / "set.csv"
    table.write_text("question,answer\nq,a\n", encoding="utf-8")
    text_table = tmp_path / "set.txt"
    text_table.write_text("question,answer\nq,a\n", encoding="utf-8")
    document = tmp_path / "list.json"
    document.write_text(json.dumps(_RECORDS[:2]), encoding="utf-8")
    for streams in (lines, table, text_table, document):
        assert stream_dataset(streams) is not None, streams
    single = tmp_path / "one.json"
    single.write_text(json.dumps(_RECORDS[0], indent=2), encoding="utf-8")
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n  \n", encoding="utf-8")
    not_json = tmp_path / "table.json"
    not_json.write_text("question,answer\nq,a\n", encoding="utf-8")
    for whole in (single, blank, not_json, tmp_path / "missing.jsonl", tmp_path):
        assert stream_dataset(whole) is None, whole


_CSV = (
    "question,ground_truth,answer,contexts,category\n"
    'How long is the warranty?,Two years.,Two years [1].,"[""Warranty: two years.""]",product\n'
    "\n"
    'What is the refund window?,90 days.,90 days.,"[""Refunds within 90 days."", ""Other.""]",faq\n'
    "Who signs the form?,The account holder.,,,billing\n"
    "What colour is the theme?,,Blue.,,\n"
)


@pytest.mark.parametrize("name", ["set.csv", "set.txt"])
def test_a_streamed_csv_dataset_gives_what_reading_it_whole_does(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    path = tmp_path / name
    path.write_bytes(
        _CSV.replace("\n", "\r\n").encode("cp1252") + "caf\xe9,x,y,,\r\n".encode("cp1252")
    )
    held = _held(path, True, caplog)
    assert not isinstance(held[0], str)
    assert held[0][1] == (5, ["category"], False)
    assert any("cp1252" in line or "Windows" in line for line in held[1]), held[1]
    spooled = _spooled(path, True, caplog, tmp_path)
    assert spooled is not None
    _same(held, spooled)


_ID = st.one_of(st.none(), st.integers(-2, 6), st.sampled_from(["Q1", "Q2", "abc", " ", "7"]))
_TEXT = st.one_of(
    st.none(), st.text(st.characters(blacklist_categories=("Cs",)), max_size=8), st.integers()
)


@st.composite
def _records(draw: st.DrawFn) -> list[object]:
    records: list[object] = []
    with_ids = draw(st.booleans())
    for _ in range(draw(st.integers(0, 6))):
        record: dict[str, object] = {}
        if with_ids and draw(st.integers(0, 9)):
            record["id"] = draw(_ID)
        for field in ("question", "ground_truth", "answer", "category"):
            if draw(st.integers(0, 4)):
                record[field] = draw(_TEXT)
        if draw(st.integers(0, 5)) == 0:
            # A second answer field: the same text, or one that may disagree.
            record["prediction"] = draw(st.one_of(st.just(record.get("answer")), _TEXT))
        for contexts in ("contexts", "sources"):
            if draw(st.integers(0, 3)) == 0:
                record[contexts] = draw(st.one_of(st.lists(_TEXT, max_size=2), _TEXT))
        records.append(record if draw(st.integers(0, 19)) else draw(st.sampled_from([[], 3])))
    return records


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=_records(), score_missing=st.booleans(), chunk=st.integers(1, 64))
def test_any_json_lines_dataset_streams_as_it_reads_whole(
    tmp_path_factory: pytest.TempPathFactory,
    caplog: pytest.LogCaptureFixture,
    records: list[object],
    score_missing: bool,
    chunk: int,
) -> None:
    folder = tmp_path_factory.mktemp("set")
    path = folder / "set.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in records), encoding="utf-8")
    held = _held(path, score_missing, caplog)
    spooled = _spooled(path, score_missing, caplog, folder, chunk)
    if spooled is None:  # blank: read whole, which says it is empty
        assert held[0] == f"{path.name} is empty. Export the dataset again"
        return
    _same(held, spooled)


# A JSON document: its records at the top level or under container keys (up to three levels,
# the first container key holding a list winning), beside other keys, some documents the
# streaming parser reads otherwise than json (NaN, a lone surrogate, a huge number, a key with
# a dot) and some that are no dataset at all.
_AWKWARD = st.sampled_from(
    [
        float("nan"),
        "\ud800 alone",
        "\udc00 alone",
        "\ud83d\ude00 pair",
        10**30,
        1e300,
        "tab\there",
        {"deep": {"er": [1]}},
    ]
)
_PATHS = st.sampled_from(
    [(), ("results",), ("data", "results"), ("data",), ("a.b",), ("meta", "x", "testCases")]
)


@st.composite
def _document(draw: st.DrawFn) -> object:
    records: list[object] = draw(_records())
    if records and draw(st.integers(0, 3)) == 0:
        target = records[draw(st.integers(0, len(records) - 1))]
        if isinstance(target, dict):
            target[draw(st.sampled_from(["question", "answer", "category", "extra"]))] = draw(
                _AWKWARD
            )
    document: object = records
    for name in reversed(draw(_PATHS)):
        document = {name: document}
        if draw(st.booleans()):
            document = {"results" if name == "data" else "notes": [], **document, "n": 1}
    return document


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(document=_document(), score_missing=st.booleans(), chunk=st.integers(1, 64))
def test_any_json_document_streams_as_it_reads_whole(
    tmp_path_factory: pytest.TempPathFactory,
    caplog: pytest.LogCaptureFixture,
    document: object,
    score_missing: bool,
    chunk: int,
) -> None:
    folder = tmp_path_factory.mktemp("set")
    path = folder / "set.json"
    # json.dumps writes the escapes ("\ud800") a JSON file holds; allow_nan its NaN.
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    held = _held(path, score_missing, caplog)
    spooled = _spooled(path, score_missing, caplog, folder, chunk)
    if spooled is not None:
        _same(held, spooled)


def test_what_the_streaming_parser_reads_otherwise_is_read_whole(tmp_path: Path) -> None:
    records = [{"question": "q", "answer": "a"}]
    readable = {
        "pair.json": json.dumps([{**records[0], "answer": "\U0001f600"}]),
        "nested.json": json.dumps({"data": {"results": records}, "n": 1}),
    }
    whole = {
        "nan.json": json.dumps([{**records[0], "score": float("nan")}]),
        "lone.json": json.dumps([{**records[0], "answer": "\ud800"}]),
        "huge.json": json.dumps([{**records[0], "score": 10**30}]),
        "dotted.json": json.dumps({"results.v2": records}),
        "single.json": json.dumps(records[0]),
        "broken.json": json.dumps(records)[:-1],
    }
    for name, text in {**readable, **whole}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        streamed = stream_dataset(tmp_path / name)
        assert (streamed is not None) == (name in readable), name
    streamed = stream_dataset(tmp_path / "nested.json")
    assert streamed is not None
    [(number, record)] = list(streamed.records([]))
    assert (number, record.location, record.fields) == (1, "'data.results' item 1", records[0])


def test_an_item_that_is_no_record_is_named_by_its_place(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"results": [{"question": "q", "answer": "a"}, 3]}))
    streamed = stream_dataset(path)
    assert streamed is not None
    with pytest.raises(InputError, match=r"set\.json 'results' item 2 is a number, not a record"):
        list(streamed.records([]))


def _shown(output: str) -> list[str]:
    """The run's output (its plan, estimate, warnings, summary) without what differs between
    two folders or moments."""
    return [
        re.sub(r"\s+", " ", line).strip()
        for line in output.splitlines()
        if not re.search(r"Evaluation_Runs|checkpoint|spool|\d+(\.\d+)?\s*s\b|\d\d:\d\d", line)
    ]


def _run(folder: Path, monkeypatch: pytest.MonkeyPatch, spooled: bool, *metrics: str, name: str):
    monkeypatch.chdir(folder)
    monkeypatch.setenv("RAG_EVAL_CHECKPOINT_DIR", str(folder / "checkpoints"))
    monkeypatch.setenv(SPOOL, "0" if spooled else "1000000")
    return run_cli(
        [
            "evaluate",
            *("--dataset", name, "--model", "haiku", "--yes", "--seed", "5"),
            *("--delay", "0", "--no-cache", "--score-missing", "--metrics", ",".join(metrics)),
        ]
    )


def _write_document(path: Path, records: list[dict[str, object]]) -> Path:
    """The records as deepeval saves a test run: a list under "testCases", NaN left out."""
    kept = [{key: value for key, value in record.items() if key != "score"} for record in records]
    path.write_text(json.dumps({"testRunId": "r1", "testCases": kept}, indent=2), "utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "write"), [("set.jsonl", _write_lines), ("run.json", _write_document)]
)
def test_a_run_on_a_streamed_dataset_asks_and_writes_what_a_held_one_does(
    tmp_path: Path,
    fake_anthropic: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    write: Callable[[Path, list[dict[str, object]]], Path],
) -> None:
    fake_anthropic.script("warranty", verdict(1, 0, 1, summary="Half right."))
    outcomes = {}
    for spooled in (False, True):
        folder = tmp_path / ("spooled" if spooled else "held")
        folder.mkdir()
        assert stream_dataset(write(folder / name, _RECORDS)) is not None
        before = len(fake_anthropic.requests)
        result = _run(folder, monkeypatch, spooled, "judge", "lexical", "retrieval", name=name)
        assert result.exit_code == 0, result.output
        asked = [request.question for request in fake_anthropic.requests[before:]]
        results = only_results(folder)
        summary = {k: v for k, v in results.summary.items() if k not in ("Date", "Time")}
        outcomes[spooled] = (asked, results.rows, summary, _shown(result.output))
    assert outcomes[True] == outcomes[False]
    asked, rows, summary, shown = outcomes[True]
    assert any(line.startswith("Estimated cost") for line in shown), shown
    assert [row["Question Number"] for row in rows] == ["1", "2", "3", "5"]
    # Question 2's blank answer is an empty answer, judged as a blank RAG Answer cell is;
    # question 4 has no reference.
    assert len(asked) == 4
    assert rows[0]["source"] == "faq"


_HEADERS = st.lists(
    st.sampled_from(["id", "question", "ground_truth", "answer", "contexts", "category", ""]),
    min_size=1,
    max_size=6,
)
_CELL = st.one_of(
    st.sampled_from(["", "1", "2", "Q3", "0", '["a", "b"]', "x | y", "[oops"]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    headers=_HEADERS,
    rows=st.lists(st.lists(_CELL, max_size=7), max_size=6),
    chunk=st.integers(1, 64),
)
def test_any_csv_dataset_streams_as_it_reads_whole(
    tmp_path_factory: pytest.TempPathFactory,
    caplog: pytest.LogCaptureFixture,
    headers: list[str],
    rows: list[list[str]],
    chunk: int,
) -> None:
    import csv

    folder = tmp_path_factory.mktemp("set")
    path = folder / "set.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([headers, *rows])
    held = _held(path, False, caplog)
    spooled = _spooled(path, False, caplog, folder, chunk)
    assert spooled is not None
    _same(held, spooled)


def test_a_large_document_the_streaming_parser_cannot_read_is_read_whole_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # _RECORDS holds a NaN score, which json reads (with a warning) and yajl does not.
    (tmp_path / "set.json").write_text(json.dumps(_RECORDS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(SPOOL, "0")

    result = run_cli(["evaluate", "--dataset", "set.json", "--metrics", "lexical", "--yes"])

    assert result.exit_code == 0, result.output
    warnings = " ".join(result.stderr.split())
    assert "set.json is read whole, not streamed (it exceeds RAG_EVAL_SPOOL_MB)" in warnings
    assert "Save its records as JSON Lines, one per line, to stream them" in warnings
    # Question 2's blank answer is an empty answer; question 4 has no reference.
    assert [row["Question Number"] for row in only_results(tmp_path).rows] == ["1", "2", "3", "5"]
