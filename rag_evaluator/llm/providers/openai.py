"""Any server of the OpenAI chat-completions API, through the ``openai`` SDK (an optional
extra): OpenAI itself, vLLM, Ollama, llama.cpp server and LM Studio (``OPENAI_BASE_URL``), and
Azure OpenAI deployments.

Structured output goes as ``response_format`` of type ``json_schema``. A server that refuses
it (400 naming ``response_format`` or ``json_schema``) is asked again with the schema in the
system prompt and the reply read as JSON in text (``JSON_IN_TEXT``; validated by the same
parsers), for the rest of the run. Replies are translated into the Anthropic API's words
(``finish_reason`` ``stop`` is ``end_turn``, ``length`` is ``max_tokens``, a refusal is
``refusal``), usage into input and output tokens (cached prompt tokens count as cache reads).
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from rag_evaluator.errors import MissingExtraError
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.providers.anthropic import deadline_hooks, retry_after_seconds, token_count
from rag_evaluator.llm.providers.base import (
    CONNECTION,
    MALFORMED,
    STATUS,
    TIMEOUT,
    ApiError,
    ModelFacts,
    ProviderTerms,
    Reply,
)
from rag_evaluator.llm.requests import ModelRequest

logger = logging.getLogger(__name__)

# How the structured answer is asked for: the server's JSON schema support, or the schema in
# the system prompt (a server without it).
JSON_SCHEMA = "json_schema"
JSON_IN_TEXT = "json_in_text"
# The line that introduces the schema in the system prompt of a JSON-in-text request.
SCHEMA_INSTRUCTION = "Reply with one JSON object matching this JSON schema:"
_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}

OPENAI_TERMS = ProviderTerms(
    "the OpenAI-compatible server",
    "API key",
    "Check OPENAI_API_KEY in your environment or .env (any value for a local server that "
    "checks none), and OPENAI_BASE_URL for a server other than OpenAI's",
    "Check the account's billing",
    "https://status.openai.com",
    "OPENAI_BASE_URL",
)
AZURE_TERMS = ProviderTerms(
    "Azure OpenAI",
    "API key",
    "Check AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT and OPENAI_API_VERSION in your "
    "environment or .env",
    "Check the Azure subscription's billing",
    "https://azure.status.microsoft",
    "AZURE_OPENAI_ENDPOINT",
)


def _sdk() -> Any:
    try:
        import openai
    except ImportError as error:
        raise MissingExtraError("openai", "A judge on an OpenAI-compatible server") from error
    return openai


def schema_instruction(schema: Any) -> str:
    """The lines a JSON-in-text request adds to its system prompt."""
    return f"{SCHEMA_INSTRUCTION}\n{json.dumps(schema, separators=(',', ':'))}"


def completion_body(
    request: ModelRequest,
    model_id: str,
    *,
    mode: str = JSON_SCHEMA,
    completion_tokens_field: str = "max_tokens",
) -> dict[str, Any]:
    """The chat-completions body of ``request``: no sampling parameters (the defaults of the
    server apply), the answer's schema as ``response_format`` or in the system prompt.

    OpenAI and Azure take ``max_completion_tokens`` (their reasoning models refuse
    ``max_tokens``); the servers that copy the API (vLLM, Ollama, llama.cpp) ``max_tokens``.
    """
    system = request.system
    body: dict[str, Any] = {"model": model_id, completion_tokens_field: request.max_tokens}
    if mode == JSON_SCHEMA:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": dict(request.schema)},
        }
    else:
        system = f"{system}\n\n{schema_instruction(dict(request.schema))}"
    body["messages"] = [
        {"role": "system", "content": system},
        {"role": "user", "content": request.user},
    ]
    return body


def read_completion(completion: Any) -> Reply:
    """A chat completion's stop reason, text and usage, or ``ApiError(MALFORMED)``."""
    choices = getattr(completion, "choices", None)
    usage = getattr(completion, "usage", None)
    if not isinstance(choices, list) or not choices:
        raise ApiError(MALFORMED, "no choices")
    if usage is None or usage.prompt_tokens is None or usage.completion_tokens is None:
        raise ApiError(MALFORMED, "no usage")
    details = getattr(usage, "prompt_tokens_details", None)
    cached = token_count(getattr(details, "cached_tokens", None), "cached token count")
    prompt = token_count(usage.prompt_tokens, "prompt token count")
    counted = TokenUsage(
        max(prompt - cached, 0),
        token_count(usage.completion_tokens, "completion token count"),
        0,
        min(cached, prompt),
    )
    choice = choices[0]
    message = getattr(choice, "message", None)
    if getattr(message, "refusal", None):
        return Reply("refusal", "", counted)
    text = getattr(message, "content", None)
    reason = _STOP_REASONS.get(str(getattr(choice, "finish_reason", "")), "end_turn")
    return Reply(reason, text if isinstance(text, str) else "", counted)


