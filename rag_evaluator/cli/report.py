"""``rag-eval report``: parse the arguments, write the HTML report, say where it is."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rag_evaluator.cli import console
from rag_evaluator.cli.logs import configure_logging

# The report pulls in Jinja2 and the results readers: imported when the command runs, so
# that `rag-eval --help` stays quick.
if TYPE_CHECKING:
    from rag_evaluator.report.run import ReportOutcome


def report_command(
    results: Annotated[
        list[Path],
        typer.Argument(
            help="Results files of rag-eval evaluate; with several, the first is the baseline "
            "of the comparison.",
            metavar="RESULTS.csv",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="The HTML file to write (default: beside the first results file, same name "
            "with .html).",
            show_default=False,
        ),
    ] = None,
    answers: Annotated[
        list[Path] | None,
        typer.Option(
            "--answers",
            help="rag_answers.csv whose Contexts column gives the retrieved contexts shown on "
            "demand; repeat it once per results file, in the same order.",
            show_default=False,
        ),
    ] = None,
    ground_truth: Annotated[
        Path | None,
        typer.Option(
            "--ground-truth",
            help="ground_truth.csv whose Relevant Contexts column gives the golden contexts.",
            show_default=False,
        ),
    ] = None,
    datasets: Annotated[
        list[Path] | None,
        typer.Option(
            "--dataset",
            help="The dataset the runs were made from (evaluate --dataset): its contexts and "
            "golden contexts are shown on demand; once for every run, or once per results "
            "file in the same order.",
            show_default=False,
        ),
    ] = None,
    names: Annotated[
        list[str] | None,
        typer.Option(
            "--name",
            help="NAME=RESULTS.csv: the name the page gives that run (default: its file "
            "name); repeat it for each run to name.",
            show_default=False,
        ),
    ] = None,
    title: Annotated[
        str | None,
        typer.Option("--title", help="The report's title.", show_default=False),
    ] = None,
) -> None:
    """Write a self-contained HTML report of a run, or of a comparison of runs."""
    from rag_evaluator.report.run import ReportRequest, build_report

    configure_logging()
    outcome = build_report(
        ReportRequest(
            results_paths=results,
            output_path=output,
            answers_paths=answers or [],
            ground_truth_path=ground_truth,
            title=title,
            dataset_paths=datasets or [],
            names=names or [],
        )
    )
    console.info(describe_report(outcome))


def describe_report(outcome: ReportOutcome) -> str:
    """``Report written to runs/x.html (1.2 MB, 500 questions)``."""
    size = outcome.size_bytes
    shown = f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size / 1000:.0f} KB"
    questions = " + ".join(str(count) for count in outcome.questions)
    return f"Report written to {outcome.path} ({shown}, {questions} questions)"
