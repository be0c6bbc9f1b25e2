"""The library's conventions (issue 23): one argument order, one return convention, one
function per retrieval metric with ``match=``, every type a signature needs exported, bad
values raised as ``ValueError`` subclasses."""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from evaluate_support import prepare_workspace, run_cli, write_inputs

from rag_evaluator import metrics
from rag_evaluator.errors import InputError, MissingFileError, UsageError
from rag_evaluator.inputs.records import EvaluationItem

GOLDEN = [
    "The X200 pump has a two-year warranty covering parts and labour.",
    "Travel requests are approved by the line manager, then by finance above 1,000 EUR.",
]
# Golden 1 at rank 2, golden 2 at rank 4 (as a longer chunk: only overlap finds it).
RETRIEVED = [
    "Lyon's office opened in March 2019 near the river.",
    GOLDEN[0],
    "Our cafeteria serves vegetarian lunches every Thursday.",
    "Policy 7. " + GOLDEN[1],
]
# Each library function and the results column it gives.
RANKING_FUNCTIONS: dict[str, Callable[..., float | None]] = {
    "precision_at_k": lambda golden, retrieved, **options: metrics.precision_at_k(
        golden, retrieved_chunks=retrieved, k=3, **options
    ),
    "recall_at_k": lambda golden, retrieved, **options: metrics.recall_at_k(
        golden, retrieved_chunks=retrieved, k=3, **options
    ),
    "f1_at_k": lambda golden, retrieved, **options: metrics.f1_at_k(
        golden, retrieved_chunks=retrieved, k=3, **options
    ),
    "context_precision": lambda golden, retrieved, **options: metrics.average_precision(
        golden, retrieved_chunks=retrieved, **options
    ),
    "mrr": lambda golden, retrieved, **options: metrics.mrr(
        golden, retrieved_chunks=retrieved, **options
    ),
    "ndcg_at_k": lambda golden, retrieved, **options: metrics.ndcg_at_k(
        golden, retrieved_chunks=retrieved, k=3, **options
    ),
    "hybrid_log_rank": lambda golden, retrieved, **options: metrics.hybrid_log_rank_score(
        golden, retrieved_chunks=retrieved, **options
    ),
}


def run_scores(match: str, threshold: float | None = None) -> dict[str, Any]:
    item = EvaluationItem(
        1, "Q?", "A.", "A.", contexts=list(RETRIEVED), relevant_contexts=list(GOLDEN)
    )
    options = metrics.MetricOptions(k=3, match=match)
    if threshold is not None:
        options = dataclasses.replace(options, overlap_threshold=threshold)
    return metrics.compute_offline_metrics([item], ["retrieval"], options).scores[1]


def public_names() -> dict[str, Any]:
    return {name: getattr(metrics, name) for name in metrics.__all__}


# --- retrieval: one function per metric, the mode an argument ---


@pytest.mark.parametrize(
    "match",
    ["exact", "overlap", pytest.param("similarity", marks=pytest.mark.needs_extra("semantic"))],
)
def test_each_retrieval_function_gives_its_column_of_the_run_in_every_mode(match: str) -> None:
    expected = run_scores(match)
    for column, function in RANKING_FUNCTIONS.items():
        assert function(GOLDEN, RETRIEVED, match=match) == pytest.approx(expected[column]), column
    assert metrics.context_overlap(GOLDEN, retrieved_chunks=RETRIEVED) == pytest.approx(
        expected["context_overlap"]
    )


def test_the_modes_differ_where_the_chunking_differs() -> None:
    # Golden 2 is inside a longer chunk: overlap finds it, exact does not.
    assert metrics.recall_at_k(GOLDEN, retrieved_chunks=RETRIEVED, k=4) == 0.5
    assert metrics.recall_at_k(GOLDEN, retrieved_chunks=RETRIEVED, k=4, match="overlap") == 1.0
    assert metrics.recall_at_k(
        GOLDEN, retrieved_chunks=RETRIEVED, k=4, match=metrics.MatchMode.OVERLAP
    ) == (1.0)


