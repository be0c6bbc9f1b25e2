"""What a model-calling run still has to send, and what it will cost.

``plan_judging`` goes through the questions in the seeded order and decides, per question and
family: finished before (a resumed checkpoint), known without a call (the response cache, a
missing answer scored 0, a shortcut such as "no information" on both sides), too long for the
model, or to be sent; the families' per-question estimates add up to the run's cost range
(with ``--exact-estimate``, scaled by the API's own count of each first request).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rag_evaluator.families.base import (
    TOO_LONG,
    CallEstimate,
    FamilyResult,
    JudgedFamily,
    PricedEstimate,
    QuestionRecord,
    RunningCallEstimate,
    first_stage,
)
from rag_evaluator.families.jury.family import JuryFamily
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.inputs.spool import SpooledItems
from rag_evaluator.llm.checkpoint.store import (
    CheckpointHeader,
    LoadedCheckpoint,
    family_result_from_json,
)
from rag_evaluator.llm.cost import CostEstimate, caches_system_prompt, estimate_cost
from rag_evaluator.llm.engine import NO_KNOWN_RESULTS, QuestionJob
from rag_evaluator.llm.models import ModelInfo
from rag_evaluator.llm.requests import ModelRequest, too_long_reason
from rag_evaluator.llm.response_cache import ResponseCache, cache_key, canonical_json

logger = logging.getLogger(__name__)

_SEED_RANGE = 1_000_000
# Token-count requests (--exact-estimate) sent at once, at the least.
_COUNT_WORKERS = 8

# The API's count of a request's input tokens; None where the provider cannot count.
CountTokens = Callable[[ModelRequest], int | None]


@dataclass(frozen=True)
class JudgingOptions:
    """What the planning and the calls of a run need to know of its options."""

    model: ModelInfo
    families: tuple[JudgedFamily[Any], ...]
    limit: int | None = None
    concurrency: int = 1
    batch: bool = False
    use_cache: bool = True


@dataclass(frozen=True)
class PreparedCheckpoint:
    """Where the run's checkpoint is and whether it resumes an earlier one."""

    path: Path
    header: CheckpointHeader
    resume_from: LoadedCheckpoint | None
    replaces: Path | None  # an unfinished run's checkpoint that the user chose not to resume


@dataclass
class JudgingPlan:
    """What the judged part of the run will do."""

    checkpoint: PreparedCheckpoint
    selected: list[int]  # the question numbers of this run, in the seeded order (--limit applied)
    done: Mapping[int, QuestionRecord]  # finished before: a resumed checkpoint's records
    jobs: list[QuestionJob]
    cached_count: int
    shortcut_count: int
    missing_answer_count: int
    too_long: list[int]
    estimate: CostEstimate
    sends_calls: bool
    remaining_after_limit: int
    # Juror results the cache holds for questions some other juror is asked about, by family
    # and juror, "judge (haiku)" (a question every juror's result is cached for is in
    # cached_count).
    cached_jurors: Mapping[str, int] = field(default_factory=dict)


def items_by_number(items: Sequence[EvaluationItem]) -> Mapping[int, EvaluationItem]:
    """The items by question number: a spool's are looked up on disk, others held."""
    if isinstance(items, SpooledItems):
        return items.by_number()
    return {item.question_number: item for item in items}


def draw_seed() -> int:
    return secrets.randbelow(_SEED_RANGE)


def family_cache_key(family: JudgedFamily[Any], item: EvaluationItem, model_key: str) -> str:
    """The response cache's key of ``family``'s result for ``item`` from the model ``model_key``
    (``ModelInfo.key``: the provider names it, so no platform reuses another's results)."""
    return cache_key(
        {
            "family": family.name,
            "version": family.version,
            "model": model_key,
            "identity": family.identity(),
            "inputs": family.cache_inputs(item),
        }
    )


