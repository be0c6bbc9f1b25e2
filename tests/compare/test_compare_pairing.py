"""Issue 22 item 1: compare (and the report of several runs) pairs rows that hold the same
question: by number when the numbers agree, by question text when they do not, and refuses
when it cannot pair."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from evaluate_support import Workspace, prepare_workspace, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.compare.pairing import pair_questions
from rag_evaluator.errors import InputError
from rag_evaluator.results.run_scores import RunScores, TableRow, build_run_scores

FAST = ["--yes", "--seed", "3", "--no-cache"]


def record(n: int, *, answer: str | None = None) -> dict[str, object]:
    return {
        "question": f"Which colour is box {n}?",
        "reference": f"Box {n} is {'red' if n % 2 else 'blue'}.",
        "response": answer if answer is not None else f"Box {n} is red.",
    }


RECORDS = [record(n) for n in range(1, 31)]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    return prepare_workspace(tmp_path, monkeypatch)


def evaluate(workspace: Workspace, name: str, records: list[dict[str, object]]) -> Path:
    """A lexical run over ``records`` as a dataset without ids (numbers from the order)."""
    dataset = workspace.directory / f"{name}.jsonl"
    dataset.write_text("".join(json.dumps(item) + "\n" for item in records), "utf-8")
    output = workspace.directory / name
    result = run_cli(
        [
            *("evaluate", "--dataset", str(dataset), "--metrics", "lexical"),
            *("--output-dir", str(output), *FAST),
        ]
    )
    assert result.exit_code == 0, result.output
    [path] = output.glob("*_scores_*.csv")
    return path


def shuffled(records: list[dict[str, object]], seed: int) -> list[dict[str, object]]:
    copy = list(records)
    random.Random(seed).shuffle(copy)
    return copy


def test_the_same_set_in_another_order_is_paired_by_question_text(workspace: Workspace) -> None:
    first = evaluate(workspace, "a", RECORDS)
    second = evaluate(workspace, "b", shuffled(RECORDS, 4))
    result = run_cli(
        ["compare", str(first), str(second), "--json", "out.json", "--output", "d.csv"]
    )
    assert result.exit_code == 0, result.output
    assert "paired by question text" in result.stderr
    [comparison] = json.loads(Path("out.json").read_text(encoding="utf-8"))["comparisons"]
    assert comparison["paired_by"] == "question text"
    assert comparison["shared_questions"] == 30
    assert not comparison["only_in_baseline"] and not comparison["only_in_run"]
    # The same answers to the same questions: nothing changed, nothing flipped.
    for metric in comparison["metrics"]:
        assert metric["difference"] == 0, metric["metric"]
        assert not metric.get("got_worse") and not metric.get("got_better")
    order = [item["question"] for item in shuffled(RECORDS, 4)]
    pairs = {baseline: run for baseline, run in comparison["question_pairs"]}
    assert all(order[pairs[n] - 1] == RECORDS[n - 1]["question"] for n in range(1, 31))
    with Path("d.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 30
    for row in rows:
        number, run_number = int(row["Question Number"]), int(row["Run Question Number"])
        assert order[run_number - 1] == RECORDS[number - 1]["question"] == row["Question"]
        assert row["exact_match change"] == "0"


def test_a_real_change_is_found_whatever_the_order(workspace: Workspace) -> None:
    first = evaluate(workspace, "a", RECORDS)
    fixed = [
        record(n, answer=f"Box {n} is {'red' if n % 2 else 'blue'}.") if n <= 20 else record(n)
        for n in range(1, 31)
    ]
    second = evaluate(workspace, "b", shuffled(fixed, 9))
    result = run_cli(["compare", str(first), str(second), "--json", "-"])
    assert result.exit_code == 0, result.output
    [comparison] = json.loads(result.stdout)["comparisons"]
    exact = next(m for m in comparison["metrics"] if m["metric"] == "exact_match")
    # Questions 2, 4, ..., 20 (blue boxes) were wrong and are now right; nothing got worse.
    assert exact["counts"]["run_only"] == 10 and exact["counts"]["baseline_only"] == 0
    better = exact["got_better"]
    assert [flip["question_number"] for flip in better] == list(range(2, 21, 2))
    # Offline metrics have no reasoning: the flip table has no empty reasoning columns.
    assert "Questions whose score flipped" in result.stderr
    assert "Baseline reasoning" not in result.stderr
    order = [item["question"] for item in shuffled(fixed, 9)]
    for flip in better:
        assert (
            order[flip["run_question_number"] - 1]
            == RECORDS[flip["question_number"] - 1]["question"]
        )


def test_an_edited_question_is_left_out_and_named(workspace: Workspace) -> None:
    first = evaluate(workspace, "a", RECORDS)
    edited = list(RECORDS)
    edited[4] = {**edited[4], "question": "Which colour is the fifth box?"}
    second = evaluate(workspace, "b", [edited[-1], *edited[:-1]])  # numbers shifted by one
    result = run_cli(["compare", str(first), str(second), "--json", "-"])
    assert result.exit_code == 0, result.output
    [comparison] = json.loads(result.stdout)["comparisons"]
    assert comparison["paired_by"] == "question text"
    assert comparison["shared_questions"] == 29
    assert comparison["only_in_baseline"] == [5] and comparison["only_in_run"] == [6]


def test_runs_of_different_questions_under_the_same_numbers_are_refused(
    workspace: Workspace,
) -> None:
    first = evaluate(workspace, "a", RECORDS[:10])
    other = [{**item, "question": f"How heavy is crate {n}?"} for n, item in enumerate(RECORDS)]
    second = evaluate(workspace, "b", other[:10])
    result = run_cli(["compare", str(first), str(second)])
    assert result.exit_code == 2, result.output
    [error] = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert "question 1" in error and "Which colour is box 1?" in error
    assert "How heavy is crate 0?" in error and "no question text in common" in error
    # The report of both runs says the same instead of a comparison.
    page = run_cli(["report", str(first), str(second), "-o", "page.html"])
    assert page.exit_code == 0, page.output
    assert "no question text in common" in Path("page.html").read_text(encoding="utf-8")


def test_the_report_of_reordered_runs_pairs_by_question_text(workspace: Workspace) -> None:
    first = evaluate(workspace, "a", RECORDS)
    fixed = [record(n, answer=f"Box {n} is blue.") if n == 2 else record(n) for n in range(1, 31)]
    second = evaluate(workspace, "b", list(reversed(fixed)))
    result = run_cli(["report", str(first), str(second), "-o", "page.html"])
    assert result.exit_code == 0, result.output
    page = Path("page.html").read_text(encoding="utf-8")
    assert "paired by question text" in page
    # One flip: question 2 of the baseline, question 29 of the reversed run, with its answer.
    assert 'href="#r1q29">Question 2 (run: 29)</a>' in page
    flip = page[page.index("Question 2 (run: 29)") :]
    assert flip.index("Box 2 is blue.") < flip.index("</article>")


def scores(label: str, questions: dict[int, str]) -> RunScores:
    """A run of ``questions`` (number -> text), every one scored 1 on Precision."""
    return build_run_scores(
        label,
        ["Question Number", "Question", "Precision"],
        [TableRow(n, {"Question": q, "Precision": "1"}) for n, q in questions.items()],
        summary=[("Total Questions", str(len(questions)))],
    )


def test_duplicate_question_texts_are_told_apart_by_their_ground_truth() -> None:
    def run(label: str, rows: list[tuple[int, str, str, str]]) -> RunScores:
        return build_run_scores(
            label,
            ["Question Number", "Question", "Ground Truth", "exact_match"],
            [
                TableRow(n, {"Question": q, "Ground Truth": t, "exact_match": v})
                for n, q, t, v in rows
            ],
            summary=[("Total Questions", str(len(rows)))],
        )

    baseline = run(
        "a.csv",
        [
            (1, "And then?", "Step two.", "1"),
            (2, "And then?", "Step three.", "0"),
            (3, "Go?", "Yes", "1"),
        ],
    )
    other = run(
        "b.csv",
        [
            (1, "Go?", "Yes", "1"),
            (2, "And then?", "Step three.", "1"),
            (3, "And then?", "Step two.", "1"),
        ],
    )
    pairing = pair_questions(baseline, other)
    assert pairing.by_text
    assert sorted(pairing.pairs) == [(1, 3), (2, 2), (3, 1)]


def test_numbers_that_agree_pair_by_number_and_files_without_questions_too() -> None:
    same = pair_questions(
        scores("a", {1: "Why?", 2: "How?"}), scores("b", {1: " why? ", 2: "How?"})
    )
    assert not same.by_text and same.pairs == ((1, 1), (2, 2))
    blank = pair_questions(scores("a", {1: "Why?", 2: "How?"}), scores("b", {1: "", 2: ""}))
    assert not blank.by_text and blank.pairs == ((1, 1), (2, 2))


def test_a_run_that_cannot_be_paired_names_both_files() -> None:
    with pytest.raises(InputError) as caught:
        pair_questions(
            scores("a.csv", {1: "Why?", 2: "How?"}), scores("b.csv", {1: "When?", 2: "Who?"})
        )
    assert "a.csv" in caught.value.message and "b.csv" in caught.value.message
    assert "'Why?' in a.csv and 'When?' in b.csv" in caught.value.message


@settings(max_examples=80, deadline=None)
@given(
    questions=st.lists(
        st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=15).filter(
            lambda text: text.strip()
        ),
        min_size=1,
        max_size=25,
        unique_by=lambda text: " ".join(text.split()).casefold(),
    ),
    seed=st.integers(0, 1000),
    offset=st.integers(0, 50),
)
def test_any_renumbering_of_the_same_questions_pairs_each_with_itself(
    questions: list[str], seed: int, offset: int
) -> None:
    order = list(range(len(questions)))
    random.Random(seed).shuffle(order)

    def run(label: str, numbering: dict[int, int]) -> RunScores:
        return scores(label, {number: questions[index] for number, index in numbering.items()})

    baseline_numbers = {n + 1: n for n in range(len(questions))}
    run_numbers = {position + 1 + offset: index for position, index in enumerate(order)}
    pairing = pair_questions(run("a", baseline_numbers), run("b", run_numbers))
    assert len(pairing.pairs) == len(questions)
    assert all(baseline_numbers[b] == run_numbers[r] for b, r in pairing.pairs)
    assert not pairing.only_in_baseline and not pairing.only_in_run


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["And then?", "and  THEN?", "Why?"]), st.sampled_from("xyz")),
        min_size=1,
        max_size=20,
    ),
    seed=st.integers(0, 1000),
)
def test_repeated_questions_pair_alike_with_alike(rows: list[tuple[str, str]], seed: int) -> None:
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)

    def run(label: str, numbering: dict[int, int]) -> RunScores:
        return build_run_scores(
            label,
            ["Question Number", "Question", "Ground Truth", "Precision"],
            [
                TableRow(
                    number,
                    {"Question": rows[i][0], "Ground Truth": rows[i][1], "Precision": "1"},
                )
                for number, i in numbering.items()
            ],
            summary=[("Total Questions", str(len(rows)))],
        )

    before = {n + 1: n for n in range(len(rows))}
    after = {position + 1: index for position, index in enumerate(order)}
    pairing = pair_questions(run("a", before), run("b", after))
    assert len(pairing.pairs) == len(rows)

    def key(index: int) -> tuple[str, str]:
        question, truth = rows[index]
        return " ".join(question.split()).casefold(), truth

    assert all(key(before[b]) == key(after[r]) for b, r in pairing.pairs)
