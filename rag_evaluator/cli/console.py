"""The only module that prints: messages, prompts and tables go to the terminal from here.

Every text printed here may hold text from the user's files (file and column names, cells,
checkpoint fields): each goes through ``_shown`` (markup) or ``_plain`` (rich ``Text``), which
escape the characters a terminal would act on, so no file can send it a control sequence.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from rag_evaluator.text.snippets import terminal_json, terminal_text

if TYPE_CHECKING:
    from rich.text import Text

    from rag_evaluator.generate.review.table import ReviewCard

# Messages, progress and prompts go to stderr so stdout stays clean for tables
# a user may want to pipe; rich drops colour when the stream is not a terminal.
stderr_console = Console(stderr=True, highlight=False, soft_wrap=True)
stdout_console = Console(highlight=False, soft_wrap=True)

# Text rich prints unchanged when it is not a terminal: no markup brackets, no emoji colons.
_PLAIN_LINE = re.compile(r"[A-Za-z0-9 .,/()_+-]*")


def _plain(text: str) -> str:
    """``text`` safe for a terminal, for a rich ``Text`` (which takes no markup)."""
    return terminal_text(text)


def _shown(text: str) -> str:
    """``text`` safe for a terminal and as rich markup (its ``[`` cannot start a style)."""
    return escape(terminal_text(text))


def error(message: str) -> None:
    """Print a one-line user-facing error."""
    stderr_console.print(f"[bold red]Error:[/] {_shown(message)}")


def interrupted(message: str) -> None:
    """Report a Ctrl-C as an error line of its own.

    The terminal has just echoed ``^C`` where the cursor was (after a prompt, or at the
    start of a line): start on a fresh line rather than glue the message to it.
    """
    if stderr_console.is_terminal:
        stderr_console.print("")
    error(message)


def warning(message: str) -> None:
    """Print a one-line warning."""
    stderr_console.print(f"[yellow]Warning:[/] {_shown(message)}")


def info(message: str) -> None:
    """Print a plain status line."""
    stderr_console.print(_shown(message))


def progress(message: str) -> None:
    """Print a progress line such as ``Evaluating question 15/50...``."""
    shown = terminal_text(message)
    if _PLAIN_LINE.fullmatch(shown) and not stderr_console.is_terminal:
        # Without a terminal a run prints one of these per question: written as rich would
        # print it (no markup, emoji code or style in it), without rendering it each time.
        stderr_console.file.write(shown + "\n")
        stderr_console.file.flush()
        return
    stderr_console.print(escape(shown))


def confirm(question: str, *, assume_yes: bool, default: bool = True) -> bool:
    """Ask a yes/no question (``[Y/n]`` when the default is yes); ``assume_yes`` skips it.

    End of input (no terminal, closed stdin) counts as the default answer being
    refused: a run nobody confirmed must not spend money.
    """
    suffix = "[Y/n]" if default else "[y/N]"
    if assume_yes:
        stderr_console.print(f"{_shown(question)} {_shown(suffix)} y (--yes)")
        return True
    while True:
        stderr_console.print(f"{_shown(question)} {_shown(suffix)} ", end="")
        try:
            answer = input()
        except EOFError:
            stderr_console.print("")
            return False
        answer = answer.strip().lower()
        if not answer:
            return default
        if answer in {"y", "yes"}:
            return True
        if answer in {"n", "no"}:
            return False
        stderr_console.print("Please answer y or n.")


def table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    to_stdout: bool = True,
    text_columns: Sequence[int] = (),
) -> None:
    """Print a simple table: the first column and ``text_columns`` left-aligned, the rest
    (figures) right-aligned.

    On a narrow terminal the first column (names) keeps its width and long cells fold onto
    more lines: a figure is never cut short with an ellipsis.
    """
    rendered = Table(title=_shown(title), title_justify="left")
    for index, column in enumerate(columns):
        left = index == 0 or index in text_columns
        rendered.add_column(
            _shown(column), justify="left" if left else "right", no_wrap=index == 0, overflow="fold"
        )
    for row in rows:
        rendered.add_row(*(_shown(str(cell)) for cell in row))
    (stdout_console if to_stdout else stderr_console).print(rendered)


def stdin_is_terminal() -> bool:
    """Whether a person can answer prompts (standard input is a terminal)."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


# What a long offline step counts, by its label: texts (embedding, BERTScore), or the
# questions of an offline run scored a chunk at a time ("Scoring").
# What each pass counts: the embedding pass reads long texts as several passages.
_WORK_UNITS = {"Scoring": "questions", "Embedding": "passages"}


class RunProgress:
    """What a run shows while it works: a progress bar on a terminal, plain lines otherwise.

    On a terminal: done/total, elapsed, time left, calls and spend so far and the running
    rates of the binary judge metrics, redrawn in place; warnings print above it. Without a
    terminal (a log file, CI): one ``Evaluating question 15/50...`` line per question.
    """

    def __init__(self, label: str = "Evaluating") -> None:
        self._label = label
        self._live = stderr_console.is_terminal
        self._progress: Progress | None = None
        self._questions: TaskID | None = None
        self._work: dict[str, TaskID] = {}
        # Without a terminal: the last tenth of each step reported.
        self._work_tenths: dict[str, int] = {}

    def _ensure_started(self) -> Progress:
        if self._progress is None:
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[details]}"),
                console=stderr_console,
            )
            self._progress.start()
        return self._progress

    def question_started(self, position: int, total: int, question_number: int) -> None:
        if not self._live:
            progress(f"{self._label} question {position}/{total} (question {question_number})...")
            return
        bar = self._ensure_started()
        if self._questions is None:
            self._questions = bar.add_task(self._label, total=total, details="")

    def question_finished(self, finished: int, total: int, details: str) -> None:
        if not self._live:
            return
        bar = self._ensure_started()
        if self._questions is None:
            self._questions = bar.add_task(self._label, total=total, details="")
        bar.update(self._questions, completed=finished, total=total, details=details)

    def work(self, label: str, done: int, total: int) -> None:
        """Progress of a long offline step (embedding, BERTScore): a bar on a terminal;
        otherwise a line at each tenth of the way and at the end, so a log shows that a
        long pass is moving."""
        if not self._live:
            tenth = done * 10 // total if total else 10
            if tenth > self._work_tenths.get(label, -1):
                self._work_tenths[label] = tenth
                progress(f"{label} {done}/{total} {_WORK_UNITS.get(label, 'texts')}...")
            return
        bar = self._ensure_started()
        task = self._work.get(label)
        if task is None:
            task = self._work[label] = bar.add_task(label, total=total, details="")
        bar.update(task, completed=done, total=total)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._questions = None
            self._work = {}


