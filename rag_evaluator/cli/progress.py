"""The terminal side of a judged run, shared by ``evaluate`` and ``generate``."""

from __future__ import annotations

from rag_evaluator.cli import console
from rag_evaluator.errors import UsageError
from rag_evaluator.llm.judging import ProgressUpdate
from rag_evaluator.text.money import format_usd


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
