"""``--metrics``: which metric families a run computes, and the offline ones' computation.

``judge`` is Claude's precision/recall/accuracy; ``ragas``, ``factual_accuracy``, ``classify``,
``match`` and ``rubric`` are the other model-judged (LLM) families (``geval``, the old name of
``factual_accuracy``, is still accepted, with a warning); the offline families come from
``offline/runner.py``. ``all`` means the judge plus every offline family whose inputs are
present in the files and whose optional dependencies are installed (a family left out for
want of its extra is named in a warning with the install command). ``all`` never adds an LLM
family: each multiplies the run's calls and cost, so it must be named.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from os import PathLike

from rag_evaluator.errors import MissingExtraError, UsageError
from rag_evaluator.families.defaults import JUDGE_FAMILY
from rag_evaluator.families.grading.factual_accuracy import (
    FACTUAL_ACCURACY_FAMILY,
    RENAMED_FAMILIES,
)
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.offline import embeddings, overlap
from rag_evaluator.offline.registry import OVERLAP, RETRIEVAL, SEMANTIC
from rag_evaluator.offline.runner import (
    OFFLINE_FAMILIES,
    SIMILARITY,
    BatchProgress,
    EmptyMetric,
    InputFileNames,
    MetricOptions,
    OfflineNotes,
    OfflineScoring,
    families_with_inputs,
    validate_options,
)

logger = logging.getLogger(__name__)

ALL_FAMILIES = "all"
# The model-judged families besides the judge, in column order (issue 10).
LLM_FAMILIES = ("ragas", FACTUAL_ACCURACY_FAMILY, "classify", "match", "rubric")
KNOWN_FAMILIES = (JUDGE_FAMILY, *LLM_FAMILIES, *OFFLINE_FAMILIES)


@dataclass(frozen=True)
class MetricFamilies:
    """The families a run computes. ``wants_all`` is resolved against the inputs later."""

    judge: bool
    offline: tuple[str, ...] = ()
    wants_all: bool = False
    llm: tuple[str, ...] = ()

    @property
    def model_judged(self) -> bool:
        """Whether any family of the run calls the model (the judge or an LLM family)."""
        return self.judge or bool(self.llm)

    def names(self) -> list[str]:
        return ([JUDGE_FAMILY] if self.judge else []) + list(self.llm) + list(self.offline)


def _current_name(name: str) -> str:
    """Today's name of a family given by an old one (with a warning); others as given."""
    renamed = RENAMED_FAMILIES.get(name)
    if renamed is None:
        return name
    logger.warning(
        "--metrics %s is the old name of %s (seed 001's three-criterion factual-accuracy "
        "rubric, not G-Eval): write %s instead",
        name,
        renamed,
        renamed,
    )
    return renamed


def parse_metric_families(raw: str) -> MetricFamilies:
    """Parse ``--metrics judge,lexical`` (comma list, any case); ``all`` for everything."""
    names = [_current_name(part.strip().lower()) for part in raw.split(",") if part.strip()]
    choices = f"{', '.join(KNOWN_FAMILIES)}, or {ALL_FAMILIES}"
    if not names:
        raise UsageError(f"--metrics is empty. Give one or more of: {choices}")
    unknown = [name for name in names if name not in (*KNOWN_FAMILIES, ALL_FAMILIES)]
    if unknown:
        raise UsageError(
            f"Unknown metric famil{'y' if len(unknown) == 1 else 'ies'} "
            f"{', '.join(repr(name) for name in unknown)} in --metrics. "
            f"Use one or more of: {choices}"
        )
    wants_all = ALL_FAMILIES in names
    return MetricFamilies(
        judge=wants_all or JUDGE_FAMILY in names,
        offline=tuple(family for family in OFFLINE_FAMILIES if family in names),
        wants_all=wants_all,
        llm=tuple(family for family in LLM_FAMILIES if family in names),
    )


def _missing_extra(family: str) -> MissingExtraError | None:
    try:
        if family == OVERLAP:
            overlap.require_overlap_extra()
        elif family == SEMANTIC:
            embeddings.require_semantic_extra(embeddings.SEMANTIC_FEATURE, bert_score=True)
    except MissingExtraError as missing:
        return missing
    return None


