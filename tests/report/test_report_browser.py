"""The report as a person sees it: opened in headless Chromium with the network closed.

``--dump-dom`` gives the DOM after the scripts ran; the DevTools protocol drives clicks,
typing and screenshots, and records every console message, uncaught error, dialog and
request of the page.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import DevToolsBrowser, Page, devtools_browser, dump_dom
from PIL import Image
from report_support import (
    HOSTILE,
    Question,
    add_columns,
    sample_questions,
    write_inputs,
    write_run,
)

from rag_evaluator.report.run import ReportRequest, build_report

pytestmark = pytest.mark.needs_extra("chromium")

ROW = re.compile(r'<tr id="r(\d)q(\d+)"([^>]*)>')


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("report-browser")


@pytest.fixture(scope="module")
def sample_report(folder: Path) -> Path:
    questions = sample_questions()
    results = write_run(folder / "sample" / "precision_scores_20261123_014412.csv", questions)
    answers, truth = write_inputs(results.parent, questions)
    return build_report(
        ReportRequest([results], answers_paths=[answers], ground_truth_path=truth)
    ).path


@pytest.fixture(scope="module")
def comparison_report(folder: Path) -> Path:
    questions = sample_questions()
    baseline = write_run(folder / "compare" / "baseline.csv", questions)
    worse = [
        Question(q.number, q.question, q.ground_truth, q.answer + " Probably.",
                 scores=(0, 1, 1) if q.number in (6, 7, 8) else q.scores,
                 reasoning=f"new reasoning {q.number}", metrics=q.metrics, contexts=q.contexts)
        for q in questions
    ]  # fmt: skip
    run = write_run(folder / "compare" / "candidate.csv", worse)
    return build_report(ReportRequest([baseline, run])).path


@pytest.fixture(scope="module")
def hostile_report(folder: Path) -> Path:
    questions = [
        Question(
            1,
            HOSTILE,
            HOSTILE,
            HOSTILE,
            scores=(0, 1, 1),
            reasoning=HOSTILE,
            metrics={"rouge1": 0.9},
            contexts=[HOSTILE],
            relevant_contexts=[HOSTILE + " golden"],
        ),
        Question(2, "Plain?", "Yes.", "Yes.", metrics={"rouge1": 0.2}, contexts=["plain"]),
    ]
    results = write_run(folder / "hostile" / "hostile.csv", questions)
    add_columns(results, {HOSTILE: {1: "CORRECT", 2: "WRONG"}})
    answers, truth = write_inputs(results.parent, questions)
    return build_report(
        ReportRequest([results, results], answers_paths=[answers], ground_truth_path=truth)
    ).path


@pytest.fixture(scope="module")
def browser() -> Iterator[DevToolsBrowser]:
    with devtools_browser() as running:
        yield running


def visible_rows(dom: str, run: int = 0) -> list[int]:
    return [
        int(number)
        for table, number, attributes in ROW.findall(dom)
        if int(table) == run and "hidden" not in attributes
    ]


def assert_quiet(page: Page, report: Path) -> None:
    """Nothing went wrong and nothing but the file itself was requested."""
    assert page.problems() == []
    assert page.requests == [report.as_uri()]


def column(page: Page, name: str, run: int = 0) -> int:
    return page.evaluate(
        f"Array.from(document.querySelectorAll('#t{run} thead th'))"
        f".findIndex((th) => th.textContent === {name!r})"
    )


def test_the_dom_after_the_scripts_ran_has_every_row(sample_report: Path) -> None:
    dom = dump_dom(sample_report.as_uri())
    assert re.search(r'<html lang="en" class="js">', dom)
    assert visible_rows(dom) == list(range(1, 13))
    assert 'class="bar"' in dom and '<div class="bar" hidden' not in dom
    assert "Showing 12 of 12 questions" in dom


def test_a_filter_in_the_address_narrows_the_table(sample_report: Path) -> None:
    precision = 4  # #, Question, Ground Truth, Answer, Precision
    dom = dump_dom(sample_report.as_uri() + f"#f=v:{precision}:0")
    assert visible_rows(dom) == [2, 4]
    assert "Showing 2 of 12 questions" in dom
    dom = dump_dom(sample_report.as_uri() + "#f=unscored&q=overtime")
    assert visible_rows(dom) == [5]
    dom = dump_dom(sample_report.as_uri() + "#f=d:numbers")
    assert visible_rows(dom) == [2]


def test_without_javascript_the_whole_table_and_summary_are_there(
    browser: DevToolsBrowser, sample_report: Path
) -> None:
    page = browser.open(sample_report.as_uri(), javascript=False)
    dom = page.html()
    assert 'class="js"' not in dom
    assert visible_rows(dom) == list(range(1, 13))
    assert "95% CI" in dom and "Numbers wrong" in dom
    assert_rendered(page.screenshot())
    assert_quiet(page, sample_report)
    page.close()


def test_a_person_filters_searches_sorts_and_opens_contexts(
    browser: DevToolsBrowser, sample_report: Path
) -> None:
    page = browser.open(sample_report.as_uri())
    count = "document.querySelector('#run0 .shown').textContent"
    assert page.evaluate(count) == "Showing 12 of 12 questions"

    def choose(value: str) -> None:
        page.evaluate(
            "(() => { const s = document.querySelector('#run0 select');"
            f" s.value = {value!r}; s.dispatchEvent(new Event('change')); }})()"
        )

    choose("consensus")
    assert page.evaluate(count) == "Showing 1 of 12 questions"
    choose("d:dontknow")
    assert page.evaluate(count) == "Showing 1 of 12 questions"
    assert page.evaluate("location.hash") == "#f=d%3Adontknow"
    choose("all")
    page.evaluate(
        "(() => { const s = document.querySelector('#run0 input[type=search]');"
        " s.value = 'MEAL allowance'; s.dispatchEvent(new Event('input')); })()"
    )
    page.wait_for(f"{count} === 'Showing 1 of 12 questions'")
    page.evaluate(
        "(() => { const s = document.querySelector('#run0 input[type=search]');"
        " s.value = ''; s.dispatchEvent(new Event('input')); })()"
    )
    page.wait_for(f"{count} === 'Showing 12 of 12 questions'")

    rouge = column(page, "rouge1")
    page.evaluate(f"document.querySelectorAll('#t0 thead th')[{rouge}].click()")
    first = "document.querySelector('#w0 .ck tr').id"
    assert page.evaluate(first) == "r0q3"  # the lowest rouge1 (0.0)
    page.evaluate(f"document.querySelectorAll('#t0 thead th')[{rouge}].click()")
    assert page.evaluate(first) == "r0q2"  # the highest (0.9)

    page.evaluate("document.querySelector('#r0q1 td:nth-child(2)').click()")
    page.wait_for("document.querySelector('#w0 tr.cx li')")
    opened = page.evaluate("document.querySelector('#w0 tr.cx').textContent")
    assert "Retrieved contexts (2, in rank order)" in opened
    assert "golden" in opened and "Section 4.1 Paid time off" in opened
    assert page.evaluate("document.querySelector('#r0q1').classList.contains('x')")

    page.evaluate("document.querySelector('#run0 rect.hb[data-lo=\"0.9\"]').dispatchEvent("
                  "new MouseEvent('click', {bubbles: true}))")  # fmt: skip
    assert page.evaluate("document.querySelector('#run0 .chip').hidden") is False
    shown = page.evaluate(count)
    assert re.fullmatch(r"Showing \d+ of 12 questions", shown) and shown != (
        "Showing 12 of 12 questions"
    )
    assert_quiet(page, sample_report)
    page.close()


def assert_rendered(png: bytes) -> None:
    """A screenshot of a page with content: many colours, none covering nearly all of it."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    most_common = max(count for count, _ in colours)
    assert len(colours) > 50
    assert most_common < 0.9 * image.width * image.height


