"""The report page's package files (Jinja2 templates, stylesheet, script): found with
importlib.resources, shipped in a wheel, inlined safely; and the templates' layout rule."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_support import parse_page, sample_questions, write_run

import rag_evaluator
from rag_evaluator.report.html import without_layout
from rag_evaluator.report.page_files import read_page_files

PACKAGE = Path(rag_evaluator.__file__).parent
PAGE_FILES = sorted(
    path.relative_to(PACKAGE).as_posix()
    for folder in ("report/templates", "report/assets")
    for path in (PACKAGE / folder).iterdir()
    if path.is_file()
)


def test_the_page_files_are_found_as_package_resources() -> None:
    files = read_page_files()
    names = {name for name, _ in files.templates}
    assert {"page.html", "run.html", "comparison.html", "charts.html"} <= names
    assert names == {Path(name).name for name in PAGE_FILES if name.endswith(".html")}
    source = PACKAGE / "report"
    assert files.stylesheet == (source / "assets" / "report.css").read_text(encoding="utf-8")
    assert files.script == (source / "assets" / "report.js").read_text(encoding="utf-8")
    assert "QuestionTable" in files.script and "--pass" in files.stylesheet


def test_the_inlined_stylesheet_and_script_cannot_end_their_element_early() -> None:
    # They are inlined as they are (they hold no text of the results): nothing in them may
    # close their <style>/<script> or open a comment.
    files = read_page_files()
    for text in (files.stylesheet, files.script):
        lowered = text.lower()
        for forbidden in ("</style", "</script", "<!--"):
            assert forbidden not in lowered


def test_a_wheel_ships_the_page_files_and_its_install_writes_a_report(tmp_path: Path) -> None:
    """Built from a copy of the project (the worktree stays clean), installed into a folder
    of its own, then run: the report comes from the installed package's files."""
    project = tmp_path / "project"
    project.mkdir()
    root = PACKAGE.parent
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, project / name)
    shutil.copytree(
        PACKAGE, project / "rag_evaluator", ignore=shutil.ignore_patterns("__pycache__")
    )
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", str(project), "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(tmp_path / "dist")],
        check=True, cwd=tmp_path, capture_output=True,
    )  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("rag_eval-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    for name in PAGE_FILES:
        assert f"rag_evaluator/{name}" in shipped, name
    target = tmp_path / "installed"
    subprocess.run(
        [*pip, "install", str(wheel), "--no-deps", "--no-index", "--target", str(target)],
        check=True, cwd=tmp_path, capture_output=True,
    )  # fmt: skip
    results = write_run(tmp_path / "run.csv", sample_questions())
    environment = {**os.environ, "PYTHONPATH": str(target), "NO_COLOR": "1"}
    where = subprocess.run(
        [sys.executable, "-c", "import rag_evaluator; print(rag_evaluator.__file__)"],
        check=True, cwd=tmp_path, env=environment, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert Path(where.strip()).is_relative_to(target)
    subprocess.run(
        [sys.executable, "-m", "rag_evaluator", "report", str(results), "-o", "page.html"],
        check=True, cwd=tmp_path, env=environment, capture_output=True,
    )  # fmt: skip
    page = parse_page((tmp_path / "page.html").read_text(encoding="utf-8"))
    assert page.scripts[-1][1] == read_page_files().script
    assert page.body_rows == {"t0": 12}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Between two tags, or a tag and an expression: layout, dropped.
        ("<p>\n  <b>x</b>\n</p>\n", "<p><b>x</b></p>"),
        ('<a href="#q">\n  {{ n }}</a>\n', '<a href="#q">{{ n }}</a>'),
        ("{{ one }}\n  {{ two }}", "{{ one }}{{ two }}"),
        # Next to a statement or a comment: dropped, whatever is on the other side.
        ("both\n  {% if a %}\n  ; more\n  {% endif %}\n  .", "both{% if a %}; more{% endif %}."),
        ("{# why #}\n<p>", "{# why #}<p>"),
        # Touching text: one space, as HTML would show the line break.
        ("<p>some\n     text</p>", "<p>some text</p>"),
        ("</a>\n  · {{ metric }}\n  <span>", "</a> · {{ metric }}<span>"),
        ('<rect x="1"\n    y="2"/>', '<rect x="1" y="2"/>'),
        # Blanks that end a line go with its break; blanks within a line stay.
        ("<b>x</b>  \n  <i>y</i>", "<b>x</b><i>y</i>"),
        ("a  b", "a  b"),
    ],
)
def test_a_template_s_line_breaks_are_layout_or_one_space(source: str, expected: str) -> None:
    assert without_layout(source) == expected


@given(st.text(alphabet=st.characters(blacklist_characters="\n")))
def test_a_template_line_without_a_break_is_kept_as_it_is(source: str) -> None:
    assert without_layout(source) == source
