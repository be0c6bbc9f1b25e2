"""``rag-eval generate``: documents, chunks, planned questions, confirmation, calls, filters,
the golden set's two files.

Each question is a ``GenerationFamily`` task run on the shared run session (the lock, the
response cache, the resume decision, the client, the estimate, ``Proceed?``, the calls and
their checkpoint); a run asks its questions in rounds (see ``generate/rounds.py``).

Prints nothing: everything the user sees or answers goes through ``GenerateInteraction``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from rag_evaluator import __version__
from rag_evaluator.errors import ConfigError, InputError, MissingExtraError, UsageError
from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.generate.documents import (
    DEFAULT_CHUNK_CHARACTERS,
    MIN_CHUNK_CHARACTERS,
    MIN_QUESTION_CHUNK_WORDS,
    Chunk,
    chunk_documents,
    question_chunks,
)
from rag_evaluator.generate.examples import load_examples
from rag_evaluator.generate.golden import GoldenPair, ground_truth_rows, question_rows
from rag_evaluator.generate.golden_set import (
    check_output_folder,
    golden_set_paths,
    refuse_to_overwrite,
    write_golden_set,
)
from rag_evaluator.generate.options import (
    PAIRING_AUTO,
    PAIRING_EMBEDDINGS,
    PAIRING_KEYWORDS,
    PAIRINGS,
)
from rag_evaluator.generate.prompts import Example, build_system_prompt
from rag_evaluator.generate.reading import DocumentSet, read_documents
from rag_evaluator.generate.request import (
    EXIT_ALL_WRITTEN,
    EXIT_FEWER_WRITTEN,
    GenerateInteraction,
    GenerateOutcome,
    GeneratePlan,
    GenerateRequest,
)
from rag_evaluator.generate.rounds import Rounds, first_round_counts, known_records, with_allowance
from rag_evaluator.generate.sampling import (
    MULTI_HOP,
    EmbeddingPartners,
    KeywordPartners,
    PartnerFinder,
    SlotPlanner,
    parse_types,
)
from rag_evaluator.generate.selection import SlotOutcome
from rag_evaluator.generate.summary import GenerationFacts, generation_summary
from rag_evaluator.generate.task import GENERATION_FAMILY, GenerationFamily
from rag_evaluator.inputs.files import read_input_bytes
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.checkpoint.store import (
    CheckpointHeader,
    checkpoint_path,
    remove_checkpoint,
    resolve_checkpoint_directory,
)
from rag_evaluator.llm.fingerprint import checkpoint_key
from rag_evaluator.llm.generation_fingerprint import (
    GenerationFingerprint,
    generation_differences,
    generation_fingerprint,
)
from rag_evaluator.llm.models import ModelInfo
from rag_evaluator.llm.planning import (
    CountTokens,
    JudgingOptions,
    JudgingPlan,
    PreparedCheckpoint,
    draw_seed,
)
from rag_evaluator.llm.providers import credentials_problem
from rag_evaluator.llm.response_cache import default_cache_directory
from rag_evaluator.llm.session import (
    ResumeDecision,
    ResumeTexts,
    RunSession,
    SessionConfig,
    call_model,
    check_call_options,
    session_config,
)
from rag_evaluator.settings import Settings

logger = logging.getLogger(__name__)

PROMPT_ORIGIN = "built-in generator prompt"
RESUME_TEXTS = ResumeTexts("generate run from these documents", "documents, options and model")

__all__ = [
    "PAIRING_AUTO",
    "GenerateOutcome",
    "GeneratePlan",
    "GenerateRequest",
    "run_generation",
]


def _log_request(request: GenerateRequest) -> None:
    logger.info(
        "rag-eval %s generate: docs=%s count=%s model=%s examples=%s types=%s seed=%s "
        "chunk_chars=%s pairing=%s output_dir=%s force=%s delay=%ss max_retries=%s "
        "timeout=%ss concurrency=%s batch=%s cache=%s max_cost=%s checkpoint_dir=%s "
        "working_directory=%s",
        __version__,
        request.docs_dir,
        request.count,
        request.calls.model,
        request.examples_path,
        request.types,
        request.seed,
        request.chunk_characters,
        request.pairing,
        request.output_dir,
        request.force,
        request.calls.delay_seconds,
        request.calls.max_retries,
        request.calls.timeout_seconds,
        request.calls.concurrency,
        request.calls.batch,
        request.calls.use_cache,
        request.calls.max_cost,
        request.calls.checkpoint_dir,
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
    check_call_options(request.calls)
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


def _session_config(
    request: GenerateRequest, settings: Settings, model: ModelInfo, api_key: str
) -> SessionConfig:
    """The session of a generate run from this folder into these output files."""
    calls = request.calls
    directory = resolve_checkpoint_directory(calls.checkpoint_dir, settings.checkpoint_dir)
    key = checkpoint_key(
        [GENERATION_FAMILY, str(request.docs_dir.resolve()), str(request.output_dir.resolve())]
    )
    return session_config(
        calls,
        model,
        api_key,
        checkpoint_path(directory, f"{GENERATION_FAMILY}-{key}"),
        settings.cache_dir or default_cache_directory(),
        batch_window_bytes=settings.batch_window_bytes,
    )


def _changes(fingerprint: GenerationFingerprint):  # type: ignore[no-untyped-def]
    """What changed since a checkpoint's fingerprint (another kind of run: everything)."""

    def changes(saved: object) -> list[str]:
        if not isinstance(saved, GenerationFingerprint):
            return ["the kind of run"]
        return generation_differences(saved, fingerprint)

    return changes


