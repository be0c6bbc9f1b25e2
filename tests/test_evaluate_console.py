"""What the terminal shows when a run is interrupted."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from rag_evaluator import console


@pytest.mark.parametrize(
    ("is_terminal", "expected"), [(True, "\nError: Stop.\n"), (False, "Error: Stop.\n")]
)
def test_an_interruption_starts_on_a_line_of_its_own_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, is_terminal: bool, expected: str
) -> None:
    # On a terminal the cursor sits right after the echoed ^C (or a prompt); in a pipe or a
    # file there is no ^C and no blank line is wanted.
    stream = io.StringIO()
    fake_stderr = Console(file=stream, force_terminal=is_terminal, color_system=None, width=80)
    monkeypatch.setattr(console, "stderr_console", fake_stderr)

    console.interrupted("Stop.")

    assert stream.getvalue() == expected
