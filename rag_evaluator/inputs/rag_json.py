"""Reading RAG output files (``*.json``, ``*.jsonl``) from a folder into entries.

A file that cannot be used is skipped with a reason naming the file (and, for
broken JSON, the line and column); the other files are still read. Paths that
appear inside the files (a document's ``source``, say) are data, never opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from rag_evaluator.errors import InputError, NothingConvertedError
from rag_evaluator.inputs.files import read_input_bytes
from rag_evaluator.inputs.shapes import (
    ExtractedEntries,
    RagEntry,
    extract_entries,
    extract_line_entry,
)
from rag_evaluator.inputs.tables import decode_bytes

JSON_SUFFIXES = (".json",)
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")


@dataclass(frozen=True)
class RagJsonFile:
    """The entries of one file and the warnings about the parts that were skipped."""

    name: str
    shape: str
    entries: list[RagEntry]
    problems: list[str] = field(default_factory=list)
    skipped_entries: int = 0


@dataclass(frozen=True)
class SkippedFile:
    """A file that gave no entries, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class RagJsonBatch:
    """Everything read from one folder, in file-name order."""

    directory: Path
    files: list[RagJsonFile]
    skipped: list[SkippedFile]

    @property
    def entries(self) -> list[RagEntry]:
        """All entries of all files, in reading order."""
        return [entry for file in self.files for entry in file.entries]


def list_rag_json_files(directory: Path) -> list[Path]:
    """The JSON and JSON Lines files directly inside ``directory``, sorted by name.

    Hidden files (``.name.json``, macOS ``._name.json`` forks) are left out.
    """
    directory = Path(directory)
    if not directory.exists():
        raise InputError(
            f"{directory} not found. Create this folder and put your RAG system's "
            "output files (*.json, *.jsonl) in it, or pass --json-dir",
            directory,
        )
    if not directory.is_dir():
        raise InputError(
            f"{directory} is a file, not a folder. Pass the folder that holds the RAG "
            "output files with --json-dir",
            directory,
        )
    try:
        children = sorted(directory.iterdir(), key=lambda child: child.name)
    except OSError as exc:
        raise InputError(
            f"Cannot list {directory}: {exc.strerror}. Check its permissions", directory
        ) from exc
    wanted = JSON_SUFFIXES + JSON_LINES_SUFFIXES
    found = [
        child
        for child in children
        # Not is_file(): a broken link named run.json must be reported, not silently ignored.
        if child.suffix.lower() in wanted and not child.name.startswith(".") and not child.is_dir()
    ]
    if not found:
        others = [child.name for child in children if not child.name.startswith(".")]
        held = f" (it holds: {', '.join(others[:8])}{', …' if len(others) > 8 else ''})"
        raise NothingConvertedError(
            f"{directory} has no *.json or *.jsonl files{held if others else ' (it is empty)'}. "
            "Put your RAG system's output files there, or pass --json-dir"
        )
    return found


def read_rag_json_dir(directory: Path) -> RagJsonBatch:
    """Read every JSON / JSON Lines file in ``directory``; unusable files are skipped."""
    files: list[RagJsonFile] = []
    skipped: list[SkippedFile] = []
    for path in list_rag_json_files(directory):
        try:
            files.append(read_rag_json_file(path))
        except InputError as exc:
            skipped.append(SkippedFile(path.name, exc.message))
    return RagJsonBatch(Path(directory), files, skipped)


def read_rag_json_file(path: Path) -> RagJsonFile:
    """Read one file's entries; raise ``InputError`` when the file gives none."""
    path = Path(path)
    data = read_input_bytes(path)
    text, _, problems = decode_bytes(data, path)
    if not text.strip():
        raise InputError(
            f"{path.name} is empty. Export the RAG output again, or move the file out of "
            "the folder",
            path,
        )
    constants: list[str] = []
    try:
        if path.suffix.lower() in JSON_LINES_SUFFIXES:
            extracted = _read_json_lines(text, path.name, constants)
        else:
            extracted = _read_json_document(text, path.name, constants)
    except RecursionError as exc:
        raise InputError(
            f"{path.name} is nested too deeply (about a thousand levels or more) to be RAG "
            "output. Check that it was exported correctly",
            path,
        ) from exc
    except InputError as exc:
        raise InputError(exc.message, path) from exc
    if constants:
        problems.append(
            f"{path.name} contains {', '.join(sorted(set(constants)))}, which JSON does not "
            "allow; read as null (an empty answer where it was the answer). Have the "
            "exporter write null or a number instead"
        )
    problems.extend(extracted.problems)
    if not extracted.entries:
        raise InputError(_no_usable_entries(path.name, extracted), path)
    return RagJsonFile(
        path.name, extracted.shape, extracted.entries, problems, extracted.skipped_entries
    )


