"""The options every model-calling command shares, defined once (Typer reads the
``Annotated`` metadata): the model, confirmation, pacing, batches, cache, budget, retries,
timeout and checkpoint folder."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, get_type_hints

import typer

from rag_evaluator.llm.call_options import CallOptions
from rag_evaluator.llm.limits import DELAY_HELP

Model = Annotated[
    str,
    typer.Option(
        "--model",
        help="sonnet, haiku, opus or a full Claude model id (the Anthropic API); or "
        "PROVIDER/MODEL: bedrock/, vertex/ (Claude there), openai/ (any OpenAI-compatible "
        "server: OPENAI_BASE_URL), azure/ (a deployment).",
    ),
]
Price = Annotated[
    str | None,
    typer.Option(
        "--price",
        metavar="IN/OUT",
        help="Dollars per million input/output tokens of a model rag-eval has no price for "
        "(0/0 for your own server).",
    ),
]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Answer yes to every prompt (scripts, CI).")]
Concurrency = Annotated[int, typer.Option("--concurrency", min=1, help="Calls in flight at once.")]
Delay = Annotated[float | None, typer.Option("--delay", min=0.0, help=DELAY_HELP)]
Batch = Annotated[
    bool,
    typer.Option(
        "--batch", help="Send the calls as Message Batches: half the price, results within hours."
    ),
]
BatchPoll = Annotated[
    float, typer.Option("--batch-poll", min=0.01, help="Seconds between checks of a batch.")
]
Cache = Annotated[
    bool,
    typer.Option(
        "--cache/--no-cache",
        help="Reuse the results of identical earlier requests from the response cache.",
    ),
]
MaxCost = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        min=0.0,
        help="Stop (resumable) before the run's spending, resumes included, would pass this "
        "many dollars.",
    ),
]
ExactEstimate = Annotated[
    bool,
    typer.Option(
        "--exact-estimate", help="Count input tokens with the API's free count_tokens endpoint."
    ),
]
MaxRetries = Annotated[
    int,
    typer.Option("--max-retries", min=0, help="Retries of a call after a transient API failure."),
]
Timeout = Annotated[
    float,
    typer.Option("--timeout", min=0.1, help="Seconds an API reply may take, whole."),
]
CheckpointDir = Annotated[
    Path | None,
    typer.Option(
        "--checkpoint-dir",
        help="Folder for checkpoints (default: $RAG_EVAL_CHECKPOINT_DIR, else the user state "
        "folder).",
    ),
]


DEFAULT_CALLS = CallOptions()

# The shared options: each one's parameter name, its Typer annotation, its default, and the
# CallOptions field it fills. In --help they stand where the command puts its ``calls``.
_SHARED: tuple[tuple[str, Any, Any, str], ...] = (
    ("model", Model, DEFAULT_CALLS.model, "model"),
    ("price", Price, None, "price"),
    ("concurrency", Concurrency, DEFAULT_CALLS.concurrency, "concurrency"),
    ("delay", Delay, DEFAULT_CALLS.delay_seconds, "delay_seconds"),
    ("batch", Batch, False, "batch"),
    ("batch_poll", BatchPoll, DEFAULT_CALLS.batch_poll_seconds, "batch_poll_seconds"),
    ("cache", Cache, True, "use_cache"),
    ("max_cost", MaxCost, None, "max_cost"),
    ("exact_estimate", ExactEstimate, False, "exact_estimate"),
    ("max_retries", MaxRetries, DEFAULT_CALLS.max_retries, "max_retries"),
    ("timeout", Timeout, DEFAULT_CALLS.timeout_seconds, "timeout_seconds"),
    ("checkpoint_dir", CheckpointDir, None, "checkpoint_dir"),
)


def model_calling(command: Callable[..., None]) -> Callable[..., None]:
    """A model-calling command with the shared options: Typer reads them from the signature
    (written once, here) and the command receives them as its ``calls: CallOptions``."""
    hints = get_type_hints(command, include_extras=True)
    own = [
        parameter.replace(annotation=hints[parameter.name])
        for parameter in inspect.signature(command).parameters.values()
    ]
    at = next(index for index, parameter in enumerate(own) if parameter.name == "calls")
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
        for name, kind, default, _ in _SHARED
    ]
    own = [parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY) for parameter in own]
    parameters = [*own[:at], *shared, *own[at + 1 :]]

    @functools.wraps(command)
    def with_calls(**values: Any) -> None:
        fields = {field: values.pop(name) for name, _, _, field in _SHARED}
        command(calls=CallOptions(**fields), **values)

    with_calls.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    with_calls.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return with_calls
