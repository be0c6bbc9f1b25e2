"""What ``rag-eval generate`` was asked to do, what it is about to do, and how it ended."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rag_evaluator.generate.documents import DEFAULT_CHUNK_CHARACTERS
from rag_evaluator.generate.options import DEFAULT_COUNT, PAIRING_AUTO
from rag_evaluator.generate.sampling import DEFAULT_TYPES
from rag_evaluator.llm.cost import CostEstimate
from rag_evaluator.llm.models import ModelInfo
from rag_evaluator.llm.session import CallOptions, CommandInteraction
from rag_evaluator.results.summary import SummaryLine

EXIT_ALL_WRITTEN = 0
EXIT_FEWER_WRITTEN = 1


# How the run talks to the user; the command implements it with the console.
GenerateInteraction = CommandInteraction["GeneratePlan"]


@dataclass(frozen=True)
class GenerateRequest:
    """Everything the user chose for a generate run (the command's options, parsed)."""

    docs_dir: Path
    working_directory: Path
    count: int = DEFAULT_COUNT
    # How the model is called: the options every model-calling command shares.
    calls: CallOptions = field(default_factory=CallOptions)
    examples_path: Path | None = None
    types: str = DEFAULT_TYPES
    seed: int | None = None
    chunk_characters: int = DEFAULT_CHUNK_CHARACTERS
    pairing: str = PAIRING_AUTO
    output_dir: Path = Path(".")
    force: bool = False


@dataclass(frozen=True)
class GeneratePlan:
    """What the run is about to do, shown before ``Proceed?``."""

    docs_dir: Path
    documents: int
    chunks: int
    question_chunks: int
    skipped_files: list[str]
    count: int
    type_counts: dict[str, int]
    pairing: str
    examples: int
    model: ModelInfo
    seed: int
    seed_was_drawn: bool
    questions_path: Path
    ground_truth_path: Path
    resumed_count: int = 0
    pending_count: int = 0
    cached_count: int = 0
    too_long: list[int] = field(default_factory=list)
    estimate: CostEstimate | None = None
    top_up_allowance: int = 0
    checkpoint_path: Path | None = None
    concurrency: int = 1
    batch: bool = False
    max_cost: float | None = None


@dataclass(frozen=True)
class GenerateOutcome:
    """How the run ended, for the command to report."""

    declined: bool
    exit_code: int
    count: int = 0
    written: int = 0
    questions_path: Path | None = None
    ground_truth_path: Path | None = None
    summary: list[SummaryLine] = field(default_factory=list)
