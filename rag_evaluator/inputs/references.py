"""What compares an answer with a reference answer, declared once, and what a run without
references keeps.

A run whose inputs hold no reference answer (an ARES file, a dataset without a reference
field, questions and answers without a ground-truth file) computes only the families and
metrics declared here as reading none: they look at the question, the answer and the
retrieved contexts. Every other one compares with the Ground Truth, its golden contexts or
its required facts, and is left out, named in one line. A metric not declared here is taken
to need a reference, so a metric added later is left out of such runs, never fed a blank
reference.

Pure: names in, names out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.families import scores as judged_scores
from rag_evaluator.families.grading.classify import CLASSIFY_FAMILY
from rag_evaluator.families.grading.factual_accuracy import FACTUAL_ACCURACY_FAMILY
from rag_evaluator.families.grading.match import MATCH_FAMILY
from rag_evaluator.families.judge.family import JUDGE_FAMILY
from rag_evaluator.families.ragas.family import RAGAS_FAMILY, RAGAS_METRICS
from rag_evaluator.families.rubric.family import RUBRIC_FAMILY
from rag_evaluator.offline import quality
from rag_evaluator.offline.registry import FAMILY_METRICS, OFFLINE_FAMILIES

# The offline metrics that read no reference.
REFERENCE_FREE_METRICS: frozenset[str] = frozenset(
    {
        # lexical: the answer's own citations and "I don't know".
        "citation_quality",
        "dont_know",
        # semantic: the answer against the question, the contexts against the question,
        # the answer's sentences against the contexts.
        "answer_relevance",
        "context_relevance",
        "context_sufficiency",
        "hallucination",
        # quality: every check reads the answer, its contexts and their retrieval scores.
        *quality.CHECKS,
        quality.PASS,
        quality.FAILURES,
    }
)
# The model-judged families that grade the answer against the reference, whole.
REFERENCE_FAMILIES: tuple[str, ...] = (
    JUDGE_FAMILY,
    FACTUAL_ACCURACY_FAMILY,
    CLASSIFY_FAMILY,
    MATCH_FAMILY,
)
# RAGAS: faithfulness (the answer's claims against the contexts) and answer relevance (the
# answer against the question) read no reference; context precision and context recall
# judge the contexts against it.
RAGAS_REFERENCE_FREE: tuple[str, ...] = (judged_scores.FAITHFULNESS, judged_scores.ANSWER_RELEVANCE)
# The rubric family reads a reference when its rubric shows the judge the ground truth.


def reference_free_metrics(family: str) -> list[str]:
    """The metrics of an offline family that a run without references computes."""
    return [name for name in FAMILY_METRICS[family] if name in REFERENCE_FREE_METRICS]


@dataclass(frozen=True)
class ReferenceFreeFamilies:
    """The families a run without references computes, and what it leaves out.

    ``left_out`` are the parts of the one line naming what was left out (``the judge``,
    ``the lexical metrics exact_match, …``); ``wholly_left_out`` the families none of whose
    metrics can run.
    """

    judge: bool
    llm: tuple[str, ...]
    offline: tuple[str, ...]
    left_out: tuple[str, ...]
    wholly_left_out: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not (self.judge or self.llm or self.offline)


def without_references(
    judge: bool,
    llm: Sequence[str],
    offline: Sequence[str],
    *,
    rubric_reads_reference: bool = False,
) -> ReferenceFreeFamilies:
    """The families asked for, less those (and the metrics) that need a reference."""
    whole: list[str] = [JUDGE_FAMILY] if judge else []
    partial: list[str] = []
    kept_llm: list[str] = []
    for name in llm:
        if name in REFERENCE_FAMILIES or (name == RUBRIC_FAMILY and rubric_reads_reference):
            whole.append(name)
            continue
        kept_llm.append(name)
        if name == RAGAS_FAMILY:
            dropped = [metric for metric in RAGAS_METRICS if metric not in RAGAS_REFERENCE_FREE]
            partial.append(
                f"the ragas metrics {', '.join(metric.replace('_', ' ') for metric in dropped)}"
            )
    kept_offline: list[str] = []
    for family in (family for family in OFFLINE_FAMILIES if family in offline):
        kept = reference_free_metrics(family)
        if not kept:
            whole.append(family)
            continue
        kept_offline.append(family)
        dropped = [name for name in FAMILY_METRICS[family] if name not in kept]
        if dropped:
            partial.append(f"the {family} metrics {', '.join(dropped)}")
    names = [f"the {name}" if name == JUDGE_FAMILY else name for name in whole]
    left_out = ([", ".join(names)] if names else []) + partial
    return ReferenceFreeFamilies(
        False, tuple(kept_llm), tuple(kept_offline), tuple(left_out), tuple(whole)
    )


def left_out_line(where: str, families: ReferenceFreeFamilies) -> str:
    """The one line saying what a run without references leaves out, and why."""
    if not families.left_out:
        return f"No reference answers {where}: every family asked for needs none"
    return (
        f"No reference answers {where}: left out {', and '.join(families.left_out)} (they "
        "compare the answer with a reference)"
    )
