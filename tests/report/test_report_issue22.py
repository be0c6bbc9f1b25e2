"""Issue 22, the report on real-shaped runs: metadata columns shown as metadata, checks that
do not apply shown as "not applicable", contexts from ``--dataset``, runs named with
``--name``."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
from evaluate_support import Workspace, prepare_workspace, run_cli
from report_support import parse_page

from rag_evaluator.report.model import RunTable, build_report_model
from rag_evaluator.results.run_scores import TableRow

FAST = ["--yes", "--seed", "2", "--no-cache", "--no-require-citations"]
RECORDS = [
    {
        "question": f"Which shelf holds box {n}?" if n % 4 else f"List the shelves of box {n}.",
        "reference": f"Shelf {n % 3 + 1}.",
        "response": f"Box {n} is on shelf {n % 3 + 1}." if n % 4 else "- shelf\n- box",
        "retrieved_contexts": [f"Inventory: box {n} sits on shelf {n % 3 + 1}.", "Shelf rules."],
        "source": "warehouse" if n % 2 else "store",
        "hops": n % 3 + 1,
        "multi_hop": int(n % 5 == 0),
    }
    for n in range(1, 13)
]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    dataset = tmp_path / "set.jsonl"
    dataset.write_text("".join(json.dumps(record) + "\n" for record in RECORDS), "utf-8")
    return space


def evaluate(workspace: Workspace, name: str) -> Path:
    output = workspace.directory / name
    result = run_cli(
        [
            *("evaluate", "--dataset", "set.jsonl", "--metrics", "lexical,quality"),
            *("--output-dir", str(output), *FAST),
        ]
    )
    assert result.exit_code == 0, result.output
    [path] = output.glob("*_scores_*.csv")
    return path


def section(html: str, heading: str) -> str:
    """The HTML from ``<h3>heading</h3>`` to the next ``<h3``."""
    start = html.index(f"<h3>{heading}</h3>")
    end = html.find("<h3", start + 1)
    return html[start : end if end != -1 else len(html)]


def test_metadata_columns_are_shown_as_metadata_not_as_metrics(workspace: Workspace) -> None:
    results = evaluate(workspace, "runs")
    code = run_cli(["report", str(results), "-o", "page.html"])
    assert code.exit_code == 0, code.output
    html = Path("page.html").read_text(encoding="utf-8")
    metrics = section(html, "Metrics")
    metadata = section(html, "Metadata")
    for column in ("source", "hops", "multi_hop"):
        assert f"<h4>{column}</h4>" in metadata, column
        assert f"<h4>{column}</h4>" not in metrics, column
    assert "<h4>exact_match</h4>" in metrics and "<h4>quality_pass</h4>" in metrics
    # The kinds declaration is for readers, not a fact of the run.
    assert "Metric Kinds" not in parse_page(html).text


def test_a_check_that_does_not_apply_is_not_applicable_not_unscored(workspace: Workspace) -> None:
    results = evaluate(workspace, "runs")
    assert run_cli(["report", str(results), "-o", "page.html"]).exit_code == 0
    html = Path("page.html").read_text(encoding="utf-8")
    card = html[html.index("<h4>quality_list_format</h4>") :]
    card = card[: card.index('<div class="d">') + 200]
    text = " ".join(parse_page(card).text.split())
    # Three answers are lists (questions 4, 8, 12); the check does not apply to the others.
    assert "not applicable 9" in text and "unscored" not in text
    assert "3/3 scored · 9 not applicable" in text


def test_a_judge_metric_left_empty_is_still_unscored() -> None:
    rows = [
        TableRow(
            n,
            {
                "Question": f"Q{n}?",
                "Precision": "" if n == 1 else "1",
                "Error": "refused" if n == 1 else "",
                "quality_list_format": "" if n < 3 else "1",
            },
        )
        for n in range(1, 5)
    ]
    table = RunTable(
        "run.csv",
        "run.csv",
        ["Question Number", "Question", "Precision", "Error", "quality_list_format"],
        rows,
        summary=[("Total Questions", "4")],
    )
    model = build_report_model([table], title="t", generated_at="now", tool_version="0")
    cards = {card.column: card for card in model.runs[0].cards}
    assert [s.label for s in cards["Precision"].segments][-1] == "unscored"
    assert [s.label for s in cards["quality_list_format"].segments][-1] == "not applicable"
    assert cards["quality_list_format"].detail == "2/2 scored · 2 not applicable"


def test_the_report_takes_contexts_from_the_dataset(workspace: Workspace) -> None:
    results = evaluate(workspace, "runs")
    result = run_cli(["report", str(results), "--dataset", "set.jsonl", "-o", "page.html"])
    assert result.exit_code == 0, result.output
    page = parse_page(Path("page.html").read_text(encoding="utf-8"))
    (payload,) = [text for attrs, text in page.scripts if attrs.get("id") == "contexts"]
    data = json.loads(gzip.decompress(base64.b64decode(payload)))
    assert "Inventory: box 7 sits on shelf 2." in data["pool"]
    assert len(data["retrieved"][0]) == 12
    # A dataset gives every run's contexts: it does not mix with --answers.
    both = run_cli(
        ["report", str(results), "--dataset", "set.jsonl", "--answers", "set.jsonl", "-o", "x.html"]
    )
    assert both.exit_code == 2 and "--dataset" in both.stderr and "--answers" in both.stderr


def test_runs_are_named_with_name(workspace: Workspace) -> None:
    first = evaluate(workspace, "a")
    second = evaluate(workspace, "b")
    result = run_cli(
        [
            *("report", str(first), str(second), "-o", "page.html"),
            *("--name", f"Before={first}", "--name", f"After={second}"),
        ]
    )
    assert result.exit_code == 0, result.output
    html = Path("page.html").read_text(encoding="utf-8")
    assert "<title>rag-eval comparison: Before vs After</title>" in html
    assert 'data-tab="Before (baseline)"' in html and 'data-tab="After"' in html
    assert "After against Before" in parse_page(html).text


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Before", "--name 'Before' is not NAME=RESULTS.csv"),
        ("=a.csv", "--name '=a.csv' gives no name"),
        ("X=other.csv", "other.csv is not one of the results files"),
    ],
)
def test_a_bad_name_is_a_usage_error(workspace: Workspace, name: str, message: str) -> None:
    first = evaluate(workspace, "a")
    result = run_cli(["report", str(first), "--name", name.replace("a.csv", str(first))])
    assert result.exit_code == 2, result.output
    assert message.replace("a.csv", str(first)) in " ".join(result.stderr.split())


def test_runs_of_reordered_datasets_take_each_its_own_dataset(workspace: Workspace) -> None:
    first = evaluate(workspace, "a")
    Path("set.jsonl").write_text(
        "".join(json.dumps(record) + "\n" for record in reversed(RECORDS)), "utf-8"
    )
    Path("first.jsonl").write_text(
        "".join(json.dumps(record) + "\n" for record in RECORDS), "utf-8"
    )
    second = evaluate(workspace, "b")
    result = run_cli(
        [
            *("report", str(first), str(second), "-o", "page.html"),
            *("--dataset", "first.jsonl", "--dataset", "set.jsonl"),
        ]
    )
    assert result.exit_code == 0, result.output
    assert "differ from" not in result.output
    page = parse_page(Path("page.html").read_text(encoding="utf-8"))
    (payload,) = [text for attrs, text in page.scripts if attrs.get("id") == "contexts"]
    data = json.loads(gzip.decompress(base64.b64decode(payload)))
    pool = data["pool"]
    # Box 1 is the first record of the first run and the last of the second.
    box = pool.index("Inventory: box 1 sits on shelf 2.")
    assert data["retrieved"][0]["1"][0][0] == box
    assert data["retrieved"][1]["12"][0][0] == box
    three = run_cli(
        ["report", str(first), str(second), *("--dataset", "first.jsonl") * 3, "-o", "x.html"]
    )
    assert three.exit_code == 2 and "--dataset is given 3 times for 2" in three.stderr