def resolve_all(families: MetricFamilies, items: Sequence[EvaluationItem]) -> MetricFamilies:
    """Replace ``all`` by the judge and the offline families this run can compute."""
    if not families.wants_all:
        return families
    chosen = list(families.offline)
    for family in families_with_inputs(items):
        if family in chosen:
            continue
        missing = _missing_extra(family)
        if missing is not None:
            logger.warning("--metrics all leaves out %s: %s", family, missing.message)
            continue
        chosen.append(family)
    offline = tuple(family for family in OFFLINE_FAMILIES if family in chosen)
    return replace(families, offline=offline, wants_all=False)


def check_offline_ready(families: MetricFamilies, options: MetricOptions) -> None:
    """Fail before any question is asked or sent when an offline family cannot run.

    Raises UsageError for a bad option (``--match``, ``--k``, ...) and MissingExtraError for
    a family (or ``--match similarity``) whose optional dependencies are not installed.
    """
    if not families.offline:
        return
    validate_options(options)
    for family in families.offline:
        missing = _missing_extra(family)
        if missing is not None:
            raise missing
    if RETRIEVAL in families.offline and options.match == SIMILARITY:
        embeddings.require_semantic_extra(embeddings.SIMILARITY_MATCH_FEATURE)


def offline_scoring(
    families: MetricFamilies,
    options: MetricOptions,
    progress: Callable[[str], None],
    *,
    answers_file: str | PathLike[str] | None = None,
    ground_truth_file: str | PathLike[str] | None = None,
    on_progress: BatchProgress | None = None,
) -> OfflineScoring:
    """The run's offline families, ready to score its items a chunk at a time.

    ``answers_file`` and ``ground_truth_file`` are the input files as the user gave them
    (``--answers``, ``--ground-truth``), named in the warnings about missing columns;
    ``on_progress(label, done, total)`` follows the batches of the embedding and BERTScore
    passes (for a progress bar).
    """
    defaults = InputFileNames()
    input_files = InputFileNames(
        answers=defaults.answers if answers_file is None else str(answers_file),
        ground_truth=defaults.ground_truth if ground_truth_file is None else str(ground_truth_file),
    )
    return OfflineScoring(families.offline, options, progress, input_files, on_progress)


def log_offline_notes(notes: OfflineNotes) -> None:
    """The metrics left empty go to the log (a table after the summary shows them); the
    hints the user should act on are warnings."""
    for metric in notes.empty:
        logger.info("%s", metric.message())
    for hint in notes.hints:
        logger.warning(hint)


def compute_offline(
    families: MetricFamilies,
    items: Sequence[EvaluationItem],
    options: MetricOptions,
    progress: Callable[[str], None],
    *,
    answers_file: str | PathLike[str] | None = None,
    ground_truth_file: str | PathLike[str] | None = None,
    on_progress: BatchProgress | None = None,
) -> tuple[list[str], dict[int, dict[str, float | str | None]], list[EmptyMetric]]:
    """The offline metric columns, their values per question number (none when not asked)
    and the metrics left empty for some questions (for the table after the summary; each is
    also in the log), every item scored at once (see ``offline_scoring``). Hints the user
    should act on are warnings.
    """
    if not families.offline:
        return [], {}, []
    scoring = offline_scoring(
        families,
        options,
        progress,
        answers_file=answers_file,
        ground_truth_file=ground_truth_file,
        on_progress=on_progress,
    )
    scores = scoring.score_all(items)
    notes = scoring.notes()
    log_offline_notes(notes)
    return list(notes.columns), scores, list(notes.empty)


def read_fallback_phrases(raw: str) -> tuple[str, ...]:
    """``--fallback-phrases``: a comma list, or ``@FILE`` with one phrase per line."""
    from rag_evaluator.inputs.phrase_file import load_phrase_option

    return load_phrase_option(raw)


def runnable_offline_families() -> list[str]:
    """The offline families whose optional dependencies are installed, in display order."""
    return [family for family in OFFLINE_FAMILIES if _missing_extra(family) is None]
