"""A run's finished questions stay in the checkpoint: read back on demand, summarised and
written from there exactly as if they were held in memory (issue 15)."""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from results_support import build_summary, group_summaries, tally_rows
from test_checkpoint import FAMILIES, _header

from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.llm.checkpoint.store import (
    CheckpointHeader,
    CheckpointWriter,
    load_checkpoint,
    stored_records,
)
from rag_evaluator.results.groups import GroupTally
from rag_evaluator.results.rows import ResultRow, ResultRows
from rag_evaluator.results.summary import RunFacts, summary_lines
from rag_evaluator.results.writer import write_results

JUDGE = FAMILIES["judge"]


def _record(number: int, variant: int) -> QuestionRecord:
    """A judge record whose content depends on ``variant`` (so repeats differ)."""
    scored = variant % 4 != 3
    result = JudgeResult(
        scores=Scores.shared(variant % 2, (variant // 2) % 2, 1) if scored else None,
        summary=f'question {number}, variant {variant}: «quoted» "text"\nsecond line',
        usage=TokenUsage(100 + variant, 10 + number),
        calls=1 + variant % 3,
        cost_usd=0.001 * (variant + 1),
        error=None if scored else "the model refused",
        failure=None if scored else "question",
        cached=variant % 5 == 4,
    )
    return QuestionRecord(number, {"judge": result})


def _write(path: Path, records: list[QuestionRecord], header: CheckpointHeader) -> list[int]:
    writer = CheckpointWriter.create(path, header, FAMILIES)
    offsets = [writer.append(record) for record in records]
    writer.close()
    return offsets


@settings(max_examples=60, deadline=None)
@given(
    numbers=st.lists(st.integers(1, 12), min_size=1, max_size=25),
    torn_at=st.one_of(st.none(), st.floats(0.0, 0.99)),
)
def test_a_checkpoint_reads_back_every_first_record_and_cuts_only_a_torn_tail(
    numbers: list[int], torn_at: float | None
) -> None:
    records = [_record(number, variant) for variant, number in enumerate(numbers)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.jsonl"
        offsets = _write(path, records, _header())
        complete = path.read_bytes()
        if torn_at is not None:
            line = complete[offsets[0] :].split(b"\n", 1)[0]
            with path.open("ab") as handle:
                handle.write(line[: max(1, int(len(line) * torn_at))])
        loaded = load_checkpoint(path, FAMILIES)
        assert loaded is not None
        first: dict[int, QuestionRecord] = {}
        for record in records:
            first.setdefault(record.question_number, record)
        assert loaded.torn_line_ignored == (torn_at is not None)
        assert list(loaded.results) == list(first)  # the order they finished in
        assert len(loaded.results) == len(first)
        assert dict(loaded.results.items()) == first
        assert 0 not in loaded.results and 13 not in loaded.results
        assert loaded.results.calls == sum(record.calls for record in first.values())
        # A resume cuts the torn tail off and leaves every line before it where it was.
        writer = CheckpointWriter.resume(loaded, FAMILIES)
        assert path.read_bytes() == complete
        extra = _record(99, 1)
        loaded.results.add(extra, writer.append(extra))
        writer.close()
        assert loaded.results[99] == extra
        assert all(loaded.results[number] == record for number, record in first.items())
        loaded.results.close()
        reloaded = load_checkpoint(path, FAMILIES)
        assert reloaded is not None and not reloaded.torn_line_ignored
        assert dict(reloaded.results.items()) == {**first, 99: extra}
        reloaded.results.close()


def test_questions_outside_the_run_are_forgotten_with_their_totals(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    records = [_record(number, number) for number in (5, 1, 7, 3)]
    _write(path, records, _header())
    loaded = load_checkpoint(path, FAMILIES)
    assert loaded is not None
    loaded.results.keep_only({1, 3})
    assert list(loaded.results) == [1, 3]
    assert 5 not in loaded.results
    assert loaded.results.calls == records[1].calls + records[3].calls
    assert loaded.results.cost_usd == records[1].cost_usd + records[3].cost_usd
    loaded.results.close()


def _items(count: int) -> list[EvaluationItem]:
    return [
        EvaluationItem(
            question_number=number,
            question=f"Question {number}?",
            ground_truth=f"Truth {number}.",
            rag_answer=f"Answer {number}.",
            metadata={"Category": ["billing", "Refunds", ""][number % 3]},
        )
        for number in range(1, count + 1)
    ]


def test_rows_read_from_the_checkpoint_summarise_and_write_as_rows_in_memory(
    tmp_path: Path,
) -> None:
    items = _items(40)
    # Finished out of order, one question never finished, offline scores for some.
    finished = [_record(number, number * 7) for number in range(40, 1, -1)]
    path = tmp_path / "run.jsonl"
    store = stored_records(path, FAMILIES)
    writer = CheckpointWriter.create(path, _header(), FAMILIES)
    for record in finished:
        store.add(record, writer.append(record))
    writer.close()
    scores = {number: {"rouge1": number / 40} for number in range(1, 40, 2)}
    in_memory = [
        ResultRow(
            item,
            next((r for r in finished if r.question_number == item.question_number), None),
            scores.get(item.question_number, {}),
        )
        for item in items
    ]
    streamed = ResultRows(items, store, scores)
    families = [JUDGE]
    facts = RunFacts(judged=True, metric_columns=["rouge1"], metadata_columns=["Category"])

    tally = tally_rows(streamed, families, ["rouge1"])
    assert summary_lines(tally, facts) == build_summary(in_memory, facts, families)
    assert tally.calls == sum(record.calls for record in finished)
    assert tally.usage == sum((record.usage for record in finished), TokenUsage())
    assert tally.unscored_questions == sum(not record.scored for record in finished)
    groups = GroupTally("Category", families, ["rouge1"])
    for row in streamed:
        groups.add(row)
    assert groups.summaries() == group_summaries(in_memory, "Category", families, ["rouge1"])

    started = datetime(2026, 11, 23, 12, 0, 0)
    written = []
    for folder, rows in (("streamed", streamed), ("memory", in_memory)):
        csv_path, json_path = write_results(
            tmp_path / folder,
            started,
            summary_lines(tally, facts),
            rows,
            families=families,
            metric_columns=["rouge1"],
            with_json=True,
            metadata_columns=["Category"],
            groups=groups.summaries(),
        )
        assert json_path is not None
        written.append((csv_path.read_bytes(), json_path.read_bytes()))
    assert written[0] == written[1]
    store.close()


def test_an_empty_store_has_no_question(tmp_path: Path) -> None:
    store = stored_records(tmp_path / "none.jsonl", {"judge": JudgeFamily("p", ())})
    assert len(store) == 0 and list(store) == [] and 1 not in store
    assert store.get(1) is None
