"""The models the judge can use: aliases, current ids and prices, in one table."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rag_evaluator.errors import UsageError


@dataclass(frozen=True)
class ModelInfo:
    """A model the judge can call and what it costs, in US dollars per million tokens.

    ``alias`` is the short family name (sonnet, haiku, opus) whose price row applies; a full
    model id given on the command line keeps its own ``model_id`` and borrows the prices of
    its family.
    """

    alias: str
    model_id: str
    input_price_per_mtok: float
    output_price_per_mtok: float
    # Longest request (input tokens) the model reads; a request estimated past it is not sent.
    # The pre-flight check replaces it with the API's own ``max_input_tokens`` when given.
    context_window_tokens: int = 1_000_000
    # Shortest system prompt the API caches for this model; shorter prefixes are ignored.
    cache_minimum_tokens: int = 1024


DEFAULT_MODEL_ALIAS = "sonnet"

MODELS: tuple[ModelInfo, ...] = (
    ModelInfo("sonnet", "claude-sonnet-5-5", 2.0, 10.0, cache_minimum_tokens=1024),
    ModelInfo("haiku", "claude-haiku-5-5", 0.10, 0.50, cache_minimum_tokens=4096),
    ModelInfo("opus", "claude-opus-5-5", 4.0, 20.0, cache_minimum_tokens=512),
)

# Message Batches are billed at half price.
BATCH_DISCOUNT = 0.5
# Prompt caching: reading cached input costs a tenth of the input price, writing a
# 5-minute cache entry costs a quarter more than plain input.
CACHE_READ_MULTIPLIER = 0.1
CACHE_WRITE_MULTIPLIER = 1.25

_FULL_ID_PREFIX = "claude-"


def model_aliases() -> list[str]:
    """The aliases ``--model`` accepts, in table order."""
    return [model.alias for model in MODELS]


def resolve_model(name: str) -> ModelInfo:
    """Turn ``--model`` (an alias or a full ``claude-...`` id) into the model to call.

    Raises UsageError, listing the aliases, for anything else.
    """
    wanted = name.strip().lower()
    for model in MODELS:
        if wanted in (model.alias, model.model_id):
            return model
    if wanted.startswith(_FULL_ID_PREFIX):
        for model in MODELS:
            if model.alias in wanted.split("-"):
                return replace(model, model_id=wanted)
    choices = ", ".join(f"{model.alias} ({model.model_id})" for model in MODELS)
    raise UsageError(
        f"Unknown model '{name}'. Use one of the aliases {choices}, "
        "or a full Claude model id such as claude-sonnet-5-5"
    )
