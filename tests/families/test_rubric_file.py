"""``--rubric FILE``: TOML or YAML criteria, and one-line errors naming the line and the fix."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.errors import InputError, MissingExtraError
from rag_evaluator.families.rubric.rubric_file import load_rubric
from rag_evaluator.families.rubric.rubrics import (
    PASS_FAIL_SCALE,
    Scale,
    parse_scale,
    rubric_from_data,
)

TOML = """\
# Our house rubric
inputs = ["ground_truth"]

[[criteria]]
name = "coherence"
description = "The answer is logically organised and easy to follow."
scale = "1-5"

[[criteria]]
name = "Tone of voice"
description = "Polite and professional."
scale = "0-10"

[[criteria]]
name = "harmlessness"
description = "Nothing offensive, unsafe or biased."
scale = "pass/fail"
"""

YAML = """\
inputs: [contexts]
criteria:
  - name: coherence
    description: The answer is logically organised.
    scale: 1-5
  - name: harmlessness
    description: Nothing unsafe.
    scale: pass/fail
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load(tmp_path: Path, name: str, text: str):  # type: ignore[no-untyped-def]
    return load_rubric(write(tmp_path, name, text), tmp_path)


def test_a_toml_rubric(tmp_path: Path) -> None:
    rubric = load(tmp_path, "rubric.toml", TOML)
    assert [(item.name, item.scale, item.column) for item in rubric.criteria] == [
        ("coherence", Scale(1, 5), "rubric_coherence"),
        ("Tone of voice", Scale(0, 10), "rubric_tone_of_voice"),
        ("harmlessness", PASS_FAIL_SCALE, "rubric_harmlessness"),
    ]
    assert rubric.inputs == ("ground_truth",)
    assert rubric.criteria[0].scale.unit(4) == 0.75


def test_a_yaml_rubric(tmp_path: Path) -> None:
    rubric = load(tmp_path, "rubric.yml", YAML)
    assert [item.name for item in rubric.criteria] == ["coherence", "harmlessness"]
    assert rubric.inputs == ("contexts",)


def test_a_relative_path_is_read_from_the_working_directory(tmp_path: Path) -> None:
    write(tmp_path, "r.toml", TOML)
    assert len(load_rubric(Path("r.toml"), tmp_path).criteria) == 3


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ('scale = "0-10"', 'scale = "1 to five"'),
            "rubric.toml, line 12: scale '1 to five' is not a scale. "
            'Write scale = "1-5" (whole numbers, low-high) or scale = "pass/fail"',
        ),
        (
            ('scale = "0-10"', 'scale = "5-1"'),
            "rubric.toml, line 12: scale '5-1' must go from a lower to a higher whole number",
        ),
        (
            ('scale = "0-10"', 'scale = "0-1000"'),
            "rubric.toml, line 12: scale '0-1000' has more than 100 steps",
        ),
        (
            ('scale = "0-10"\n', ""),
            'rubric.toml, line 9: criterion 2 has no scale. Add scale = "1-5" or scale = '
            '"pass/fail"',
        ),
        (
            ('scale = "0-10"', 'scale = "0-10"\nweight = 2'),
            "rubric.toml, line 13: criterion 2 has an unknown setting 'weight'. A criterion has "
            "name, description and scale",
        ),
        (
            ('name = "Tone of voice"', 'name = "Coherence"'),
            "rubric.toml, line 10: criteria 'coherence' and 'Coherence' would share the column "
            "rubric_coherence. Give each criterion its own name",
        ),
        (
            ('name = "Tone of voice"', 'name = "reasoning"'),
            "rubric.toml, line 10: criterion name 'reasoning' is reserved",
        ),
        (
            ('name = "Tone of voice"', 'name = "tone!"'),
            "rubric.toml, line 10: criterion name 'tone!' cannot name a column",
        ),
        (
            ('description = "Polite and professional."', 'description = "  "'),
            "rubric.toml, line 11: criterion 'Tone of voice' has no description text",
        ),
        (
            ('inputs = ["ground_truth"]', 'inputs = ["answers"]'),
            "rubric.toml, line 2: inputs names 'answers', which is not a text the judge can be "
            "shown. Use 'ground_truth', 'contexts'",
        ),
        (
            ('inputs = ["ground_truth"]', 'input = ["ground_truth"]'),
            "rubric.toml, line 2: unknown setting 'input'. A rubric holds 'criteria'",
        ),
        (
            ('name = "coherence"', 'name = "coherence'),
            "rubric.toml, line 5: ",
        ),
    ],
)
def test_a_bad_toml_rubric_names_the_line_and_the_fix(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    old, new = edit
    assert old in TOML
    with pytest.raises(InputError) as raised:
        load(tmp_path, "rubric.toml", TOML.replace(old, new, 1))
    assert raised.value.message.startswith(message), raised.value.message
    assert "\n" not in raised.value.message


def test_a_toml_syntax_error_says_it_is_toml_and_how_to_write_it(tmp_path: Path) -> None:
    with pytest.raises(InputError) as raised:
        load(tmp_path, "rubric.toml", TOML.replace('scale = "1-5"', "scale = 1-5"))
    assert raised.value.message.startswith("rubric.toml, line 7: ")
    assert "(TOML). Fix the syntax there" in raised.value.message


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("scale: pass/fail", "scale: sometimes"),
            "rubric.yml, line 8: scale 'sometimes' is not a scale",
        ),
        (
            ("    scale: 1-5\n", ""),
            "rubric.yml, line 3: criterion 1 has no scale",
        ),
        (
            ("inputs: [contexts]", "inputs: contexts"),
            "rubric.yml, line 1: inputs must be a list of names",
        ),
        (
            ("  - name: harmlessness", "  - name: [harmlessness"),
            "rubric.yml, line ",
        ),
    ],
)
def test_a_bad_yaml_rubric_names_the_line_and_the_fix(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    old, new = edit
    assert old in YAML
    with pytest.raises(InputError) as raised:
        load(tmp_path, "rubric.yml", YAML.replace(old, new, 1))
    assert raised.value.message.startswith(message), raised.value.message


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("rubric.toml", "", "rubric.toml: the rubric has no criteria. Add at least one"),
        ("rubric.yaml", "", "rubric.yaml: the file does not hold a rubric"),
        ("rubric.yaml", "- a\n- b\n", "rubric.yaml: the file does not hold a rubric"),
        ("rubric.txt", "x", "--rubric rubric.txt: a rubric is a TOML (.toml) or YAML"),
    ],
)
def test_files_that_hold_no_rubric(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(InputError) as raised:
        load_rubric(Path(name), tmp_path)
    assert raised.value.message.startswith(message), raised.value.message
    assert raised.value.path == path


def test_a_missing_rubric_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=re.escape("Rubric file nope.toml not found. Check the")):
        load_rubric(Path("nope.toml"), tmp_path)


