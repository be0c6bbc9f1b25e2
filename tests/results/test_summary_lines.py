"""The results file's summary lines are plain ``#`` text lines, whatever they hold.

Readers that skip the lines starting with ``#`` (pandas' ``comment="#"``, the README's
recipe, the tool's own reader) must find the table right after them, so a summary line is
never CSV-quoted (a comma in ``Batch: yes (Message Batches API, 50% of the price)``) and
never holds a line break.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from itertools import takewhile
from pathlib import Path

import pandas as pd
import pytest
from evaluate_support import SAMPLE, Workspace, prepare_workspace, run_cli, write_csv
from fakes.anthropic_server import FakeAnthropicServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_support import ALL_LLM, write_inputs_with_contexts

from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.results.groups import GroupSummary
from rag_evaluator.results.reader import read_run_scores
from rag_evaluator.results.rows import ResultRow
from rag_evaluator.results.summary import SummaryLine
from rag_evaluator.results.writer import write_results

# Every break str.splitlines() knows: a reader splitting lines on any of them must still see
# one summary line as one line.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
GROUP_COLUMN = "Team, region"
GROUPS = {1: 'ops, "night" shift', 2: "billing\nEU", 3: "sales\r\nUS", 4: "", 5: "#hash"}


def _summary_block(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [line for line in takewhile(lambda line: line.startswith("#"), handle)]


def _write_grouped_questions(directory: Path) -> None:
    write_csv(
        directory / "questions.csv",
        ["Question Number", "Question", GROUP_COLUMN],
        [[number, SAMPLE[number][0], GROUPS[number]] for number in sorted(SAMPLE)],
    )


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs_with_contexts(space.directory)
    _write_grouped_questions(space.directory)
    return space


@pytest.mark.needs_extra("overlap")
def test_a_batched_run_with_every_family_and_groups_writes_plain_summary_lines(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(
        [
            "evaluate",
            "--metrics",
            f"{ALL_LLM},lexical,overlap,retrieval,quality",
            "--rubric",
            "rubric.toml",
            "--answer-relevance",
            "rating",
            "--group-by",
            GROUP_COLUMN,
            "--batch",
            "--batch-poll",
            "0.01",
            "--json",
            "--seed",
            "3",
            "--delay",
            "0",
            "--yes",
        ]
    )
    assert result.exit_code in (0, 1), result.output
    (path,) = workspace.results()
    text = path.read_text(encoding="utf-8")
    block = _summary_block(path)
    assert any(line.startswith("#SUMMARY: Batch: yes (Message Batches API,") for line in block)
    assert any(line.startswith("#SUMMARY[") for line in block)
    # The table starts right after the summary block, with its header.
    rest = text[sum(len(line) for line in block) :]
    assert rest.startswith("Question Number,")
    # One summary line is one line for every line-splitting reader.
    for line in block:
        assert line.endswith("\n") and not any(mark in line[:-1] for mark in LINE_BREAKS)

    # pandas, skipping the # lines: the README's recipe, and comment="#" (which also cuts
    # the "#hash" cell short, so only the question numbers are compared there).
    table = pd.read_csv(path, skiprows=len(block), keep_default_na=False)
    assert list(table["Question Number"]) == [1, 2, 3, 4, 5]
    assert list(table[GROUP_COLUMN]) == [GROUPS[number] for number in range(1, 6)]
    commented = pd.read_csv(path, comment="#", keep_default_na=False)
    assert list(commented["Question Number"]) == [1, 2, 3, 4, 5]

    # The tool's own reader reads every summary line back, as the JSON file has it.
    scores = read_run_scores(path)
    summary = dict(scores.summary)
    assert summary["Batch"] == "yes (Message Batches API, 50% of the price)"
    data = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    # The kinds and the metric settings are the JSON file's "metric_kinds" and
    # "metric_settings", not summary entries there.
    own_keys = ("Metric Kinds", "Metric Settings")
    assert [label for label in summary if label not in own_keys] == list(data["summary"])
    # compare reads it as a run (the same file against itself: nothing differs).
    compared = run_cli(["compare", str(path), str(path)])
    assert compared.exit_code == 0, compared.output


_LABEL = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters=":\x00" + LINE_BREAKS),
    min_size=1,
    max_size=20,
).filter(lambda label: label.strip() == label and label.strip())
# NUL is left out: every input file is read with its NUL characters dropped.
_VALUE = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.tuples(_LABEL, _VALUE), min_size=1, max_size=6, unique_by=lambda p: p[0]),
    group_value=_VALUE,
)
def test_any_summary_text_stays_one_plain_line_and_reads_back(
    tmp_path_factory: pytest.TempPathFactory, lines: list[tuple[str, str]], group_value: str
) -> None:
    directory = tmp_path_factory.mktemp("results")
    summary = [SummaryLine(label, value) for label, value in lines]
    group = GroupSummary("Category", group_value, 1, [SummaryLine("Total Questions", "1")])
    item = EvaluationItem(1, "Why?", "Because.", 'Because, "quoted"\nsecond line')
    path, _ = write_results(
        directory,
        datetime(2026, 1, 2, 3, 4, 5),
        summary,
        [ResultRow(item, None)],
        families=[],
        metric_columns=[],
        groups=[group],
    )
    block = _summary_block(path)
    assert len(block) == len(summary) + 1
    for line in block:
        assert not any(mark in line[:-1] for mark in LINE_BREAKS)
    rest = path.read_text(encoding="utf-8")[sum(len(line) for line in block) :]
    rows = list(csv.reader(io.StringIO(rest, newline="")))
    assert rows[0][0] == "Question Number" and rows[1][3] == item.rag_answer
    read_back = read_run_scores(path).summary
    expected = [(label, " ".join(value.split())) for label, value in lines]
    assert [(label, " ".join(value.split())) for label, value in read_back] == expected


# Labels holding colons of their own (a jury's "Juror openai/llama3.1:8b Precision"): any
# colon but one followed by a space, the writer's separator.
_COLON_LABEL = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00" + LINE_BREAKS),
    min_size=1,
    max_size=20,
).filter(lambda label: label.strip() == label and ": " not in label)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(st.tuples(_COLON_LABEL, _VALUE), min_size=1, max_size=6))
def test_labels_with_colons_read_back(
    tmp_path_factory: pytest.TempPathFactory, lines: list[tuple[str, str]]
) -> None:
    directory = tmp_path_factory.mktemp("results")
    summary = [SummaryLine(label, value) for label, value in lines]
    item = EvaluationItem(1, "Why?", "Because.", "Because.")
    path, _ = write_results(
        directory,
        datetime(2026, 1, 2, 3, 4, 5),
        summary,
        [ResultRow(item, None)],
        families=[],
        metric_columns=[],
    )
    read_back = read_run_scores(path).summary
    expected = [(label, " ".join(value.split())) for label, value in lines]
    assert [(label, " ".join(value.split())) for label, value in read_back] == expected