def test_the_screenshot_is_a_rendered_page(browser: DevToolsBrowser, sample_report: Path) -> None:
    page = browser.open(sample_report.as_uri())
    assert_rendered(page.screenshot())
    assert_quiet(page, sample_report)
    page.close()


def test_a_blank_screenshot_is_told_apart() -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (400, 300), "white").save(buffer, format="PNG")
    with pytest.raises(AssertionError):
        assert_rendered(buffer.getvalue())


def test_a_comparison_has_tabs_statistics_and_flips(
    browser: DevToolsBrowser, comparison_report: Path
) -> None:
    page = browser.open(comparison_report.as_uri())
    tabs = page.evaluate(
        "Array.from(document.querySelectorAll('#tabs button'), b => b.textContent)"
    )
    assert tabs == ["Comparison", "baseline.csv (baseline)", "candidate.csv"]
    visible = "Array.from(document.querySelectorAll('main > section'), s => !s.hidden)"
    assert page.evaluate(visible) == [True, False, False]
    text = page.evaluate("document.querySelector('#cmp').innerText")
    assert "Precision: 3 question(s) got worse" in text and "new reasoning 7" in text
    page.evaluate("document.querySelectorAll('#tabs button')[2].click()")
    assert page.evaluate(visible) == [False, False, True]
    page.evaluate(
        "(() => { const s = document.querySelector('#run1 select');"
        " s.value = Array.from(s.options).find(o => o.value.startsWith('w:')).value;"
        " s.dispatchEvent(new Event('change')); })()"
    )
    assert page.evaluate("document.querySelector('#run1 .shown').textContent") == (
        "Showing 3 of 12 questions"
    )
    page.evaluate("document.querySelector('#cmp a[href=\"#r1q7\"]').click()")
    assert page.evaluate(visible) == [False, False, True]
    assert_quiet(page, comparison_report)
    page.close()


