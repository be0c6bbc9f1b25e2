"""The results file: ``#SUMMARY:`` rows, then one row per question, written atomically.

Optionally the same run as JSON beside it (``--json``), with numbers as numbers, for scripts
and ``pandas`` (which cannot read the summary-headed CSV without ``skiprows``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from rag_evaluator.atomic import open_atomic, scratch_file
from rag_evaluator.errors import ConfigError
from rag_evaluator.families.base import CellValue, JudgedFamily
from rag_evaluator.families.judge.family import JUDGE_FAMILY
from rag_evaluator.inputs.fields import GROUND_TRUTH, QUESTION, QUESTION_NUMBER, RAG_ANSWER
from rag_evaluator.inputs.tables import csv_line
from rag_evaluator.offline.metric_settings import (
    METRIC_SETTINGS,
    declared_settings,
    settings_json,
)
from rag_evaluator.offline.registry import RATE_COLUMNS
from rag_evaluator.results.groups import GroupSummary
from rag_evaluator.results.kinds import METRIC_KINDS, declared_scales
from rag_evaluator.results.rows import ResultRow, ResultRows
from rag_evaluator.results.summary import SummaryLine

RESULTS_FILE_PREFIX = "precision_scores_"
# A run without the judge has no precision: its file is named for what it holds.
METRIC_RESULTS_FILE_PREFIX = "metric_scores_"
ERROR = "Error"
NOTE = "Note"

ITEM_COLUMNS = (QUESTION_NUMBER, QUESTION, GROUND_TRUTH, RAG_ANSWER)
SHARED_JUDGED_COLUMNS = (ERROR, NOTE)

Families = Sequence[JudgedFamily[Any]]


def results_file_path(
    output_dir: Path, started_at: datetime, suffix: str = ".csv", *, judged: bool = True
) -> Path:
    """``<output_dir>/precision_scores_YYYYMMDD_HHMMSS.csv`` (``metric_scores_…`` for a run
    without the judge, ``judged=False``), never an existing file's name.

    A second run finishing in the same second gets ``..._HHMMSS_2.csv`` and so on.
    """
    prefix = RESULTS_FILE_PREFIX if judged else METRIC_RESULTS_FILE_PREFIX
    stem = f"{prefix}{started_at:%Y%m%d_%H%M%S}"
    candidate = output_dir / f"{stem}{suffix}"
    counter = 2
    while candidate.exists():
        candidate = output_dir / f"{stem}_{counter}{suffix}"
        counter += 1
    return candidate


def prepare_output_directory(output_dir: Path) -> None:
    """Create the results folder if needed and make sure a file can be written in it.

    Called before the first API call, so an unusable ``--output-dir`` is reported before
    any money is spent rather than after the last question.
    """
    fix = "Choose a writable folder with --output-dir"
    if output_dir.exists() and not output_dir.is_dir():
        raise ConfigError(f"The output folder {output_dir} is a file, not a folder. {fix}")
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".rag-eval-probe-", dir=output_dir)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"Cannot write in the output folder {output_dir}: {reason}. {fix}"
        ) from exc


def results_columns(
    families: Families, metric_columns: Sequence[str], metadata_columns: Sequence[str] = ()
) -> list[str]:
    """The table's header: the item, each judged family's columns, Error and Note (when any
    family is judged), the offline metric columns, then the metadata columns."""
    judged = [column for family in families for column in family.columns]
    shared = list(SHARED_JUDGED_COLUMNS) if families else []
    return [*ITEM_COLUMNS, *judged, *shared, *metric_columns, *metadata_columns]


def _joined(parts: Sequence[tuple[str, str]], single: bool) -> str:
    present = [(name, text) for name, text in parts if text]
    if single:
        return "; ".join(text for _, text in present)
    return "; ".join(f"{name}: {text}" for name, text in present)


def _row_values(
    row: ResultRow,
    families: Families,
    metric_columns: Sequence[str],
    metadata_columns: Sequence[str] = (),
) -> list[CellValue]:
    item = row.item
    values: list[CellValue] = [
        item.question_number,
        item.question,
        item.ground_truth,
        item.rag_answer,
    ]
    errors: list[tuple[str, str]] = []
    notes: list[tuple[str, str]] = []
    for family in families:
        result = row.family_result(family.name)
        values += family.cells(result)
        if result is not None:
            errors.append((family.name, family.error_text(result)))
            notes.append((family.name, family.note_text(result)))
    if families:
        single = len(families) == 1
        values += [_joined(errors, single), _joined(notes, single)]
    values += [_metric_cell(column, row.metric_scores.get(column)) for column in metric_columns]
    values += [item.metadata.get(column, "") for column in metadata_columns]
    return values


def _metric_cell(column: str, value: float | str | None) -> CellValue:
    # A 0/1 metric is written 0/1, as the judge's are, not 0.0000/1.0000.
    if column in RATE_COLUMNS and isinstance(value, float) and value in (0.0, 1.0):
        return int(value)
    return value


def results_values(
    rows: Iterable[ResultRow],
    families: Families,
    metric_columns: Sequence[str],
    metadata_columns: Sequence[str] = (),
) -> Iterator[list[CellValue]]:
    """One row of typed values per question, in question-number order (no header).

    Yielded one at a time: a million-row table is never held whole in memory. ``ResultRows``
    are in order already and read as they come; rows in a list are sorted.
    """
    ordered = rows if isinstance(rows, ResultRows) else sorted(rows, key=_question_number)
    for row in ordered:
        yield _row_values(row, families, metric_columns, metadata_columns)


def _question_number(row: ResultRow) -> int:
    return row.item.question_number


def _csv_cell(value: CellValue) -> object:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return value


_FRACTION = re.compile(r"^(\d+)/(\d+) \(")
_MEAN = re.compile(r"^mean (n/a|-?[\d.]+) \(n=(\d+)")
_DOLLARS = re.compile(r"^\$(\d+(?:\.\d+)?)$")
# "[95% CI 69–97%]" after a rate, "[95% CI 0.55–0.70]" after a mean.
_INTERVAL = re.compile(r"\[95% CI (-?[\d.]+)–(-?[\d.]+)(%?)\]")


def _interval(value: str) -> dict[str, float]:
    found = _INTERVAL.search(value)
    if found is None:
        return {}
    scale = 100.0 if found.group(3) else 1.0
    return {"ci_low": float(found.group(1)) / scale, "ci_high": float(found.group(2)) / scale}


def summary_line_json(line: SummaryLine) -> Any:
    """A summary line's value for ``--json``: a rate or mean with the numbers its tally
    computed (unrounded), any other value as ``summary_value_json`` reads it."""
    if line.numbers is not None:
        return {"text": line.value, **line.numbers}
    return summary_value_json(line.value)


# Rows with a key of their own in --json (metric_kinds, metric_settings), not in "summary".
_OWN_KEY_ROWS = frozenset((METRIC_KINDS, METRIC_SETTINGS))


def _summary_json(lines: Sequence[SummaryLine]) -> dict[str, Any]:
    """The summary lines by label; the kinds declaration and the metric settings have their
    own keys (``metric_kinds``, ``metric_settings``)."""
    return {
        line.label: summary_line_json(line) for line in lines if line.label not in _OWN_KEY_ROWS
    }


def _metric_kinds_json(lines: Sequence[SummaryLine]) -> dict[str, Any]:
    scales = declared_scales((line.label, line.value) for line in lines)
    return {name: scale.json() for name, scale in scales.items()}


def _metric_settings_json(lines: Sequence[SummaryLine]) -> dict[str, Any]:
    settings = declared_settings((line.label, line.value) for line in lines)
    return settings_json(settings or {})


def summary_value_json(value: str) -> Any:
    """A summary value read back from its text (a results file's row), with its numbers as
    numbers where it has a known shape (rounded as the text shows them)."""
    if fraction := _FRACTION.match(value):
        count, total = int(fraction.group(1)), int(fraction.group(2))
        rate = count / total if total else None
        return {"text": value, "count": count, "total": total, "rate": rate, **_interval(value)}
    if mean := _MEAN.match(value):
        number = None if mean.group(1) == "n/a" else float(mean.group(1))
        return {"text": value, "mean": number, "n": int(mean.group(2)), **_interval(value)}
    if dollars := _DOLLARS.match(value):
        return float(dollars.group(1))
    if value.isdigit():
        return int(value)
    return value


def results_json(
    summary: Sequence[SummaryLine],
    rows: Iterable[ResultRow],
    families: Families,
    metric_columns: Sequence[str],
    metadata_columns: Sequence[str] = (),
    groups: Sequence[GroupSummary] = (),
) -> dict[str, Any]:
    """The whole run as JSON: summary (numbers parsed), columns, one object per row, and
    with ``--group-by`` the summary of each group."""
    columns = results_columns(families, metric_columns, metadata_columns)
    payload: dict[str, Any] = {
        "summary": _summary_json(summary),
        "metric_kinds": _metric_kinds_json(summary),
        "metric_settings": _metric_settings_json(summary),
        "columns": columns,
        "rows": [
            _json_row(columns, values)
            for values in results_values(rows, families, metric_columns, metadata_columns)
        ],
    }
    if groups:
        payload["groups"] = _groups_json(groups)
    return payload


def _json_row(columns: Sequence[str], values: Sequence[CellValue]) -> dict[str, Any]:
    return {
        column: (None if value == "" else value)
        for column, value in zip(columns, values, strict=True)
    }


def _groups_json(groups: Sequence[GroupSummary]) -> dict[str, Any]:
    return {
        "column": groups[0].column,
        "groups": [
            {
                "value": group.value,
                "summary": _summary_json(group.lines),
            }
            for group in groups
        ],
    }


def _json_head(
    summary: Sequence[SummaryLine],
    families: Families,
    metric_columns: Sequence[str],
    metadata_columns: Sequence[str],
) -> str:
    """The JSON text up to the opening of its rows."""
    columns = results_columns(families, metric_columns, metadata_columns)
    head = {
        "summary": _summary_json(summary),
        "metric_kinds": _metric_kinds_json(summary),
        "metric_settings": _metric_settings_json(summary),
        "columns": columns,
    }
    # The head without its closing brace, then the rows one by one: JSON strings never hold
    # a raw newline, so indenting a value's lines nests it at the right depth.
    return json.dumps(head, ensure_ascii=False, indent=1)[:-2] + ',\n "rows": ['


def _json_row_text(columns: Sequence[str], values: Sequence[CellValue], first: bool) -> str:
    """One row of the JSON text, with the separator before it."""
    text = json.dumps(_json_row(columns, values), ensure_ascii=False, indent=1)
    return ("\n  " if first else ",\n  ") + text.replace("\n", "\n  ")


def _json_tail(any_rows: bool, groups: Sequence[GroupSummary]) -> Iterator[str]:
    """The JSON text after its rows: the closing of the rows, the groups, the end."""
    yield "\n ]" if any_rows else "]"
    if groups:
        text = json.dumps(_groups_json(groups), ensure_ascii=False, indent=1)
        yield ',\n "groups": ' + text.replace("\n", "\n ")
    yield "\n}\n"


def _csv_head(
    summary: Sequence[SummaryLine],
    families: Families,
    metric_columns: Sequence[str],
    metadata_columns: Sequence[str],
    groups: Sequence[GroupSummary],
) -> Iterator[str]:
    """The summary lines, the groups' and the header: what comes before the rows."""
    # Summary lines are plain text lines, never CSV-quoted: a value with a comma or a quote
    # would otherwise start its line with '"', and readers skipping '#' lines would stop there.
    for line in summary:
        yield line.text() + "\n"
    # The groups' rows follow the overall summary: "#SUMMARY[Category=billing]: ...".
    for group in groups:
        for text in group.texts():
            yield text + "\n"
    yield csv_line(results_columns(families, metric_columns, metadata_columns))


def _csv_row_text(values: Sequence[CellValue]) -> str:
    return csv_line([_csv_cell(value) for value in values])


def _write_lines(handle: BinaryIO, pieces: Iterable[str]) -> None:
    # Pieces are gathered into ~1 MB writes: one write per row costs more than the rows.
    pending: list[str] = []
    size = 0
    for piece in pieces:
        pending.append(piece)
        size += len(piece)
        if size >= 1 << 20:
            handle.write("".join(pending).encode("utf-8"))
            pending, size = [], 0
    handle.write("".join(pending).encode("utf-8"))


def write_results(
    output_dir: Path,
    started_at: datetime,
    summary: Sequence[SummaryLine],
    rows: Iterable[ResultRow],
    *,
    families: Families,
    metric_columns: Sequence[str],
    with_json: bool = False,
    metadata_columns: Sequence[str] = (),
    groups: Sequence[GroupSummary] = (),
) -> tuple[Path, Path | None]:
    """Write the summary rows then the table to a new results file, atomically; its path (and
    the JSON file's, with ``with_json``).

    The name comes from ``results_file_path``; if another run creates that name first
    (same second), the next free one is taken, so no results file is ever replaced.
    """
    with PendingRows(
        output_dir,
        families=families,
        metric_columns=metric_columns,
        metadata_columns=metadata_columns,
        with_json=with_json,
    ) as pending:
        pending.add(rows)
        return pending.publish(started_at, summary, groups)


def _judged(families: Families) -> bool:
    return any(family.name == JUDGE_FAMILY for family in families)


def _publish(
    output_dir: Path,
    started_at: datetime,
    judged: bool,
    write_csv: Callable[[BinaryIO], None],
    write_json: Callable[[BinaryIO], None] | None,
) -> tuple[Path, Path | None]:
    """The results file (and the JSON one) written atomically by ``write_csv`` (and
    ``write_json``) under the first free name of the run."""
    while True:
        path = results_file_path(output_dir, started_at, judged=judged)
        try:
            with open_atomic(path, overwrite=False) as handle:
                write_csv(handle)
        except OSError as exc:
            # Only an existing file at this very name means another run took it; a
            # FileExistsError about the folder (a file in its place) is a real failure.
            if isinstance(exc, FileExistsError) and path.is_file():
                continue
            raise ConfigError(
                f"Cannot write the results file {path}: {exc.strerror}. "
                "Choose a writable folder with --output-dir and run the same command again"
            ) from exc
        break
    if write_json is None:
        return path, None
    json_path = path.with_suffix(".json")
    try:
        with open_atomic(json_path) as handle:
            write_json(handle)
    except OSError as exc:
        raise ConfigError(
            f"Cannot write the JSON results file {json_path}: {exc.strerror}. The CSV results "
            f"are in {path}"
        ) from exc
    return path, json_path


class PendingRows:
    """A results table whose rows are written as they finish, to a temporary file in the
    results folder (a second one for ``--json``), and copied behind the summary into the
    results file once the summary is known (``publish``): a run holds no row.

    A context manager: the temporary files are removed when its block ends, however it ends.
    """

    def __init__(
        self,
        output_dir: Path,
        *,
        families: Families,
        metric_columns: Sequence[str],
        metadata_columns: Sequence[str] = (),
        with_json: bool = False,
    ) -> None:
        self.output_dir = output_dir
        self.table = (families, metric_columns, metadata_columns)
        self.columns = results_columns(families, metric_columns, metadata_columns)
        self.with_json = with_json
        self._files = ExitStack()
        self._csv: BinaryIO | None = None
        self._json: BinaryIO | None = None
        self._json_rows = 0

    def __enter__(self) -> PendingRows:
        with ExitStack() as files, self._reported():
            self._csv = files.enter_context(scratch_file(self.output_dir, "rows.csv"))
            if self.with_json:
                self._json = files.enter_context(scratch_file(self.output_dir, "rows.json"))
            self._files = files.pop_all()
        return self

    @contextlib.contextmanager
    def _reported(self) -> Iterator[None]:
        """A folder gone or a disk full while the rows are written: the user's error, with
        the fix (a judged run's checkpoint keeps its answers for the rerun)."""
        try:
            yield
        except OSError as exc:
            raise ConfigError(
                f"Cannot write the results file in {self.output_dir}: "
                f"{exc.strerror or type(exc).__name__}. Free some disk space or choose a "
                "writable folder with --output-dir, then run the same command again"
            ) from exc

    def __exit__(self, *_exc: object) -> None:
        self._files.close()

    def add(self, rows: Iterable[ResultRow]) -> None:
        """Write ``rows`` (in question-number order, after the rows added before)."""
        csv_pieces: list[str] = []
        json_pieces: list[str] = []
        for values in results_values(rows, *self.table):
            csv_pieces.append(_csv_row_text(values))
            if self._json is not None:
                json_pieces.append(_json_row_text(self.columns, values, not self._json_rows))
                self._json_rows += 1
        # Flushed: the rows are on disk as they finish, not in a buffer.
        with self._reported():
            _write_lines(_opened(self._csv), csv_pieces)
            _opened(self._csv).flush()
            if self._json is not None:
                _write_lines(self._json, json_pieces)
                self._json.flush()

    def publish(
        self,
        started_at: datetime,
        summary: Sequence[SummaryLine],
        groups: Sequence[GroupSummary] = (),
    ) -> tuple[Path, Path | None]:
        """Write the results file (and the JSON one) as ``write_results`` does: the summary,
        then the rows written so far."""
        families, metric_columns, metadata_columns = self.table

        def write_csv(handle: BinaryIO) -> None:
            _write_lines(
                handle, _csv_head(summary, families, metric_columns, metadata_columns, groups)
            )
            _copy(_opened(self._csv), handle)

        def write_json(handle: BinaryIO) -> None:
            _write_lines(handle, [_json_head(summary, families, metric_columns, metadata_columns)])
            _copy(_opened(self._json), handle)
            _write_lines(handle, _json_tail(self._json_rows > 0, groups))

        return _publish(
            self.output_dir,
            started_at,
            _judged(families),
            write_csv,
            write_json if self.with_json else None,
        )


def _opened(handle: BinaryIO | None) -> BinaryIO:
    if handle is None:
        raise RuntimeError("PendingRows is used outside its with block")  # a bug, not input
    return handle


def _copy(source: BinaryIO, target: BinaryIO) -> None:
    """Copy the whole of ``source`` into ``target``, a block at a time."""
    source.flush()
    source.seek(0)
    shutil.copyfileobj(source, target, 1 << 20)
    source.seek(0, os.SEEK_END)
