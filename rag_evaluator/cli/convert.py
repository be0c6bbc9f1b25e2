"""``rag-eval convert``: parse options, run the conversion, show its summary."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rag_evaluator.cli import console
from rag_evaluator.cli.logs import configure_logging
from rag_evaluator.convert.threshold import DEFAULT_THRESHOLD
from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.inputs.shapes import GOLDEN_SET_HINT

# The conversion (with numpy and rapidfuzz) is imported when the command runs, so that
# `--help` stays quick.
if TYPE_CHECKING:
    from rag_evaluator.convert.dataset import DatasetConvertReport
    from rag_evaluator.convert.run import ConvertReport

_SHOWN_MISSING = 15


def convert_command(
    json_dir: Annotated[
        Path | None,
        typer.Option(
            "--json-dir",
            help="Folder holding the RAG output files (*.json, *.jsonl, *.ndjson). "
            "Default: RAG_JSON_Files.",
        ),
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            help="CSV with columns Question Number, Question. Default: questions.csv.",
        ),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", help="CSV to write: one matched answer per question.")
    ] = Path("rag_answers.csv"),
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            help="Split one dataset file (JSON, JSON Lines or CSV with question, reference "
            "and answer fields) into questions.csv, ground_truth.csv and rag_answers.csv.",
        ),
    ] = None,
    questions_out: Annotated[
        Path | None,
        typer.Option(
            "--questions-out",
            help="With --dataset: the questions.csv to write (default: beside --output).",
        ),
    ] = None,
    ground_truth_out: Annotated[
        Path | None,
        typer.Option(
            "--ground-truth-out",
            help="Also write the references the RAG outputs carry (reference, gt_answer, "
            "expected_output, reference_contexts...) as a ground_truth.csv. With --dataset: "
            "its ground_truth.csv (default: beside --output).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace existing --ground-truth-out / --questions-out files (and, with "
            "--dataset, --output).",
        ),
    ] = False,
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

    With --dataset, split one dataset file into questions.csv, ground_truth.csv and
    rag_answers.csv instead.

    Exit code: 0 everything converted; 1 a file, entry or line was skipped
    or an entry matched no question (the rest is written); 2 bad input.
    """
    from rag_evaluator.convert.dataset import DatasetOutputs, convert_dataset
    from rag_evaluator.convert.run import convert

    configure_logging()
    if dataset is not None:
        given = [
            option
            for option, value in (("--json-dir", json_dir), ("--questions", questions))
            if value is not None
        ]
        if given:
            raise UsageError(
                f"--dataset replaces {' and '.join(given)}: pass either one dataset file or "
                "the RAG output folder with questions.csv, not both"
            )
        folder = output.parent
        outputs = DatasetOutputs(
            questions=questions_out or folder / "questions.csv",
            ground_truth=ground_truth_out or folder / "ground_truth.csv",
            answers=output,
        )
        _show_dataset_summary(convert_dataset(dataset, outputs, force=force))
        return
    if questions_out is not None:
        raise UsageError(
            "--questions-out is for --dataset (convert reads the questions from --questions)"
        )
    report = convert(
        json_dir or Path("RAG_JSON_Files"),
        questions or Path("questions.csv"),
        output,
        threshold,
        ground_truth_path=ground_truth_out,
        force=force,
    )
    _show_summary(report)
    raise typer.Exit(report.exit_code)


def _show_dataset_summary(report: DatasetConvertReport) -> None:
    outputs = report.outputs
    rows: list[tuple[str, int | str]] = [
        ("Records read", report.records),
        ("Question numbers from", report.numbering),
        (f"Rows in {outputs.questions}", report.question_rows),
        (
            f"Rows in {outputs.ground_truth}",
            "not written (no references)"
            if report.ground_truth_rows is None
            else report.ground_truth_rows,
        ),
        (
            f"Rows in {outputs.answers}",
            "not written (no answers)" if report.answer_rows is None else report.answer_rows,
        ),
        ("Answers with retrieval scores", report.rows_with_scores),
        ("Metadata columns", ", ".join(report.metadata_columns) or "none"),
    ]
    console.table("rag-eval convert --dataset", ["Outcome", "Count"], rows)
    written = [outputs.questions]
    if report.ground_truth_rows is not None:
        written.append(outputs.ground_truth)
    if report.answer_rows is not None:
        written.append(outputs.answers)
    console.info(f"Wrote {', '.join(str(path) for path in written)}")
    if report.ground_truth_rows is None:
        console.info(
            f"{outputs.ground_truth} was not written: {report.dataset_path.name} has no "
            "reference answers (evaluate runs without it, leaving out the families that need "
            f"one); {GOLDEN_SET_HINT}"
        )
    if report.exit_code:
        console.info("Some records were left out of a file (see the messages above); exit code 1")
    raise typer.Exit(report.exit_code)


def _show_summary(report: ConvertReport) -> None:
    from rag_evaluator.convert.matching import Confidence

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
        ("Rows with retrieval scores", report.rows_with_scores),
        (
            f"Unmatched (below {report.threshold:g}, other numbers, unknown ID)",
            len(report.unmatched),
        ),
        ("Lost to a better match", len(report.lost_claims)),
        ("Entries skipped (unreadable)", report.skipped_entries),
        ("Files read", len(report.files_read)),
        ("Files skipped", len(report.skipped_files)),
    ]
    console.table("rag-eval convert", ["Outcome", "Count"], rows)
    written = len(report.matched)
    console.info(f"Wrote {written} answer{'' if written == 1 else 's'} to {report.output_path}")
    if report.ground_truth_path is not None:
        console.info(
            f"Wrote {report.ground_truth_rows} reference"
            f"{'' if report.ground_truth_rows == 1 else 's'} to {report.ground_truth_path}"
        )
        if report.questions_without_reference:
            console.info(
                "Matched questions with no reference carried: "
                f"{format_numbers(report.questions_without_reference, _SHOWN_MISSING)}"
            )
    missing = report.questions_without_answer
    if missing:
        console.info(f"Questions with no answer: {format_numbers(missing, _SHOWN_MISSING)}")
    if report.not_converted:
        console.info(
            f"Not converted: {', '.join(report.not_converted)} (see the messages above); "
            "exit code 1"
        )
