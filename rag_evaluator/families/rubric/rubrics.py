"""User-defined rubrics (``--rubric FILE``): criteria with a description and a scale.

A rubric file (TOML or YAML, read by ``families/rubric/rubric_file.py``) holds::

    inputs = ["ground_truth"]          # optional: also show the judge the ground truth
                                       # and/or "contexts"; the question and answer always
    [[criteria]]
    name = "coherence"
    description = "The answer is logically organised and easy to follow."
    scale = "1-5"                      # whole numbers low-high, or "pass/fail"

    [[criteria]]
    name = "harmlessness"
    description = "The answer contains nothing offensive, unsafe or biased."
    scale = "pass/fail"

Each criterion becomes a results column ``rubric_<name>`` (the name in snake case) on 0-1: a
range score s on low-high is (s - low) / (high - low); pass is 1 and fail 0. Validation here
is pure: a problem is raised with its place in the data (``("criteria", 1, "scale")``), which
the file reader turns into a line number.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_evaluator.families import scores as judged_scores

COLUMN_PREFIX = "rubric_"
REASONING_COLUMN = "rubric_reasoning"
PASS_FAIL = "pass/fail"
GROUND_TRUTH_INPUT = "ground_truth"
CONTEXTS_INPUT = "contexts"
OPTIONAL_INPUTS = (GROUND_TRUTH_INPUT, CONTEXTS_INPUT)
MAX_CRITERIA = 20
MAX_SCALE_STEPS = 100
MAX_NAME_CHARACTERS = 40

_TOP_LEVEL_KEYS = ("criteria", "inputs")
_CRITERION_KEYS = ("name", "description", "scale")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9 _-]*")
_RANGE = re.compile(r"\s*(-?\d+)\s*(?:-|–|—|\.\.|to)\s*(-?\d+)\s*")
_SCALE_FIX = 'Write scale = "1-5" (whole numbers, low-high) or scale = "pass/fail"'

Location = tuple[str | int, ...]


class RubricProblem(Exception):
    """A rubric that cannot be used: ``message`` says what and how to fix it, ``location``
    where in the data (``()`` for the whole file)."""

    def __init__(self, message: str, location: Location = ()) -> None:
        super().__init__(message)
        self.message = message
        self.location = location


@dataclass(frozen=True)
class Scale:
    """Whole-number scores from ``low`` to ``high``; pass/fail is 0-1 with ``pass_fail``."""

    low: int
    high: int
    pass_fail: bool = False

    def label(self) -> str:
        return PASS_FAIL if self.pass_fail else f"{self.low}-{self.high}"

    def unit(self, score: int) -> float:
        """The score on 0-1."""
        return judged_scores.scaled(score, self.low, self.high)

    def shown(self, score: int) -> str:
        """``4/5`` or ``pass``/``fail``, for the reasoning column."""
        if self.pass_fail:
            return "pass" if score == 1 else "fail"
        return f"{score}/{self.high}" if self.low in (0, 1) else f"{score} on {self.label()}"


PASS_FAIL_SCALE = Scale(0, 1, pass_fail=True)


@dataclass(frozen=True)
class Criterion:
    name: str
    description: str
    scale: Scale

    @property
    def column(self) -> str:
        return COLUMN_PREFIX + column_key(self.name)


@dataclass(frozen=True)
class Rubric:
    criteria: tuple[Criterion, ...]
    inputs: tuple[str, ...] = ()

    def criterion(self, name: str) -> Criterion | None:
        wanted = name.strip().casefold()
        return next((item for item in self.criteria if item.name.casefold() == wanted), None)


def column_key(name: str) -> str:
    """``Tone of voice`` -> ``tone_of_voice``."""
    return re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_")


def parse_scale(value: Any, location: Location) -> Scale:
    if isinstance(value, str):
        text = value.strip()
        if text.casefold().replace(" ", "") in ("pass/fail", "pass-fail", "fail/pass"):
            return PASS_FAIL_SCALE
        found = _RANGE.fullmatch(text)
        if found is None:
            raise RubricProblem(f"scale {value!r} is not a scale. {_SCALE_FIX}", location)
        low, high = int(found.group(1)), int(found.group(2))
    elif (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(end, int) and not isinstance(end, bool) for end in value)
    ):
        low, high = value
    else:
        raise RubricProblem(f"scale {value!r} is not a scale. {_SCALE_FIX}", location)
    if not low < high:
        raise RubricProblem(
            f"scale {value!r} must go from a lower to a higher whole number. {_SCALE_FIX}",
            location,
        )
    if high - low > MAX_SCALE_STEPS:
        raise RubricProblem(
            f"scale {value!r} has more than {MAX_SCALE_STEPS} steps; a judge cannot use so fine "
            "a scale consistently. Use at most 0-100, e.g. 1-5 or 0-10",
            location,
        )
    return Scale(low, high)


def _criterion(data: Any, index: int, seen: dict[str, str]) -> Criterion:
    where: Location = ("criteria", index)
    _check_criterion_keys(data, index + 1, where)
    name = _criterion_name(data["name"], seen, where)
    description = data["description"]
    if not isinstance(description, str) or not description.strip():
        raise RubricProblem(
            f"criterion {name!r} has no description text. Say in a sentence or two what the "
            "judge should look for",
            (*where, "description"),
        )
    return Criterion(
        name, " ".join(description.split()), parse_scale(data["scale"], (*where, "scale"))
    )


def _check_criterion_keys(data: Any, number: int, where: Location) -> None:
    """A criterion is a table with exactly name, description and scale."""
    if not isinstance(data, Mapping):
        raise RubricProblem(
            f"criterion {number} is not a table. Write it as [[criteria]] with name, "
            "description and scale",
            where,
        )
    for key in data:
        if key not in _CRITERION_KEYS:
            raise RubricProblem(
                f"criterion {number} has an unknown setting {key!r}. A criterion has name, "
                "description and scale",
                (*where, str(key)),
            )
    for key in _CRITERION_KEYS:
        if key not in data:
            example = {
                "name": 'name = "coherence"',
                "description": 'description = "What the judge should look for"',
                "scale": 'scale = "1-5" or scale = "pass/fail"',
            }[key]
            raise RubricProblem(f"criterion {number} has no {key}. Add {example}", where)


def _criterion_name(name: Any, seen: dict[str, str], where: Location) -> str:
    """The criterion's name, stripped, when it can name a results column of its own; the
    column key it takes is added to ``seen`` (column key -> name)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name.strip()):
        raise RubricProblem(
            f"criterion name {name!r} cannot name a column. Use letters, digits, spaces, '-' "
            "or '_', starting with a letter",
            (*where, "name"),
        )
    name = name.strip()
    if len(name) > MAX_NAME_CHARACTERS:
        raise RubricProblem(
            f"criterion name {name[:20]!r}… is longer than {MAX_NAME_CHARACTERS} characters. "
            "Give it a short name and put the detail in its description",
            (*where, "name"),
        )
    key = column_key(name)
    if COLUMN_PREFIX + key == REASONING_COLUMN:
        raise RubricProblem(
            f"criterion name {name!r} is reserved (the judge's reasons go in "
            f"{REASONING_COLUMN}). Choose another name",
            (*where, "name"),
        )
    if key in seen:
        raise RubricProblem(
            f"criteria {seen[key]!r} and {name!r} would share the column {COLUMN_PREFIX}{key}. "
            "Give each criterion its own name",
            (*where, "name"),
        )
    seen[key] = name
    return name


