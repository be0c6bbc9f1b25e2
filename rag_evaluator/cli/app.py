"""The `rag-eval` command: registers commands, turns errors into messages and exit codes."""

from __future__ import annotations

import functools
import logging
import signal
from collections.abc import Callable
from types import FrameType
from typing import ParamSpec, TypeVar

import typer

from rag_evaluator import __version__
from rag_evaluator.cli import console
from rag_evaluator.cli.calibrate import calibrate_command
from rag_evaluator.cli.compare import compare_command
from rag_evaluator.cli.convert import convert_command
from rag_evaluator.cli.evaluate import EVALUATE_HELP, evaluate_command
from rag_evaluator.cli.generate import GENERATE_HELP, generate_command
from rag_evaluator.cli.report import report_command
from rag_evaluator.cli.review import REVIEW_HELP, review_command
from rag_evaluator.errors import EvaluationInterrupted, RagEvalError

EXIT_INTERRUPTED = 130

logger = logging.getLogger(__name__)

Params = ParamSpec("Params")
Result = TypeVar("Result")

app = typer.Typer(
    name="rag-eval",
    help="Score RAG answers against a golden set.",
    no_args_is_help=True,
    add_completion=False,
    # Locals can hold the API key; never print them.
    pretty_exceptions_show_locals=False,
    # Plain click help and usage errors: "Error: ..." lines like the tool's own, no boxes,
    # no "<bool>" type column.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def reports_errors(command: Callable[Params, Result]) -> Callable[Params, Result]:
    """Turn the tool's own errors into one line with the fix and the error's exit code."""

    @functools.wraps(command)
    def wrapper(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        try:
            return command(*args, **kwargs)
        except RagEvalError as exc:
            logger.error("%s: %s", type(exc).__name__, exc.message, extra={"terminal": False})
            console.error(exc.message)
            raise typer.Exit(exc.exit_code) from None
        except EvaluationInterrupted as interrupted:
            # The run stopped cleanly; its message says what was kept and how to resume.
            console.interrupted(interrupted.message)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except KeyboardInterrupt:
            console.interrupted("Interrupted.")
            raise typer.Exit(EXIT_INTERRUPTED) from None

    return wrapper


def _version_callback(value: bool) -> None:
    if value:
        console.stdout_console.print(f"rag-eval {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Show the version."
    ),
) -> None:
    """Score RAG answers against a golden set."""


app.command("convert")(reports_errors(convert_command))
app.command("evaluate", help=EVALUATE_HELP)(reports_errors(evaluate_command))
app.command("compare")(reports_errors(compare_command))
app.command("calibrate")(reports_errors(calibrate_command))
app.command("report")(reports_errors(report_command))
app.command("generate", help=GENERATE_HELP)(reports_errors(generate_command))
app.command("review", help=REVIEW_HELP)(reports_errors(review_command))


def _interrupt_on_terminate(signal_number: int, frame: FrameType | None) -> None:
    # `kill`, a CI timeout or a container stop sends SIGTERM: stop as cleanly as on
    # Ctrl-C (checkpoint kept, a message on how to resume) rather than vanish silently.
    raise KeyboardInterrupt


def main() -> None:
    """Console-script entry point."""
    signal.signal(signal.SIGTERM, _interrupt_on_terminate)
    app()
