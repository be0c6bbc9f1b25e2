"""The per-question progress line without a terminal is written without rich's rendering
(issue 26: a large run prints one per question); what it prints must not change."""

from __future__ import annotations

import io
from contextlib import redirect_stderr

from hypothesis import given
from hypothesis import strategies as st
from rich.markup import escape

from rag_evaluator.cli import console
from rag_evaluator.text.snippets import terminal_text

PLAIN = st.text(alphabet="Evaluatingquestion 0123456789./()-_,+", max_size=200)
ANY = st.text(max_size=120)


def _printed(action: object, *arguments: str) -> str:
    stream = io.StringIO()
    with redirect_stderr(stream):
        action(*arguments)  # type: ignore[operator]
    return stream.getvalue()


def _as_rich_prints(text: str) -> str:
    return _printed(console.stderr_console.print, escape(terminal_text(text)))


@given(PLAIN | ANY)
def test_a_progress_line_prints_what_rich_prints(text: str) -> None:
    assert _printed(console.progress, text) == _as_rich_prints(text)


def test_the_evaluate_progress_line_is_printed_whole() -> None:
    line = "Evaluating question 15/50 (question 123)..."
    assert _printed(console.progress, line) == line + "\n"
