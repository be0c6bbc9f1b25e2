"""The evaluate run: load, select, plan, confirm, judge with checkpoints, write results.

Prints nothing: everything the user sees or answers goes through ``RunInteraction``.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rag_evaluator import __version__
from rag_evaluator.core.cost import CostEstimate, actual_cost, estimate_cost
from rag_evaluator.core.fingerprint import (
    InputNames,
    checkpoint_key,
    fingerprint_differences,
    fingerprint_run,
)
from rag_evaluator.core.models import ModelInfo, resolve_model
from rag_evaluator.core.no_information import both_say_no_information, no_information_result
from rag_evaluator.core.prompts import build_user_message
from rag_evaluator.core.question_results import QuestionResult, ResultRow
from rag_evaluator.core.records import EvaluationItem, JudgeOutcome, TokenUsage
from rag_evaluator.core.selection import (
    exclusion_warnings,
    format_numbers,
    select_items,
    shuffled_order,
)
from rag_evaluator.core.summary import RunFacts, SummaryLine, build_summary
from rag_evaluator.core.voting import (
    CONSENSUS_VOTES,
    DEFAULT_HEDGE_PHRASES,
    combine_outcomes,
    find_hedge_phrases,
)
from rag_evaluator.errors import (
    CheckpointError,
    ConfigError,
    JudgeFatalError,
    JudgeUnavailableError,
)
from rag_evaluator.pipeline.metric_families import (
    JUDGE_FAMILY,
    MetricFamilies,
    check_offline_ready,
    compute_offline,
    parse_metric_families,
    resolve_all,
)
from rag_evaluator.pipeline.metrics import MetricOptions
from rag_evaluator.settings import Settings
from rag_evaluator.storage.checkpoint import (
    CheckpointHeader,
    CheckpointWriter,
    LoadedCheckpoint,
    checkpoint_path,
    load_checkpoint,
    lock_run,
    remove_checkpoint,
    resolve_checkpoint_directory,
    rewrite_checkpoint,
)
from rag_evaluator.storage.input_files import read_input_bytes
from rag_evaluator.storage.inputs import load_answers, load_ground_truth, load_questions
from rag_evaluator.storage.prompt_file import SystemPrompt, load_system_prompt
from rag_evaluator.storage.results import (
    prepare_output_directory,
    write_results,
)

if TYPE_CHECKING:
    from rag_evaluator.judge.client import JudgeClient

logger = logging.getLogger(__name__)

EXIT_ALL_SCORED = 0
EXIT_SOME_UNSCORED = 1
_SEED_RANGE = 1_000_000


class EvaluationInterrupted(Exception):
    """Ctrl-C during a run; ``message`` says what was kept and how to resume."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RunInteraction(Protocol):
    """How the pipeline talks to the user; the command implements it with ``console``."""

    def confirm(self, question: str, *, default: bool) -> bool: ...

    def info(self, message: str) -> None: ...

    def show_plan(self, plan: RunPlan) -> None: ...

    def progress(self, position: int, total: int, question_number: int) -> None: ...


@dataclass(frozen=True)
class EvaluateRequest:
    """Everything the user chose for a run (the command's options, parsed)."""

    questions_path: Path
    ground_truth_path: Path
    answers_path: Path
    working_directory: Path
    model: str = "sonnet"
    prompt_path: Path | None = None
    seed: int | None = None
    delay_seconds: float = 0.5
    max_retries: int = 4
    timeout_seconds: float = 120.0
    output_dir: Path = Path("Evaluation_Runs")
    checkpoint_dir: Path | None = None
    metrics: str = JUDGE_FAMILY
    hedge_phrases: tuple[str, ...] = DEFAULT_HEDGE_PHRASES
    metric_options: MetricOptions = field(default_factory=MetricOptions)


@dataclass(frozen=True)
class InputFileInfo:
    """One input file as the pre-run summary shows it."""

    label: str
    path: Path
    question_count: int


@dataclass(frozen=True)
class RunPlan:
    """What the run is about to do, shown before ``Proceed?``."""

    files: list[InputFileInfo]
    question_count: int
    excluded_count: int
    exclusion_messages: list[str]
    families: MetricFamilies
    model: ModelInfo | None
    prompt_origin: str | None
    seed: int | None
    seed_was_drawn: bool
    resumed_count: int
    pending_count: int
    no_information_count: int
    estimate: CostEstimate | None
    checkpoint_path: Path | None


