"""Reading ``--rubric FILE``: TOML (standard library) or YAML (the optional ``yaml`` extra).

A problem is reported in one line naming the file, the line and the fix, e.g.
``rubric.toml, line 7: scale '1 to five' is not a scale. Write scale = "1-5" …``. TOML
parsers give no positions for values, so the line of a problem found after parsing is found
again in the text (the ``[[criteria]]`` table, then the ``key =`` line inside it); YAML's
composed nodes carry their own marks.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag_evaluator.errors import InputError, MissingExtraError
from rag_evaluator.families.rubric.rubrics import Location, Rubric, RubricProblem, rubric_from_data
from rag_evaluator.inputs.files import decode_text, not_a_file, read_input_bytes

TOML_SUFFIXES = (".toml",)
YAML_SUFFIXES = (".yaml", ".yml")
YAML_EXTRA = "yaml"

_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column \d+\)\s*$")
_TOML_TABLE = re.compile(r"\s*\[")


def load_rubric(path: Path, working_directory: Path) -> Rubric:
    """The rubric in ``path`` (relative to the working directory), or ``InputError``."""
    resolved = path if path.is_absolute() else working_directory / path
    suffix = resolved.suffix.lower()
    if suffix not in TOML_SUFFIXES + YAML_SUFFIXES:
        raise InputError(
            f"--rubric {path}: a rubric is a TOML (.toml) or YAML (.yaml, .yml) file. Rename "
            "it with one of these extensions",
            resolved,
        )
    kind = not_a_file(resolved)
    if kind is not None:
        raise InputError(f"--rubric {path} is {kind}, not a rubric file. Pass a file", resolved)
    if not resolved.exists():
        raise InputError(
            f"Rubric file {path} not found. Check the path given to --rubric", resolved
        )
    text, _, _ = decode_text(read_input_bytes(resolved), resolved)
    name = resolved.name
    if suffix in TOML_SUFFIXES:
        data = _parse_toml(text, name, resolved)
        locate = _toml_locator(text)
    else:
        data, locate = _parse_yaml(text, name, resolved)
    try:
        return rubric_from_data(data)
    except RubricProblem as problem:
        line = locate(problem.location)
        where = f"{name}, line {line}" if line is not None else name
        raise InputError(f"{where}: {problem.message}", resolved) from problem


def _parse_toml(text: str, name: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        found = _TOML_POSITION.search(message)
        where = f"{name}, line {found.group(1)}" if found else name
        reason = _TOML_POSITION.sub("", message)
        raise InputError(
            f"{where}: {reason} (TOML). Fix the syntax there: key = value, text in double "
            'quotes, each criterion under its own [[criteria]] line, e.g. scale = "1-5"',
            path,
        ) from error


Locator = Callable[[Location], int | None]


def _toml_locator(text: str) -> Locator:
    lines = text.splitlines()

    def key_line(start: int, end: int, key: str) -> int | None:
        pattern = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=")
        for number in range(start, end):
            if pattern.match(lines[number]):
                return number + 1
        return None

    def locate(location: Location) -> int | None:
        if not location:
            return None
        head = str(location[0])
        if head != "criteria" or len(location) == 1:
            table = re.compile(rf"\s*\[\[\s*[\"']?{re.escape(head)}[\"']?\s*\]\]")
            for number, line in enumerate(lines):
                if table.match(line):
                    return number + 1
            top_end = next(
                (number for number, line in enumerate(lines) if _TOML_TABLE.match(line)),
                len(lines),
            )
            return key_line(0, top_end, head)
        headers = [
            number
            for number, line in enumerate(lines)
            if re.match(r"\s*\[\[\s*[\"']?criteria[\"']?\s*\]\]", line)
        ]
        index = int(location[1])
        if index >= len(headers):
            return key_line(0, len(lines), "criteria")  # an inline array: its first line
        start = headers[index]
        end = next(
            (number for number in range(start + 1, len(lines)) if _TOML_TABLE.match(lines[number])),
            len(lines),
        )
        if len(location) > 2:
            return key_line(start + 1, end, str(location[2])) or start + 1
        return start + 1

    return locate


def _parse_yaml(text: str, name: str, path: Path) -> tuple[Any, Locator]:
    try:
        import yaml
    except ImportError as error:
        raise MissingExtraError(
            YAML_EXTRA, f"Reading a YAML rubric ({name}; or write it in TOML)"
        ) from error
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f"{name}, line {mark.line + 1}" if mark is not None else name
        problem = getattr(error, "problem", None) or "not valid YAML"
        raise InputError(
            f"{where}: {problem} (YAML). Fix the syntax there: 'key: value', each criterion a "
            "'- name: …' item under 'criteria:', indented consistently",
            path,
        ) from error

    def locate(location: Location) -> int | None:
        current = node
        line = None
        for step in location:
            if isinstance(current, yaml.MappingNode):
                pair = next(
                    ((key, value) for key, value in current.value if key.value == step), None
                )
                if pair is None:
                    return line
                line = pair[0].start_mark.line + 1
                current = pair[1]
            elif isinstance(current, yaml.SequenceNode) and isinstance(step, int):
                if step >= len(current.value):
                    return line
                current = current.value[step]
                line = current.start_mark.line + 1
            else:
                return line
        return line

    return data, locate
