"""The calibrate run: read a results file and human labels, measure the judge against them.

Prints nothing: the command renders the report it returns.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from rag_evaluator.calibrate.calibration import (
    CalibrationReport,
    calibrate,
    calibration_json,
    collect_labels,
)
from rag_evaluator.results.outputs import STDOUT, check_output_path, json_text, write_json_report
from rag_evaluator.results.reader import read_label_sheet, read_run_scores

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CalibrateRequest:
    """The command's arguments."""

    results_path: Path
    labels_path: Path
    json_path: str | None = None  # a file name, or "-" for standard output


@dataclass(frozen=True)
class CalibrateOutcome:
    """The calibration, and the JSON text when it goes to standard output."""

    report: CalibrationReport
    json_for_stdout: str | None
    written: list[Path]


def run_calibrate(request: CalibrateRequest) -> CalibrateOutcome:
    """Read both files, calibrate every labelled metric, write ``--json`` if asked."""
    if request.json_path is not None and request.json_path != STDOUT:
        check_output_path(
            Path(request.json_path), "--json", [request.results_path, request.labels_path]
        )
    results = read_run_scores(request.results_path)
    sheet = read_label_sheet(request.labels_path)
    labels = collect_labels(
        results, str(request.labels_path), sheet.headers, sheet.rows, sheet.line_numbers
    )
    logger.info(
        "calibrate: %s against %s; labelled metrics %s",
        results.label,
        labels.source,
        ", ".join(labels.by_metric),
    )
    report = calibrate(results, labels)
    written: list[Path] = []
    json_for_stdout = None
    if request.json_path is not None:
        data = calibration_json(report)
        if request.json_path == STDOUT:
            json_for_stdout = json_text(data)
        else:
            write_json_report(Path(request.json_path), data, "--json")
            written.append(Path(request.json_path))
    return CalibrateOutcome(report, json_for_stdout, written)