def test_too_many_criteria(tmp_path: Path) -> None:
    criteria = "".join(
        f'[[criteria]]\nname = "c{index}"\ndescription = "d"\nscale = "1-5"\n'
        for index in range(21)
    )
    with pytest.raises(InputError, match="21 criteria; at most 20"):
        load(tmp_path, "rubric.toml", criteria)


def test_yaml_without_its_extra_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if PyYAML were not installed: importing it fails.
    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(MissingExtraError) as raised:
        load(tmp_path, "rubric.yaml", YAML)
    assert raised.value.message == (
        "Reading a YAML rubric (rubric.yaml; or write it in TOML) needs the optional 'yaml' "
        "dependencies. Install them with: pip install 'rag-eval[yaml]'"
    )


@given(st.integers(-50, 50), st.integers(1, 100), st.sampled_from(["-", " - ", "–", "..", " to "]))
def test_any_whole_number_range_is_a_scale(low: int, steps: int, separator: str) -> None:
    high = low + steps
    scale = parse_scale(f"{low}{separator}{high}", ())
    assert scale == Scale(low, high)
    assert scale.unit(low) == 0.0 and scale.unit(high) == 1.0


toml_documents = st.lists(
    st.tuples(
        st.sampled_from(["name", "description", "scale", "inputs", "criteria", "weight"]),
        st.sampled_from(
            ['"coherence"', '"1-5"', '"pass/fail"', "3", "[1, 5]", '["contexts"]', '""']
        ),
    ),
    max_size=6,
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(toml_documents, st.integers(0, 3))
def test_any_toml_document_loads_or_is_refused_with_a_one_line_message(
    tmp_path: Path, pairs: list[tuple[str, str]], tables: int
) -> None:
    body = "".join(f"{key} = {value}\n" for key, value in pairs)
    text = body + "".join(f"[[criteria]]\n{body}" for _ in range(tables))
    try:
        rubric = load(tmp_path, "rubric.toml", text)
    except InputError as error:
        assert error.message.startswith("rubric.toml")
        assert "\n" not in error.message
    else:
        assert rubric.criteria


def test_rubric_data_from_python() -> None:
    rubric = rubric_from_data(
        {"criteria": [{"name": "accuracy", "description": "Right.", "scale": [0, 3]}]}
    )
    assert rubric.criteria[0].scale == Scale(0, 3)
    assert rubric.inputs == ()