def _header(
    request: GenerateRequest,
    fingerprint: GenerationFingerprint,
    decision: ResumeDecision,
    started_at: datetime,
) -> CheckpointHeader:
    """The resumed checkpoint's header, or a new one (its order grows round by round)."""
    if decision.loaded is not None:
        return decision.loaded.header
    return CheckpointHeader(
        fingerprint=fingerprint,
        seed=request.seed if request.seed is not None else draw_seed(),
        order=[],
        prompt_origin=PROMPT_ORIGIN,
        input_paths=[
            str(path.resolve()) for path in (request.docs_dir, request.examples_path) if path
        ],
        created_at=started_at.isoformat(timespec="seconds"),
    )


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


def _facts(
    inputs: _Inputs,
    request: GenerateRequest,
    model: ModelInfo,
    seed: int,
    rounds: Rounds,
    records: Mapping[int, QuestionRecord],
    estimate: str | None,
) -> GenerationFacts:
    present = list(records.values())
    return GenerationFacts(
        documents=len(inputs.documents.documents),
        chunks=len(inputs.chunks),
        question_chunks=len(inputs.askable),
        count=request.count,
        model_id=model.key,
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
        batch=request.calls.batch,
        unpriced=() if model.priced else (model.key,),
    )


@dataclass(frozen=True)
class _Setup:
    """What the run works from, settled before any file is locked or any call is made."""

    model: ModelInfo
    api_key: str
    weights: dict[str, int]
    paths: tuple[Path, Path]
    inputs: _Inputs
    family: GenerationFamily
    pairing: str | None
    fingerprint: GenerationFingerprint


def _prepare(request: GenerateRequest, settings: Settings) -> _Setup:
    """Options checked, documents read and chunked, the generator and its fingerprint."""
    weights = _check_request(request)
    model = call_model(request.calls)
    paths = golden_set_paths(request.output_dir)
    if not request.force:
        refuse_to_overwrite(paths)
    inputs = _read_inputs(request)
    problem = credentials_problem(model.provider, settings)
    if problem is not None:
        raise ConfigError(problem)
    api_key = settings.api_key or ""
    family = GenerationFamily(build_system_prompt(inputs.examples))
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
        model.key,
        family.system_prompt,
    )
    return _Setup(model, api_key, weights, paths, inputs, family, pairing, fingerprint)


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
    setup = _prepare(request, settings)
    config = _session_config(request, settings, setup.model, setup.api_key)
    with RunSession(config, interaction) as session:
        family = setup.family
        decision = session.resume(
            _changes(setup.fingerprint), {GENERATION_FAMILY: family}, RESUME_TEXTS, request.seed
        )
        header = _header(request, setup.fingerprint, decision, started_at)
        askable = setup.inputs.askable
        planner = SlotPlanner(askable, _partners(setup.pairing, askable, interaction), header.seed)
        counts = first_round_counts(setup.weights, request.count, planner, setup.pairing)
        session.connect(decision.loaded.spent_usd if decision.loaded is not None else 0.0)
        options = JudgingOptions(
            model=setup.model,
            families=(family,),
            concurrency=request.calls.concurrency,
            batch=request.calls.batch,
            use_cache=request.calls.use_cache,
        )
        path = session.config.checkpoint_path
        checkpoint = PreparedCheckpoint(path, header, decision.loaded, decision.replaces)
        rounds = Rounds(planner, askable, options, checkpoint, session.cache, request.count)
        rounds.add(planner.first_round_types(counts))
        plan = session.prepare(lambda window, count: _replayed_plan(rounds, window, count))
        estimate = with_allowance(plan.estimate, rounds, family, request.calls.batch)
        shown = _shown_plan(request, setup, counts, header, decision, plan, rounds)
        if not session.confirm(plan, lambda: interaction.show_plan(shown)):
            return GenerateOutcome(declined=True, exit_code=EXIT_ALL_WRITTEN)
        # Found out now, not after every question has been paid for.
        check_output_folder(request.output_dir)
        outcomes, records = _ask_rounds(session, rounds, plan, options)
        interaction.finished()
        facts = _facts(
            setup.inputs,
            request,
            setup.model,
            header.seed,
            rounds,
            records,
            estimate.summary_dollars() if plan.sends_calls else None,
        )
        facts = replace(facts, output_notes=session.client.output_notes())
        return _finish(request, outcomes, facts, setup.paths, path)


