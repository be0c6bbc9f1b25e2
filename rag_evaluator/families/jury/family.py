"""A family judged by a jury: the inner family's task run once per juror, each juror's
requests sent to its own model, and the jury's verdict taken from their results.

The jurors' tasks advance together: each stage of the jury holds the next stage of every
juror still working, so a jury of one-call families makes one stage of three calls, sent at
the same time (or in the same Message Batch). Each juror's result keeps the usage, calls and
cost of its own calls; the verdict pays for nothing, so nothing is counted twice. A jury
``with_known`` jurors (their results found in the response cache) runs only the others.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from rag_evaluator.families.base import (
    CallEstimate,
    CellValue,
    FamilyResult,
    JudgedFamily,
    PricedEstimate,
    Stage,
    SummaryTally,
    TaskRun,
)
from rag_evaluator.families.jury.results import Juror, JuryResult, juror_column
from rag_evaluator.families.result_json import family_result_from_json, family_result_to_json
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.llm.requests import CallOutcome
from rag_evaluator.results.kinds import MetricScale


class JuryFamily(JudgedFamily[JuryResult]):
    """``inner`` judged by every juror; the verdict is ``inner.jury_verdict`` of theirs."""

    def __init__(self, inner: JudgedFamily[Any], jurors: Sequence[Juror]) -> None:
        self.inner = inner
        self.jurors = tuple(jurors)
        self.name = inner.name
        self.version = inner.version
        self.metric_columns = inner.metric_columns
        self.rate_columns = inner.rate_columns
        self.reasoning_column = inner.reasoning_column
        self.lower_is_better_columns = inner.lower_is_better_columns
        # Each juror's own metrics and reasoning, after the verdict's columns.
        self.juror_columns = tuple(
            column
            for column in inner.columns
            if column in inner.metric_columns or column == inner.reasoning_column
        )
        self._juror_indexes = [inner.columns.index(column) for column in self.juror_columns]
        # Jurors whose results are known already, by position: they are not asked.
        self.known: Mapping[int, FamilyResult] = {}
        self.columns = (
            *inner.columns,
            *(juror_column(c, j.label) for j in self.jurors for c in self.juror_columns),
        )

    def identity(self) -> Mapping[str, Any]:
        return {"jury": [juror.model.key for juror in self.jurors], **self.inner.identity()}

    def cache_inputs(self, item: EvaluationItem) -> Mapping[str, Any]:
        return self.inner.cache_inputs(item)

    # -- the task -------------------------------------------------------------------------------

    def _routed(self, position: int, stage: Stage) -> Stage:
        key = self.jurors[position].model.key
        return tuple(replace(request, model=key) for request in stage)

    def with_known(self, known: Mapping[int, FamilyResult]) -> JuryFamily:
        """This jury, the jurors at the positions of ``known`` taking those results instead
        of being asked (same name, identity and columns: the same family to the run)."""
        jury = copy.copy(self)
        jury.known = dict(known)
        return jury

    def run(self, item: EvaluationItem) -> TaskRun[JuryResult]:
        asked = [position for position in range(len(self.jurors)) if position not in self.known]
        tasks = {position: self.inner.run(item) for position in asked}
        stages: dict[int, Stage] = {}
        results: dict[int, FamilyResult] = dict(self.known)
        paid = [_Paid() for _ in self.jurors]
        for position, task in tasks.items():
            _advance(task, None, position, stages, results)
        while stages:
            order = sorted(stages)
            outcomes = yield tuple(
                request
                for position in order
                for request in self._routed(position, stages[position])
            )
            start = 0
            for position in order:
                mine = tuple(outcomes[start : start + len(stages[position])])
                start += len(mine)
                paid[position].add(mine)
                _advance(tasks[position], mine, position, stages, results)
        jurors = tuple(paid[i].onto(results[i]) for i in range(len(self.jurors)))
        return self.combined(jurors)

    def combined(self, jurors: tuple[FamilyResult, ...]) -> JuryResult:
        """The jury's result from its jurors' (their usage and costs summed)."""
        verdict = self.inner.jury_verdict(jurors)
        return JuryResult(
            verdict=verdict,
            jurors=jurors,
            error=verdict.error,
            failure=verdict.failure,
            usage=sum((juror.usage for juror in jurors), TokenUsage()),
            calls=sum(juror.calls for juror in jurors),
            cost_usd=sum(juror.cost_usd for juror in jurors),
            retries=sum(juror.retries for juror in jurors),
        )

    def unscored(self, error: str, failure: str) -> JuryResult:
        verdict = self.inner.unscored(error, failure)
        jurors = tuple(self.inner.unscored(error, failure) for _ in self.jurors)
        return JuryResult(verdict=verdict, jurors=jurors, error=error, failure=failure)

    def missing_answer(self, note: str) -> JuryResult | None:
        verdict = self.inner.missing_answer(note)
        if verdict is None:
            return None
        return JuryResult(verdict=verdict, jurors=tuple(verdict for _ in self.jurors))

    # -- estimates --------------------------------------------------------------------------

    def _juror_stage(self, position: int, stage: Stage) -> Stage:
        key = self.jurors[position].model.key
        return tuple(request for request in stage if request.model == key)

    def estimate(self, item: EvaluationItem, first_stage: Stage) -> CallEstimate:
        shares = self.priced_estimates(item, first_stage)
        return sum((share.estimate for share in shares), CallEstimate.none())

    def priced_estimates(self, item: EvaluationItem, first_stage: Stage) -> list[PricedEstimate]:
        shares = []
        for position, juror in enumerate(self.jurors):
            stage = self._juror_stage(position, first_stage)
            if not stage:
                continue  # this juror decides without a call
            estimate = self.inner.estimate(item, stage)
            shares.append(
                PricedEstimate(f"{self.name} ({juror.label})", juror.model, estimate, stage[0])
            )
        return shares

    # -- results ----------------------------------------------------------------------------

    def cells(self, result: JuryResult | None) -> list[CellValue]:
        verdict = None if result is None else result.verdict
        cells = self.inner.cells(verdict)
        for position in range(len(self.jurors)):
            juror = None if result is None else result.jurors[position]
            mine = self.inner.cells(juror)
            cells.extend(mine[index] for index in self._juror_indexes)
        return cells

    def tally(self) -> SummaryTally[JuryResult]:
        # Imported here: the tally brings numpy, which a run without a jury never needs.
        from rag_evaluator.families.jury.tally import JuryTally

        return JuryTally(self.inner, tuple(juror.label for juror in self.jurors))

    def to_json(self, result: JuryResult) -> dict[str, Any]:
        verdict = result.verdict
        return {
            "verdict": None if verdict is None else self.inner.to_json(verdict),
            "jurors": [family_result_to_json(self.inner, juror) for juror in result.jurors],
        }

    def from_json(self, data: Mapping[str, Any], **common: Any) -> JuryResult:
        jurors = tuple(family_result_from_json(self.inner, juror) for juror in data["jurors"])
        if len(jurors) != len(self.jurors):
            raise ValueError(f"a jury of {len(self.jurors)} needs as many juror results")
        saved = data["verdict"]
        verdict = (
            None
            if saved is None
            else self.inner.from_json(
                saved, error=common.get("error"), failure=common.get("failure")
            )
        )
        return JuryResult(verdict=verdict, jurors=jurors, **common)

    def error_text(self, result: JuryResult) -> str:
        if result.verdict is not None and result.verdict.error:
            return self.inner.error_text(result.verdict)
        return result.error or ""

    def note_text(self, result: JuryResult) -> str:
        return "" if result.verdict is None else self.inner.note_text(result.verdict)

    def metric_scales(self) -> dict[str, MetricScale]:
        return self.inner.metric_scales()

    def metric_values(self, result: JuryResult) -> Mapping[str, float | None]:
        return {} if result.verdict is None else self.inner.metric_values(result.verdict)

    def progress_scores(self, result: JuryResult) -> Mapping[str, int]:
        return {} if result.verdict is None else self.inner.progress_scores(result.verdict)

    def jury_verdict(self, results: Sequence[JuryResult]) -> JuryResult:
        raise TypeError("a jury does not sit on a jury")


class _Paid:
    """What one juror's calls used and cost (the engine only sums the whole jury's)."""

    def __init__(self) -> None:
        self.usage = TokenUsage()
        self.calls = 0
        self.cost_usd = 0.0
        self.retries = 0

    def add(self, outcomes: Sequence[CallOutcome]) -> None:
        for outcome in outcomes:
            self.usage = self.usage + outcome.usage
            self.calls += outcome.calls
            self.cost_usd += outcome.cost_usd
            self.retries += outcome.retries

    def onto(self, result: FamilyResult) -> FamilyResult:
        return replace(
            result,
            usage=result.usage + self.usage,
            calls=result.calls + self.calls,
            cost_usd=result.cost_usd + self.cost_usd,
            retries=result.retries + self.retries,
        )


def _advance(
    task: TaskRun[Any],
    outcomes: tuple[CallOutcome, ...] | None,
    position: int,
    stages: dict[int, Stage],
    results: dict[int, FamilyResult],
) -> None:
    """Send a juror's task its outcomes (none to start it): its next stage, or its result."""
    try:
        stage = next(task) if outcomes is None else task.send(outcomes)
    except StopIteration as finished:
        stages.pop(position, None)
        results[position] = finished.value
        return
    stages[position] = stage