@dataclass(frozen=True)
class RunOutcome:
    """How the run ended, for the command to report."""

    declined: bool
    exit_code: int
    results_path: Path | None = None
    summary: list[SummaryLine] = field(default_factory=list)
    unscored_count: int = 0


@dataclass(frozen=True)
class _Checkpointing:
    path: Path
    header: CheckpointHeader
    resume_from: LoadedCheckpoint | None


@dataclass(frozen=True)
class _JudgeSetup:
    """What judging needs; absent when the run computes offline metrics only."""

    api_key: str
    model: ModelInfo
    system_prompt: SystemPrompt


def _log_request(request: EvaluateRequest) -> None:
    """Record what the run was asked to do, for whoever debugs it from rag_eval.log."""
    logger.info(
        "rag-eval %s evaluate: questions=%s ground_truth=%s answers=%s model=%s metrics=%s "
        "prompt=%s seed=%s delay=%ss max_retries=%s timeout=%ss output_dir=%s "
        "checkpoint_dir=%s hedge_phrases=%s working_directory=%s",
        __version__,
        request.questions_path,
        request.ground_truth_path,
        request.answers_path,
        request.model,
        request.metrics,
        request.prompt_path,
        request.seed,
        request.delay_seconds,
        request.max_retries,
        request.timeout_seconds,
        request.output_dir,
        request.checkpoint_dir,
        ",".join(request.hedge_phrases),
        request.working_directory,
    )


def _draw_seed() -> int:
    return secrets.randbelow(_SEED_RANGE)


def _judge_setup(
    request: EvaluateRequest, settings: Settings, families: MetricFamilies
) -> _JudgeSetup | None:
    if not families.judge:
        return None
    model = resolve_model(request.model)
    if settings.api_key is None:
        offline_hint = (
            ", or leave the judge out with --metrics lexical,overlap,retrieval,semantic"
            if families.wants_all or families.offline
            else ""
        )
        raise ConfigError(
            "ANTHROPIC_API_KEY is not set. Set ANTHROPIC_API_KEY or put it in a .env file "
            f"in this folder (ANTHROPIC_API_KEY=sk-ant-...){offline_hint}"
        )
    prompt = load_system_prompt(request.prompt_path, request.working_directory)
    return _JudgeSetup(settings.api_key, model, prompt)


@dataclass(frozen=True)
class _JudgeRun:
    """The judging part of a run: where it stands and what is left to send."""

    setup: _JudgeSetup
    checkpointing: _Checkpointing
    done: dict[int, QuestionResult]
    pending: list[int]
    without_call: set[int]
    estimate: CostEstimate