def _replayed_plan(rounds: Rounds, window: int, count_tokens: CountTokens | None) -> JudgingPlan:
    """The plan of the next calls: rounds whose every question is known already (resumed,
    or in the response cache) are replayed first, so the estimate covers what is to come."""
    plan = rounds.plan(window, count_tokens)
    while not plan.sends_calls:
        more = rounds.next_types(rounds.outcomes(known_records(plan)))
        if not more:
            break
        rounds.add(more)
        plan = rounds.plan(window, count_tokens)
    return plan


def _shown_plan(
    request: GenerateRequest,
    setup: _Setup,
    counts: dict[str, int],
    header: CheckpointHeader,
    decision: ResumeDecision,
    plan: JudgingPlan,
    rounds: Rounds,
) -> GeneratePlan:
    """What the run is about to do, as shown before ``Proceed?``."""
    inputs = setup.inputs
    estimate = with_allowance(plan.estimate, rounds, setup.family, request.calls.batch)
    return GeneratePlan(
        docs_dir=request.docs_dir,
        documents=len(inputs.documents.documents),
        chunks=len(inputs.chunks),
        question_chunks=len(inputs.askable),
        skipped_files=inputs.documents.skipped,
        count=request.count,
        type_counts=counts,
        pairing=setup.pairing or "",
        examples=len(inputs.examples),
        model=setup.model,
        seed=header.seed,
        seed_was_drawn=decision.loaded is None and request.seed is None,
        questions_path=setup.paths[0],
        ground_truth_path=setup.paths[1],
        resumed_count=len(plan.done),
        pending_count=sum(1 for job in plan.jobs if job.families),
        cached_count=plan.cached_count,
        too_long=plan.too_long,
        estimate=estimate if plan.sends_calls else None,
        top_up_allowance=rounds.allowance(),
        checkpoint_path=plan.checkpoint.path,
        concurrency=request.calls.concurrency,
        batch=request.calls.batch,
        max_cost=request.calls.max_cost,
    )


def _ask_rounds(
    session: RunSession, rounds: Rounds, plan: JudgingPlan, options: JudgingOptions
) -> tuple[list[SlotOutcome], Mapping[int, QuestionRecord]]:
    """Every round's calls until no dropped question is left to replace."""
    while True:
        judged = session.judge(plan, options)
        records = judged.records
        if judged.budget_stop is not None:
            # No golden set from part of the questions; the checkpoint keeps them all.
            raise judged.budget_stop
        outcomes = rounds.outcomes(records)
        more = rounds.next_types(outcomes)
        if not more:
            return outcomes, records
        logger.info(
            "%d question(s) dropped so far; asking %d more (round %d)",
            sum(outcome.pair is None for outcome in outcomes),
            len(more),
            rounds.rounds + 1,
        )
        rounds.add(more)
        rounds.continue_checkpoint({GENERATION_FAMILY: options.families[0]})  # type: ignore[dict-item]
        plan = rounds.plan(session.client.context_window_tokens)


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
