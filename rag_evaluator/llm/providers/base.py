"""What every model API looks like to the client: a reply, a failure, the model's facts.

Each provider's transport (the Anthropic SDK for the Anthropic API, Bedrock and Vertex; the
OpenAI SDK for OpenAI-compatible servers and Azure) turns its SDK's objects and exceptions
into these, so the client's retries, classification, accounting and redaction are written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.requests import ModelRequest

# The kinds of failure a transport reports.
STATUS = "status"  # the API answered with an error status
TIMEOUT = "timeout"  # no complete reply in time
CONNECTION = "connection"  # the request never reached the API
MALFORMED = "malformed"  # a 200 that is not a valid reply (not JSON, HTML, no usage...)


@dataclass(frozen=True)
class Reply:
    """A model's answer: why it stopped (in the Anthropic API's words: ``end_turn``,
    ``max_tokens``, ``refusal``, ``model_context_window_exceeded``), its text, its usage."""

    stop_reason: str | None
    text: str
    usage: TokenUsage


class ApiError(Exception):
    """A request to a model API that failed, in the terms every provider shares."""

    def __init__(
        self,
        kind: str,
        message: str = "",
        *,
        status: int | None = None,
        error_type: str | None = None,
        retry_after: float | None = None,
        should_retry: str | None = None,
        served_models: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message or kind)
        self.kind = kind
        self.message = message
        self.status = status
        self.error_type = error_type
        self.retry_after = retry_after
        self.should_retry = should_retry
        # The models the endpoint says it serves (given with a 404 for an unknown model).
        self.served_models = served_models


@dataclass(frozen=True)
class ModelFacts:
    """What the pre-flight check learned of the model."""

    model_id: str
    display_name: str = ""
    context_window_tokens: int | None = None
    lifecycle: str | None = None  # "active", "deprecated", "retired" where the API says
    retires_at: datetime | None = None


@dataclass(frozen=True)
class ProviderTerms:
    """How messages name a provider, its credentials and their fixes."""

    name: str  # "the Anthropic API", as it reads mid-sentence
    credential: str  # "API key", "credentials"
    credentials_help: str  # the fix for a rejected or missing credential
    billing_help: str = "Add credits or a payment method to the account"
    status_page: str = ""
    base_url_variable: str = ""  # the environment variable that points elsewhere

    @property
    def subject(self) -> str:
        """The name as a sentence starts with it."""
        return self.name[:1].upper() + self.name[1:]


class ModelTransport(Protocol):
    """One provider's endpoint: sends requests, raises ``ApiError``."""

    terms: ProviderTerms
    supports_batches: bool
    supports_token_counting: bool

    @property
    def base_url(self) -> str: ...

    def send(self, request: ModelRequest, model_id: str, *, cache_system: bool) -> Reply: ...

    def check_model(self, model_id: str) -> ModelFacts: ...

    def count_tokens(self, request: ModelRequest, model_id: str, *, cache_system: bool) -> int: ...

    def close(self) -> None: ...

    def output_note(self) -> str | None:
        """How structured output was asked for, when not as the API's own JSON schema."""
        ...
