"""The evaluate run's inputs: the files read, the questions selected, the metadata carried,
and what a run without reference answers leaves out."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from rag_evaluator.errors import InputError
from rag_evaluator.evaluate.request import EvaluateRequest, InputFileInfo, RunPlan
from rag_evaluator.families.base import JudgedFamily
from rag_evaluator.families.setup import LlmFamilySetup
from rag_evaluator.inputs.dataset_stream import stream_dataset
from rag_evaluator.inputs.fields import GROUND_TRUTH, QUESTION_NUMBER
from rag_evaluator.inputs.load import (
    load_dataset,
    load_input_files,
    spool_dataset,
    spool_input_files,
)
from rag_evaluator.inputs.references import ReferenceFreeFamilies, left_out_line, without_references
from rag_evaluator.inputs.selection import Selection, select_items
from rag_evaluator.inputs.shapes import GOLDEN_SET_HINT
from rag_evaluator.inputs.spool import InputSpool
from rag_evaluator.offline.families import MetricFamilies, runnable_offline_families
from rag_evaluator.offline.registry import QUALITY, SEMANTIC
from rag_evaluator.results.groups import resolve_group_column
from rag_evaluator.results.writer import results_columns
from rag_evaluator.settings import SPOOL_VARIABLE

logger = logging.getLogger(__name__)


def load_inputs(
    request: EvaluateRequest, resources: ExitStack, spool_above_bytes: int
) -> tuple[list[InputFileInfo], Selection, list[str], bool]:
    """The input files' sizes, the questions to score, the metadata columns and whether the
    inputs hold no reference answer.

    Three CSVs larger than ``spool_above_bytes`` together are read into an on-disk spool
    (closed with ``resources``): the selection's items are then read back from it one at a
    time. Otherwise the loaded rows are dropped on return: only the selected items live on.
    """
    if request.dataset_path is None and _input_bytes(request) > spool_above_bytes:
        return _spooled_inputs(request, resources)
    if request.dataset_path is not None and _size(request.dataset_path) > spool_above_bytes:
        spooled = _spooled_dataset(request, request.dataset_path, resources)
        if spooled is not None:
            return spooled
    if request.dataset_path is not None:
        inputs = load_dataset(request.dataset_path)
    else:
        inputs = load_input_files(
            request.questions_path,
            None if request.reference_free else request.ground_truth_path,
            request.answers_path,
            same_question,
        )
    files = (
        [InputFileInfo("Dataset", request.dataset_path, len(inputs.dataset.rows))]
        if request.dataset_path is not None and inputs.dataset is not None
        else _file_infos(
            request,
            (len(inputs.questions.rows), len(inputs.ground_truth.rows), len(inputs.answers.rows)),
        )
    )
    selection = select_items(
        inputs.questions,
        inputs.ground_truth,
        inputs.answers,
        score_missing=request.score_missing,
        reference_free=inputs.reference_free,
    )
    return files, selection, inputs.metadata_columns, inputs.reference_free


def same_question(text: str, question: str) -> bool:
    """convert's rule of the same question, imported when a file has a Question column to
    compare (it brings rapidfuzz and numpy, which a run otherwise need not load)."""
    from rag_evaluator.convert.matching import same_question as matches

    return matches(text, question)


def _input_bytes(request: EvaluateRequest) -> int:
    """The three CSVs' size together."""
    paths = [request.questions_path, request.answers_path]
    if not request.reference_free:
        paths.append(request.ground_truth_path)
    return sum(_size(path) for path in paths)


