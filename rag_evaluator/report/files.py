"""The files of ``rag-eval report``: where the report goes, and writing it.

Results files are read back whole with the reader compare uses (``results.reader``): every
column is kept, so the report shows columns added by later versions without changes here.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from rag_evaluator.atomic import write_text_atomic
from rag_evaluator.errors import ConfigError, UsageError

REPORT_SUFFIXES = (".html", ".htm")


def modified_date(path: Path) -> str | None:
    """When the file was last written, to the second (``None`` if it cannot be read)."""
    try:
        return datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M:%S")
    except OSError:
        return None


def default_report_path(results_path: Path) -> Path:
    """Beside the results file, with its name: ``precision_scores_X.csv`` -> ``….html``."""
    return results_path.with_suffix(".html")


def check_report_path(path: Path, inputs: list[Path]) -> None:
    """Refuse a report path that is a folder, one of the inputs, or not named ``.html``.

    The suffix rule keeps a slip such as ``-o ground_truth.csv`` from replacing a CSV file
    with a web page.
    """
    if path.is_dir():
        raise UsageError(f"-o {path} is a folder. Pass a file name ending in .html")
    if path.suffix.lower() not in REPORT_SUFFIXES:
        raise UsageError(
            f"-o {path} does not end in .html. Pass a file name ending in .html "
            f"(e.g. {path.with_suffix('.html').name})"
        )
    for source in inputs:
        if path.exists() and source.exists() and path.resolve() == source.resolve():
            raise UsageError(f"-o {path} is one of the input files. Pass another file name")


def write_report(path: Path, page: str) -> int:
    """Write the page atomically; its size in bytes."""
    data = page.encode("utf-8")
    try:
        write_text_atomic(path, page)
    except OSError as exc:
        raise ConfigError(
            f"Cannot write the report {path}: {exc.strerror or type(exc).__name__}. "
            "Pass a writable file name with -o"
        ) from exc
    return len(data)
