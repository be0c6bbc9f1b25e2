"""The LLM-judged metrics as a library: one item at a time, through a model client.

    from rag_evaluator.metrics import faithfulness, judge_client

    with judge_client("haiku") as client:     # ANTHROPIC_API_KEY from the environment or .env
        faithfulness("Who approves travel?", "The line manager.",
                     ["Travel is approved by ..."], client=client)   # 1.0

``judge_client()`` is a context manager: the client's HTTP connections are closed when the
block ends, however it ends. Each function runs the same task as ``rag-eval evaluate
--metrics ...`` (same prompts, schemas, retries and formulas) on one question. Scores are
floats on 0-1 (``None`` where the metric is undefined for the inputs: no context for a
context metric), ``is_matching`` a bool, ``classify_answer`` an ``AnswerClass``. A reply that
stays unusable after the client's retries raises ``JudgeQuestionError``
(``JudgeTransientError`` when the API kept failing), whose message is the reason; a bad key or
model raises ``JudgeFatalError``. The functions returning a result object (``ragas``,
``factual_accuracy``) also give its ``usage``, ``calls`` and ``cost_usd``.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rag_evaluator.errors import JudgeQuestionError, JudgeTransientError, UsageError
from rag_evaluator.families.base import FamilyResult, JudgedFamily
from rag_evaluator.families.grading import calls as grading_calls
from rag_evaluator.families.grading.classify import ClassifyFamily, ClassifyResult
from rag_evaluator.families.grading.factual_accuracy import (
    FactualAccuracyFamily,
    FactualAccuracyResult,
)
from rag_evaluator.families.grading.match import MatchFamily, MatchResult
from rag_evaluator.families.item_tasks import (
    DEFAULT_LIBRARY_CONCURRENCY,
    CachedRuns,
    model_client,
    run_item,
)
from rag_evaluator.families.ragas.family import RAGAS_METRICS, RagasFamily, RagasResult
from rag_evaluator.families.rubric import rubric_file
from rag_evaluator.families.rubric.family import RubricFamily, RubricResult
from rag_evaluator.families.rubric.rubrics import Rubric
from rag_evaluator.families.setup import QuestionEmbeddings
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.models import resolve_model
from rag_evaluator.llm.requests import FailureKind
from rag_evaluator.llm.response_cache import cache_in
from rag_evaluator.settings import load_settings

if TYPE_CHECKING:
    from rag_evaluator.llm.client import ModelClient

__all__ = [
    "AnswerClass",
    "classify_answer",
    "context_precision",
    "context_recall",
    "factual_accuracy",
    "faithfulness",
    "is_matching",
    "judge_client",
    "load_rubric",
    "ragas",
    "ragas_answer_relevance",
    "rubric_scores",
]


class AnswerClass(StrEnum):
    """``classify_answer``'s verdict (a ``str``: ``AnswerClass.CORRECT == "CORRECT"``)."""

    CORRECT = grading_calls.CORRECT
    WRONG = grading_calls.WRONG
    DONT_KNOW = grading_calls.DONT_KNOW


@contextmanager
def judge_client(
    model: str = "sonnet",
    *,
    api_key: str | None = None,
    concurrency: int = DEFAULT_LIBRARY_CONCURRENCY,
    delay_seconds: float = 0.0,
    max_retries: int = 6,
    timeout_seconds: float = 120.0,
    max_cost: float | None = None,
    price: tuple[float, float] | None = None,
    cache: bool | str | Path = False,
) -> Iterator[ModelClient]:
    """``with judge_client("haiku") as client:`` a model client for the functions below,
    closed when the block ends. ``model``: ``sonnet``, ``haiku``, ``opus``, a model id, or
    ``PROVIDER/MODEL`` (``openai/llama3.1:8b``, ``bedrock/haiku``...) as ``--model`` takes it;
    the Anthropic API's key is ``api_key``, else ``ANTHROPIC_API_KEY`` (environment or
    ``./.env``); ``max_cost`` caps what the client may spend across every call made with it
    (``price``, dollars per million input and output tokens, prices a model rag-eval has no
    price for). ``cache``: ``True`` reads and stores results in evaluate's response cache
    (``RAG_EVAL_CACHE_DIR``, else the user cache folder), a path in that folder's; a result
    found there is returned without a call."""
    with ExitStack() as closing:  # each part made is closed, even when a later one fails
        runs = _cached_runs(model, cache)
        if runs is not None:
            closing.callback(runs.close)
        client = model_client(
            model,
            api_key=api_key,
            concurrency=concurrency,
            delay_seconds=delay_seconds,
            max_retries=max_retries,
            timeout_seconds=timeout_seconds,
            max_cost=max_cost,
            price=price,
        )
        closing.callback(client.close)
        if runs is not None:
            _CACHED_RUNS[client] = runs
            closing.callback(_CACHED_RUNS.pop, client, None)
        yield client


