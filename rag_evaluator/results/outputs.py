"""Writing the reports of compare and calibrate: JSON and CSV files, atomically."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from rag_evaluator.atomic import write_text_atomic
from rag_evaluator.errors import ConfigError, UsageError
from rag_evaluator.inputs.tables import write_csv_atomic

STDOUT = "-"


def check_output_path(path: Path, option: str, inputs: Sequence[Path]) -> None:
    """Refuse an output path that would overwrite one of the command's input files."""
    if path.exists() and path.is_dir():
        raise UsageError(f"{option} {path} is a folder. Pass a file name for {option}")
    for source in inputs:
        if path.exists() and source.exists() and path.resolve() == source.resolve():
            raise UsageError(
                f"{option} {path} is one of the input files and would be overwritten. "
                f"Pass another file name for {option}"
            )


def json_text(data: object) -> str:
    """JSON for people and scripts alike: indented, UTF-8 text kept as is."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json_report(path: Path, data: object, option: str) -> None:
    """Write ``data`` as JSON to ``path`` atomically."""
    try:
        write_text_atomic(path, json_text(data))
    except OSError as exc:
        raise ConfigError(
            f"Cannot write {path}: {exc.strerror or type(exc).__name__}. "
            f"Pass another file name for {option}"
        ) from exc


def write_csv_report(path: Path, rows: Sequence[Sequence[object]], option: str) -> None:
    """Write ``rows`` as CSV to ``path`` atomically."""
    try:
        write_csv_atomic(path, rows)
    except OSError as exc:
        raise ConfigError(
            f"Cannot write {path}: {exc.strerror or type(exc).__name__}. "
            f"Pass another file name for {option}"
        ) from exc