def _size(path: Path) -> int:
    """A file's size; 0 for one that cannot be read (reading it says why)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _spooled_dataset(
    request: EvaluateRequest, path: Path, resources: ExitStack
) -> tuple[list[InputFileInfo], Selection, list[str], bool] | None:
    """A dataset read into an on-disk spool; ``None`` when it must be read whole
    (``stream_dataset`` says when)."""
    streamed = stream_dataset(path)
    if streamed is None:
        return None
    spool = InputSpool()
    resources.callback(spool.close)
    logger.info("Dataset read into an on-disk spool (it exceeds %s)", SPOOL_VARIABLE)
    dataset = spool_dataset(spool, streamed, score_missing=request.score_missing)
    files = [InputFileInfo("Dataset", path, dataset.records, streamed.sha256)]
    inputs = dataset.inputs
    return files, inputs.selection, inputs.metadata_columns, dataset.reference_free


def _file_infos(
    request: EvaluateRequest,
    counts: tuple[int, int, int],
    digests: Mapping[Path, str] | None = None,
) -> list[InputFileInfo]:
    """The three files as the plan lists them (no ground truth in a run without one), with
    the digests reading them took."""
    known = digests or {}
    files = zip(
        ("Questions", "Ground truth", "Answers"),
        (request.questions_path, request.ground_truth_path, request.answers_path),
        counts,
        strict=True,
    )
    return [
        InputFileInfo(label, path, count, known.get(path))
        for label, path, count in files
        if not (request.reference_free and label == "Ground truth")
    ]


def _spooled_inputs(
    request: EvaluateRequest, resources: ExitStack
) -> tuple[list[InputFileInfo], Selection, list[str], bool]:
    spool = InputSpool()
    resources.callback(spool.close)
    logger.info("Inputs read into an on-disk spool (they exceed %s)", SPOOL_VARIABLE)
    spooled = spool_input_files(
        spool,
        request.questions_path,
        None if request.reference_free else request.ground_truth_path,
        request.answers_path,
        score_missing=request.score_missing,
    )
    files = _file_infos(request, spooled.counts, spooled.sha256)
    return files, spooled.selection, spooled.metadata_columns, request.reference_free


def _reference_free_choice(families: MetricFamilies, llm: LlmFamilySetup) -> ReferenceFreeFamilies:
    return without_references(
        families.judge,
        llm.names,
        families.offline,
        rubric_reads_reference=llm.rubric_reads_reference,
    )


def settle_ground_truth(
    request: EvaluateRequest, families: MetricFamilies, llm: LlmFamilySetup
) -> EvaluateRequest:
    """The three CSVs without ground_truth.csv (and no --ground-truth): a run without
    references when a family asked for can run without one, else the missing-file error
    with both fixes."""
    if (
        request.dataset_path is not None
        or request.ground_truth_given
        or request.ground_truth_path.exists()
    ):
        return request
    if _reference_free_choice(families, llm).empty and not families.wants_all:
        raise InputError(
            f"{request.ground_truth_path.name} not found. Create this file with columns: "
            f"{QUESTION_NUMBER}, {GROUND_TRUTH}, or run families that need no reference "
            f"answer, such as --metrics {_reference_free_suggestion()}",
            request.ground_truth_path,
        )
    return replace(request, reference_free=True)


def _reference_free_suggestion() -> str:
    """The offline families to suggest for a run without references (those installed)."""
    runnable = runnable_offline_families()
    return ",".join(family for family in (QUALITY, SEMANTIC) if family in runnable)


def reference_free_families(
    request: EvaluateRequest, families: MetricFamilies, llm: LlmFamilySetup
) -> tuple[MetricFamilies, LlmFamilySetup, str]:
    """The families of a run without references, and the one line naming what it leaves
    out; an error when nothing asked for can run without references."""
    choice = _reference_free_choice(families, llm)
    if request.dataset_path is not None:
        where = f"in {request.dataset_path.name}"
    else:
        where = f"(no {request.ground_truth_path.name})"
    if choice.empty:
        source = request.dataset_path.name if request.dataset_path is not None else where
        hint = f"; {GOLDEN_SET_HINT}" if request.dataset_path is not None else ""
        raise InputError(
            f"{source} has no reference answers, and every family asked for compares the "
            f"answer with one ({', '.join(choice.wholly_left_out)}). Run families that need "
            f"none, such as --metrics {_reference_free_suggestion()}{hint}"
        )
    line = left_out_line(where, choice)
    logger.info("%s", line)
    return (
        replace(families, judge=False, llm=choice.llm, offline=choice.offline),
        replace(llm, names=choice.llm, references=False),
        line,
    )


def carried_columns(
    plan: RunPlan, families: Sequence[JudgedFamily[Any]], metric_columns: Sequence[str]
) -> list[str]:
    """The metadata columns written to the results: those named like a results column are
    left out (with a warning), so that no header appears twice."""
    taken = set(results_columns(families, metric_columns))
    clashing = [name for name in plan.metadata_columns if name in taken]
    if clashing:
        logger.warning(
            "The metadata %s %s %s the name of a results column and %s not carried into "
            "the results. Rename %s in the inputs",
            "column" if len(clashing) == 1 else "columns",
            ", ".join(repr(name) for name in clashing),
            "has" if len(clashing) == 1 else "have",
            "is" if len(clashing) == 1 else "are",
            "it" if len(clashing) == 1 else "them",
        )
    return [name for name in plan.metadata_columns if name not in taken]


def group_column(request: EvaluateRequest, metadata_columns: Sequence[str]) -> str | None:
    """The metadata column ``--group-by`` names, as spelled in the inputs."""
    if request.group_by is None:
        return None
    source = (
        request.dataset_path.name
        if request.dataset_path is not None
        else request.questions_path.name
    )
    return resolve_group_column(request.group_by, list(metadata_columns), source)
