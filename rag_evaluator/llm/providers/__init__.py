"""The model APIs rag-eval reaches, each behind one transport (see ``base``)."""

from __future__ import annotations

from rag_evaluator.errors import ConfigError
from rag_evaluator.llm.models import ANTHROPIC, AZURE, BEDROCK, OPENAI, VERTEX, ModelInfo
from rag_evaluator.llm.providers.base import ModelTransport
from rag_evaluator.settings import PROVIDER_VARIABLES, Settings

# What to set when a provider's variables are missing, beside the variables' names.
_SETUP_HINTS = {
    ANTHROPIC: "Set ANTHROPIC_API_KEY or put it in a .env file in this folder "
    "(ANTHROPIC_API_KEY=sk-ant-...)",
    BEDROCK: "Set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or AWS_ACCESS_KEY_ID with "
    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE; and AWS_REGION",
    VERTEX: "Log in with gcloud auth application-default login (or set "
    "GOOGLE_APPLICATION_CREDENTIALS), and set ANTHROPIC_VERTEX_PROJECT_ID and CLOUD_ML_REGION",
    OPENAI: "Set OPENAI_API_KEY (any value for a local server that checks none) and, for a "
    "server other than OpenAI's, OPENAI_BASE_URL (e.g. http://localhost:8000/v1)",
    AZURE: "Set AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT and OPENAI_API_VERSION",
}


def credentials_problem(provider: str, settings: Settings) -> str | None:
    """What the environment lacks to reach ``provider`` (one sentence with the fix), or
    ``None``."""
    missing = settings.missing_for(provider)
    if provider == ANTHROPIC and settings.api_key:
        missing = []
    if not missing:
        return None
    names = " and ".join(" or ".join(group) for group in missing)
    return f"{names} is not set for {provider}. {_SETUP_HINTS[provider]}"


def open_transport(model: ModelInfo, api_key: str | None, timeout_seconds: float) -> ModelTransport:
    """The transport that reaches ``model``'s provider."""
    if model.provider in (ANTHROPIC, BEDROCK, VERTEX):
        from rag_evaluator.llm.providers.anthropic import AnthropicTransport

        return AnthropicTransport(api_key, timeout_seconds, platform=model.provider)
    if model.provider in (OPENAI, AZURE):
        from rag_evaluator.llm.providers.openai import OpenAITransport

        return OpenAITransport(timeout_seconds, azure=model.provider == AZURE)
    raise ConfigError(f"No transport for provider {model.provider}")


__all__ = ["PROVIDER_VARIABLES", "credentials_problem", "open_transport"]
