"""``rag-eval convert``: parse options, run the conversion, show its summary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rag_evaluator import console
from rag_evaluator.core.matching import DEFAULT_THRESHOLD, Confidence
from rag_evaluator.core.selection import format_numbers
from rag_evaluator.logs import configure_logging
from rag_evaluator.pipeline.convert import ConvertReport, convert

_SHOWN_MISSING = 15


def convert_command(
    json_dir: Annotated[
        Path,
        typer.Option(
            "--json-dir", help="Folder holding the RAG output files (*.json, *.jsonl, *.ndjson)."
        ),
    ] = Path("RAG_JSON_Files"),
    questions: Annotated[
        Path, typer.Option("--questions", help="CSV with columns Question Number, Question.")
    ] = Path("questions.csv"),
    output: Annotated[
        Path, typer.Option("--output", help="CSV to write: one matched answer per question.")
    ] = Path("rag_answers.csv"),
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold",
            min=0.0,
            max=100.0,
            help="Lowest question-text similarity (0-100) that counts as a match.",
        ),
    ] = DEFAULT_THRESHOLD,
) -> None:
    """Convert RAG output JSON into rag_answers.csv, matching answers by question text.

    Exit code: 0 everything converted; 1 a file, entry or line was skipped
    or an entry matched no question (the rest is written); 2 bad input.
    """
    configure_logging()
    report = convert(json_dir, questions, output, threshold)
    _show_summary(report)
    raise typer.Exit(report.exit_code)


def _show_summary(report: ConvertReport) -> None:
    bands = {
        Confidence.PERFECT: "99-100",
        Confidence.GOOD: "95-99",
        Confidence.LOW: f"{report.threshold:g}-95",
        Confidence.ID: "by ID key",
    }
    rows: list[tuple[str, int]] = [
        (f"{level.value} ({band})", report.count(level)) for level, band in bands.items()
    ]
    rows += [
        ("Rows written", len(report.matched)),
        ("Contexts [] (nothing retrieved)", report.rows_with_nothing_retrieved),
        ("Contexts blank (no context field)", report.rows_without_contexts_field),
        (f"Unmatched (below {report.threshold:g} or unknown ID)", len(report.unmatched)),
        ("Lost to a better match", len(report.lost_claims)),
        ("Entries skipped (unreadable)", report.skipped_entries),
        ("Files read", len(report.files_read)),
        ("Files skipped", len(report.skipped_files)),
    ]
    console.table("rag-eval convert", ["Outcome", "Count"], rows)
    written = len(report.matched)
    console.info(f"Wrote {written} answer{'' if written == 1 else 's'} to {report.output_path}")
    missing = report.questions_without_answer
    if missing:
        console.info(f"Questions with no answer: {format_numbers(missing, _SHOWN_MISSING)}")
    if report.not_converted:
        console.info(
            f"Not converted: {', '.join(report.not_converted)} (see the messages above); "
            "exit code 1"
        )