def run_evaluation(
    request: EvaluateRequest,
    settings: Settings,
    interaction: RunInteraction,
    *,
    now: datetime | None = None,
) -> RunOutcome:
    """Run ``rag-eval evaluate`` from parsed options to the written results file."""
    started_at = now or datetime.now()
    _log_request(request)
    families = parse_metric_families(request.metrics)
    if families.judge:
        resolve_model(request.model)  # an unknown model is reported before any file is read

    questions = load_questions(request.questions_path)
    ground_truth = load_ground_truth(request.ground_truth_path)
    answers = load_answers(request.answers_path)
    selection = select_items(questions, ground_truth, answers)
    exclusion_messages = exclusion_warnings(selection.exclusions)
    for message in exclusion_messages:
        logger.warning(message)
    items = selection.items
    families = resolve_all(families, items)
    check_offline_ready(families, request.metric_options)
    setup = _judge_setup(request, settings, families)
    with ExitStack() as hold:
        judging = None
        if setup is not None:
            checkpoint = _checkpoint_location(request, settings)
            # Held until the run ends (the OS drops it if the process dies), so two runs over
            # the same files cannot interleave their answers in one checkpoint.
            hold.enter_context(lock_run(checkpoint))
            judging = _plan_judging(request, interaction, setup, items, started_at, checkpoint)

        plan = RunPlan(
            files=[
                InputFileInfo("Questions", request.questions_path, len(questions.rows)),
                InputFileInfo("Ground truth", request.ground_truth_path, len(ground_truth.rows)),
                InputFileInfo("Answers", request.answers_path, len(answers.rows)),
            ],
            question_count=len(items),
            excluded_count=len(selection.exclusions),
            exclusion_messages=exclusion_messages,
            families=families,
            model=setup.model if setup else None,
            prompt_origin=setup.system_prompt.origin if setup else None,
            seed=judging.checkpointing.header.seed if judging else None,
            seed_was_drawn=judging is not None
            and judging.checkpointing.resume_from is None
            and request.seed is None,
            resumed_count=len(judging.done) if judging else 0,
            pending_count=len(judging.pending) if judging else 0,
            no_information_count=len(judging.without_call) if judging else 0,
            estimate=judging.estimate if judging else None,
            checkpoint_path=judging.checkpointing.path if judging else None,
        )
        interaction.show_plan(plan)
        if judging and judging.pending and not interaction.confirm("Proceed?", default=True):
            logger.info("The user declined to proceed; nothing was evaluated")
            return RunOutcome(declined=True, exit_code=EXIT_ALL_SCORED)
        # Found out now, not after every question has been paid for.
        prepare_output_directory(request.output_dir)

        metric_columns, metric_scores = compute_offline(
            families,
            items,
            request.metric_options,
            interaction.info,
            answers_file=request.answers_path,
            ground_truth_file=request.ground_truth_path,
        )
        done: dict[int, QuestionResult] = {}
        if judging is not None:
            done = _judge_pending(request, interaction, judging, items)

        rows = [
            ResultRow(
                item, done.get(item.question_number), metric_scores.get(item.question_number, {})
            )
            for item in items
        ]
        usage = sum((result.usage for result in done.values()), TokenUsage())
        facts = RunFacts(
            judged=setup is not None,
            model_id=setup.model.model_id if setup else None,
            seed=plan.seed,
            prompt_origin=plan.prompt_origin,
            usage=usage,
            cost_usd=actual_cost(usage, setup.model) if setup else None,
            metric_columns=metric_columns,
        )
        summary = build_summary(rows, facts)
        results_path = write_results(
            request.output_dir,
            started_at,
            summary,
            rows,
            judged=setup is not None,
            metric_columns=metric_columns,
        )
        logger.info("Results written to %s", results_path)
        if judging is not None:
            remove_checkpoint(judging.checkpointing.path)
        unscored = sum(1 for result in done.values() if not result.scored)
        return RunOutcome(
            declined=False,
            exit_code=EXIT_SOME_UNSCORED if unscored else EXIT_ALL_SCORED,
            results_path=results_path,
            summary=summary,
            unscored_count=unscored,
        )


def _input_paths(request: EvaluateRequest) -> list[str]:
    return [
        str(path.resolve())
        for path in (request.questions_path, request.ground_truth_path, request.answers_path)
    ]


def _checkpoint_location(request: EvaluateRequest, settings: Settings) -> Path:
    """The checkpoint of a run over these three input files (named after their paths)."""
    directory = resolve_checkpoint_directory(request.checkpoint_dir, settings.checkpoint_dir)
    return checkpoint_path(directory, checkpoint_key(_input_paths(request)))


def _plan_judging(
    request: EvaluateRequest,
    interaction: RunInteraction,
    setup: _JudgeSetup,
    items: Sequence[EvaluationItem],
    started_at: datetime,
    checkpoint: Path,
) -> _JudgeRun:
    """Settle the checkpoint (resume or not), what is left to send, and its estimated cost."""
    items_by_number = {item.question_number: item for item in items}
    checkpointing = _prepare_checkpoint(
        request, interaction, setup, set(items_by_number), started_at, checkpoint
    )
    done: dict[int, QuestionResult] = {}
    if checkpointing.resume_from is not None:
        done = dict(checkpointing.resume_from.results)
        if request.seed is not None and request.seed != checkpointing.header.seed:
            logger.warning(
                "--seed %s is ignored: the resumed run keeps its own order (seed %s)",
                request.seed,
                checkpointing.header.seed,
            )
    pending = [number for number in checkpointing.header.order if number not in done]
    without_call = {
        number
        for number in pending
        if both_say_no_information(
            items_by_number[number].rag_answer, items_by_number[number].ground_truth
        )
    }
    to_send = [items_by_number[number] for number in pending if number not in without_call]
    estimate = estimate_cost(
        [build_user_message(item.question, item.ground_truth, item.rag_answer) for item in to_send],
        setup.system_prompt.text,
        setup.model,
    )
    return _JudgeRun(setup, checkpointing, done, pending, without_call, estimate)