def rubric_from_data(data: Any) -> Rubric:
    """A rubric from the parsed file, or ``RubricProblem`` saying what is wrong and where."""
    if not isinstance(data, Mapping):
        raise RubricProblem(
            "the file does not hold a rubric. Start with [[criteria]] tables (TOML) or a "
            "'criteria:' list (YAML)"
        )
    for key in data:
        if key not in _TOP_LEVEL_KEYS:
            raise RubricProblem(
                f"unknown setting {key!r}. A rubric holds 'criteria' (each with name, "
                "description and scale) and optionally 'inputs'",
                (str(key),),
            )
    criteria = data.get("criteria")
    if not isinstance(criteria, list) or not criteria:
        raise RubricProblem(
            "the rubric has no criteria. Add at least one [[criteria]] table (YAML: a "
            "'criteria:' list) with name, description and scale",
            ("criteria",) if "criteria" in data else (),
        )
    if len(criteria) > MAX_CRITERIA:
        raise RubricProblem(
            f"the rubric has {len(criteria)} criteria; at most {MAX_CRITERIA} fit one judge call "
            "reliably. Split it into several rubrics and run them one after the other",
            ("criteria",),
        )
    seen: dict[str, str] = {}
    parsed = tuple(_criterion(item, index, seen) for index, item in enumerate(criteria))
    return Rubric(parsed, _inputs(data.get("inputs", [])))


def _inputs(value: Any) -> tuple[str, ...]:
    allowed = ", ".join(repr(name) for name in OPTIONAL_INPUTS)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RubricProblem(
            f"inputs must be a list of names: {allowed} (the question and the answer are "
            'always shown), e.g. inputs = ["ground_truth"]',
            ("inputs",),
        )
    for item in value:
        if item not in OPTIONAL_INPUTS:
            raise RubricProblem(
                f"inputs names {item!r}, which is not a text the judge can be shown. Use {allowed}",
                ("inputs",),
            )
    return tuple(name for name in OPTIONAL_INPUTS if name in value)


def criteria_columns(rubric: Rubric) -> tuple[str, ...]:
    return tuple(criterion.column for criterion in rubric.criteria)
