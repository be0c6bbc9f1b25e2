"""Several reference answers for one question: every reference-based offline metric takes
the best over them (BLEU: sacreBLEU's multi-reference score), so an answer matching one of
them is scored as matching."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.inputs.load import load_ground_truth
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.offline.runner import MetricOptions, compute_offline_metrics

LEXICAL = ["exact_match", "keyword_coverage", "number_match", "answer_completeness"]
LEXICAL += ["list_coverage"]
OVERLAP = ["rouge1", "rouge2", "rouge_l"]
SEMANTIC = ["semantic_similarity", "answer_correctness"]
SEMANTIC += ["bert_score_precision", "bert_score_recall", "bert_score_f1"]

WORDS = ["Paris", "France", "capital", "is", "the", "42", "3.5", "Jupiter", "- item", "\n"]
TEXTS = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)


def _item(number: int, answer: str, references: tuple[str, ...]) -> EvaluationItem:
    return EvaluationItem(
        number,
        "Which city is the capital?",
        "\n".join(references),
        answer,
        reference_answers=references if len(references) > 1 else None,
    )


def _scores(items: list[EvaluationItem], family: str) -> dict[int, dict]:
    return compute_offline_metrics(items, [family], MetricOptions()).scores


def _best(values: list[float | None]) -> float | None:
    scored = [value for value in values if value is not None]
    return max(scored) if scored else None


@pytest.mark.needs_extra("overlap")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=TEXTS, references=st.lists(TEXTS, min_size=2, max_size=3))
def test_each_metric_is_its_best_over_the_references(answer: str, references: list[str]) -> None:
    several = _item(1, answer, tuple(references))
    alone = [_item(n + 2, answer, (reference,)) for n, reference in enumerate(references)]
    for family, metrics in (("lexical", LEXICAL), ("overlap", OVERLAP)):
        scores = _scores([several, *alone], family)
        for metric in metrics:
            expected = _best([scores[n + 2][metric] for n in range(len(references))])
            assert scores[1][metric] == pytest.approx(expected), (family, metric)


@pytest.mark.needs_extra("overlap")
def test_bleu_is_sacrebleus_multi_reference_score() -> None:
    import sacrebleu

    answer = "The capital of France is Paris."
    references = ("Paris is the capital of France.", "The capital of France is Paris.")

    scores = _scores([_item(1, answer, references)], "overlap")

    expected = sacrebleu.sentence_bleu(answer, list(references)).score / 100
    assert scores[1]["bleu"] == pytest.approx(expected)
    assert scores[1]["bleu"] == pytest.approx(1.0)


@pytest.mark.needs_extra("semantic")
def test_the_semantic_scores_are_their_best_over_the_references() -> None:
    answer = "Paris."
    references = ("Jupiter is the largest planet.", "Paris", "The capital is Paris, France.")
    several = _item(1, answer, references)
    alone = [_item(n + 2, answer, (reference,)) for n, reference in enumerate(references)]

    scores = _scores([several, *alone], "semantic")

    for metric in SEMANTIC:
        expected = max(scores[n + 2][metric] for n in range(len(references)))
        assert scores[1][metric] == pytest.approx(expected, abs=1e-6), metric


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ('"[""Paris"", ""Paris, France""]"', ("Paris", "Paris, France")),
        ("\"['Paris', 'Paris, France']\"", ("Paris", "Paris, France")),
        ('"[""Paris"", "" ""]"', ("Paris",)),
        ("Paris", ("Paris",)),
        ("", None),
        ("[]", None),
    ],
)
def test_a_reference_answers_cell(tmp_path: Path, cell: str, expected: tuple | None) -> None:
    path = tmp_path / "ground_truth.csv"
    path.write_text(f"Question Number,Ground Truth,Reference Answers\n1,Paris,{cell}\n")

    assert load_ground_truth(path).rows[1].reference_answers == expected
