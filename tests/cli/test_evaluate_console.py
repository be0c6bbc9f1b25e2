"""What the terminal shows when a run is interrupted."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from rag_evaluator.cli import console


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


def test_a_long_offline_pass_shows_progress_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Embedding 1,943 texts took minutes with nothing on a log or a pipe: a line at each
    # tenth of the way and at the end now says the pass is moving.
    stream = io.StringIO()
    fake_stderr = Console(file=stream, force_terminal=False, color_system=None, width=120)
    monkeypatch.setattr(console, "stderr_console", fake_stderr)
    progress = console.RunProgress()
    total = 1943
    for done in [*range(64, total, 64), total]:
        progress.work("Embedding", done, total)
    progress.work("BERTScore", 40, 40)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "Embedding 64/1943 passages..."
    assert lines[-2:] == ["Embedding 1943/1943 passages...", "BERTScore 40/40 texts..."]
    assert 10 <= len(lines) - 1 <= 11  # about one line per tenth, never one per batch