def juror_cache_keys(jury: JuryFamily, item: EvaluationItem) -> list[str]:
    """Each juror's key for its own result: the key a run of that model alone would use, so a
    jury and single-model runs (and other juries) share what each juror answered."""
    return [family_cache_key(jury.inner, item, juror.model.key) for juror in jury.jurors]


class FamilyCacheKeys:
    """``family_cache_key`` for one run's families and model, question after question.

    What does not change between questions (the family's identity holds its prompt's digest
    and its JSON schema) is serialised and hashed once: each key then serialises and hashes
    only the question's inputs, from a copy of the hash of what comes before them. The text
    hashed is the one ``cache_key`` builds (its keys sorted: family, identity, inputs, model,
    version), so the keys are the same.
    """

    def __init__(self, families: Sequence[JudgedFamily[Any]], model_key: str) -> None:
        self._parts = {
            family.name: (
                hashlib.sha256(
                    f'{{"family":{canonical_json(family.name)},'
                    f'"identity":{canonical_json(family.identity())},"inputs":'.encode()
                ),
                f',"model":{canonical_json(model_key)},"version":{canonical_json(family.version)}}}',
            )
            for family in families
        }

    def key(self, family: JudgedFamily[Any], item: EvaluationItem) -> str:
        before, after = self._parts[family.name]
        digest = before.copy()
        digest.update((canonical_json(family.cache_inputs(item)) + after).encode("utf-8"))
        return digest.hexdigest()


def cached_family_result(
    cache: ResponseCache, family: JudgedFamily[Any], key: str
) -> FamilyResult | None:
    """The result the cache holds for ``key`` (``family_cache_key``), marked cached and
    costing nothing; ``None`` when it holds none, or one it cannot read (reported once)."""
    stored = cache.get(key)
    if stored is None:
        return None
    try:
        result = family_result_from_json(family, stored)
    except (KeyError, TypeError, ValueError, RecursionError) as exc:
        reason = f"a {family.name} result that cannot be read: {exc!r}"
        cache.report_damaged_entry(key, reason[:200])
        return None
    # This run pays nothing for it.
    return replace(result, usage=TokenUsage(), calls=0, cost_usd=0.0, cached=True)


@dataclass
class _Tally:
    """The running counts of a plan: one sum per family, never a list per question (a
    million questions would hold a million estimates)."""

    sums: dict[str, RunningCallEstimate] = field(default_factory=dict)
    counted: dict[str, int] = field(default_factory=dict)  # the questions each sum covers
    # The model of each share priced with another than the run's (a juror's).
    models: dict[str, ModelInfo] = field(default_factory=dict)
    # Whether each share's system prompt goes out marked for prompt caching.
    caching: dict[str, bool] = field(default_factory=dict)
    # The first requests are only kept to be counted by the API (--exact-estimate).
    first_requests: list[tuple[str, ModelRequest, CallEstimate]] = field(default_factory=list)
    cached: int = 0
    cached_jurors: dict[str, int] = field(default_factory=dict)
    shortcut: int = 0
    missing_answers: int = 0
    sending: int = 0
    too_long: list[int] = field(default_factory=list)

    def add_estimate(self, priced: PricedEstimate, model: ModelInfo, counting: bool) -> None:
        share, estimate = priced.share, priced.estimate
        # The first question's estimate starts the sum as it is (what none() + it would be).
        running = self.sums.get(share)
        if running is None:
            self.sums[share] = RunningCallEstimate(estimate)
        else:
            running.add(estimate)
        self.counted[share] = self.counted.get(share, 0) + 1
        if share not in self.caching:
            self.caching[share] = caches_system_prompt(priced.first.system, model)
            if priced.model is not None:
                self.models[share] = priced.model
        if counting:
            self.first_requests.append((share, priced.first, estimate))


@dataclass
class _QuestionPlan:
    """One question's families: results known without a call, and those to run."""

    known: dict[str, FamilyResult] = field(default_factory=dict)
    to_run: list[JudgedFamily[Any]] = field(default_factory=list)
    sends: bool = False
    shortcut: bool = False


