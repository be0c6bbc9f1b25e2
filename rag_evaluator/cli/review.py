"""``rag-eval review``: walk the generated pairs in the terminal, one key per decision."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import click
import typer

from rag_evaluator.cli import console
from rag_evaluator.cli.logs import configure_logging

# The review pipeline (with rapidfuzz) is imported when the command runs, so that `--help`
# stays quick.
if TYPE_CHECKING:
    from rag_evaluator.generate.review.table import ReviewCard

REVIEW_HELP = """Review a golden set pair by pair before you use it.

\b
Shows each question not reviewed yet with its answer, required facts and
source chunk(s), the supporting sentences highlighted. Keys:
  a  accept (ground_truth.csv's Reviewed column says "accepted")
  r  reject (the pair leaves questions.csv and ground_truth.csv)
  e  edit question, answer and facts in $EDITOR, then decide
  s  skip (ask again next time)
  q  quit
Both files are saved after every decision: stop any time and run
rag-eval review again to go on where you stopped. --accept-all accepts every
pair not reviewed yet, without a terminal (scripts)."""


class ConsoleReview:
    """Cards, keys and the editor on the terminal."""

    def can_review(self) -> bool:
        return console.stdin_is_terminal()

    def show(self, card: ReviewCard, edited: bool) -> None:
        console.review_card(card, edited=edited)

    def choose(self) -> str:
        from rag_evaluator.generate.review.run import KEYS

        return console.read_key("[a]ccept  [r]eject  [e]dit  [s]kip  [q]uit?", KEYS)

    def edit(self, text: str) -> str | None:
        try:
            return console.edit_text(text)
        except click.ClickException as exc:
            console.warning(
                f"The editor could not be run ({exc.format_message()}). Set EDITOR to your "
                "editor's command, e.g. EDITOR=nano"
            )
            return None

    def info(self, message: str) -> None:
        console.info(message)


def review_command(
    questions: Annotated[
        Path, typer.Option("--questions", help="The golden set's questions.")
    ] = Path("questions.csv"),
    ground_truth: Annotated[
        Path, typer.Option("--ground-truth", help="The golden set's answers.")
    ] = Path("ground_truth.csv"),
    accept_all: Annotated[
        bool,
        typer.Option(
            "--accept-all", help="Accept every pair not reviewed yet (no terminal needed)."
        ),
    ] = False,
) -> None:
    from rag_evaluator.generate.review.run import ReviewRequest, run_review

    configure_logging()
    outcome = run_review(ReviewRequest(questions, ground_truth, accept_all), ConsoleReview())
    if accept_all:
        console.info(f"Accepted {outcome.accepted} pair(s); {outcome.reviewed} reviewed in all.")
        raise typer.Exit(0)
    parts = [
        f"{outcome.accepted} accepted",
        f"{outcome.rejected} rejected",
        f"{outcome.edited} edit(s)",
        f"{outcome.skipped} skipped",
    ]
    console.info(f"This session: {', '.join(parts)}. Reviewed in all: {outcome.reviewed}.")
    if outcome.remaining:
        console.info(f"{outcome.remaining} pair(s) still to review: run rag-eval review again.")
    else:
        console.info(f"Every pair is reviewed. Saved in {questions} and {ground_truth}.")
    raise typer.Exit(0)
