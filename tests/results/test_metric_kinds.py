"""Issue 22 item 6: each metric declares its kind once; results files state the kinds and
every reader (compare, calibrate, report) uses the declaration, not how cells are printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluate_support import Workspace, prepare_workspace, read_results, results_files, run_cli
from hypothesis import given
from hypothesis import strategies as st
from results_support import build_summary

from rag_evaluator.errors import InputError
from rag_evaluator.families.grading.classify import ClassifyFamily
from rag_evaluator.families.grading.factual_accuracy import FactualAccuracyFamily
from rag_evaluator.families.grading.match import MatchFamily
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.ragas.family import RagasFamily
from rag_evaluator.families.rubric.family import RubricFamily
from rag_evaluator.families.rubric.rubrics import rubric_from_data
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.offline.registry import FAMILY_METRICS
from rag_evaluator.results.kinds import (
    METRIC_KINDS,
    RATE,
    SCORE,
    MetricKind,
    MetricScale,
    declaration_text,
    parse_declaration,
)
from rag_evaluator.results.reader import read_run_scores
from rag_evaluator.results.rows import ResultRow
from rag_evaluator.results.summary import RunFacts
from rag_evaluator.stats.statistics import bootstrap_mean_interval, wilson_interval

FAST = ["--yes", "--seed", "5", "--no-cache"]
# Twelve answers: some exact, some giving up, so exact_match and dont_know vary.
RECORDS = [
    {
        "question": f"What is the code of item {n}?",
        "reference": f"The code is {n}{n}.",
        "response": (
            f"The code is {n}{n}."
            if n % 3 == 0
            else "I don't know."
            if n % 4 == 0
            else f"Item {n} has code {n}{n}0."
        ),
        "retrieved_contexts": [f"Item {n}: code {n}{n}."],
    }
    for n in range(1, 13)
]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    return prepare_workspace(tmp_path, monkeypatch)


def evaluate_dataset(workspace: Workspace, records: list[dict[str, object]], *extra: str) -> Path:
    """Run the lexical and quality families over ``records`` (a JSON Lines dataset)."""
    dataset = workspace.directory / f"set{len(workspace.results())}.jsonl"
    dataset.write_text("".join(json.dumps(record) + "\n" for record in records), "utf-8")
    before = set(workspace.results())
    result = run_cli(
        ["evaluate", "--dataset", str(dataset), "--metrics", "lexical,quality", *FAST, *extra]
    )
    assert result.exit_code == 0, result.output
    # The declaration is for the file's readers: the terminal's summary does not show it.
    assert METRIC_KINDS not in result.output
    [written] = set(workspace.results()) - before
    return written


def test_every_metric_declares_its_kind_and_range() -> None:
    offline = {name: d.scale for family in FAMILY_METRICS.values() for name, d in family.items()}
    assert offline["exact_match"] == RATE and offline["dont_know"] == RATE
    assert offline["quality_pass"] == RATE and offline["quality_citations"] == RATE
    assert offline["rouge1"] == SCORE and offline["hallucination"] == SCORE
    judged = {
        **JudgeFamily("prompt", ()).metric_scales(),
        **ClassifyFamily().metric_scales(),
        **MatchFamily().metric_scales(),
        **FactualAccuracyFamily().metric_scales(),
        **RagasFamily().metric_scales(),
    }
    assert {judged[name] for name in ("Precision", "Recall", "Accuracy")} == {RATE}
    assert judged["answer_correct"] == RATE and judged["is_matching"] == RATE
    assert judged["factual_accuracy"] == SCORE and judged["ragas_faithfulness"] == SCORE
    rubric = rubric_from_data(
        {
            "criteria": [
                {"name": "cites", "scale": "pass/fail", "description": "Cites a source."},
                {"name": "tone", "scale": "1-5", "description": "Polite."},
            ]
        }
    )
    assert RubricFamily(rubric).metric_scales() == {"rubric_cites": RATE, "rubric_tone": SCORE}


@given(
    st.dictionaries(
        st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20).filter(
            lambda name: name.strip() == name and ";" not in name and "=" not in name
        ),
        st.sampled_from(
            [
                RATE,
                SCORE,
                MetricScale(MetricKind.CONTINUOUS, None, None),
                MetricScale(MetricKind.CONTINUOUS, -1.5, 100.0),
            ]
        ),
        max_size=8,
    )
)
def test_a_declaration_reads_back_as_written(scales: dict[str, MetricScale]) -> None:
    assert parse_declaration(declaration_text(scales)) == scales


def test_the_results_file_states_the_kinds_and_summarises_rates_as_rates(
    workspace: Workspace,
) -> None:
    path = evaluate_dataset(workspace, RECORDS, "--json")
    results = read_results(path)
    kinds = parse_declaration(results.summary[METRIC_KINDS])
    assert kinds["exact_match"] == RATE and kinds["dont_know"] == RATE
    assert kinds["keyword_coverage"] == SCORE and kinds["quality_pass"] == RATE
    # A rate's summary is a count with Wilson's interval, not a mean with a bootstrap.
    exact = sum(1 for row in results.rows if row["exact_match"] == "1")
    assert exact == 4
    assert results.summary["exact_match"] == "4/12 (33%)"
    # 0/1 metrics are written 0/1, as the judge's are.
    assert {row["dont_know"] for row in results.rows} == {"0", "1"}
    # The JSON results say the kinds too.
    data = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert data["metric_kinds"]["exact_match"] == {"kind": "binary", "range": [0, 1]}
    assert data["metric_kinds"]["keyword_coverage"] == {"kind": "continuous", "range": [0, 1]}
    assert METRIC_KINDS not in data["summary"]


def test_json_numbers_come_from_the_tallies_not_the_display_text(workspace: Workspace) -> None:
    path = evaluate_dataset(workspace, RECORDS, "--json")
    data = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    values = [row["keyword_coverage"] for row in data["rows"]]
    interval = bootstrap_mean_interval(values)
    assert interval is not None
    coverage = data["summary"]["keyword_coverage"]
    assert coverage["mean"] == sum(values) / len(values)
    # Unrounded: the text shows two decimals, the numbers are the interval itself.
    assert (coverage["ci_low"], coverage["ci_high"]) == (interval.low, interval.high)
    assert round(coverage["ci_low"], 2) != coverage["ci_low"]
    wilson = wilson_interval(4, 12)
    assert wilson is not None
    exact = data["summary"]["exact_match"]
    assert (exact["count"], exact["total"], exact["rate"]) == (4, 12, 4 / 12)
    assert (exact["ci_low"], exact["ci_high"]) == (wilson.low, wilson.high)


def test_readers_use_the_declared_kinds(workspace: Workspace) -> None:
    first = evaluate_dataset(workspace, RECORDS)
    scores = read_run_scores(first)
    assert scores.metrics["exact_match"].kind is MetricKind.BINARY
    assert scores.metrics["dont_know"].kind is MetricKind.BINARY
    assert scores.metrics["keyword_coverage"].scale == SCORE
    # compare: a rate is tested with McNemar, a score with the paired bootstrap.
    changed = [
        {**record, "response": record["reference"]} if n < 6 else record
        for n, record in enumerate(RECORDS)
    ]
    second = evaluate_dataset(workspace, changed)
    result = run_cli(["compare", str(first), str(second), "--json", "-"])
    assert result.exit_code == 0, result.output
    metrics = {m["metric"]: m for m in json.loads(result.stdout)["comparisons"][0]["metrics"]}
    assert metrics["exact_match"]["kind"] == "binary"
    assert metrics["exact_match"]["test"] == "McNemar exact"
    assert metrics["dont_know"]["kind"] == "binary"
    assert metrics["keyword_coverage"]["test"] == "paired bootstrap"
    # calibrate: 0/1 labels of exact_match get agreement and kappa.
    labels = workspace.directory / "labels.csv"
    labels.write_text(
        "Question Number,exact_match\n" + "".join(f"{n},{int(n % 3 == 0)}\n" for n in range(1, 9)),
        "utf-8",
    )
    result = run_cli(["calibrate", str(first), "--labels", str(labels), "--json", "-"])
    assert result.exit_code == 0, result.output
    [exact] = json.loads(result.stdout)["metrics"]
    assert exact["kind"] == "binary" and exact["cohen_kappa"] == 1.0


def test_a_declared_kind_wins_over_how_cells_are_printed(workspace: Workspace) -> None:
    path = evaluate_dataset(workspace, RECORDS)
    text = path.read_text(encoding="utf-8")
    # keyword_coverage cells edited to whole numbers: still a 0-1 score, as declared.
    lines = text.splitlines()
    header_index = next(i for i, line in enumerate(lines) if line.startswith("Question Number"))
    header = lines[header_index].split(",")
    column = header.index("keyword_coverage")
    rows = []
    for line in lines[header_index + 1 :]:
        cells = line.split(",")
        cells[column] = "1" if float(cells[column]) >= 0.5 else "0"
        rows.append(",".join(cells))
    path.write_text("\n".join([*lines[: header_index + 1], *rows]) + "\n", "utf-8")
    scores = read_run_scores(path)
    assert scores.metrics["keyword_coverage"].kind is MetricKind.CONTINUOUS


def test_a_cell_that_contradicts_the_declaration_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_text(
        "#SUMMARY: Total Questions: 2\n"
        "#SUMMARY: Metric Kinds: exact_match=binary; rouge1=continuous 0 to 1\n"
        "Question Number,Question,exact_match,rouge1\n"
        "1,Why?,1,0.5000\n"
        "2,How?,0.5000,0.2500\n",
        "utf-8",
    )
    with pytest.raises(InputError) as caught:
        read_run_scores(path)
    message = caught.value.message
    assert "exact_match" in message and "question 2" in message and "0.5000" in message
    assert "0 or 1" in message


def test_a_file_without_the_declaration_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.csv"
    path.write_text(
        "#SUMMARY: Total Questions: 3\n"
        "Question Number,Question,Precision,exact_match,my_flag,my_score\n"
        "1,Why?,1,1.0000,1.0000,0.5000\n"
        "2,How?,0,0.0000,0.0000,1\n"
        "3,Who?,1,0.0000,1,0\n",
        "utf-8",
    )
    scores = read_run_scores(path)
    # Names the tool declares keep their kind; other columns are inferred from their cells.
    assert scores.metrics["Precision"].kind is MetricKind.BINARY
    assert scores.metrics["exact_match"].kind is MetricKind.BINARY
    assert scores.metrics["my_flag"].kind is MetricKind.CONTINUOUS
    assert scores.metrics["my_score"].scale is None  # no declared range


def test_summaries_of_a_family_state_their_kinds() -> None:
    rows = [
        ResultRow(EvaluationItem(n, "q", "t", "a"), None, {"exact_match": 1.0, "rouge1": 0.5})
        for n in (1, 2)
    ]
    facts = RunFacts(judged=True, model_id="m", seed=1, metric_columns=["exact_match", "rouge1"])
    lines = {line.label: line.value for line in build_summary(rows, facts, [ClassifyFamily()])}
    kinds = parse_declaration(lines[METRIC_KINDS])
    assert kinds == {"answer_correct": RATE, "exact_match": RATE, "rouge1": SCORE}


def test_results_files_from_before_write_the_declaration_are_unchanged_in_meaning(
    workspace: Workspace,
) -> None:
    path = evaluate_dataset(workspace, RECORDS)
    # Drop the declaration: the known names still read with their declared kinds.
    text = "".join(
        line
        for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
        if not line.startswith(f"#SUMMARY: {METRIC_KINDS}")
    )
    path.write_text(text, "utf-8")
    assert read_run_scores(path).metrics["exact_match"].kind is MetricKind.BINARY
    assert results_files(workspace.directory / "Evaluation_Runs")