def test_the_overlap_threshold_is_the_runs() -> None:
    # "Policy 7." adds 2 tokens to golden 2's 15: its recall stays 1, so even 1.0 matches;
    # the threshold is the golden chunk's ROUGE-L recall, as --overlap-threshold.
    for threshold in (0.5, 1.0):
        expected = run_scores("overlap", threshold)
        assert metrics.mrr(
            GOLDEN, retrieved_chunks=RETRIEVED, match="overlap", threshold=threshold
        ) == pytest.approx(expected["mrr"])


def test_similarity_takes_embedding_vectors_with_the_seeds_threshold() -> None:
    golden = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    retrieved = [[1.0, 0.3, 0.0], [0.0, 0.0, 1.0], [0.0, 4.0, 3.0]]  # cosines 0.958, -, 0.8
    score = metrics.precision_at_k(golden, retrieved_chunks=retrieved, k=3, match="similarity")
    assert score == pytest.approx(2 / 3)
    strict = metrics.recall_at_k(
        golden, retrieved_chunks=retrieved, k=3, match="similarity", threshold=0.9
    )
    assert strict == pytest.approx(0.5)


def test_a_call_in_the_seeds_order_fails_instead_of_swapping_the_lists() -> None:
    with pytest.raises(TypeError):
        metrics.precision_at_k(RETRIEVED, GOLDEN, 3)  # type: ignore[misc]
    with pytest.raises(TypeError):
        metrics.context_overlap(RETRIEVED, GOLDEN)  # type: ignore[misc]


SEED_ALIASES = {
    "precision_at_k_exact": "precision_at_k",
    "recall_at_k_exact": "recall_at_k",
    "f1_at_k_exact": "f1_at_k",
}


@pytest.mark.parametrize(("alias", "column"), sorted(SEED_ALIASES.items()))
def test_seed_names_still_work_with_the_seeds_order_and_warn(alias: str, column: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"{alias} is deprecated; use {column}"):
        value = getattr(metrics, alias)(RETRIEVED, GOLDEN, 3)
    assert value == pytest.approx(run_scores("exact")[column])


def test_seed_hybrid_and_similarity_names_warn_and_agree() -> None:
    golden = [[1.0, 0.0], [0.0, 1.0]]
    retrieved = [[1.0, 0.1], [0.6, 0.8]]
    with pytest.warns(DeprecationWarning):
        seed = metrics.hybrid_log_rank_score_exact(RETRIEVED, GOLDEN, gamma=2.0, alpha=0.3)
    assert seed == metrics.hybrid_log_rank_score(
        GOLDEN, retrieved_chunks=RETRIEVED, gamma=2.0, alpha=0.3
    )
    new = metrics.recall_at_k(golden, retrieved_chunks=retrieved, k=2, match="similarity")
    for alias in ("precision_at_k_similarity", "recall_at_k_similarity", "f1_at_k_similarity"):
        with pytest.warns(DeprecationWarning):
            getattr(metrics, alias)(retrieved, golden, 2, similarity_threshold=0.7)
    with pytest.warns(DeprecationWarning):
        assert metrics.recall_at_k_similarity(retrieved, golden, 2) == new
    with pytest.warns(DeprecationWarning):
        assert metrics.hybrid_log_rank_score_similarity(retrieved, golden) == (
            metrics.hybrid_log_rank_score(golden, retrieved_chunks=retrieved, match="similarity")
        )


