"""Placeholder until the jury statistics land: the verdicts' own summary lines."""

from __future__ import annotations

from typing import Any

from rag_evaluator.families.base import JudgedFamily, SummaryTally
from rag_evaluator.families.jury.results import JuryResult
from rag_evaluator.results.summary import SummaryLine


class JuryTally(SummaryTally[JuryResult]):
    def __init__(self, family: JudgedFamily[Any], labels: tuple[str, ...]) -> None:
        self.inner = family.tally()
        self.labels = labels

    def add(self, result: JuryResult) -> None:
        if result.verdict is not None:
            self.inner.add(result.verdict)

    def lines(self) -> list[SummaryLine]:
        return self.inner.lines()
