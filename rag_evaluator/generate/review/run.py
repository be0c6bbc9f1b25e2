"""The review run: walk the golden set's pairs, apply each decision, save after every one.

Prints nothing: cards, keys and the editor go through ``ReviewInteraction``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rag_evaluator.errors import EvaluationInterrupted, UsageError
from rag_evaluator.generate.golden_set import read_table, write_table
from rag_evaluator.generate.review.table import (
    EditError,
    ReviewCard,
    ReviewTable,
    parse_edit_file,
    render_edit_file,
)
from rag_evaluator.inputs.selection import format_numbers

logger = logging.getLogger(__name__)

ACCEPT, REJECT, EDIT, SKIP, QUIT = "a", "r", "e", "s", "q"
KEYS = ACCEPT + REJECT + EDIT + SKIP + QUIT


class ReviewInteraction(Protocol):
    """How the review talks to the person; the command implements it with ``console``."""

    def can_review(self) -> bool: ...

    def show(self, card: ReviewCard, edited: bool) -> None: ...

    def choose(self) -> str: ...

    def edit(self, text: str) -> str | None: ...

    def info(self, message: str) -> None: ...


@dataclass(frozen=True)
class ReviewRequest:
    questions_path: Path
    ground_truth_path: Path
    accept_all: bool = False


@dataclass(frozen=True)
class ReviewOutcome:
    """What a review session did, and what is left."""

    accepted: int = 0
    rejected: int = 0
    edited: int = 0
    skipped: int = 0
    remaining: int = 0
    reviewed: int = 0
    quit: bool = False


class _Session:
    def __init__(self, request: ReviewRequest, table: ReviewTable) -> None:
        self.request = request
        self.table = table
        self.accepted = self.rejected = self.edited = self.skipped = 0

    def save(self, *, questions: bool) -> None:
        # questions.csv first: a stop between the two writes leaves at most a ground-truth
        # row without its question, which the next review removes.
        if questions:
            write_table(self.request.questions_path, self.table.questions)
        write_table(self.request.ground_truth_path, self.table.ground_truth)

    def outcome(self, *, quit: bool) -> ReviewOutcome:
        return ReviewOutcome(
            accepted=self.accepted,
            rejected=self.rejected,
            edited=self.edited,
            skipped=self.skipped,
            remaining=len(self.table.pending()),
            reviewed=self.table.reviewed_count(),
            quit=quit,
        )


def _load(request: ReviewRequest) -> ReviewTable:
    table = ReviewTable(read_table(request.questions_path), read_table(request.ground_truth_path))
    if table.unanswered:
        logger.warning(
            "%s has question %s without a row in %s; not reviewed",
            request.questions_path.name,
            format_numbers(table.unanswered, 10),
            request.ground_truth_path.name,
        )
    return table


def run_review(request: ReviewRequest, interaction: ReviewInteraction) -> ReviewOutcome:
    """Review every pair not reviewed yet (or accept them all), saving after each decision."""
    table = _load(request)
    session = _Session(request, table)
    if table.orphans:
        logger.warning(
            "%s held question %s whose row in %s is gone (a rejection cut short); removed",
            request.ground_truth_path.name,
            format_numbers(table.orphans, 10),
            request.questions_path.name,
        )
        session.save(questions=False)
    if request.accept_all:
        session.accepted = table.accept_all()
        session.save(questions=False)
        return session.outcome(quit=False)
    pending = table.pending()
    if not pending:
        return session.outcome(quit=False)
    if not interaction.can_review():
        raise UsageError(
            "rag-eval review needs a terminal to show each pair and read your keys. Run it in "
            "a terminal, or pass --accept-all to accept every pair from a script"
        )
    try:
        for position, number in enumerate(pending, start=1):
            if not _review_pair(session, interaction, number, position, len(pending)):
                return session.outcome(quit=True)
    except KeyboardInterrupt:
        raise EvaluationInterrupted(
            "Interrupted; every decision made so far is saved. Run rag-eval review again to go on"
        ) from None
    return session.outcome(quit=False)


def _review_pair(
    session: _Session, interaction: ReviewInteraction, number: int, position: int, total: int
) -> bool:
    """Show one pair until it is decided or skipped; ``False`` when the person quits."""
    table = session.table
    edited = False
    while True:
        card = table.card(number, position, total)
        interaction.show(card, edited)
        key = interaction.choose()
        if key == QUIT:
            return False
        if key == SKIP:
            session.skipped += 1
            return True
        if key == ACCEPT:
            table.accept(number)
            session.save(questions=False)
            session.accepted += 1
            logger.info("Question %s accepted", number)
            return True
        if key == REJECT:
            table.reject(number)
            session.save(questions=True)
            session.rejected += 1
            logger.info("Question %s rejected", number)
            return True
        if key == EDIT:
            before = render_edit_file(card)
            text = interaction.edit(before)
            if text is None or text == before:
                interaction.info("Nothing was changed.")
                continue
            try:
                changed = parse_edit_file(text)
            except EditError as exc:
                interaction.info(f"Nothing was changed: {exc}.")
                continue
            table.edit(number, changed)
            session.save(questions=True)
            session.edited += 1
            edited = True
            logger.info("Question %s edited", number)
