"""The generate run: documents, chunks, planned questions, confirmation, calls, filters, files.

The calls go through the judge's call path: each question is a ``GenerationFamily`` task, the
plan (response cache, requests too long, cost estimate) is ``llm/judging.py``'s
``plan_judging`` and the calls, checkpoint lines, Ctrl-C and budget stops are its
``judge_pending`` (direct calls on the engine's workers, or Message Batches). A run asks its
questions in rounds: the first asks ``--count``, each later one replaces the questions the
filters dropped (see ``generate/selection.py``).

Prints nothing: everything the user sees or answers goes through ``GenerateInteraction``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rag_evaluator import __version__
from rag_evaluator.errors import (
    CheckpointError,
    ConfigError,
    InputError,
    MissingExtraError,
    UsageError,
)
from rag_evaluator.families.base import QuestionRecord, first_stage
from rag_evaluator.generate.documents import (
    DEFAULT_CHUNK_CHARACTERS,
    MIN_CHUNK_CHARACTERS,
    MIN_QUESTION_CHUNK_WORDS,
    Chunk,
    chunk_documents,
    question_chunks,
)
from rag_evaluator.generate.examples import load_examples
from rag_evaluator.generate.fingerprint import (
    GenerationFingerprint,
    generation_differences,
    generation_fingerprint,
)
from rag_evaluator.generate.golden import GoldenPair, ground_truth_rows, question_rows
from rag_evaluator.generate.golden_set import (
    check_output_folder,
    golden_set_paths,
    refuse_to_overwrite,
    write_golden_set,
)
from rag_evaluator.generate.prompts import Example, build_system_prompt
from rag_evaluator.generate.reading import DocumentSet, read_documents
from rag_evaluator.generate.sampling import (
    DEFAULT_TYPES,
    FACTUAL,
    MULTI_HOP,
    EmbeddingPartners,
    KeywordPartners,
    PartnerFinder,
    QuestionSlot,
    SlotPlanner,
    parse_types,
    type_counts,
)
from rag_evaluator.generate.selection import (
    MAX_ROUNDS,
    SlotOutcome,
    extra_allowance,
    judge_replies,
    replacement_types,
)
from rag_evaluator.generate.summary import GenerationFacts, generation_summary
from rag_evaluator.generate.task import (
    GENERATION_FAMILY,
    GenerationFamily,
    GenerationItem,
    GenerationResult,
)
from rag_evaluator.inputs.files import read_input_bytes
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.checkpoint.store import (
    CheckpointHeader,
    LoadedCheckpoint,
    checkpoint_path,
    load_checkpoint,
    lock_run,
    remove_checkpoint,
    resolve_checkpoint_directory,
)
from rag_evaluator.llm.cost import CostEstimate, dollar_range, estimate_cost
from rag_evaluator.llm.fingerprint import checkpoint_key
from rag_evaluator.llm.judging import (
    JudgingInteraction,
    JudgingOptions,
    JudgingPlan,
    PreparedCheckpoint,
    draw_seed,
    judge_pending,
    plan_judging,
)
from rag_evaluator.llm.models import ModelInfo, resolve_model
from rag_evaluator.llm.requests import CallOutcome, ModelRequest
from rag_evaluator.llm.response_cache import CACHE_FILE_NAME, ResponseCache, default_cache_directory
from rag_evaluator.results.summary import SummaryLine
from rag_evaluator.settings import Settings

if TYPE_CHECKING:
    from rag_evaluator.llm.client import ModelClient

logger = logging.getLogger(__name__)

EXIT_ALL_WRITTEN = 0
EXIT_FEWER_WRITTEN = 1

PAIRING_AUTO = "auto"
PAIRING_KEYWORDS = "keywords"
PAIRING_EMBEDDINGS = "embeddings"
PAIRINGS = (PAIRING_AUTO, PAIRING_KEYWORDS, PAIRING_EMBEDDINGS)
PROMPT_ORIGIN = "built-in generator prompt"


class GenerateInteraction(JudgingInteraction, Protocol):
    """How the pipeline talks to the user; the command implements it with ``console``."""

    def show_plan(self, plan: GeneratePlan) -> None: ...

    def work_progress(self, label: str, done: int, total: int) -> None: ...

    def finished(self) -> None: ...


@dataclass(frozen=True)
class GenerateRequest:
    """Everything the user chose for a generate run (the command's options, parsed)."""

    docs_dir: Path
    working_directory: Path
    count: int = 50
    model: str = "sonnet"
    examples_path: Path | None = None
    types: str = DEFAULT_TYPES
    seed: int | None = None
    chunk_characters: int = DEFAULT_CHUNK_CHARACTERS
    pairing: str = PAIRING_AUTO
    output_dir: Path = Path(".")
    force: bool = False
    delay_seconds: float | None = None  # None: 0.5 s sequential, none when concurrent
    max_retries: int = 6
    timeout_seconds: float = 120.0
    concurrency: int = 1
    batch: bool = False
    batch_poll_seconds: float = 30.0
    use_cache: bool = True
    exact_estimate: bool = False
    max_cost: float | None = None
    checkpoint_dir: Path | None = None


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


def _log_request(request: GenerateRequest) -> None:
    logger.info(
        "rag-eval %s generate: docs=%s count=%s model=%s examples=%s types=%s seed=%s "
        "chunk_chars=%s pairing=%s output_dir=%s force=%s delay=%ss max_retries=%s "
        "timeout=%ss concurrency=%s batch=%s cache=%s max_cost=%s checkpoint_dir=%s "
        "working_directory=%s",
        __version__,
        request.docs_dir,
        request.count,
        request.model,
        request.examples_path,
        request.types,
        request.seed,
        request.chunk_characters,
        request.pairing,
        request.output_dir,
        request.force,
        request.delay_seconds,
        request.max_retries,
        request.timeout_seconds,
        request.concurrency,
        request.batch,
        request.use_cache,
        request.max_cost,
        request.checkpoint_dir,
        request.working_directory,
    )


def _check_request(request: GenerateRequest) -> dict[str, int]:
    if request.count < 1:
        raise UsageError(f"--count must be at least 1 (got {request.count})")
    if request.chunk_characters < MIN_CHUNK_CHARACTERS:
        raise UsageError(
            f"--chunk-chars must be at least {MIN_CHUNK_CHARACTERS} (got "
            f"{request.chunk_characters}). Try --chunk-chars {DEFAULT_CHUNK_CHARACTERS}"
        )
    if request.max_cost is not None and request.max_cost <= 0:
        raise UsageError(
            f"--max-cost must be more than 0 dollars (got {request.max_cost:g}). Try --max-cost 5"
        )
    if request.pairing not in PAIRINGS:
        raise UsageError(f"Unknown --pairing '{request.pairing}'. Use {', '.join(PAIRINGS)}")
    return parse_types(request.types)


def _pairing_method(request: GenerateRequest, weights: dict[str, int]) -> str | None:
    """How multi-hop chunks are paired (``None``: no multi-hop question is asked)."""
    if MULTI_HOP not in weights:
        return None
    if request.pairing != PAIRING_AUTO:
        return request.pairing
    from rag_evaluator.offline.embeddings import SEMANTIC_FEATURE, require_semantic_extra

    try:
        require_semantic_extra(SEMANTIC_FEATURE)
    except MissingExtraError:
        return PAIRING_KEYWORDS
    return PAIRING_EMBEDDINGS


def _partners(
    method: str | None, chunks: Sequence[Chunk], interaction: GenerateInteraction
) -> PartnerFinder | None:
    if method is None:
        return None
    if method == PAIRING_KEYWORDS:
        return KeywordPartners(chunks)
    from rag_evaluator.offline.embeddings import load_text_embedder, require_semantic_extra

    require_semantic_extra("Pairing chunks by embeddings (--pairing embeddings)")
    interaction.info(f"Embedding {len(chunks)} chunks to pair related ones for multi_hop...")
    embedder = load_text_embedder(None)
    vectors = embedder.encode([chunk.text for chunk in chunks])
    rows = {chunk.chunk_id: row for row, chunk in enumerate(chunks)}

    def similarities(chunk_id: int) -> Sequence[float]:
        return (vectors @ vectors[rows[chunk_id]]).tolist()

    return EmbeddingPartners([chunk.chunk_id for chunk in chunks], similarities)


def _checkpoint_location(request: GenerateRequest, settings: Settings) -> Path:
    """The checkpoint of a generate run from this folder into these output files."""
    directory = resolve_checkpoint_directory(request.checkpoint_dir, settings.checkpoint_dir)
    key = checkpoint_key(
        [GENERATION_FAMILY, str(request.docs_dir.resolve()), str(request.output_dir.resolve())]
    )
    return checkpoint_path(directory, f"{GENERATION_FAMILY}-{key}")


def _open_cache(request: GenerateRequest, settings: Settings) -> ResponseCache:
    if not request.use_cache:
        return ResponseCache(None)
    return ResponseCache((settings.cache_dir or default_cache_directory()) / CACHE_FILE_NAME)


def _make_client(
    request: GenerateRequest,
    api_key: str,
    model: ModelInfo,
    stop: threading.Event,
    spent_usd: float,
) -> ModelClient:
    # Imported here: the SDK takes seconds to import.
    from rag_evaluator.llm.client import ClientSettings, ModelClient
    from rag_evaluator.llm.limits import CallLimiter, SpendingCap, call_spacing
    from rag_evaluator.llm.transport import Transport

    concurrency = request.concurrency if not request.batch else 1
    return ModelClient(
        Transport(api_key, request.timeout_seconds),
        ClientSettings(model=model, max_retries=request.max_retries, batch=request.batch),
        limiter=CallLimiter(
            concurrency, call_spacing(request.delay_seconds, concurrency), stop=stop
        ),
        # The budget covers the whole run: what the resumed sessions spent counts.
        cap=SpendingCap(request.max_cost, already_spent_usd=spent_usd),
        api_key=api_key,
    )


@dataclass(frozen=True)
class _ResumeDecision:
    loaded: LoadedCheckpoint | None
    replaces: Path | None


def _decide_resume(
    path: Path,
    fingerprint: GenerationFingerprint,
    families: dict[str, GenerationFamily],
    interaction: GenerateInteraction,
    request: GenerateRequest,
) -> _ResumeDecision:
    """Whether this run resumes the checkpoint at ``path`` (asked when there is one)."""
    loaded = load_checkpoint(path, families)
    if loaded is None:
        return _ResumeDecision(None, None)
    if not (loaded.results or loaded.stages or loaded.open_batches or loaded.unconfirmed_intents):
        logger.info("Checkpoint %s holds no finished question; starting afresh", path)
        return _ResumeDecision(None, None)
    saved = loaded.header.fingerprint
    finished = len(loaded.results)
    differences = (
        generation_differences(saved, fingerprint)
        if isinstance(saved, GenerationFingerprint)
        else ["the kind of run"]
    )
    if differences:
        changed = ", ".join(differences)
        logger.warning(
            "An unfinished generate run from these documents (%s questions done, checkpoint "
            "%s) cannot be resumed: %s changed since",
            finished,
            path,
            changed,
        )
        if not interaction.confirm("Discard it and start a new run?", default=False):
            raise CheckpointError(
                f"The unfinished run's checkpoint was kept because {changed} changed. To resume "
                "it, run again with the same documents, options and model; to start over, "
                f"answer y or delete {path}"
            )
        return _ResumeDecision(None, path)
    started = loaded.header.created_at.replace("T", " ")
    interaction.info(
        f"Found an unfinished generate run from these documents started {started}: "
        f"{finished} questions done (seed {loaded.header.seed})."
    )
    if interaction.confirm("Resume previous run?", default=True):
        if request.seed is not None and request.seed != loaded.header.seed:
            logger.warning(
                "--seed %s is ignored: the resumed run keeps its own seed (%s)",
                request.seed,
                loaded.header.seed,
            )
        return _ResumeDecision(loaded, None)
    return _ResumeDecision(None, path)


def _result(record: QuestionRecord) -> GenerationResult:
    return record.results[GENERATION_FAMILY]  # type: ignore[return-value]


def _known_records(plan: JudgingPlan) -> dict[int, QuestionRecord]:
    """The records a plan has without any call: finished before, or from the response cache."""
    known = dict(plan.done)
    for job in plan.jobs:
        if not job.families and job.known:
            known[job.question_number] = QuestionRecord(job.question_number, dict(job.known))
    return known


class _Rounds:
    """The question slots of every round so far, planned and judged over evaluate's planner.

    Each ``plan`` is a ``JudgingPlan`` over every slot so far: the ones finished (resumed,
    or recorded in earlier rounds) are done, the rest are jobs for the engine.
    """

    def __init__(
        self,
        planner: SlotPlanner,
        chunks: Sequence[Chunk],
        options: JudgingOptions,
        checkpoint: PreparedCheckpoint,
        cache: ResponseCache,
        count: int,
    ) -> None:
        self.planner = planner
        self.chunks = {chunk.chunk_id: chunk for chunk in chunks}
        self.options = options
        self.checkpoint = checkpoint
        self.cache = cache
        self.count = count
        self.items: dict[int, GenerationItem] = {}
        self.slots: list[QuestionSlot] = []
        self.rounds = 0

    def add(self, types: Sequence[str]) -> None:
        self.rounds += 1
        for slot in self.planner.plan(types):
            self.slots.append(slot)
            chunks = tuple(self.chunks[chunk_id] for chunk_id in slot.chunk_ids)
            self.items[slot.number] = GenerationItem(slot, chunks)

    def plan(
        self, window: int, count_tokens: Callable[[ModelRequest], int] | None = None
    ) -> JudgingPlan:
        numbers = [slot.number for slot in self.slots]
        checkpoint = replace(self.checkpoint, header=replace(self.checkpoint.header, order=numbers))
        return plan_judging(
            self.options,
            checkpoint,
            [self.items[number] for number in numbers],  # type: ignore[misc]
            self.cache,
            answers_name="",
            context_window_tokens=window,
            count_tokens=count_tokens,
        )

    def outcomes(self, records: Mapping[int, QuestionRecord]) -> list[SlotOutcome]:
        entries = [
            (self.items[slot.number], _result(records[slot.number]))
            for slot in self.slots
            if slot.number in records
        ]
        return judge_replies(entries, self.options.model.model_id)

    def next_types(self, outcomes: Sequence[SlotOutcome]) -> list[str]:
        """The types of the next round's questions (empty: no further round)."""
        if self.rounds >= MAX_ROUNDS:
            return []
        return replacement_types(outcomes, self.count, len(self.slots))

    def continue_checkpoint(self, families: Mapping[str, GenerationFamily]) -> None:
        """The next round goes on with the checkpoint the earlier rounds wrote."""
        path = self.checkpoint.path
        self.checkpoint = PreparedCheckpoint(
            path, self.checkpoint.header, load_checkpoint(path, families), None
        )

    def allowance(self) -> int:
        """Questions later rounds may still ask to replace dropped ones."""
        return max(0, self.count + extra_allowance(self.count) - len(self.slots))


@dataclass(frozen=True)
class _Inputs:
    documents: DocumentSet
    chunks: list[Chunk]
    askable: list[Chunk]
    examples: list[Example]
    examples_bytes: bytes


def _read_inputs(request: GenerateRequest) -> _Inputs:
    document_set = read_documents(request.docs_dir)
    chunks = chunk_documents(document_set.documents, request.chunk_characters)
    askable = question_chunks(chunks)
    if not askable:
        raise InputError(
            f"The documents in {request.docs_dir} hold no paragraph of {MIN_QUESTION_CHUNK_WORDS} "
            "words or more to ask about. Add documents with some text",
            request.docs_dir,
        )
    examples: list[Example] = []
    examples_bytes = b""
    if request.examples_path is not None:
        examples = load_examples(request.examples_path)
        examples_bytes = read_input_bytes(request.examples_path)
    return _Inputs(document_set, chunks, askable, examples, examples_bytes)


def _first_round_counts(
    weights: dict[str, int], count: int, planner: SlotPlanner, pairing: str | None
) -> dict[str, int]:
    counts = type_counts(weights, count)
    if counts.get(MULTI_HOP) and not planner.has_pairs():
        logger.warning(
            "No two chunks are related enough to pair for multi_hop questions (%s); the %d "
            "multi_hop questions are asked as factual ones",
            "shared keywords" if pairing == PAIRING_KEYWORDS else "similar embeddings",
            counts[MULTI_HOP],
        )
        counts[FACTUAL] = counts.get(FACTUAL, 0) + counts.pop(MULTI_HOP)
    return counts


def _with_allowance(
    estimate: CostEstimate, rounds: _Rounds, family: GenerationFamily, batch: bool
) -> CostEstimate:
    """The estimate with the questions later rounds may ask added to its high end."""
    allowance = rounds.allowance()
    if not allowance:
        return estimate
    per_question = _per_question_high_usd(
        family, list(rounds.items.values()), rounds.options.model, batch
    )
    return replace(
        estimate,
        expected_calls_high=estimate.expected_calls_high + allowance,
        high_usd=estimate.high_usd + per_question * allowance,
    )


def _per_question_high_usd(
    family: GenerationFamily, items: Sequence[GenerationItem], model: ModelInfo, batch: bool
) -> float:
    """The high estimate of one question's cost, averaged over (up to 50 of) ``items``."""
    estimates = []
    for item in list(items)[:50]:
        stage = first_stage(family.run(item))
        if isinstance(stage, tuple):
            estimates.append(family.estimate(item, stage))
    if not estimates:
        return 0.0
    cost = estimate_cost({GENERATION_FAMILY: estimates}, model, batch=batch)
    return cost.high_usd / len(estimates)


def _facts(
    inputs: _Inputs,
    request: GenerateRequest,
    model: ModelInfo,
    seed: int,
    rounds: _Rounds,
    records: Mapping[int, QuestionRecord],
    estimate: str | None,
) -> GenerationFacts:
    present = list(records.values())
    return GenerationFacts(
        documents=len(inputs.documents.documents),
        chunks=len(inputs.chunks),
        question_chunks=len(inputs.askable),
        count=request.count,
        model_id=model.model_id,
        seed=seed,
        rounds=rounds.rounds,
        calls=sum(record.calls for record in present),
        cached_questions=sum(
            1
            for record in present
            if record.results and all(result.cached for result in record.results.values())
        ),
        usage=sum((record.usage for record in present), TokenUsage()),
        cost_usd=sum(record.cost_usd for record in present),
        estimate=estimate,
        batch=request.batch,
    )


def run_generation(
    request: GenerateRequest,
    settings: Settings,
    interaction: GenerateInteraction,
    *,
    now: datetime | None = None,
) -> GenerateOutcome:
    """Run ``rag-eval generate`` from parsed options to the two written files."""
    started_at = now or datetime.now()
    _log_request(request)
    weights = _check_request(request)
    model = resolve_model(request.model)
    paths = golden_set_paths(request.output_dir)
    if not request.force:
        refuse_to_overwrite(paths)
    inputs = _read_inputs(request)
    if settings.api_key is None:
        raise ConfigError(
            "ANTHROPIC_API_KEY is not set. Set ANTHROPIC_API_KEY or put it in a .env file in "
            "this folder (ANTHROPIC_API_KEY=sk-ant-...)"
        )
    family = GenerationFamily(build_system_prompt(inputs.examples))
    families = {GENERATION_FAMILY: family}
    pairing = _pairing_method(request, weights)
    fingerprint = generation_fingerprint(
        inputs.documents.digest,
        inputs.examples_bytes,
        {
            "count": request.count,
            "types": weights,
            "chunk_characters": request.chunk_characters,
            "pairing": pairing,
        },
        model.model_id,
        family.system_prompt,
    )
    stop = threading.Event()
    with ExitStack() as hold:
        checkpoint_file = _checkpoint_location(request, settings)
        # Held until the run ends: two runs into the same files cannot interleave.
        hold.enter_context(lock_run(checkpoint_file))
        cache = _open_cache(request, settings)
        hold.callback(cache.close)
        decision = _decide_resume(checkpoint_file, fingerprint, families, interaction, request)
        if decision.loaded is not None:
            seed = decision.loaded.header.seed
            header = decision.loaded.header
        else:
            seed = request.seed if request.seed is not None else draw_seed()
            header = CheckpointHeader(
                fingerprint=fingerprint,
                seed=seed,
                order=[],
                prompt_origin=PROMPT_ORIGIN,
                input_paths=[
                    str(path.resolve())
                    for path in (request.docs_dir, request.examples_path)
                    if path
                ],
                created_at=started_at.isoformat(timespec="seconds"),
            )
        planner = SlotPlanner(inputs.askable, _partners(pairing, inputs.askable, interaction), seed)
        counts = _first_round_counts(weights, request.count, planner, pairing)
        spent = decision.loaded.spent_usd if decision.loaded is not None else 0.0
        client = _make_client(request, settings.api_key, model, stop, spent)
        hold.callback(client.close)
        options = JudgingOptions(
            model=model,
            families=(family,),
            prompt_origin=PROMPT_ORIGIN,
            concurrency=request.concurrency,
            batch=request.batch,
            use_cache=request.use_cache,
            exact_estimate=request.exact_estimate,
        )
        checkpoint = PreparedCheckpoint(checkpoint_file, header, decision.loaded, decision.replaces)
        rounds = _Rounds(planner, inputs.askable, options, checkpoint, cache, request.count)
        rounds.add(planner.first_round_types(counts))

        # Rounds whose every question is known already (resumed, or in the response cache)
        # are replayed now, so the estimate and Proceed? cover the calls still to come.
        plan = rounds.plan(client.context_window_tokens)
        while not plan.sends_calls:
            more = rounds.next_types(rounds.outcomes(_known_records(plan)))
            if not more:
                break
            rounds.add(more)
            plan = rounds.plan(client.context_window_tokens)
        if plan.sends_calls:
            if not interaction.can_confirm():
                raise UsageError(
                    "There is no terminal to ask 'Proceed?' before paying for the calls. "
                    "Run with --yes (-y) to confirm in scripts and CI"
                )
            # Free, and before the user is asked to pay: a bad key or model stops here.
            window = client.check_model()
            if window is not None and window != model.context_window_tokens:
                plan = rounds.plan(window)
            if request.exact_estimate and plan.sends_calls:
                plan = rounds.plan(client.context_window_tokens, client.count_input_tokens)
        sends = plan.sends_calls
        estimate = _with_allowance(plan.estimate, rounds, family, request.batch)
        interaction.show_plan(
            GeneratePlan(
                docs_dir=request.docs_dir,
                documents=len(inputs.documents.documents),
                chunks=len(inputs.chunks),
                question_chunks=len(inputs.askable),
                skipped_files=inputs.documents.skipped,
                count=request.count,
                type_counts=counts,
                pairing=pairing or "",
                examples=len(inputs.examples),
                model=model,
                seed=seed,
                seed_was_drawn=decision.loaded is None and request.seed is None,
                questions_path=paths[0],
                ground_truth_path=paths[1],
                resumed_count=len(plan.done),
                pending_count=sum(1 for job in plan.jobs if job.families),
                cached_count=plan.cached_count,
                too_long=plan.too_long,
                estimate=estimate if sends else None,
                top_up_allowance=rounds.allowance(),
                checkpoint_path=checkpoint_file,
                concurrency=request.concurrency,
                batch=request.batch,
                max_cost=request.max_cost,
            )
        )
        if sends and not interaction.confirm("Proceed?", default=True):
            logger.info("The user declined to proceed; nothing was generated")
            return GenerateOutcome(declined=True, exit_code=EXIT_ALL_WRITTEN)
        # Found out now, not after every question has been paid for.
        check_output_folder(request.output_dir)
        batches = None
        if request.batch:
            from rag_evaluator.llm.batches import BatchRunner

            batches = BatchRunner(
                client, stop, poll_seconds=request.batch_poll_seconds, interaction=interaction
            )

        def call(model_request: ModelRequest, label: str) -> CallOutcome:
            return client.call(model_request, label=label)

        while True:
            judged = judge_pending(plan, options, call, cache, interaction, stop, batches)
            records = judged.records
            hold.callback(records.close)
            if judged.budget_stop is not None:
                # No golden set from part of the questions; the checkpoint keeps them all.
                raise judged.budget_stop
            outcomes = rounds.outcomes(records)
            more = rounds.next_types(outcomes)
            if not more:
                break
            logger.info(
                "%d question(s) dropped so far; asking %d more (round %d)",
                sum(outcome.pair is None for outcome in outcomes),
                len(more),
                rounds.rounds + 1,
            )
            rounds.add(more)
            rounds.continue_checkpoint(families)
            plan = rounds.plan(client.context_window_tokens)
        interaction.finished()
        estimate_text = dollar_range(estimate.low_usd, estimate.high_usd) if sends else None
        facts = _facts(inputs, request, model, seed, rounds, records, estimate_text)
        return _finish(request, outcomes, facts, paths, checkpoint_file)


def _finish(
    request: GenerateRequest,
    outcomes: Sequence[SlotOutcome],
    facts: GenerationFacts,
    paths: tuple[Path, Path],
    checkpoint_file: Path,
) -> GenerateOutcome:
    for outcome in outcomes:
        if outcome.rejection is not None:
            logger.info(
                "Question %s (%s) dropped: %s: %s",
                outcome.slot.number,
                outcome.slot.question_type,
                outcome.rejection.reason,
                outcome.rejection.detail,
            )
    summary = generation_summary(outcomes, facts)
    kept: list[GoldenPair] = [outcome.pair for outcome in outcomes if outcome.pair is not None]
    questions_path, ground_truth_path = paths
    if not kept:
        logger.warning("No question passed the filters; nothing was written")
        return GenerateOutcome(
            declined=False, exit_code=EXIT_FEWER_WRITTEN, count=request.count, summary=summary
        )
    write_golden_set(
        questions_path,
        ground_truth_path,
        question_rows(kept),
        ground_truth_rows(kept),
        overwrite=request.force,
    )
    logger.info("Wrote %d question(s) to %s and %s", len(kept), questions_path, ground_truth_path)
    remove_checkpoint(checkpoint_file)
    return GenerateOutcome(
        declined=False,
        exit_code=EXIT_ALL_WRITTEN if len(kept) >= request.count else EXIT_FEWER_WRITTEN,
        count=request.count,
        written=len(kept),
        questions_path=questions_path,
        ground_truth_path=ground_truth_path,
        summary=summary,
    )
