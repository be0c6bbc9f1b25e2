"""The terminal side of a judged run, shared by ``evaluate`` and ``generate``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rag_evaluator.cli import console
from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.text.money import format_usd

# The commands subclass RunConsole where they declare their options: it imports no
# pipeline, so that `--help` stays quick.
if TYPE_CHECKING:
    from rag_evaluator.llm.cost import CostEstimate
    from rag_evaluator.llm.judging import ProgressUpdate


class RunConsole:
    """Answers the pipeline's questions and shows its progress on the terminal.

    Commands subclass it with their ``show_plan`` and, where they show more than the calls
    and spend, ``progress_details``.
    """

    def __init__(self, assume_yes: bool, *, label: str = "Evaluating") -> None:
        self.assume_yes = assume_yes
        self.progress = console.RunProgress(label=label)

    def can_confirm(self) -> bool:
        return self.assume_yes or console.stdin_is_terminal()

    def confirm(self, question: str, *, default: bool) -> bool:
        if not self.can_confirm():
            raise UsageError(
                f"There is no terminal to answer {question!r}. Run with --yes (-y) to answer "
                "yes in scripts and CI"
            )
        return console.confirm(question, assume_yes=self.assume_yes, default=default)

    def info(self, message: str) -> None:
        console.info(message)

    def question_started(self, position: int, total: int, question_number: int) -> None:
        self.progress.question_started(position, total, question_number)

    def question_finished(self, update: ProgressUpdate) -> None:
        self.progress.question_finished(
            update.finished, update.total, self.progress_details(update)
        )

    def progress_details(self, update: ProgressUpdate) -> str:
        return f"calls {update.calls} · {format_usd(update.cost_usd)}"

    def work_progress(self, label: str, done: int, total: int) -> None:
        self.progress.work(label, done, total)

    def finished(self) -> None:
        self.progress.stop()

    # -- the plan's lines every model-calling command shows -------------------------------

    @staticmethod
    def show_seed(seed: int | None, drawn: bool, what: str) -> None:
        """``Seed: 7`` (with how to repeat ``what`` when the seed was drawn)."""
        if drawn:
            console.info(f"Seed: {seed} (repeat this {what} with --seed {seed})")
        else:
            console.info(f"Seed: {seed}")

    @staticmethod
    def show_known(resumed: int, pending: int, cached: int, verb: str) -> None:
        """What a resumed checkpoint and the response cache spare the run."""
        if resumed:
            console.info(f"Resuming: {resumed} done, {pending} still to {verb}")
        if cached:
            console.info(f"From the response cache (no call): {cached}")

    @staticmethod
    def show_too_long(numbers: Sequence[int], fate: str) -> None:
        if numbers:
            console.warning(
                f"Too long for the model's context window, {fate} without a call: question "
                f"{format_numbers(numbers, 10)}"
            )

    @staticmethod
    def show_estimate(
        estimate: CostEstimate,
        *,
        batch: bool,
        concurrency: int,
        max_cost: float | None,
        also: Sequence[str] = (),
    ) -> None:
        """The cost range with how the calls go out, each family's share and the budget."""
        from rag_evaluator.llm.cost import estimate_assumes

        how = []
        if batch:
            how.append("Message Batches, 50% off")
        elif concurrency > 1:
            how.append(f"{concurrency} calls at a time")
        if estimate.prompt_caching:
            how.append("prompt caching")
        how.extend(also)
        extra = f"; {', '.join(how)}" if how else ""
        console.info(
            f"Estimated cost: {estimate.dollars()} "
            f"({estimate.expected_calls_low} to {estimate.expected_calls_high} calls{extra})"
        )
        if len(estimate.families) > 1:
            for family in estimate.families:
                console.info(f"  {family.describe()}")
        console.info(f"  {estimate_assumes(estimate)}")
        if max_cost is not None:
            console.info(f"Budget: stops before spending more than {format_usd(max_cost)}")
