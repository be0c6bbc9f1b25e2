"""The run's model clients: one per model it calls (the run's model, or each juror of a
``--jury``), sharing one limiter, one budget and one stop. A request goes to the client of the
model it names (``ModelRequest.model``), or to the run's first model when it names none.

The run talks to this router as it would to one client: calls, pre-flight, token counts,
and (every model on the Anthropic API) Message Batches.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rag_evaluator.errors import ConfigError
from rag_evaluator.llm.client import (
    BatchInfo,
    BatchProgress,
    ClientSettings,
    Failure,
    ModelClient,
)
from rag_evaluator.llm.limits import CallLimiter, SpendingCap
from rag_evaluator.llm.models import ModelInfo
from rag_evaluator.llm.requests import CallOutcome, ModelRequest
from rag_evaluator.llm.retry import RetryPolicy


class ModelClients:
    """Routes each request to its model's client; the first model is the run's own."""

    def __init__(self, clients: Mapping[str, ModelClient]) -> None:
        if not clients:
            raise ValueError("a run calls at least one model")
        self._clients = dict(clients)
        self._first = next(iter(self._clients.values()))

    # -- what the run reads of its client ------------------------------------------------------

    @property
    def models(self) -> list[ModelInfo]:
        return [client.model for client in self._clients.values()]

    @property
    def settings(self) -> ClientSettings:
        return self._first.settings

    @property
    def policy(self) -> RetryPolicy:
        return self._first.policy

    @property
    def limiter(self) -> CallLimiter:
        return self._first.limiter

    @property
    def cap(self) -> SpendingCap:
        return self._first.cap

    @property
    def context_window_tokens(self) -> int:
        """The smallest window of the models: a request too long for one juror is too long
        for the jury."""
        return min(client.context_window_tokens for client in self._clients.values())

    def client_for(self, request: ModelRequest) -> ModelClient:
        if request.model is None:
            return self._first
        try:
            return self._clients[request.model]
        except KeyError:
            raise ConfigError(f"No client for model {request.model} in this run") from None

    def close(self) -> None:
        for client in self._clients.values():
            client.close()

    def output_notes(self) -> tuple[str, ...]:
        """``model: how`` for each model whose answers were not asked for as the API's own
        JSON schema (a server without it)."""
        notes = []
        for key, client in self._clients.items():
            note = client.transport.output_note()
            if note is not None:
                notes.append(f"{key}: {note}")
        return tuple(notes)

    # -- calls ----------------------------------------------------------------------------------

    def call(self, request: ModelRequest, *, label: str = "") -> CallOutcome:
        return self.client_for(request).call(request, label=label)

    def estimated_call_usd(self, request: ModelRequest) -> float:
        return self.client_for(request).estimated_call_usd(request)

    def check_models(self) -> int | None:
        """Pre-flight for every model, in order; the smallest context window stated."""
        windows = [client.check_model() for client in self._clients.values()]
        stated = [window for window in windows if window is not None]
        return min(stated) if stated else None

    def counts_models(self, model: ModelInfo) -> bool:
        """Whether ``model``'s provider has a (free) token-counting endpoint."""
        return self._clients[model.key].transport.supports_token_counting

    def count_input_tokens(self, request: ModelRequest) -> int | None:
        """The request's input tokens as its provider counts them; ``None`` where the provider
        cannot count (the local estimate then stands)."""
        client = self.client_for(request)
        if not client.transport.supports_token_counting:
            return None
        return client.count_input_tokens(request)

    # -- Message Batches: every model on the Anthropic API, one workspace ------------------------

    def batch_entry(self, custom_id: str, request: ModelRequest) -> dict[str, Any]:
        return self.client_for(request).batch_entry(custom_id, request)

    def read_batch_entry(
        self, request: ModelRequest, result: Any
    ) -> tuple[CallOutcome, Failure | None]:
        return self.client_for(request).read_batch_entry(request, result)

    def create_batch(self, entries: list[dict[str, Any]]) -> str:
        return self._first.create_batch(entries)

    def batch_progress(self, batch_id: str) -> BatchProgress:
        return self._first.batch_progress(batch_id)

    def batch_results(self, batch_id: str) -> list[Any]:
        return self._first.batch_results(batch_id)

    def batches_created_since(self, since: datetime) -> list[BatchInfo]:
        return self._first.batches_created_since(since)
