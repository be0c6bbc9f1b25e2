"""The run session every model-calling command shares (``evaluate``, ``generate``).

One session holds, for the length of the run: the lock on the run's checkpoint (no second run
over the same inputs), the response cache, the decision to resume an unfinished run (asked of
the user), the model client with its limiter and budget, the free pre-flight check and the
exact estimate, the ``Proceed?`` confirmation, and the calls themselves, direct or as Message
Batches, each finished question checkpointed. A command supplies its fingerprint, its plan of
questions, the families that judge them and what it writes at the end; nothing else.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from rag_evaluator.errors import CheckpointError, UsageError
from rag_evaluator.families.base import JudgedFamily
from rag_evaluator.llm.call_options import CallOptions
from rag_evaluator.llm.checkpoint.store import (
    CheckpointHeader,
    LoadedCheckpoint,
    count_finished,
    load_checkpoint,
    lock_run,
    read_header,
)
from rag_evaluator.llm.judging import JudgedRecords, ProgressUpdate, judge_pending
from rag_evaluator.llm.models import ModelInfo, parse_price, resolve_model
from rag_evaluator.llm.planning import CountTokens, JudgingOptions, JudgingPlan
from rag_evaluator.llm.providers import batch_problem
from rag_evaluator.llm.response_cache import CACHE_FILE_NAME, ResponseCache
from rag_evaluator.settings import DEFAULT_BATCH_WINDOW_BYTES

if TYPE_CHECKING:
    from rag_evaluator.llm.routing import ModelClients

logger = logging.getLogger(__name__)


class SessionInteraction(Protocol):
    """What the session asks of the command's terminal side."""

    def can_confirm(self) -> bool: ...

    def confirm(self, question: str, *, default: bool) -> bool: ...

    def info(self, message: str) -> None: ...

    def question_started(self, position: int, total: int, question_number: int) -> None: ...

    def question_finished(self, update: ProgressUpdate) -> None: ...

    def work_progress(self, label: str, done: int, total: int) -> None: ...


PlanT = TypeVar("PlanT", contravariant=True)


class CommandInteraction(SessionInteraction, Protocol[PlanT]):
    """A model-calling command's terminal side: the session's, plus showing its own plan
    before ``Proceed?`` and saying when the calls are over."""

    def show_plan(self, plan: PlanT) -> None: ...

    def finished(self) -> None: ...


def call_models(calls: CallOptions) -> tuple[ModelInfo, ...]:
    """The models the run calls: ``--model`` (priced by ``--price`` when given), or each juror
    of ``--jury``. A budget needs every price; Message Batches need the Anthropic API."""
    price = parse_price(calls.price) if calls.price else None
    if calls.jury is None:
        models: tuple[ModelInfo, ...] = (resolve_model(calls.model, price),)
    else:
        from rag_evaluator.families.jury.panel import parse_jury

        models = tuple(juror.model for juror in parse_jury(calls.jury, price))
    unpriced = [model.key for model in models if not model.priced]
    if calls.max_cost is not None and unpriced:
        raise UsageError(
            f"--max-cost needs the price of {', '.join(unpriced)}, which rag-eval does not "
            "know. Give it with --price IN/OUT (dollars per million input and output tokens; "
            "0/0 for a model you run yourself)"
        )
    problems = [batch_problem(model) for model in models] if calls.batch else []
    refused = next((problem for problem in problems if problem is not None), None)
    if refused is not None:
        raise UsageError(refused)
    return models


def call_model(calls: CallOptions) -> ModelInfo:
    """The model of a run that calls one (``--model``, see ``call_models``)."""
    return call_models(replace(calls, jury=None))[0]


def check_call_options(calls: CallOptions) -> None:
    """The shared options' own errors, found before anything is read."""
    if calls.jury is not None and calls.model != CallOptions.model:
        raise UsageError(
            f"--model {calls.model} and --jury both name the judge. Give --jury alone (its "
            "models judge), or --model alone"
        )
    if calls.batch and calls.concurrency != 1:
        logger.info("--concurrency is not used with --batch (the API runs the batch)")
    if calls.max_cost is not None and calls.max_cost <= 0:
        raise UsageError(
            f"--max-cost must be more than 0 dollars (got {calls.max_cost:g}). Try --max-cost 5"
        )


@dataclass(frozen=True)
class SessionConfig:
    """What the session of one run works with."""

    calls: CallOptions
    model: ModelInfo
    api_key: str
    checkpoint_path: Path
    cache_path: Path | None  # None: --no-cache
    # Every model the run calls (a jury's jurors); just ``model`` when empty.
    jurors: tuple[ModelInfo, ...] = field(default=())
    # --batch: the first requests' text a window of questions holds (RAG_EVAL_BATCH_WINDOW_MB).
    batch_window_bytes: int = DEFAULT_BATCH_WINDOW_BYTES

    @property
    def models(self) -> tuple[ModelInfo, ...]:
        return self.jurors or (self.model,)