# The response cache each open judge_client block reads, by its client.
_CACHED_RUNS: weakref.WeakKeyDictionary[ModelClient, CachedRuns] = weakref.WeakKeyDictionary()


def _cached_runs(model: str, cache: object) -> CachedRuns | None:
    """The response cache ``judge_client(cache=...)`` asks for, or ``None``."""
    if cache is False:
        return None
    if cache is True:
        directory = load_settings(Path.cwd()).cache_dir
    elif isinstance(cache, str | Path) and str(cache).strip():
        directory = Path(cache).expanduser()
    else:
        raise UsageError(
            f"cache= takes True, False or a folder (got {cache!r}). Pass cache=True for "
            "evaluate's response cache"
        )
    return CachedRuns(cache_in(directory, shared=True), resolve_model(model).key)


def _item(
    question: str,
    answer: str = "",
    ground_truth: str = "",
    contexts: Sequence[str] | None = None,
) -> EvaluationItem:
    return EvaluationItem(
        question_number=1,
        question=question,
        ground_truth=ground_truth,
        rag_answer=answer,
        contexts=list(contexts) if contexts is not None else None,
    )


def _checked(result: FamilyResult) -> Any:
    """The result, or the exception its error calls for."""
    if result.error is None:
        return result
    if result.failure == FailureKind.TRANSIENT.value:
        raise JudgeTransientError(result.error)
    raise JudgeQuestionError(result.error)


def _ragas_family(metrics: Sequence[str], answer_relevance: str, model: str | None) -> RagasFamily:
    if answer_relevance == "rating":
        return RagasFamily(metrics=metrics)
    if answer_relevance != "embeddings":
        raise UsageError(
            f"The answer relevance method must be 'embeddings' or 'rating' (got "
            f"{answer_relevance!r}). Use 'embeddings'"
        )
    embedder = QuestionEmbeddings(model)
    return RagasFamily(embedder, embedder.description, metrics=metrics)


def _client(client: ModelClient) -> ModelClient:
    """``client`` itself, once it is known to be a model client and not the context manager."""
    if not callable(getattr(client, "call", None)):
        raise UsageError(
            "client= takes the client a `with judge_client(...) as client:` block gives "
            f"(got {type(client).__name__}). Open the block and pass its client"
        )
    return client


def _result(family: JudgedFamily[Any], item: EvaluationItem, client: ModelClient) -> FamilyResult:
    """``family``'s result for ``item``: through the block's response cache when it has one."""
    runs = _CACHED_RUNS.get(_client(client))
    return run_item(family, item, client) if runs is None else runs.run(family, item, client)


def _run(family: JudgedFamily[Any], item: EvaluationItem, client: ModelClient) -> Any:
    return _checked(_result(family, item, client))


def faithfulness(
    question: str, answer: str, contexts: Sequence[str], *, client: ModelClient
) -> float | None:
    """Supported claims / claims of ``answer`` against ``contexts`` (1 without a claim);
    ``None`` without a context."""
    result: RagasResult = _run(
        RagasFamily(metrics=("faithfulness",)), _item(question, answer, contexts=contexts), client
    )
    return result.faithfulness


def context_precision(
    question: str,
    contexts: Sequence[str],
    *,
    ground_truth: str = "",
    client: ModelClient,
    share: bool = False,
) -> float | None:
    """ragas's context precision: the contexts judged relevant to the question, weighted
    by rank (average precision); ``share``: the plain share of relevant contexts instead.
    ``None`` without a context."""
    result: RagasResult = _run(
        RagasFamily(metrics=("context_precision",)),
        _item(question, ground_truth=ground_truth, contexts=contexts),
        client,
    )
    return result.relevant_context_share if share else result.context_precision