class _Planner:
    """Decides, family by family, what each question of the run needs."""

    def __init__(
        self,
        options: JudgingOptions,
        cache: ResponseCache,
        *,
        answers_name: str,
        context_window_tokens: int,
        counting: bool,
    ) -> None:
        self.options = options
        self.cache = cache
        self.window = context_window_tokens
        self.counting = counting
        self.missing_note = (
            f"no answer in {answers_name}: scored 0 without a call (--score-missing)"
        )
        self.tally = _Tally()
        self.keys = FamilyCacheKeys(options.families, options.model.key)

    def question(
        self, number: int, items: Mapping[int, EvaluationItem], position: int
    ) -> QuestionJob:
        item = items[number]
        plan = _QuestionPlan()
        if item.answer_missing:
            self.tally.missing_answers += 1
        for family in self.options.families:
            self._family(plan, family, number, item)
        tally = self.tally
        if plan.known and not plan.to_run and all(r.cached for r in plan.known.values()):
            tally.cached += 1
        tally.shortcut += plan.shortcut and not plan.sends
        tally.sending += plan.sends
        known = plan.known or NO_KNOWN_RESULTS
        # The job reads its item again when it starts: it holds none of the texts.
        return QuestionJob(number, items, tuple(plan.to_run), known, position)

    def _family(
        self, plan: _QuestionPlan, family: JudgedFamily[Any], number: int, item: EvaluationItem
    ) -> None:
        if item.answer_missing:
            result = family.missing_answer(self.missing_note)
            if result is not None:
                plan.known[family.name] = result
            return
        cached = self._cached(family, item)
        if cached is None and isinstance(family, JuryFamily):
            family, cached = self._jury_from_cache(family, item)
        if cached is not None:
            plan.known[family.name] = cached
            return
        stage = first_stage(family.run(item))
        if not isinstance(stage, tuple):
            plan.shortcut = True  # scored without a call (e.g. both say there is no information)
            plan.to_run.append(family)
            return
        reasons = [reason for request in stage if (reason := too_long_reason(request, self.window))]
        if reasons:
            plan.known[family.name] = family.unscored(reasons[0], TOO_LONG)
            self.tally.too_long.append(number)
            return
        for priced in family.priced_estimates(item, stage):
            model = priced.model or self.options.model
            self.tally.add_estimate(priced, model, self.counting)
        plan.to_run.append(family)
        plan.sends = True

    def _cached(self, family: JudgedFamily[Any], item: EvaluationItem) -> FamilyResult | None:
        if not (self.options.use_cache and self.cache.holds_family(family.name)):
            return None
        key = self.keys.key(family, item)
        if not self.cache.might_hold(key):
            return None
        return cached_family_result(self.cache, family, key)

    def _jury_from_cache(
        self, jury: JuryFamily, item: EvaluationItem
    ) -> tuple[JuryFamily, FamilyResult | None]:
        """The jury with the jurors the cache answers known; its result when it answers all."""
        if not (self.options.use_cache and self.cache.holds_family(jury.name)):
            return jury, None
        known: dict[int, FamilyResult] = {}
        for position, key in enumerate(juror_cache_keys(jury, item)):
            if self.cache.might_hold(key):
                found = cached_family_result(self.cache, jury.inner, key)
                if found is not None:
                    known[position] = found
        if len(known) == len(jury.jurors):
            jurors = tuple(known[position] for position in range(len(jury.jurors)))
            return jury, replace(jury.combined(jurors), cached=True)
        counts = self.tally.cached_jurors
        for position in known:
            share = f"{jury.name} ({jury.jurors[position].label})"  # as the estimate names it
            counts[share] = counts.get(share, 0) + 1
        return (jury.with_known(known) if known else jury), None