def _prepare_checkpoint(
    request: EvaluateRequest,
    interaction: RunInteraction,
    judge: _JudgeSetup,
    question_numbers: set[int],
    started_at: datetime,
    path: Path,
) -> _Checkpointing:
    """Find this run's checkpoint and decide, with the user, whether to resume it.

    Nothing is deleted here: a fresh header replaces an old checkpoint only once the
    user has said ``Proceed`` and the first question is about to be sent.
    """
    input_paths = _input_paths(request)
    fingerprint = fingerprint_run(
        read_input_bytes(request.questions_path),
        read_input_bytes(request.ground_truth_path),
        read_input_bytes(request.answers_path),
        judge.model.model_id,
        judge.system_prompt.text,
    )
    seed = request.seed if request.seed is not None else _draw_seed()
    fresh = _Checkpointing(
        path,
        CheckpointHeader(
            fingerprint=fingerprint,
            seed=seed,
            order=shuffled_order(question_numbers, seed),
            prompt_origin=judge.system_prompt.origin,
            input_paths=input_paths,
            created_at=started_at.isoformat(timespec="seconds"),
        ),
        resume_from=None,
    )
    loaded = load_checkpoint(path)
    if loaded is None:
        return fresh
    if not loaded.results:
        logger.info("Checkpoint %s holds no finished question; starting afresh", path)
        return fresh

    total = len(loaded.header.order)
    finished = len(loaded.results)
    names = InputNames(
        request.questions_path.name, request.ground_truth_path.name, request.answers_path.name
    )
    differences = fingerprint_differences(loaded.header.fingerprint, fingerprint, names)
    if differences:
        changed = ", ".join(differences)
        logger.warning(
            "An unfinished run of these files (%s of %s questions done, checkpoint %s) "
            "cannot be resumed: %s changed since",
            finished,
            total,
            path,
            changed,
        )
        if not interaction.confirm("Discard it and start a new run?", default=False):
            raise CheckpointError(
                f"The unfinished run's checkpoint was kept because {changed} changed. "
                "To resume it, run again with the same inputs, model and prompt; "
                f"to start over, answer y or delete {path}"
            )
        return fresh
    if set(loaded.header.order) != question_numbers:
        raise CheckpointError(
            f"The checkpoint {path} lists other questions than the input files. "
            f"Delete {path} to start the run over"
        )
    started = loaded.header.created_at.replace("T", " ")
    interaction.info(
        f"Found an unfinished run of these files started {started}: "
        f"{finished} of {total} questions done (seed {loaded.header.seed})."
    )
    if interaction.confirm("Resume previous run?", default=True):
        return _Checkpointing(path, loaded.header, loaded)
    return fresh


