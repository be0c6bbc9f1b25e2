"""One family's task for one item, driven through the model client: the library's call path.

The same ``ModelClient.call`` the evaluate run uses (retries, structured output, limiter,
usage and cost, ``--max-cost``), without checkpoint: each stage's requests are sent at the
same time (the client's limiter bounds how many are in flight) and the task's result comes
back with the usage, calls and cost of every call it made. ``CachedRuns`` puts the response
cache in front of it, under the keys ``evaluate`` uses.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_evaluator.errors import ConfigError, UsageError
from rag_evaluator.families.base import FamilyResult, JudgedFamily
from rag_evaluator.families.result_json import family_result_to_json
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.engine import FamilyRun, QuestionJob
from rag_evaluator.llm.models import resolve_model
from rag_evaluator.llm.planning import cached_family_result, family_cache_key
from rag_evaluator.llm.requests import CallOutcome
from rag_evaluator.settings import load_settings

if TYPE_CHECKING:
    from rag_evaluator.llm.client import ModelClient
    from rag_evaluator.llm.response_cache import ResponseCache

DEFAULT_LIBRARY_CONCURRENCY = 4


def model_client(
    model: str = "sonnet",
    *,
    api_key: str | None = None,
    concurrency: int = DEFAULT_LIBRARY_CONCURRENCY,
    delay_seconds: float = 0.0,
    max_retries: int = 6,
    timeout_seconds: float = 120.0,
    max_cost: float | None = None,
    price: tuple[float, float] | None = None,
) -> ModelClient:
    """A model client for the library functions: ``sonnet``, ``haiku``, ``opus``, a model id,
    or ``PROVIDER/MODEL`` as ``--model`` takes it (``price``: dollars per million input and
    output tokens of a model without a known price).

    The Anthropic API's key is ``api_key``, else ``ANTHROPIC_API_KEY`` (environment or
    ``./.env``); other providers read their own variables. ``max_cost`` caps what the client
    may spend, across every call made with it (it needs a price). The caller closes it
    (``rag_evaluator.metrics.judge_client`` is the context manager that does).
    """
    # Imported here: the SDK takes seconds to import.
    from rag_evaluator.llm.client import ClientSettings, ModelClient
    from rag_evaluator.llm.limits import CallLimiter, SpendingCap
    from rag_evaluator.llm.providers import credentials_problem, open_transport

    info = resolve_model(model, price)
    if max_cost is not None and not info.priced:
        raise UsageError(
            f"max_cost needs the price of {info.key}, which rag-eval does not know. Pass "
            "price=(input, output) in dollars per million tokens"
        )
    settings = load_settings(Path.cwd())
    key = api_key or settings.api_key
    problem = None if api_key else credentials_problem(info.provider, settings)
    if problem is not None:
        raise ConfigError(f"{problem}, or pass api_key= to judge_client()")
    return ModelClient(
        open_transport(info, key, timeout_seconds),
        ClientSettings(model=info, max_retries=max_retries),
        limiter=CallLimiter(max(1, concurrency), delay_seconds),
        cap=SpendingCap(max_cost),
        api_key=key or "",
    )


def run_item(family: JudgedFamily[Any], item: EvaluationItem, client: ModelClient) -> FamilyResult:
    """Run ``family``'s task for ``item`` through ``client``; its result, usage included.

    Raises what ``client.call`` raises (a bad key, an unknown model, the spending cap);
    a failed request becomes the result's error, as in an evaluate run.
    """
    run = FamilyRun(family, QuestionJob(item.question_number, item, (family,)))
    stage = run.start({})
    label = f"question {item.question_number}"
    while stage is not None:
        with ThreadPoolExecutor(max_workers=len(stage)) as pool:
            outcomes: list[CallOutcome] = list(
                pool.map(lambda request: client.call(request, label=label), stage)
            )
        complete = None
        for index, outcome in enumerate(outcomes):
            complete = run.deliver(index, outcome)
        stage = run.next_stage(complete if complete is not None else tuple(outcomes))
    if run.result is None:  # pragma: no cover - a finished task always has a result
        raise RuntimeError(f"the {family.name} task ended without a result")
    return run.result


class CachedRuns:
    """The response cache in front of ``run_item``: a family's result for an item comes from
    the cache when it holds one (marked cached, costing nothing), else from the model, a
    scored result then stored under the key ``evaluate`` uses, so the library, a pytest check
    and an evaluate run reuse each other's results. Safe to use from several threads."""

    def __init__(self, cache: ResponseCache, model_key: str) -> None:
        self.cache = cache
        self.model_key = model_key
        self._lock = threading.Lock()

    def cached(self, family: JudgedFamily[Any], item: EvaluationItem) -> FamilyResult | None:
        """The stored result of ``family`` for ``item``, or ``None``."""
        return self._stored(family, family_cache_key(family, item, self.model_key))

    def _stored(self, family: JudgedFamily[Any], key: str) -> FamilyResult | None:
        with self._lock:
            return cached_family_result(self.cache, family, key)

    def run(
        self, family: JudgedFamily[Any], item: EvaluationItem, client: ModelClient
    ) -> FamilyResult:
        """The stored result, else ``run_item``'s (stored when scored)."""
        key = family_cache_key(family, item, self.model_key)
        found = self._stored(family, key)
        if found is not None:
            return found
        result = run_item(family, item, client)
        if result.scored and result.calls:
            with self._lock:
                self.cache.put(key, family.name, family_result_to_json(family, result))
        return result

    def close(self) -> None:
        with self._lock:
            self.cache.close()