def plan_judging(
    options: JudgingOptions,
    checkpoint: PreparedCheckpoint,
    items: Sequence[EvaluationItem],
    cache: ResponseCache,
    *,
    answers_name: str,
    context_window_tokens: int,
    count_tokens: CountTokens | None = None,
) -> JudgingPlan:
    """What is left to send, what it will cost, and what needs no call at all."""
    by_number = items_by_number(items)
    order = checkpoint.header.order
    selected = order if options.limit is None else order[: options.limit]
    done: Mapping[int, QuestionRecord] = {}
    if checkpoint.resume_from is not None:
        checkpoint.resume_from.results.keep_only(by_number)
        done = checkpoint.resume_from.results
    planner = _Planner(
        options,
        cache,
        answers_name=answers_name,
        context_window_tokens=context_window_tokens,
        counting=count_tokens is not None,
    )
    jobs = [
        planner.question(number, by_number, position)
        for position, number in enumerate(selected, start=1)
        if number not in done
    ]
    tally = planner.tally
    estimate, sends_calls = _estimate(options, tally, count_tokens)
    chosen = set(selected)
    return JudgingPlan(
        checkpoint=checkpoint,
        selected=list(selected),
        done=done,
        jobs=jobs,
        cached_count=tally.cached,
        shortcut_count=tally.shortcut,
        missing_answer_count=tally.missing_answers,
        too_long=sorted(tally.too_long),
        estimate=estimate,
        sends_calls=sends_calls,
        remaining_after_limit=sum(1 for n in order if n not in done and n not in chosen),
        cached_jurors=tally.cached_jurors,
    )


def _estimate(
    options: JudgingOptions, tally: _Tally, count_tokens: CountTokens | None
) -> tuple[CostEstimate, bool]:
    """The run's cost range, and whether it sends any call at all."""
    estimates = {name: [running.total()] for name, running in tally.sums.items()}
    family_questions: dict[str, int] | None = tally.counted
    if count_tokens is not None and tally.first_requests:
        estimates = _exact_estimates(tally.first_requests, count_tokens, options.concurrency)
        family_questions = None
    estimate = estimate_cost(
        {name: values for name, values in estimates.items() if values},
        options.model,
        batch=options.batch,
        prompt_caching=tally.caching,
        questions=tally.sending,
        cached_questions=tally.cached,
        family_questions=family_questions,
        models=tally.models,
    )
    return estimate, any(values for values in estimates.values())


def _exact_estimates(
    first_requests: Sequence[tuple[str, ModelRequest, CallEstimate]],
    count_tokens: CountTokens,
    concurrency: int,
) -> dict[str, list[CallEstimate]]:
    """Correct the input-token estimates by the API's own count of each first request.

    A family's estimate is scaled by the ratio of the counted tokens to the first request's
    local estimate (low and high alike): for a one-call family that is exactly the count per
    call; for a family whose calls differ (RAGAS) the first call's ratio stands for all.
    """
    distinct: dict[str, ModelRequest] = {}
    for _, request, _ in first_requests:
        distinct.setdefault(request.digest(), request)
    # Free requests, not paced by --delay: as many at once as the calls may run, at least a few.
    with ThreadPoolExecutor(max_workers=max(_COUNT_WORKERS, concurrency)) as pool:
        counted = dict(zip(distinct, pool.map(count_tokens, distinct.values()), strict=True))
    exact: dict[str, list[CallEstimate]] = {}
    for family, request, estimate in first_requests:
        tokens = counted[request.digest()]
        if tokens is None:
            exact.setdefault(family, []).append(estimate)
            continue
        exact.setdefault(family, []).append(
            replace(
                estimate,
                input_tokens_low=estimate.input_tokens_low * tokens / request.input_tokens_low(),
                input_tokens_high=(
                    estimate.input_tokens_high * tokens / request.input_tokens_high()
                ),
            )
        )
    logger.info("Exact estimate: counted %d distinct first request(s)", len(distinct))
    return exact