def _judge_pending(
    request: EvaluateRequest,
    interaction: RunInteraction,
    judging: _JudgeRun,
    items: Sequence[EvaluationItem],
) -> dict[int, QuestionResult]:
    """Judge every question still pending, checkpointing each before the next is sent.

    Returns every finished question, the resumed ones included.
    """
    checkpointing = judging.checkpointing
    order = checkpointing.header.order
    items_by_number = {item.question_number: item for item in items}
    done = dict(judging.done)
    finished_now: list[int] = []
    if checkpointing.resume_from is not None:
        writer = CheckpointWriter.resume(checkpointing.resume_from)
    else:
        writer = CheckpointWriter.create(checkpointing.path, checkpointing.header)
    logger.info(
        "Checkpoint %s (%s of %s done, seed %s, %s)",
        checkpointing.path,
        len(done),
        len(order),
        checkpointing.header.seed,
        "resumed" if checkpointing.resume_from is not None else "new run",
    )
    # Imported here: the SDK takes seconds to import, which every other command would pay.
    from rag_evaluator.judge.client import JudgeClient, JudgeSettings

    setup = judging.setup
    client = JudgeClient(
        setup.api_key,
        JudgeSettings(
            model_id=setup.model.model_id,
            max_retries=request.max_retries,
            timeout_seconds=request.timeout_seconds,
            delay_seconds=request.delay_seconds,
        ),
    )
    try:
        for position, number in enumerate(order, start=1):
            if number in done:
                continue
            interaction.progress(position, len(order), number)
            result = _judge_item(
                client, setup.system_prompt.text, items_by_number[number], request.hedge_phrases
            )
            writer.append(result)
            done[number] = result
            finished_now.append(number)
            logger.info(
                "Question %s: %s%s%s (calls: %s, tokens: %s in / %s out)",
                number,
                result.scores.label() if result.scores else "unscored",
                " by consensus" if result.consensus else "",
                f", error: {result.error}" if result.error else "",
                result.calls,
                result.usage.input_tokens,
                result.usage.output_tokens,
            )
    except KeyboardInterrupt:
        # The command prints the message below; the log alone gets this record.
        logger.warning(
            "Interrupted after %s of %s questions",
            len(done),
            len(order),
            extra={"terminal": False},
        )
        raise EvaluationInterrupted(
            f"Interrupted after {len(done)} of {len(order)} questions; they are saved in the "
            f"checkpoint {checkpointing.path}. Run the same command again to resume"
        ) from None
    except JudgeFatalError as exc:
        if isinstance(exc, JudgeUnavailableError):
            writer.close()
            _forget_outage_victims(checkpointing, done, finished_now, exc.questions_in_a_row - 1)
        if done:
            raise JudgeFatalError(_with_kept_questions(exc.message, len(done))) from exc
        raise
    finally:
        writer.close()
        client.close()
    return done


_RESUME_HINT = "run the same command again to resume"


def _with_kept_questions(message: str, finished: int) -> str:
    """A fatal error's message, plus what was saved and (unless it says so) how to resume."""
    kept = (
        "The finished question is kept"
        if finished == 1
        else f"The {finished} finished questions are kept"
    )
    message = message.rstrip(".")
    if _RESUME_HINT in message:
        return f"{message}. {kept} in the checkpoint"
    return f"{message}. {kept}: {_RESUME_HINT} once this is fixed"


def _forget_outage_victims(
    checkpointing: _Checkpointing,
    done: dict[int, QuestionResult],
    finished_now: list[int],
    at_most: int,
) -> None:
    """Take the unscored rows an outage caused back out of the checkpoint.

    They were recorded before the outage showed; dropping them means a resumed run asks
    them again instead of keeping them unscored.
    """
    victims: list[int] = []
    for number in reversed(finished_now):
        if len(victims) >= at_most or done[number].scored:
            break
        victims.append(number)
    if not victims:
        return
    for number in victims:
        del done[number]
    rewrite_checkpoint(checkpointing.path, checkpointing.header, done.values())
    logger.info(
        "Questions %s were left unscored by the outage; a resumed run asks them again",
        format_numbers(victims),
    )


def _judge_item(
    client: JudgeClient,
    system_prompt: str,
    item: EvaluationItem,
    hedge_phrases: Sequence[str],
) -> QuestionResult:
    """One question: no call for a double "no information", else the judge, plus consensus."""
    if both_say_no_information(item.rag_answer, item.ground_truth):
        return no_information_result(item.question_number)
    message = build_user_message(item.question, item.ground_truth, item.rag_answer)
    first = client.judge(system_prompt, message)
    hedges: tuple[str, ...] = ()
    if first.verdict is not None:
        hedges = find_hedge_phrases(first.verdict.reasoning, hedge_phrases)
    votes: list[JudgeOutcome] = []
    if hedges:
        logger.info(
            "Question %s: the reasoning hedges (%s); asking for %s more votes",
            item.question_number,
            ", ".join(hedges),
            CONSENSUS_VOTES,
        )
        votes = [client.judge(system_prompt, message) for _ in range(CONSENSUS_VOTES)]
    return combine_outcomes(item.question_number, first, hedges, votes)