def raw_output(text: str) -> None:
    """Write JSON ``text`` to stdout for a script, with a final newline: as given, but for
    the characters a terminal would act on, written as JSON escapes (the same JSON)."""
    text = terminal_json(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def workflow_command(line: str, *, to_stdout: bool = True) -> None:
    """Write a CI runner's workflow command (``::error ...::...``, escaped already) as one
    line: on stdout, or on stderr (which the runner reads too) when stdout carries JSON."""
    stream = sys.stdout if to_stdout else sys.stderr
    stream.write(line + "\n")
    stream.flush()


# --- rag-eval review ------------------------------------------------------------------------

HIGHLIGHT_STYLE = "bold black on yellow"
# Under NO_COLOR rich drops the colours; reverse video is no colour and still marks the text.
NO_COLOR_HIGHLIGHT_STYLE = "bold reverse"


def review_card(card: ReviewCard, *, edited: bool = False) -> None:
    """Show one pair for review: question, answer, facts, source chunks with the supporting
    sentences highlighted."""
    from rich.panel import Panel
    from rich.rule import Rule
    from rich.text import Text

    kind = f" · {card.question_type}" if card.question_type else ""
    title = f"Question {card.question_number} · {card.position} of {card.total} to review{kind}"
    stderr_console.print(Rule(_shown(title), align="left"))
    if edited:
        stderr_console.print("[green](edited)[/]")
    for label, value in (
        ("Question", card.question),
        ("Answer", card.ground_truth),
        ("Required facts", "; ".join(card.required_facts) or "-"),
        ("Source", card.source or "-"),
    ):
        line = Text()
        line.append(f"{label}: ", style="bold")
        line.append(_plain(value))
        stderr_console.print(line)
    if not card.contexts:
        stderr_console.print(Text("No relevant context (an unanswerable question).", style="dim"))
    for context in card.contexts:
        body = _highlighted(context.text, context.highlights)
        # soft_wrap off: a chunk folds inside its box instead of being cut at the border.
        stderr_console.print(
            Panel(body, title=_shown(context.label), title_align="left"), soft_wrap=False
        )
    if card.supporting_sentences and not any(context.highlights for context in card.contexts):
        stderr_console.print(
            Text("The supporting sentences are not found in the contexts.", style="yellow")
        )


def _highlighted(text: str, highlights: Sequence[tuple[int, int]]) -> Text:
    """``text`` made safe for a terminal with the spans ``highlights`` (offsets into
    ``text``) highlighted: each piece is escaped on its own, so escaping a control
    character cannot shift a highlight."""
    from rich.text import Text

    style = NO_COLOR_HIGHLIGHT_STYLE if stderr_console.no_color else HIGHLIGHT_STYLE
    body = Text()
    position = 0
    for start, end in sorted(highlights):
        start = max(start, position)
        if end <= start:
            continue
        body.append(_plain(text[position:start]))
        body.append(_plain(text[start:end]), style=style)
        position = end
    body.append(_plain(text[position:]))
    return body


def read_key(prompt: str, keys: str) -> str:
    """Wait for one of ``keys`` (a single key press on a terminal); end of input is ``q``."""
    import click

    stderr_console.print(_shown(prompt), end=" ")
    while True:
        try:
            key = click.getchar(echo=False).lower()
        except EOFError:
            key = "q"
        if key in keys:
            stderr_console.print(_shown(key))
            return key


def edit_text(text: str) -> str | None:
    """Open ``$VISUAL`` / ``$EDITOR`` (else a default editor) on ``text`` in a temporary file
    and return the file's text once the editor exits; ``click.ClickException`` when the editor
    cannot be run."""
    import click

    return click.edit(text, extension=".txt", require_save=False)
