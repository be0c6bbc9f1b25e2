"""The models a run can call: providers, aliases, ids, prices and context windows, in one table.

``--model`` is an alias (``sonnet``), a full Claude id (``claude-sonnet-5-5``: the Anthropic
API), or ``PROVIDER/MODEL``: ``bedrock/`` and ``vertex/`` reach Claude on Amazon Bedrock and
Google Vertex AI (an alias, or the platform's own model id); ``openai/`` any server of the
OpenAI chat-completions API (OpenAI itself, or vLLM, Ollama, llama.cpp and LM Studio through
``OPENAI_BASE_URL``); ``azure/`` an Azure OpenAI deployment. A model missing from the price
table has no price until ``--price`` gives one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rag_evaluator.errors import UsageError

ANTHROPIC = "anthropic"
BEDROCK = "bedrock"
VERTEX = "vertex"
OPENAI = "openai"
AZURE = "azure"
PROVIDERS = (ANTHROPIC, BEDROCK, VERTEX, OPENAI, AZURE)
# The providers that serve Claude (prompt caching, the same replies and prices).
CLAUDE_PROVIDERS = (ANTHROPIC, BEDROCK, VERTEX)


@dataclass(frozen=True)
class ModelInfo:
    """A model a run can call, where, and what it costs in US dollars per million tokens.

    ``alias`` is the short family name (sonnet, haiku, opus) whose price row applies; a full
    model id given on the command line keeps its own ``model_id`` and borrows the prices of
    its family. A price of ``None`` is unknown (a local model, an unlisted one).
    """

    alias: str
    model_id: str
    input_price_per_mtok: float | None
    output_price_per_mtok: float | None
    # Longest request (input tokens) the model reads; a request estimated past it is not sent.
    # The pre-flight check replaces it with the API's own figure when it gives one.
    context_window_tokens: int = 1_000_000
    # Shortest system prompt the API caches for this model; shorter prefixes are ignored.
    cache_minimum_tokens: int = 1024
    provider: str = ANTHROPIC

    @property
    def key(self) -> str:
        """The model as checkpoints, caches and fingerprints name it: the Anthropic API's
        bare id (as before providers existed), ``provider/id`` elsewhere."""
        return self.model_id if self.provider == ANTHROPIC else f"{self.provider}/{self.model_id}"

    @property
    def priced(self) -> bool:
        return self.input_price_per_mtok is not None and self.output_price_per_mtok is not None

    @property
    def caches_prompts(self) -> bool:
        """Whether a long system prompt is sent marked for prompt caching (Claude only)."""
        return self.provider in CLAUDE_PROVIDERS


DEFAULT_MODEL_ALIAS = "sonnet"

MODELS: tuple[ModelInfo, ...] = (
    ModelInfo("sonnet", "claude-sonnet-5-5", 2.0, 10.0, cache_minimum_tokens=1024),
    ModelInfo("haiku", "claude-haiku-5-5", 0.10, 0.50, cache_minimum_tokens=4096),
    ModelInfo("opus", "claude-opus-5-5", 4.0, 20.0, cache_minimum_tokens=512),
)
# OpenAI models whose prices are known (per million tokens, input/output); any other model
# an OpenAI-compatible server serves runs with an unknown price until --price sets one.
OPENAI_MODELS: tuple[ModelInfo, ...] = (
    ModelInfo("gpt-5", "gpt-5", 1.25, 10.0, 272_000, provider=OPENAI),
    ModelInfo("gpt-5-mini", "gpt-5-mini", 0.25, 2.0, 272_000, provider=OPENAI),
    ModelInfo("gpt-5-nano", "gpt-5-nano", 0.05, 0.40, 272_000, provider=OPENAI),
    ModelInfo("gpt-4.1", "gpt-4.1", 2.0, 8.0, 1_047_576, provider=OPENAI),
    ModelInfo("gpt-4.1-mini", "gpt-4.1-mini", 0.40, 1.60, 1_047_576, provider=OPENAI),
    ModelInfo("gpt-4.1-nano", "gpt-4.1-nano", 0.10, 0.40, 1_047_576, provider=OPENAI),
    ModelInfo("gpt-4o", "gpt-4o", 2.50, 10.0, 128_000, provider=OPENAI),
    ModelInfo("gpt-4o-mini", "gpt-4o-mini", 0.15, 0.60, 128_000, provider=OPENAI),
)
# A context window for a model the table does not know (a local one): requests are only
# held back past it; the server's own error still stops anything larger.
UNKNOWN_CONTEXT_WINDOW = 128_000

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


def _claude(name: str) -> ModelInfo | None:
    """The Claude row of an alias, a current id, or another ``claude-...`` id of a family."""
    wanted = name.strip().lower()
    for model in MODELS:
        if wanted in (model.alias, model.model_id):
            return model
    for model in MODELS:
        if model.alias in wanted.replace(".", "-").replace("@", "-").split("-"):
            return replace(model, model_id=name.strip())
    return None


def _platform_id(provider: str, model: ModelInfo, given: str) -> str:
    """A Claude model's id on Bedrock or Vertex: the platform's own id when given in full,
    else the one the alias stands for there."""
    if given.strip().lower() != model.alias:
        return given.strip()
    return f"anthropic.{model.model_id}-v1:0" if provider == BEDROCK else model.model_id


def _provider_model(provider: str, name: str) -> ModelInfo:
    if provider in (BEDROCK, VERTEX):
        claude = _claude(name)
        if claude is None:
            raise UsageError(
                f"Unknown Claude model '{name}' for {provider}. Use {provider}/sonnet, "
                f"{provider}/haiku or {provider}/opus, or the platform's full Claude model id"
            )
        return replace(claude, provider=provider, model_id=_platform_id(provider, claude, name))
    known = next((model for model in OPENAI_MODELS if model.model_id == name), None)
    if known is not None:
        return replace(known, provider=provider)
    return ModelInfo(name, name, None, None, UNKNOWN_CONTEXT_WINDOW, provider=provider)


def resolve_model(name: str, price: tuple[float, float] | None = None) -> ModelInfo:
    """Turn ``--model`` into the model to call, with ``--price`` (input, output dollars per
    million tokens) when given.

    Raises UsageError, listing the choices, for anything else.
    """
    spec = name.strip()
    provider, _, model_name = spec.partition("/")
    if not model_name:
        provider, model_name = ANTHROPIC, spec
    provider = provider.lower()
    if provider not in PROVIDERS:
        raise UsageError(
            f"Unknown provider '{provider}' in --model {spec}. Use one of "
            f"{', '.join(PROVIDERS)} as PROVIDER/MODEL, or a Claude alias alone"
        )
    if provider == ANTHROPIC:
        model = _claude(model_name)
        if model is None or not (
            model_name.lower() == model.alias or model_name.lower().startswith(_FULL_ID_PREFIX)
        ):
            raise _unknown_model(spec)
    elif not model_name.strip():
        raise UsageError(f"--model {spec} names no model after '{provider}/'")
    else:
        model = _provider_model(provider, model_name.strip())
    if price is not None:
        model = replace(model, input_price_per_mtok=price[0], output_price_per_mtok=price[1])
    return model


def _unknown_model(name: str) -> UsageError:
    choices = ", ".join(f"{model.alias} ({model.model_id})" for model in MODELS)
    return UsageError(
        f"Unknown model '{name}'. Use one of the aliases {choices}, a full Claude model id "
        "such as claude-sonnet-5-5, or PROVIDER/MODEL (bedrock/, vertex/, openai/, azure/)"
    )


def parse_price(text: str) -> tuple[float, float]:
    """``--price IN/OUT``: dollars per million input and output tokens (``0/0`` for free)."""
    parts = text.replace(" ", "").split("/")
    try:
        prices = tuple(float(part) for part in parts)
    except ValueError:
        prices = ()
    if len(prices) != 2 or not all(0 <= value < float("inf") for value in prices):
        raise UsageError(
            f"--price {text} is not IN/OUT: give the dollars per million input and output "
            "tokens, e.g. --price 0.5/1.5 (0/0 for a model you run yourself)"
        )
    return prices[0], prices[1]
