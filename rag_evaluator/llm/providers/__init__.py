"""The model APIs rag-eval reaches, each behind one transport (see ``base``)."""

from __future__ import annotations

from rag_evaluator.errors import ConfigError
from rag_evaluator.llm.models import (
    ANTHROPIC,
    AZURE,
    BEDROCK,
    CLAUDE_PROVIDERS,
    OPENAI,
    VERTEX,
    ModelInfo,
)
from rag_evaluator.llm.providers.base import ModelTransport
from rag_evaluator.llm.providers.cloud_credentials import bedrock_problem, vertex_problem
from rag_evaluator.settings import PROVIDER_VARIABLES, Settings

# What to set when a provider's variables are missing, beside the variables' names (Bedrock's
# are checked with boto3: cloud_credentials).
_SETUP_HINTS = {
    ANTHROPIC: "Set ANTHROPIC_API_KEY or put it in a .env file in this folder "
    "(ANTHROPIC_API_KEY=sk-ant-...)",
    VERTEX: "Log in with gcloud auth application-default login (or set "
    "GOOGLE_APPLICATION_CREDENTIALS), and set ANTHROPIC_VERTEX_PROJECT_ID and CLOUD_ML_REGION",
    OPENAI: "Set OPENAI_API_KEY (any value for a local server that checks none) and, for a "
    "server other than OpenAI's, OPENAI_BASE_URL (e.g. http://localhost:8000/v1)",
    AZURE: "Set AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT and OPENAI_API_VERSION",
}


# How messages name each provider mid-sentence (as its transport's terms do).
PROVIDER_NAMES = {
    ANTHROPIC: "the Anthropic API",
    BEDROCK: "Amazon Bedrock",
    VERTEX: "Google Vertex AI",
    OPENAI: "an OpenAI-compatible server",
    AZURE: "Azure OpenAI",
}


def batch_problem(model: ModelInfo) -> str | None:
    """Why ``--batch`` cannot run on ``model``'s provider (only the Anthropic API has Message
    Batches; the platforms' own batch jobs go through cloud storage), or ``None``."""
    if model.provider == ANTHROPIC:
        return None
    elsewhere = (
        f", or use --model {model.alias} on the Anthropic API"
        if model.provider in CLAUDE_PROVIDERS
        else ""
    )
    return (
        "--batch sends Message Batches, which only the Anthropic API offers, not "
        f"{PROVIDER_NAMES[model.provider]}. Run without --batch{elsewhere}"
    )


def credentials_problem(provider: str, settings: Settings) -> str | None:
    """What the environment lacks to reach ``provider`` (one sentence with the fix), or
    ``None``. Raises ``MissingExtraError`` when the provider's optional dependencies are
    missing.

    Bedrock's credentials and region may also come from ``~/.aws`` (a profile, SSO) or a
    cloud machine's role, Vertex's credentials from a gcloud login: those are asked of the
    AWS and Google libraries themselves.
    """
    if provider == BEDROCK:
        return bedrock_problem(settings.provider_values)
    missing = settings.missing_for(provider)
    if provider == ANTHROPIC and settings.api_key:
        missing = []
    if missing:
        names = " and ".join(" or ".join(group) for group in missing)
        return f"{names} is not set for {provider}. {_SETUP_HINTS[provider]}"
    if provider == VERTEX:
        return vertex_problem(settings.provider_values)
    return None


def open_transport(model: ModelInfo, api_key: str | None, timeout_seconds: float) -> ModelTransport:
    """The transport that reaches ``model``'s provider."""
    if model.provider in (ANTHROPIC, BEDROCK, VERTEX):
        from rag_evaluator.llm.providers.anthropic import AnthropicTransport

        return AnthropicTransport(api_key, timeout_seconds, platform=model.provider)
    if model.provider in (OPENAI, AZURE):
        from rag_evaluator.llm.providers.openai import OpenAITransport

        return OpenAITransport(timeout_seconds, azure=model.provider == AZURE)
    raise ConfigError(f"No transport for provider {model.provider}")


__all__ = [
    "PROVIDER_NAMES",
    "PROVIDER_VARIABLES",
    "batch_problem",
    "credentials_problem",
    "open_transport",
]