def context_recall(
    question: str, ground_truth: str, contexts: Sequence[str], *, client: ModelClient
) -> float:
    """Statements of ``ground_truth`` found in ``contexts`` / statements (1 without a
    statement, 0 with no context)."""
    result: RagasResult = _run(
        RagasFamily(metrics=("context_recall",)),
        _item(question, ground_truth=ground_truth, contexts=contexts),
        client,
    )
    return result.context_recall if result.context_recall is not None else 0.0


def ragas_answer_relevance(
    question: str,
    answer: str,
    *,
    client: ModelClient,
    method: str = "embeddings",
    embedding_model: str | None = None,
) -> float:
    """How well ``answer`` addresses ``question``: the mean cosine of 3 questions generated
    from the answer with the question (``method="embeddings"``, the semantic extra's model),
    or a direct 0-1 rating (``method="rating"``). 0 for a blank answer, and for an answer the
    model calls noncommittal (evasive, vague, "I don't know"), as in ragas."""
    result: RagasResult = _run(
        _ragas_family(("answer_relevance",), method, embedding_model),
        _item(question, answer),
        client,
    )
    return result.answer_relevance if result.answer_relevance is not None else 0.0


def ragas(
    question: str,
    answer: str,
    *,
    ground_truth: str,
    contexts: Sequence[str] | None,
    client: ModelClient,
    answer_relevance: str = "embeddings",
    embedding_model: str | None = None,
) -> RagasResult:
    """All four RAGAS metrics and their composite ``ragas_score`` (a metric that failed is
    ``None`` with its reason in ``metric_errors``; nothing is raised for it).
    ``ground_truth`` and ``contexts`` are keyword-only: an older call giving the contexts
    third fails instead of swapping them."""
    result = _result(
        _ragas_family(RAGAS_METRICS, answer_relevance, embedding_model),
        _item(question, answer, ground_truth, contexts),
        client,
    )
    return cast(RagasResult, result)


def factual_accuracy(
    question: str, answer: str, ground_truth: str, *, client: ModelClient
) -> FactualAccuracyResult:
    """Seed 001's factual accuracy (a fixed three-criterion rubric, not G-Eval): ``.accuracy``
    (0.5 correctness + 0.3 completeness + 0.2 consistency, on 0-1), ``.grade`` (A-E), the
    three scores (0-100) and the reasoning."""
    return _run(FactualAccuracyFamily(), _item(question, answer, ground_truth), client)


def classify_answer(
    question: str, answer: str, ground_truth: str, *, client: ModelClient
) -> AnswerClass:
    """``CORRECT`` or ``WRONG`` against the ground truth; ``DONT_KNOW`` for an answer that
    admits it does not know (no call is made)."""
    result: ClassifyResult = _run(ClassifyFamily(), _item(question, answer, ground_truth), client)
    return AnswerClass(result.label)


def is_matching(question: str, answer: str, ground_truth: str, *, client: ModelClient) -> bool:
    """Whether ``answer`` accurately and satisfactorily answers ``question``, with
    ``ground_truth`` as the reference (seed 004's judge)."""
    result: MatchResult = _run(MatchFamily(), _item(question, answer, ground_truth), client)
    return bool(result.is_matching)


def load_rubric(path: str | Path) -> Rubric:
    """A rubric from a .toml or .yaml file (see ``rag-eval evaluate --rubric``)."""
    return rubric_file.load_rubric(Path(path), Path.cwd())


def rubric_scores(
    question: str,
    answer: str,
    rubric: Rubric,
    *,
    client: ModelClient,
    ground_truth: str = "",
    contexts: Sequence[str] | None = None,
) -> dict[str, float]:
    """Each criterion's score on 0-1, by criterion name (the ground truth and contexts are
    shown to the judge only when the rubric's ``inputs`` asks for them)."""
    family = RubricFamily(rubric)
    result: RubricResult = _run(family, _item(question, answer, ground_truth, contexts), client)
    scores = dict(result.scores)
    return {
        criterion.name: criterion.scale.unit(scores[criterion.name])
        for criterion in rubric.criteria
        if criterion.name in scores
    }