def test_only_the_seeds_variant_names_remain() -> None:
    metric = (
        r"(precision_at_k|recall_at_k|f1_at_k|average_precision|mrr|ndcg_at_k"
        r"|hybrid_log_rank_score)"
    )
    variants = {
        name
        for name in metrics.__all__
        if re.fullmatch(rf"{metric}_(exact|similarity|overlap)", name)
    }
    assert variants == {
        f"{metric}_{mode}"
        for metric in ("precision_at_k", "recall_at_k", "f1_at_k", "hybrid_log_rank_score")
        for mode in ("exact", "similarity")
    }
    for gone in ("mrr_exact", "ndcg_at_k_overlap", "precision_at_k_overlap", "dont_know"):
        assert not hasattr(metrics, gone), gone


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: metrics.mrr(GOLDEN, retrieved_chunks=RETRIEVED, match="fuzzy"), "match must"),
        (
            lambda: metrics.mrr(GOLDEN, retrieved_chunks=RETRIEVED, threshold=0.5),
            "leave it out with match='exact'",
        ),
        (
            lambda: metrics.mrr(GOLDEN, retrieved_chunks=RETRIEVED, match="overlap", threshold=2),
            "threshold must be between 0 and 1",
        ),
        (
            lambda: metrics.mrr(GOLDEN, retrieved_chunks=RETRIEVED, embedding_model="x"),
            "embedding_model applies to match='similarity'",
        ),
        (lambda: metrics.mrr(GOLDEN[0], retrieved_chunks=RETRIEVED), "not one text"),
        (lambda: metrics.mrr(GOLDEN, retrieved_chunks=5), "not int"),
        (
            lambda: metrics.mrr([[1.0, 0.0]], retrieved_chunks=[[1.0, 0.0]]),
            "give texts, or use match='similarity'",
        ),
        (
            lambda: metrics.mrr([[1.0, 0.0]], retrieved_chunks=["text"], match="similarity"),
            "not a mix",
        ),
        (
            lambda: metrics.mrr(
                [[1.0, 0.0]], retrieved_chunks=[[1.0, 0.0]], match="similarity", embedding_model="x"
            ),
            "the chunks given are vectors",
        ),
        (lambda: metrics.precision_at_k(GOLDEN, retrieved_chunks=RETRIEVED, k=0), "k must"),
        (lambda: metrics.cosine_similarity([1.0, 0.0], [1.0, 0.0, 0.0]), "different sizes"),
        (lambda: metrics.hybrid_log_rank_score(GOLDEN, retrieved_chunks=[], alpha=2), "alpha"),
    ],
)
def test_bad_argument_values_raise_a_value_error_that_says_what_to_pass(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        call()
    assert isinstance(raised.value, UsageError)


# --- return convention ---


def test_yes_no_checks_are_bools() -> None:
    assert metrics.exact_match("Paris", " paris ") is True
    assert metrics.exact_match("Paris", "Lyon") is False
    assert metrics.is_dont_know_answer("I don't know.") is True
    assessment = metrics.assess_answer("List the rules.", "Rule C-1 [4].", ["c1", "c2", "c3"])
    assert assessment.passed is False
    assert assessment.checks == {
        "quality_not_empty": True,
        "quality_has_contexts": True,
        "quality_citations": False,
        "quality_no_fallback": True,
        "quality_retrieval_score": None,
        "quality_list_format": False,
    }
    assert all(type(value) is bool for value in assessment.checks.values() if value is not None)


def test_the_run_still_writes_the_checks_as_0_and_1() -> None:
    item = EvaluationItem(1, "List the rules.", "", "Rule C-1 [4].", contexts=["c1"])
    row = metrics.compute_offline_metrics([item], ["quality"], metrics.MetricOptions()).scores[1]
    assert (row["quality_citations"], row["quality_not_empty"], row["quality_pass"]) == (0, 1, 0)
    assert all(type(row[name]) is int for name in ("quality_citations", "quality_pass"))


@pytest.mark.needs_extra("overlap")
def test_rouge_scores_are_a_frozen_result_that_reads_as_the_seeds_dict() -> None:
    scores = metrics.rouge_scores("testing one", "testing one two")
    assert scores is not None
    assert isinstance(scores, metrics.RougeScores)
    assert (scores.rouge1, scores.rouge_l) == (pytest.approx(0.8), pytest.approx(0.8))
    assert scores["rougeL"] == scores.rouge_l and scores["rouge2"] == scores.rouge2
    assert dict(scores) == {"rouge1": scores.rouge1, "rouge2": scores.rouge2, "rougeL": 0.8}
    assert metrics.rouge_score("testing one", "testing one two") == scores
    with pytest.raises(dataclasses.FrozenInstanceError):
        scores.rouge1 = 1.0  # type: ignore[misc]
    with pytest.raises(KeyError):
        scores["rouge_l"]


# Public functions that are not metrics: they return texts, numbers found, models, clients.
HELPERS = {
    "cited_numbers",
    "extract_keywords",
    "extract_numbers",
    "families_with_inputs",
    "judge_client",
    "list_items",
    "load_bert_scorer",
    "load_rubric",
    "load_text_embedder",
    "split_sentences",
}


def test_every_metric_returns_floats_bools_or_a_result_type() -> None:
    allowed = (float, bool, type(None), str)
    for name in metrics.__all__:
        function = getattr(metrics, name)
        if not inspect.isfunction(function) or name in HELPERS:
            continue
        returned = typing.get_type_hints(
            getattr(function, "__wrapped__", function), localns=public_names()
        )["return"]
        for part in _classes_in(returned):
            if part is types.UnionType:
                continue
            assert (
                issubclass(part, allowed)
                or dataclasses.is_dataclass(part)
                or part
                in (
                    dict,
                    list,
                    metrics.ModelClient,
                )
            ), (name, part)
        assert int not in set(_classes_in(returned)), name


# --- everything a signature needs is exported ---


def _classes_in(annotation: Any) -> Iterator[type]:
    if isinstance(annotation, list | tuple):
        for part in annotation:
            yield from _classes_in(part)
        return
    origin = typing.get_origin(annotation)
    if origin is None:
        if isinstance(annotation, type):
            yield annotation
        return
    if isinstance(origin, type):
        yield origin
    yield from _classes_in(list(typing.get_args(annotation)))


def test_every_type_of_a_public_signature_or_result_field_is_exported() -> None:
    exported = {id(getattr(metrics, name)) for name in metrics.__all__}
    namespace = public_names()
    pending = [getattr(metrics, name) for name in metrics.__all__]
    seen: set[int] = set()
    missing: set[str] = set()
    while pending:
        thing = pending.pop()
        if id(thing) in seen:
            continue
        seen.add(id(thing))
        is_record = isinstance(thing, type) and dataclasses.is_dataclass(thing)
        if not (inspect.isfunction(thing) or is_record):
            continue
        hints = typing.get_type_hints(getattr(thing, "__wrapped__", thing), localns=namespace)
        for annotation in hints.values():
            for used in _classes_in(annotation):
                if used.__module__.startswith("rag_evaluator"):
                    if id(used) not in exported:
                        missing.add(f"{used.__qualname__} (in {thing.__name__})")
                    pending.append(used)
    assert not missing
    assert metrics.EvaluationItem is EvaluationItem


# --- errors ---


def test_input_and_usage_errors_are_value_errors() -> None:
    assert issubclass(UsageError, ValueError) and issubclass(InputError, ValueError)
    assert issubclass(MissingFileError, ValueError)
    assert str(UsageError("Use --k 5")) == "Use --k 5"


def test_the_cli_still_reports_them_with_its_message_and_exit_code(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)
    usage = run_cli(["evaluate", "--metrics", "retrieval", "--match", "fuzzy", "--yes"])
    assert usage.exit_code == 2
    assert usage.output.startswith("Error: --match must be one of exact, similarity, overlap")
    assert "Traceback" not in usage.output
    (tmp_path / "rag_answers.csv").unlink()
    missing = run_cli(["evaluate", "--metrics", "lexical", "--yes"])
    assert missing.exit_code == 2
    assert "Error: rag_answers.csv not found" in missing.output
    assert "Traceback" not in missing.output


def test_no_deprecation_warning_from_the_new_names() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for function in RANKING_FUNCTIONS.values():
            function(GOLDEN, RETRIEVED)
