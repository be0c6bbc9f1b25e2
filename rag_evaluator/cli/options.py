"""The options every model-calling command shares, defined once (Typer reads the
``Annotated`` metadata): the model, confirmation, pacing, batches, cache, budget, retries,
timeout and checkpoint folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from rag_evaluator.llm.limits import DELAY_HELP
from rag_evaluator.llm.session import CallOptions

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


# Each shared option's parameter name in a command, and its field in CallOptions.
_CALL_FIELDS = {
    "model": "model",
    "delay": "delay_seconds",
    "max_retries": "max_retries",
    "timeout": "timeout_seconds",
    "concurrency": "concurrency",
    "batch": "batch",
    "batch_poll": "batch_poll_seconds",
    "cache": "use_cache",
    "max_cost": "max_cost",
    "exact_estimate": "exact_estimate",
    "checkpoint_dir": "checkpoint_dir",
    "price": "price",
}
DEFAULT_CALLS = CallOptions()


def call_options(parameters: Mapping[str, Any]) -> CallOptions:
    """The shared options as the command received them (its parameters by name)."""
    return CallOptions(**{field: parameters[name] for name, field in _CALL_FIELDS.items()})