def test_hostile_answers_render_as_text_and_run_nothing(
    browser: DevToolsBrowser, hostile_report: Path
) -> None:
    page = browser.open(hostile_report.as_uri())
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 3
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert page.evaluate("document.querySelectorAll('a:not([href^=\"#\"])').length") == 0
    assert page.evaluate("document.title") == "rag-eval comparison: hostile.csv vs hostile.csv (2)"
    headers = page.evaluate("Array.from(document.querySelectorAll('#t0 th'), th => th.textContent)")
    assert HOSTILE in headers
    for cell in (2, 3, 4):
        assert page.evaluate(f"document.querySelector('#r0q1 td:nth-child({cell})').textContent") \
            == HOSTILE  # fmt: skip
    assert page.evaluate("document.querySelectorAll('#w0 .ck tr:not(.cx)').length") == 2
    page.evaluate("document.querySelectorAll('#tabs button')[1].click()")
    page.evaluate("document.querySelector('#r0q1 td:nth-child(2)').click()")
    page.wait_for("document.querySelector('#w0 tr.cx li')")
    items = page.evaluate(
        "Array.from(document.querySelectorAll('#w0 tr.cx li'), li => li.textContent)"
    )
    assert items == [HOSTILE, HOSTILE + " golden"]
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 3
    assert page.dialogs == []
    assert_quiet(page, hostile_report)
    page.close()


@pytest.fixture(scope="module")
def reordered_report(folder: Path) -> Path:
    """The sample run against a run of the same questions numbered backwards (12 -> 1), three
    of them worse, the runs named with --name."""
    questions = sample_questions()
    baseline = write_run(folder / "reordered" / "baseline.csv", questions)
    backwards = [
        Question(13 - q.number, q.question, q.ground_truth, q.answer + " Probably.",
                 scores=(0, 1, 1) if q.number in (6, 7, 8) else q.scores,
                 reasoning=f"new reasoning {q.number}", metrics=q.metrics)
        for q in questions
    ]  # fmt: skip
    run = write_run(folder / "reordered" / "candidate.csv", backwards)
    names = [f"Before={baseline}", f"After={run}"]
    return build_report(ReportRequest([baseline, run], names=names)).path


def test_reordered_runs_mark_and_link_the_run_s_own_rows(
    browser: DevToolsBrowser, reordered_report: Path
) -> None:
    page = browser.open(reordered_report.as_uri())
    tabs = page.evaluate(
        "Array.from(document.querySelectorAll('#tabs button'), b => b.textContent)"
    )
    assert tabs == ["Comparison", "Before (baseline)", "After"]
    text = page.evaluate("document.querySelector('#cmp').innerText")
    assert "paired by question text" in text
    assert "Question 7 (run: 6)" in text and "new reasoning 7" in text
    page.evaluate("document.querySelectorAll('#tabs button')[2].click()")
    page.evaluate(
        "(() => { const s = document.querySelector('#run1 select');"
        " s.value = Array.from(s.options).find(o => o.value.startsWith('w:')).value;"
        " s.dispatchEvent(new Event('change')); })()"
    )
    shown = page.evaluate(
        "Array.from(document.querySelectorAll('#run1 tbody tr[id]'))"
        ".filter(r => !r.hidden && r.offsetParent !== null).map(r => r.id)"
    )
    assert sorted(shown) == ["r1q5", "r1q6", "r1q7"]  # baseline 8, 7, 6 numbered backwards
    question = page.evaluate("document.querySelector('#r1q6 td:nth-child(2)').textContent")
    assert question == sample_questions()[6].question
    assert_quiet(page, reordered_report)
    page.close()