def session_config(
    calls: CallOptions,
    model: ModelInfo,
    api_key: str,
    checkpoint_path: Path,
    cache_directory: Path,
    jurors: tuple[ModelInfo, ...] = (),
    batch_window_bytes: int = DEFAULT_BATCH_WINDOW_BYTES,
) -> SessionConfig:
    """The session of a run: its checkpoint at ``checkpoint_path``, the response cache in
    ``cache_directory`` (none with ``--no-cache``)."""
    cache = cache_directory / CACHE_FILE_NAME if calls.use_cache else None
    return SessionConfig(calls, model, api_key, checkpoint_path, cache, jurors, batch_window_bytes)


@dataclass(frozen=True)
class ResumeTexts:
    """How the resume dialogue names the command's run and what must not change."""

    run: str  # "run of these files"
    unchanged: str  # "inputs, model, prompt and settings"


@dataclass(frozen=True)
class ResumeDecision:
    """The checkpoint to resume, or none; and a declined one to keep aside once paid for."""

    loaded: LoadedCheckpoint | None
    replaces: Path | None


FingerprintChanges = Callable[[Any], list[str]]


class RunSession:
    """The machinery of one model-calling run; use it as a context manager."""

    def __init__(self, config: SessionConfig, interaction: SessionInteraction) -> None:
        self.config = config
        self.interaction = interaction
        self.stop = threading.Event()
        self._hold = ExitStack()
        self.cache = ResponseCache(None)
        self._client: ModelClients | None = None

    def __enter__(self) -> RunSession:
        # Held until the run ends (the OS drops it if the process dies), so two runs over
        # the same inputs cannot interleave their answers in one checkpoint.
        self._hold.enter_context(lock_run(self.config.checkpoint_path))
        self.cache = ResponseCache(self.config.cache_path)
        self._hold.callback(self.cache.close)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._hold.close()

    @property
    def client(self) -> ModelClients:
        if self._client is None:
            raise RuntimeError("the session has no client yet: call connect() first")
        return self._client

    # -- resume ---------------------------------------------------------------------------------

    def resume(
        self,
        changes: FingerprintChanges,
        families: dict[str, JudgedFamily[Any]],
        texts: ResumeTexts,
        seed: int | None,
    ) -> ResumeDecision:
        """Whether this run resumes its checkpoint, asked of the user when there is one.

        The header is compared before any record is read: a checkpoint of other families or
        inputs is offered for discarding, never reported as damaged. Nothing is deleted here.
        """
        path = self.config.checkpoint_path
        header = read_header(path)
        if header is None:
            return ResumeDecision(None, None)
        changed = changes(header.fingerprint)
        if changed:
            return self._refuse_changed(header, ", ".join(changed), texts)
        loaded = load_checkpoint(path, families)
        if loaded is None or not (
            loaded.results or loaded.stages or loaded.open_batches or loaded.unconfirmed_intents
        ):
            logger.info("Checkpoint %s holds no finished question; starting afresh", path)
            return ResumeDecision(None, None)
        started = loaded.header.created_at.replace("T", " ")
        self.interaction.info(
            f"Found an unfinished {texts.run} started {started}: "
            f"{_progress(len(loaded.results), loaded.header)} (seed {loaded.header.seed})."
        )
        if not self.interaction.confirm("Resume previous run?", default=True):
            return ResumeDecision(None, path)
        self._refuse_open_batches_without_batch(loaded)
        if seed is not None and seed != loaded.header.seed:
            logger.warning(
                "--seed %s is ignored: the resumed run keeps its own order (seed %s)",
                seed,
                loaded.header.seed,
            )
        return ResumeDecision(loaded, None)

    def _refuse_open_batches_without_batch(self, loaded: LoadedCheckpoint) -> None:
        """A run resumed without --batch would send the requests an earlier session left in
        Message Batches again, paying for them twice: collecting them needs --batch."""
        open_count = len(loaded.open_batches) + len(loaded.unconfirmed_intents)
        if self.config.calls.batch or not open_count:
            return
        raise UsageError(
            f"The run being resumed left {open_count} Message Batch(es) open, paid for and "
            "not collected yet; sent again without --batch their requests would be paid twice. "
            "Run the same command with --batch to collect them (it goes on in batches), or "
            "answer n to 'Resume previous run?' to start afresh"
        )

    def _refuse_changed(
        self, header: CheckpointHeader, changed: str, texts: ResumeTexts
    ) -> ResumeDecision:
        path = self.config.checkpoint_path
        finished = count_finished(path)
        if not finished:
            logger.info("Checkpoint %s holds no finished question; starting afresh", path)
            return ResumeDecision(None, None)
        logger.warning(
            "An unfinished %s (%s, checkpoint %s) cannot be resumed: %s changed since",
            texts.run,
            _progress(finished, header),
            path,
            changed,
        )
        if not self.interaction.confirm("Discard it and start a new run?", default=False):
            raise CheckpointError(
                f"The unfinished run's checkpoint was kept because {changed} changed. "
                f"To resume it, run again with the same {texts.unchanged}; "
                f"to start over, answer y or delete {path}"
            )
        return ResumeDecision(None, path)

    # -- the client, the plan and the confirmation ----------------------------------------------

    def connect(self, spent_usd: float = 0.0) -> ModelClients:
        """The run's model clients (one per model it calls), sharing one limiter and one
        budget (what resumed sessions spent counts)."""
        # Imported here: the SDK takes a moment to import, which other commands never pay.
        from rag_evaluator.llm.client import ClientSettings, ModelClient
        from rag_evaluator.llm.limits import CallLimiter, SpendingCap, call_spacing
        from rag_evaluator.llm.providers import open_transport
        from rag_evaluator.llm.routing import ModelClients

        config, calls = self.config, self.config.calls
        concurrency = 1 if calls.batch else calls.concurrency
        limiter = CallLimiter(
            concurrency, call_spacing(calls.delay_seconds, concurrency), stop=self.stop
        )
        cap = SpendingCap(calls.max_cost, already_spent_usd=spent_usd)
        clients: dict[str, ModelClient] = {}
        for model in config.models:
            transport = open_transport(model, config.api_key, calls.timeout_seconds)
            self._hold.callback(transport.close)
            settings = ClientSettings(model=model, max_retries=calls.max_retries, batch=calls.batch)
            clients[model.key] = ModelClient(
                transport, settings, limiter=limiter, cap=cap, api_key=config.api_key
            )
        self._client = ModelClients(clients)
        return self._client

    def prepare(self, plan_with: Callable[[int, CountTokens | None], JudgingPlan]) -> JudgingPlan:
        """The run's plan; when it would pay for calls, checked first: a terminal (or
        ``--yes``) to confirm, the free pre-flight check of key and model (re-planned for the
        model's real context window), and the exact estimate when asked for."""
        client = self.client
        plan = plan_with(client.context_window_tokens, None)
        if not plan.sends_calls:
            return plan
        if not self.interaction.can_confirm():
            raise UsageError(
                "There is no terminal to ask 'Proceed?' before paying for the calls. "
                "Run with --yes (-y) to confirm in scripts and CI"
            )
        window = client.check_models()
        if window is not None and window != self.config.model.context_window_tokens:
            plan = plan_with(client.context_window_tokens, None)
        if self.config.calls.exact_estimate and plan.sends_calls:
            self._say_what_is_not_counted(client)
            plan = plan_with(client.context_window_tokens, client.count_input_tokens)
        return plan

    def _say_what_is_not_counted(self, client: ModelClients) -> None:
        uncounted = [model.key for model in client.models if not client.counts_models(model)]
        if uncounted:
            self.interaction.info(
                f"--exact-estimate: {', '.join(uncounted)} has no token-counting endpoint; "
                "its share of the estimate stays the local one"
            )

    def confirm(self, plan: JudgingPlan, show: Callable[[], None]) -> bool:
        """Show the plan; ``Proceed?`` when it pays for calls. False: the user declined."""
        show()
        if plan.sends_calls and not self.interaction.confirm("Proceed?", default=True):
            logger.info("The user declined to proceed; nothing was sent")
            return False
        return True

    # -- the calls ------------------------------------------------------------------------------

    def judge(self, plan: JudgingPlan, options: JudgingOptions) -> JudgedRecords:
        """Every planned question's calls, checkpointing each finished question."""
        client = self.client
        batches = None
        if self.config.calls.batch:
            from rag_evaluator.llm.batches import BatchRunner

            batches = BatchRunner(
                client,
                self.stop,
                poll_seconds=self.config.calls.batch_poll_seconds,
                interaction=self.interaction,
                window_bytes=self.config.batch_window_bytes,
            )
        judged = judge_pending(
            plan,
            options,
            lambda request, label: client.call(request, label=label),
            self.cache,
            self.interaction,
            self.stop,
            batches,
        )
        # The records are read back from the checkpoint file: let go of it with the session.
        self._hold.callback(judged.records.close)
        judged = replace(judged, output_notes=client.output_notes())
        if judged.budget_stop is not None:
            # Said again now that the calls in flight at the stop have settled their cost.
            settled = client.cap.exhausted()
            settled.partial = judged.budget_stop.partial
            judged = replace(judged, budget_stop=settled)
        return judged


def _progress(finished: int, header: CheckpointHeader) -> str:
    """``20 of 48 questions done``, or ``20 questions done`` when the total is not known."""
    if header.order:
        return f"{finished} of {len(header.order)} questions done"
    return f"{finished} questions done"