class OpenAITransport:
    """The ``openai`` SDK's client of one server (or an Azure resource)."""

    supports_batches = False
    supports_token_counting = False

    def __init__(self, timeout_seconds: float, *, azure: bool = False) -> None:
        openai = _sdk()
        self._openai = openai
        common: dict[str, Any] = {
            "max_retries": 0,
            "timeout": timeout_seconds,
            "http_client": openai.DefaultHttpxClient(
                timeout=timeout_seconds, event_hooks=deadline_hooks(timeout_seconds)
            ),
        }
        # The SDK reads OPENAI_API_KEY and OPENAI_BASE_URL (AZURE_OPENAI_API_KEY,
        # AZURE_OPENAI_ENDPOINT and OPENAI_API_VERSION for Azure) itself.
        self.terms = AZURE_TERMS if azure else OPENAI_TERMS
        self._sdk = openai.AzureOpenAI(**common) if azure else openai.OpenAI(**common)
        official = azure or "api.openai.com" in self.base_url
        self._tokens_field = "max_completion_tokens" if official else "max_tokens"
        self.mode = JSON_SCHEMA
        self._mode_lock = threading.Lock()

    def close(self) -> None:
        self._sdk.close()

    def output_note(self) -> str | None:
        if self.mode == JSON_SCHEMA:
            return None
        return "JSON in text (the server took no JSON schema) checked against the schema"

    @property
    def base_url(self) -> str:
        return str(self._sdk.base_url)

    def _calling(self, action: Any) -> Any:
        openai = self._openai
        try:
            return action()
        except openai.APITimeoutError as error:
            raise ApiError(TIMEOUT, "the server did not answer in time") from error
        except openai.APIConnectionError as error:
            raise ApiError(CONNECTION, "the connection to the server failed") from error
        except openai.APIStatusError as error:
            raise _status_error(error) from error
        except (openai.APIError, ValueError) as error:
            raise ApiError(MALFORMED, f"body unreadable: {type(error).__name__}") from error

    def send(self, request: ModelRequest, model_id: str, *, cache_system: bool) -> Reply:
        # At most one change of each kind: the schema into the prompt, the token limit's name.
        for _ in range(3):
            mode, tokens_field = self.mode, self._tokens_field
            try:
                return read_completion(self._complete(request, model_id, mode, tokens_field))
            except ApiError as error:
                if not self._adapted_to(error, mode, tokens_field):
                    raise
        raise ApiError(STATUS, "the server refused every form of the request", status=400)

    def _complete(self, request: ModelRequest, model_id: str, mode: str, tokens_field: str) -> Any:
        body = completion_body(request, model_id, mode=mode, completion_tokens_field=tokens_field)
        return self._calling(lambda: self._sdk.chat.completions.create(**body))

    def _adapted_to(self, error: ApiError, mode: str, tokens_field: str) -> bool:
        """Whether the refusal ``error`` names something the request can do otherwise (the
        JSON schema, the token limit's name), now changed for the rest of the run."""
        if error.status != 400:
            return False
        text = error.message.lower()
        with self._mode_lock:
            if mode == JSON_SCHEMA and ("response_format" in text or "json_schema" in text):
                if self.mode == JSON_SCHEMA:
                    logger.warning(
                        "%s at %s does not take a JSON schema (response_format); the answers "
                        "are asked for as JSON in text and checked against the schema",
                        self.terms.subject,
                        self.base_url,
                    )
                self.mode = JSON_IN_TEXT
                return True
            if tokens_field == "max_tokens" and "max_completion_tokens" in text:
                self._tokens_field = "max_completion_tokens"
                return True
            if tokens_field == "max_completion_tokens" and "max_completion_tokens" in text:
                self._tokens_field = "max_tokens"
                return True
        return False

    def check_model(self, model_id: str) -> ModelFacts:
        """``GET /models/{id}`` (free); a model the server does not serve is named with the
        ones it does."""
        try:
            info = self._calling(lambda: self._sdk.models.retrieve(model_id))
        except ApiError as error:
            if error.status == 404:
                error.served_models = self._served_models()
            raise
        return ModelFacts(getattr(info, "id", model_id) or model_id)

    def _served_models(self) -> tuple[str, ...]:
        try:
            listed = self._calling(lambda: list(self._sdk.models.list()))
        except ApiError:
            return ()
        return tuple(sorted(str(model.id) for model in listed if getattr(model, "id", None)))

    def count_tokens(self, request: ModelRequest, model_id: str, *, cache_system: bool) -> int:
        raise ApiError(STATUS, "this server has no token-counting endpoint", status=400)


def _status_error(error: Any) -> ApiError:
    body = getattr(error, "body", None)
    message = getattr(error, "message", "") or ""
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        message = body["message"]
    headers = error.response.headers
    return ApiError(
        STATUS,
        " ".join(str(message).split()),
        status=error.status_code,
        error_type=getattr(error, "code", None) or getattr(error, "type", None),
        retry_after=retry_after_seconds(headers),
        should_retry=headers.get("x-should-retry"),
    )