def loads_json(text: str, constants: list[str]) -> object:
    def non_standard_constant(name: str) -> None:
        # NaN / Infinity are Python's json extensions, common in exported scores.
        constants.append(name)
        return None

    # strict=False lets raw tabs and newlines inside strings through.
    return json.loads(text, parse_constant=non_standard_constant, strict=False)


def _read_json_document(text: str, name: str, constants: list[str]) -> ExtractedEntries:
    try:
        value = loads_json(text, constants)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            # Several values one after another: JSON Lines saved as .json.
            try:
                return _read_json_lines(text, name, constants, strict=True)
            except InputError:
                pass
        raise InputError(json_error_message(name, text, exc)) from exc
    except ValueError as exc:
        raise InputError(
            f"{name} could not be read as JSON: {value_error_reason(exc)}. Fix that value, "
            "or move the file out of the folder"
        ) from exc
    return extract_entries(value, name)


def _no_usable_entries(name: str, extracted: ExtractedEntries) -> str:
    reason = extracted.first_skip_reason
    if extracted.skipped_entries == 1:
        return f"{name} has no usable entries: {reason}"
    return (
        f"{name} has no usable entries ({extracted.skipped_entries} skipped). The first, {reason}"
    )


def _read_json_lines(
    text: str, name: str, constants: list[str], *, strict: bool = False
) -> ExtractedEntries:
    """Entries of a JSON Lines text; bad lines are skipped, unless ``strict``."""
    entries: list[RagEntry] = []
    problems: list[str] = []
    skipped = 0
    bad_lines = 0
    first_error = ""
    first_skip_reason = ""
    # Not str.splitlines(): U+2028 and friends may sit unescaped inside JSON strings.
    for line_number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = loads_json(line, constants)
        except ValueError as exc:
            bad_lines += 1
            if strict:
                raise InputError(f"{name} line {line_number} is not valid JSON") from exc
            reason = _line_error(exc)
            first_error = first_error or f"line {line_number}: {reason}"
            first_skip_reason = first_skip_reason or (
                f"line {line_number}: not valid JSON ({reason}). Fix or remove that line"
            )
            problems.append(
                f"{name} line {line_number} is not valid JSON ({reason}). Fix or remove that "
                "line (line skipped)"
            )
            continue
        extracted = extract_line_entry(value, name, line_number)
        entries.extend(extracted.entries)
        problems.extend(extracted.problems)
        skipped += extracted.skipped_entries
        first_skip_reason = first_skip_reason or extracted.first_skip_reason
    if not entries and bad_lines and not skipped:
        # No line parsed at all: perhaps one pretty-printed document saved as .jsonl.
        try:
            value = loads_json(text, constants)
        except ValueError:
            value = None
        if value is not None:
            return extract_entries(value, name)
        raise InputError(
            f"{name} is not valid JSON Lines (no line could be read; {first_error}). "
            "Write one JSON object per line"
        )
    return ExtractedEntries("JSON Lines", entries, problems, skipped + bad_lines, first_skip_reason)


def _line_error(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"column {exc.colno}: {exc.msg}"
    return value_error_reason(exc)


def value_error_reason(exc: ValueError) -> str:
    # Python's message for its integer digit limit suggests changing an interpreter
    # setting, which is no fix for a user.
    if "digits" in str(exc):
        return "it holds a number of more than 4300 digits"
    return str(exc)


def json_error_message(name: str, text: str, exc: json.JSONDecodeError) -> str:
    before = text[: exc.pos].rstrip()
    at = text[exc.pos : exc.pos + 1]
    if exc.pos >= len(text.rstrip()):
        hint = "the file ends before the JSON is complete, so it looks truncated. Export it again"
    elif exc.msg.startswith("Unterminated string"):
        hint = (
            "a string that is never closed, so the file looks truncated (or a closing quote "
            "is missing). Export it again"
        )
    elif before.endswith(",") and at and at in "]}":
        hint = f"a trailing comma before '{at}'. Remove that comma"
    elif exc.msg == "Extra data":
        hint = (
            "more than one JSON value. If it holds one object per line, rename it to "
            f"{Path(name).stem}.jsonl"
        )
    elif "double quotes" in exc.msg:
        hint = "JSON needs double quotes around names and strings. Fix the quoting"
    else:
        hint = "Fix the file or move it out of the folder"
    return f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}): {hint}"
