"""What ``rag-eval evaluate`` was asked to do, what it is about to do, and how it ended.

Plain records shared by the evaluate run's modules and the command that shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.families.setup import LlmFamilyOptions
from rag_evaluator.llm.cost import CostEstimate
from rag_evaluator.llm.models import ModelInfo
from rag_evaluator.llm.session import CallOptions, CommandInteraction
from rag_evaluator.offline.families import JUDGE_FAMILY, MetricFamilies
from rag_evaluator.offline.runner import EmptyMetric, MetricOptions
from rag_evaluator.results.gates import Threshold, ThresholdCheck, ThresholdFailure
from rag_evaluator.results.groups import GroupSummary
from rag_evaluator.results.summary import SummaryLine

if TYPE_CHECKING:
    # numpy comes with it: a run without a jury starts without importing it.
    from rag_evaluator.families.jury.tally import JuryAgreement

EXIT_ALL_SCORED = 0
EXIT_SOME_UNSCORED = 1


# How the run talks to the user; the command implements it with the console.
RunInteraction = CommandInteraction["RunPlan"]


@dataclass(frozen=True)
class EvaluateRequest:
    """Everything the user chose for a run (the command's options, parsed)."""

    questions_path: Path
    ground_truth_path: Path
    answers_path: Path
    working_directory: Path
    # How the model is called: the options every model-calling command shares.
    calls: CallOptions = field(default_factory=CallOptions)
    prompt_path: Path | None = None
    seed: int | None = None
    output_dir: Path = Path("Evaluation_Runs")
    metrics: str = JUDGE_FAMILY
    hedge_phrases: tuple[str, ...] = DEFAULT_HEDGE_PHRASES
    metric_options: MetricOptions = field(default_factory=MetricOptions)
    score_missing: bool = False
    limit: int | None = None
    write_json: bool = False
    # The --fail-under minimums and --fail-over maximums (``Threshold.upper``).
    fail_under: tuple[Threshold, ...] = ()
    # The LLM families' options (--rubric, --answer-relevance; issue 10).
    llm_options: LlmFamilyOptions = field(default_factory=LlmFamilyOptions)
    # One dataset file instead of the three CSVs (--dataset); the three paths are then unused.
    dataset_path: Path | None = None
    # A metadata column whose values get their own summary rows (--group-by).
    group_by: str | None = None
    # Whether --ground-truth was given: when not, a missing ground_truth.csv makes a run
    # without references instead of an error (if a family asked for can run without).
    ground_truth_given: bool = True
    # Set by the run once it knows the inputs hold no reference answer.
    reference_free: bool = False

    @property
    def input_paths(self) -> tuple[Path, Path, Path]:
        """The questions, ground-truth and answers files: the dataset thrice with --dataset
        (it is then what the checkpoint is named after and fingerprinted by); without a
        ground-truth file, the questions file in its place (a checkpoint of its own)."""
        if self.dataset_path is not None:
            return (self.dataset_path, self.dataset_path, self.dataset_path)
        if self.reference_free:
            return (self.questions_path, self.questions_path, self.answers_path)
        return (self.questions_path, self.ground_truth_path, self.answers_path)


@dataclass(frozen=True)
class InputFileInfo:
    """One input file as the pre-run summary shows it."""

    label: str
    path: Path
    question_count: int
    # The SHA-256 of its bytes when reading it already computed one (a spooled file).
    sha256: str | None = None


@dataclass(frozen=True)
class RunPlan:
    """What the run is about to do, shown before ``Proceed?``."""

    files: list[InputFileInfo]
    question_count: int
    excluded_count: int
    exclusion_messages: list[str]
    families: MetricFamilies
    coverage: tuple[int, int]
    model: ModelInfo | None = None
    judged_by: str = ""  # the model or jury, as named to the user
    jurors: int = 0
    prompt_origin: str | None = None
    seed: int | None = None
    seed_was_drawn: bool = False
    selected_count: int = 0
    limit: int | None = None
    resumed_count: int = 0
    pending_count: int = 0
    cached_count: int = 0
    cached_jurors: Mapping[str, int] = field(default_factory=dict)  # "judge (haiku)": count
    no_information_count: int = 0
    missing_answer_count: int = 0
    too_long: list[int] = field(default_factory=list)
    estimate: CostEstimate | None = None
    checkpoint_path: Path | None = None
    concurrency: int = 1
    batch: bool = False
    max_cost: float | None = None
    # What the LLM families will do (answer relevance method, rubric criteria).
    family_notes: tuple[str, ...] = ()
    # The metadata columns carried into the results, and the --group-by column.
    metadata_columns: tuple[str, ...] = ()
    group_by: str | None = None
    # A run without references: the line naming what it leaves out, and why.
    reference_note: str = ""


@dataclass(frozen=True)
class RunOutcome:
    """How the run ended, for the command to report."""

    declined: bool
    exit_code: int
    results_path: Path | None = None
    json_path: Path | None = None
    summary: list[SummaryLine] = field(default_factory=list)
    unscored_count: int = 0
    remaining_after_limit: int = 0
    threshold_failures: list[ThresholdFailure] = field(default_factory=list)
    # Every --fail-under/--fail-over gate as checked, passed or not (for --junit).
    gate_checks: list[ThresholdCheck] = field(default_factory=list)
    groups: list[GroupSummary] = field(default_factory=list)
    # The inputs held no reference answer (no ground-truth file to read for a report).
    reference_free: bool = False
    # The offline metrics left empty for some questions, and why (a table after the summary).
    not_applicable: list[EmptyMetric] = field(default_factory=list)
    # A jury's agreement, by family name (a table after the summary).
    jury: list[tuple[str, JuryAgreement]] = field(default_factory=list)
