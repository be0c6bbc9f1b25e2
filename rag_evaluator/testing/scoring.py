"""Scoring the questions of a ``rag_eval.check``: the same families, metric columns and means as
``rag-eval evaluate --metrics``, computed with the library.

Offline families go through ``compute_offline_metrics``; model-judged families run each
question's task on a ``judge_client`` client, with the response cache in front of it (the key
``evaluate`` uses, so a check and an evaluate run reuse each other's results): a question
scored before costs no call.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rag_evaluator.errors import UsageError
from rag_evaluator.families.base import FamilyResult, JudgedFamily, QuestionRecord
from rag_evaluator.families.item_tasks import DEFAULT_LIBRARY_CONCURRENCY, CachedRuns
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompt_file import load_system_prompt
from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.families.setup import (
    LlmFamilyOptions,
    LlmFamilySetup,
    build_llm_families,
    prepare_llm_families,
)
from rag_evaluator.inputs.load import InputSet, load_dataset, load_dataset_records
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.inputs.references import left_out_line, without_references
from rag_evaluator.inputs.selection import exclusion_warnings, select_items
from rag_evaluator.llm.models import resolve_model
from rag_evaluator.llm.response_cache import ResponseCache, cache_in
from rag_evaluator.metrics import judge_client
from rag_evaluator.offline.families import MetricFamilies, parse_metric_families, resolve_all
from rag_evaluator.offline.registry import InputFileNames
from rag_evaluator.offline.runner import MetricOptions, compute_offline_metrics, metric_columns
from rag_evaluator.results.gates import (
    Threshold,
    computed_metrics,
    lower_is_better_metrics,
    resolve_thresholds,
)
from rag_evaluator.results.rows import ResultRows
from rag_evaluator.results.summary import RowTally
from rag_evaluator.settings import load_settings
from rag_evaluator.testing.verdict import ScoredCheck, ScoredQuestion

logger = logging.getLogger(__name__)

CASES_NAME = "cases"


@dataclass(frozen=True)
class CheckOptions:
    """The pytest options a check runs with (``--rag-eval-model`` and the others)."""

    model: str = "sonnet"
    use_cache: bool = True
    cache_dir: Path | None = None  # else RAG_EVAL_CACHE_DIR, else the user cache folder
    max_cost: float | None = None
    working_directory: Path = Path()


@dataclass(frozen=True)
class CheckInputs:
    """The questions of a check and what names them in messages."""

    source: str
    items: list[EvaluationItem]
    reference_free: bool


def load_check_inputs(data: object, working_directory: Path) -> CheckInputs:
    """The questions of a dataset file (a path) or of a list of cases (mappings with a
    dataset's field names: question, answer, ground_truth, contexts...)."""
    if isinstance(data, str | os.PathLike):
        path = Path(data)
        path = path if path.is_absolute() else working_directory / path
        inputs: InputSet = load_dataset(path)
        source = path.name
    elif isinstance(data, Sequence) and not isinstance(data, bytes):
        inputs = load_dataset_records(CASES_NAME, data)
        source = f"{len(data)} case{'' if len(data) == 1 else 's'}"
    else:
        raise UsageError(
            f"rag_eval.check takes a dataset file's path or a list of cases (got "
            f"{type(data).__name__}). Pass e.g. [{{'question': ..., 'answer': ..., "
            "'ground_truth': ...}]"
        )
    selection = select_items(
        inputs.questions,
        inputs.ground_truth,
        inputs.answers,
        reference_free=inputs.reference_free,
    )
    for message in exclusion_warnings(selection.exclusions):
        logger.warning(message)
    return CheckInputs(source, selection.items, inputs.reference_free)


def _judged_families(
    setup: LlmFamilySetup, judge: bool, working_directory: Path
) -> list[JudgedFamily[Any]]:
    families: list[JudgedFamily[Any]] = []
    if judge:
        prompt = load_system_prompt(None, working_directory)
        families.append(JudgeFamily(prompt.text, DEFAULT_HEDGE_PHRASES))
    return [*families, *build_llm_families(setup)]


def _without_references(
    families: MetricFamilies, setup: LlmFamilySetup, source: str
) -> tuple[MetricFamilies, LlmFamilySetup]:
    """Cases without any reference answer: the families and metrics that need none, as
    ``evaluate`` runs them (what is left out is logged as a warning); a usage error when
    nothing asked for can run."""
    choice = without_references(
        families.judge,
        setup.names,
        families.offline,
        rubric_reads_reference=setup.rubric_reads_reference,
    )
    if choice.empty:
        raise UsageError(
            f"{source} holds no reference answer, and every family asked for compares the "
            f"answer with one ({', '.join(choice.wholly_left_out)}). Give every case a "
            "ground_truth, or check families that need none, such as quality or ragas"
        )
    logger.warning("%s", left_out_line(f"in {source}", choice))
    return (
        replace(families, judge=False, llm=choice.llm, offline=choice.offline),
        replace(setup, names=choice.llm, references=False),
    )


def _resolved(
    thresholds: Sequence[Threshold], judged: Sequence[JudgedFamily[Any]], offline: Sequence[str]
) -> dict[str, Threshold]:
    try:
        return resolve_thresholds(
            thresholds, computed_metrics(judged, offline), lower_is_better_metrics(judged, offline)
        )
    except UsageError as exc:
        raise UsageError(
            f"{exc.message} (in thresholds=, a bare name is a --fail-under minimum and a name "
            "ending in <= a --fail-over maximum)"
        ) from exc


def score_check(
    inputs: CheckInputs,
    metrics: str | Sequence[str],
    thresholds: Sequence[Threshold],
    options: CheckOptions,
    rubric: Path | None = None,
) -> ScoredCheck:
    """Score ``inputs`` with the ``metrics`` families (``evaluate --metrics`` names); raise a
    ``UsageError`` for a threshold on a metric they do not compute, before any call."""
    raw = metrics if isinstance(metrics, str) else ",".join(metrics)
    families = resolve_all(parse_metric_families(raw), inputs.items)
    references = not inputs.reference_free
    root = options.working_directory
    setup = prepare_llm_families(families.llm, LlmFamilyOptions(rubric_path=rubric), root)
    if not references:
        families, setup = _without_references(families, setup, inputs.source)
    judged = _judged_families(setup, families.judge, root)
    offline_columns = metric_columns(families.offline, references=references)
    resolved = _resolved(thresholds, judged, offline_columns)
    offline_scores: Mapping[int, Mapping[str, float | str | None]] = {}
    if families.offline:
        offline = compute_offline_metrics(
            inputs.items,
            families.offline,
            MetricOptions(references=references),
            input_files=InputFileNames(answers=inputs.source, ground_truth=inputs.source),
        )
        for warning in offline.warnings:
            logger.warning(warning)
        offline_columns, offline_scores = offline.columns, offline.scores
    records = judge_items(judged, inputs.items, options) if judged else None
    rows = ResultRows(inputs.items, records, offline_scores)
    tally = RowTally(judged, offline_columns)
    questions = []
    for row in rows:
        tally.add(row)
        values: dict[str, float | None] = {}
        errors: list[str] = []
        for family in judged:
            result = row.family_result(family.name)
            if result is not None:
                values.update(family.metric_values(result))
                errors += [f"{family.name}: {result.error}"] if result.error else []
        values.update(
            (name, float(value) if isinstance(value, int | float) else None)
            for name, value in row.metric_scores.items()
            if name in offline_columns
        )
        questions.append(ScoredQuestion(row.item, values, tuple(errors)))
    binary = frozenset(name for name, scale in tally.metric_scales().items() if scale.binary)
    return ScoredCheck(inputs.source, questions, tally.observed_values(), binary, resolved)


def _cache(options: CheckOptions) -> ResponseCache:
    if not options.use_cache:
        return ResponseCache(None, shared=True)
    directory = options.cache_dir or load_settings(options.working_directory).cache_dir
    return cache_in(directory, shared=True)


def judge_items(
    families: Sequence[JudgedFamily[Any]],
    items: Sequence[EvaluationItem],
    options: CheckOptions,
) -> dict[int, QuestionRecord]:
    """Each question's judged results: from the response cache where it holds them, else
    from the model (each new scored result then stored)."""
    runs = CachedRuns(_cache(options), resolve_model(options.model).key)
    try:
        results: dict[tuple[int, str], FamilyResult] = {}
        pending: list[tuple[JudgedFamily[Any], EvaluationItem]] = []
        for item in items:
            for family in families:
                found = runs.cached(family, item)
                if found is None:
                    pending.append((family, item))
                else:
                    results[(item.question_number, family.name)] = found
        # No client (nor key) is needed when the cache holds every result.
        if pending:
            with (
                judge_client(options.model, max_cost=options.max_cost) as client,
                ThreadPoolExecutor(max_workers=DEFAULT_LIBRARY_CONCURRENCY) as pool,
            ):
                answers = pool.map(lambda job: runs.run(job[0], job[1], client), pending)
                for (family, item), result in zip(pending, answers, strict=True):
                    results[(item.question_number, family.name)] = result
    finally:
        runs.close()
    return {
        item.question_number: QuestionRecord(
            item.question_number,
            {family.name: results[(item.question_number, family.name)] for family in families},
        )
        for item in items
    }
