"""What a model-judged family is: a per-question task over model calls, and its results.

A family (the precision/recall/accuracy judge, and the LLM metric families after it) says,
for one question, which model requests it needs, possibly in stages (extract claims, then
verify them), and turns the replies into named scores. A task is a generator: it yields a
``Stage`` (requests that may run at the same time), receives one ``CallOutcome`` per request,
and finally returns the family's result. It never calls anything itself, so the same task runs
with direct calls, concurrently, through a Message Batch, or replayed from a checkpoint.

    def run(item):
        (first,) = yield (request,)
        if not first.ok:
            return family.unscored(first.error, first.failure)
        ...
        return result

The engine sums the usage and calls of every outcome into the result, so tasks do not.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.llm.models import ModelInfo
from rag_evaluator.llm.requests import (
    CHARS_PER_TOKEN_HIGH,
    CHARS_PER_TOKEN_LOW,
    CallOutcome,
    FailureKind,
    ModelRequest,
)
from rag_evaluator.results.kinds import RATE, SCORE, MetricScale
from rag_evaluator.results.summary import SummaryLine

Stage = tuple[ModelRequest, ...]
CellValue = int | float | str | None

# Why a family result is unscored without a failed call: the request could not fit the model.
TOO_LONG = "too_long"


# How a model is told that a question has several reference answers (the offline metrics take
# the best over them; a model must not ask the answer to cover them all).
SEVERAL_REFERENCES_PREFACE = (
    "Several reference answers are given; any one of them is a correct and complete answer:"
)


def reference_for_models(item: EvaluationItem) -> str:
    """The reference as a model-judged family sends it: the ground truth, or several
    reference answers numbered under a line saying any one of them is enough."""
    if not item.reference_answers:
        return item.ground_truth
    listed = (f"{number}. {answer}" for number, answer in enumerate(item.reference_answers, 1))
    return "\n".join((SEVERAL_REFERENCES_PREFACE, *listed))


@dataclass(kw_only=True, slots=True)
class FamilyResult:
    """What one family produced for one question; families subclass it with their scores.

    ``error`` is why the family could not score the question at all (then ``failure`` says
    whether the cause was transient, tied to the request, or the request too long to send);
    ``cached`` marks a result reused from the response cache instead of being paid for.
    ``calls`` counts billed calls; ``retries`` the requests sent again (not all billed).

    Results are never changed once built (``dataclasses.replace`` makes a changed copy).
    They are plain slotted dataclasses rather than frozen ones because a run holds one per
    question and a resume reads a million of them back: frozen ones take six times as long
    to build and half as much memory again.
    """

    usage: TokenUsage = field(default_factory=TokenUsage)
    calls: int = 0
    cost_usd: float = 0.0
    retries: int = 0
    error: str | None = None
    failure: str | None = None
    cached: bool = False

    @property
    def scored(self) -> bool:
        return self.error is None

    @property
    def failed_transiently(self) -> bool:
        return self.failure == FailureKind.TRANSIENT.value


ResultT = TypeVar("ResultT", bound=FamilyResult)
TaskRun = Generator[Stage, tuple[CallOutcome, ...], ResultT]


# Read-only by convention, not frozen: the plan builds one per question and family, as it
# does a PricedEstimate (see inputs/records).
@dataclass(slots=True)
class CallEstimate:
    """The expected model calls of one family for one question, as a low-high range.

    ``cacheable_system_tokens`` is the system prompt's size when prompt caching applies to
    it (0 otherwise): every call after a run's first then reads it from the cache.
    """

    calls_low: float
    calls_high: float
    input_tokens_low: float
    input_tokens_high: float
    output_tokens_low: float
    output_tokens_high: float
    system_characters: int = 0

    @classmethod
    def none(cls) -> CallEstimate:
        return cls(0, 0, 0, 0, 0, 0)

    def __add__(self, other: CallEstimate) -> CallEstimate:
        """The estimates of two questions together."""
        total = RunningCallEstimate(self)
        total.add(other)
        return total.total()

    def system_tokens_low(self) -> int:
        return self.system_characters // CHARS_PER_TOKEN_LOW

    def system_tokens_high(self) -> int:
        return -(-self.system_characters // CHARS_PER_TOKEN_HIGH)


class RunningCallEstimate:
    """A running sum of ``CallEstimate``s, added in place (a run's plan keeps one per family
    and adds every question's to it, without a new estimate per question)."""

    __slots__ = ("system_characters", "values")

    def __init__(self, first: CallEstimate) -> None:
        self.values = [
            first.calls_low,
            first.calls_high,
            first.input_tokens_low,
            first.input_tokens_high,
            first.output_tokens_low,
            first.output_tokens_high,
        ]
        self.system_characters = first.system_characters

    def add(self, estimate: CallEstimate) -> None:
        values = self.values
        values[0] += estimate.calls_low
        values[1] += estimate.calls_high
        values[2] += estimate.input_tokens_low
        values[3] += estimate.input_tokens_high
        values[4] += estimate.output_tokens_low
        values[5] += estimate.output_tokens_high
        self.system_characters = max(self.system_characters, estimate.system_characters)

    def total(self) -> CallEstimate:
        return CallEstimate(*self.values, system_characters=self.system_characters)


@dataclass(slots=True)
class PricedEstimate:
    """A share of a family's expected calls for one question, priced with one model.

    ``share`` names it in the estimate (the family, or ``judge (haiku)`` for a juror's);
    ``model`` is ``None`` for the run's own model; ``first`` is the first request of the share
    (counted by the API for ``--exact-estimate``).
    """

    share: str
    model: ModelInfo | None
    estimate: CallEstimate
    first: ModelRequest


class SummaryTally(ABC, Generic[ResultT]):
    """A family's summary built one result at a time, so that a run can read its results
    back from the checkpoint one by one instead of holding them all (issue 15).

    Tallies keep counts and, for means, the values themselves (8 bytes each, in the order
    added: the bootstrap interval depends on the order, so it matches a list's).
    """

    @abstractmethod
    def add(self, result: ResultT) -> None:
        """Count one question's result."""

    def add_question(self, question_number: int, result: ResultT) -> None:
        """Count one question's result, given its number: for a tally that names questions
        (a jury's split questions); the others only ``add`` it."""
        self.add(result)

    @abstractmethod
    def lines(self) -> list[SummaryLine]:
        """The ``#SUMMARY`` lines of the results added so far."""


class NoSummary(SummaryTally[Any]):
    """The tally of a family without summary lines."""

    def add(self, result: Any) -> None:
        return None

    def lines(self) -> list[SummaryLine]:
        return []


class JudgedFamily(ABC, Generic[ResultT]):
    """A family of scores that a model judges, one task per question."""

    #: The family's name in ``--metrics``, checkpoints and the response cache.
    name: str
    #: Bumped whenever prompts, schemas or scoring change, so older cached results are not reused.
    version: int = 1
    #: The result table's columns this family fills, in order.
    columns: tuple[str, ...] = ()
    #: Those of ``columns`` that hold scores (0/1 or 0-1), for gates and tallies.
    metric_columns: tuple[str, ...] = ()
    #: Those of ``metric_columns`` that hold 0/1 outcomes (rates); the others are 0-1 scores.
    rate_columns: tuple[str, ...] = ()
    #: The column of ``columns`` holding the reasoning behind the family's scores, if any.
    reasoning_column: str | None = None
    #: Those of ``metric_columns`` where a lower value is the better one (gated by
    #: ``--fail-over``); the others are higher-is-better.
    lower_is_better_columns: frozenset[str] = frozenset()

    @abstractmethod
    def identity(self) -> Mapping[str, Any]:
        """Everything besides the inputs and model that changes this family's verdicts."""

    @abstractmethod
    def run(self, item: EvaluationItem) -> TaskRun[ResultT]:
        """The task for one question (a generator of stages; see the module docstring)."""

    @abstractmethod
    def unscored(self, error: str, failure: str) -> ResultT:
        """The result of a question this family could not score."""

    @abstractmethod
    def estimate(self, item: EvaluationItem, first_stage: Stage) -> CallEstimate:
        """The expected calls for ``item``, given the requests of its first stage."""

    def priced_estimates(self, item: EvaluationItem, first_stage: Stage) -> list[PricedEstimate]:
        """``estimate`` as shares priced by model: one, at the run's model (a jury has one
        per juror)."""
        return [PricedEstimate(self.name, None, self.estimate(item, first_stage), first_stage[0])]

    @abstractmethod
    def cells(self, result: ResultT | None) -> list[CellValue]:
        """The row's cells for ``columns`` (all empty when ``result`` is ``None``)."""

    @abstractmethod
    def tally(self) -> SummaryTally[ResultT]:
        """An empty running summary, to add the run's results to one at a time."""

    def summary(self, results: Iterable[ResultT]) -> list[SummaryLine]:
        """The family's ``#SUMMARY`` lines over ``results``."""
        tally = self.tally()
        for result in results:
            tally.add(result)
        return tally.lines()

    @abstractmethod
    def to_json(self, result: ResultT) -> dict[str, Any]:
        """The result as checkpoint / response-cache JSON (usage and calls are kept apart)."""

    @abstractmethod
    def from_json(self, data: Mapping[str, Any], **common: Any) -> ResultT:
        """Read a result back, with the fields every result shares (``common``: usage, calls,
        cost_usd, error, failure, cached) passed through to its constructor; raises
        KeyError/TypeError/ValueError when malformed."""

    def cache_inputs(self, item: EvaluationItem) -> Mapping[str, Any]:
        """The texts of ``item`` this family reads (part of its response-cache key)."""
        return {
            "question": item.question,
            "ground_truth": item.ground_truth,
            "rag_answer": item.rag_answer,
            "contexts": item.contexts,
            "relevant_contexts": item.relevant_contexts,
            "required_facts": item.required_facts,
        }

    def jury_verdict(self, results: Sequence[ResultT]) -> ResultT:
        """The jury's combined result from its jurors' results for one question (``--jury``
        order, unscored ones included): the majority of each rate, the median of each score,
        the scores built on them recomputed by the family's own rules, and the reasoning of
        the first juror nearest the verdict on the family's first metric. It pays for nothing
        (no usage, calls or cost: the jurors' results carry them) and is never ``cached``.
        With no juror scored it is ``unscored`` with the first juror's error.

        Every metric family overrides it; a family that cannot sit in a jury raises."""
        raise NotImplementedError(f"the {self.name} family cannot judge as a jury")

    def missing_answer(self, note: str) -> ResultT | None:
        """The result for a question without an answer under ``--score-missing`` (or ``None``
        when the family leaves such a question empty)."""
        return None

    def error_text(self, result: ResultT) -> str:
        """What goes into the row's Error column for this family."""
        return result.error or ""

    def note_text(self, result: ResultT) -> str:
        """What goes into the row's Note column for this family."""
        return ""

    def metric_scales(self) -> dict[str, MetricScale]:
        """Each metric column's declared kind and range, in column order."""
        return {
            column: RATE if column in self.rate_columns else SCORE for column in self.metric_columns
        }

    def metric_values(self, result: ResultT) -> Mapping[str, float | None]:
        """The result's scores by metric column (``None`` where it has none)."""
        return {}

    def progress_scores(self, result: ResultT) -> Mapping[str, int]:
        """Binary scores to keep a running tally of on the progress display."""
        return {}


class FamilyResults(Mapping[str, FamilyResult]):
    """A question's results by family name: read-only, and compact because a run holds one per
    question (a one-entry dict takes 192 bytes; this takes 80, the names being shared)."""

    __slots__ = ("_names", "_values")

    def __init__(self, results: Mapping[str, FamilyResult]) -> None:
        names = tuple(results)
        self._names: tuple[str, ...] = _FAMILY_NAMES.setdefault(names, names)
        self._values: tuple[FamilyResult, ...] = tuple(results.values())

    def __getitem__(self, name: str) -> FamilyResult:
        try:
            return self._values[self._names.index(name)]
        except ValueError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    # Faster than the Mapping defaults, which look every name up again: a resume reads a
    # million of these.
    def items(self) -> Iterator[tuple[str, FamilyResult]]:  # type: ignore[override]
        return zip(self._names, self._values, strict=True)

    def values(self) -> tuple[FamilyResult, ...]:  # type: ignore[override]
        return self._values

    def __repr__(self) -> str:
        return f"FamilyResults({dict(self)!r})"


_FAMILY_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}


@dataclass(slots=True)
class QuestionRecord:
    """Everything the model-judged families produced for one question."""

    question_number: int
    results: Mapping[str, FamilyResult]

    def __post_init__(self) -> None:
        if not isinstance(self.results, FamilyResults):
            self.results = FamilyResults(self.results)

    @property
    def usage(self) -> TokenUsage:
        return sum((result.usage for result in self.results.values()), TokenUsage())

    @property
    def calls(self) -> int:
        return sum(result.calls for result in self.results.values())

    @property
    def cost_usd(self) -> float:
        return sum(result.cost_usd for result in self.results.values())

    @property
    def scored(self) -> bool:
        return all(result.scored for result in self.results.values())

    def result(self, family: str) -> FamilyResult | None:
        return self.results.get(family)


def first_stage(run: TaskRun[ResultT]) -> Stage | ResultT:
    """Advance a fresh task to its first stage; its result if it needs no call at all."""
    try:
        return next(run)
    except StopIteration as finished:
        return finished.value
