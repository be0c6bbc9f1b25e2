"""BERTScore of a row does not depend on the other rows of the run (issue 16)."""

from __future__ import annotations

import random

import pytest

from rag_evaluator.offline.embeddings import (
    BERTSCORE_BATCH_SIZE,
    DEFAULT_MODEL_BERTSCORE_LAYERS,
    BertScoreModel,
    default_model_path,
    load_bert_scorer,
)

pytestmark = pytest.mark.needs_extra("semantic")

# The issue's reproduction: the third pair scores 0.0920 alone and 0.0945 with the other two.
CANDIDATES = [
    "Cornish heath",
    "It was Baron Alphonse.",
    "The stock market fell sharply on Tuesday. Bananas are yellow.",
]
REFERENCES = ["Cornish heath", "Baron Alphonse von Pawel-Rammingen", "Canberra"]
PAIR = (CANDIDATES[2], REFERENCES[2])

SENTENCE = (
    "the premium for territory 118 is computed from the base rate and a factor table while "
    "rule C-1 defines the territories and the insurer files its rates every spring with the "
    "state regulator who reviews each filing before it takes effect"
)
WORDS = SENTENCE.split(" ")


def other_pairs(count: int, seed: int = 3, longest: int = 40) -> list[tuple[str, str]]:
    """Pairs of very different lengths (1 to ``longest`` words), so batches hold padding."""
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, longest))).capitalize()

    return [(text(), text()) for _ in range(count)]


@pytest.fixture(scope="module")
def scorer() -> BertScoreModel:
    return load_bert_scorer(None)


def score_in_run(scorer: BertScoreModel, pairs: list[tuple[str, str]]) -> tuple[float, ...]:
    values = scorer.score([candidate for candidate, _ in pairs], [truth for _, truth in pairs])
    return values[pairs.index(PAIR)]


@pytest.mark.parametrize("others", [1, 2, 9, BERTSCORE_BATCH_SIZE + 6])
@pytest.mark.parametrize("order_seed", [0, 1])
def test_a_pair_scores_the_same_alone_and_in_runs_of_any_size_and_order(
    scorer: BertScoreModel, others: int, order_seed: int
) -> None:
    alone = scorer.score([PAIR[0]], [PAIR[1]])[0]
    pairs = [*other_pairs(others), PAIR]
    random.Random(order_seed).shuffle(pairs)
    assert score_in_run(scorer, pairs) == pytest.approx(alone, abs=1e-6)


def test_the_issue_reproduction_scores_as_each_pair_alone(scorer: BertScoreModel) -> None:
    together = scorer.score(CANDIDATES, REFERENCES)
    alone = [scorer.score([c], [r])[0] for c, r in zip(CANDIDATES, REFERENCES, strict=True)]
    for run_value, alone_value in zip(together, alone, strict=True):
        assert run_value == pytest.approx(alone_value, abs=1e-6)
    assert together[2][2] == pytest.approx(0.0920, abs=5e-5)


def _upstream(batch_size: int) -> list[float]:
    from bert_score import score

    return score(
        CANDIDATES,
        REFERENCES,
        model_type=str(default_model_path()),
        num_layers=DEFAULT_MODEL_BERTSCORE_LAYERS,
        batch_size=batch_size,
    )[2].tolist()


def test_a_pair_alone_scores_what_bert_score_gives_it_alone(scorer: BertScoreModel) -> None:
    # Batches of one pair hold no padding, so bert-score itself is right there: our scores are
    # bert-score's definition (model, layer, tokenisation, weights), not a variant of it.
    upstream_alone = _upstream(batch_size=1)
    ours = [scorer.score([c], [r])[0][2] for c, r in zip(CANDIDATES, REFERENCES, strict=True)]
    assert ours == pytest.approx(upstream_alone, abs=1e-6)


def test_bert_score_itself_still_lets_padding_into_a_score() -> None:
    # The upstream defect, kept as a reproduction (bert-score 0.3.13): greedy_cos_idf zeroes
    # the similarities of padded positions instead of excluding them, so a word piece whose
    # best real match is negative takes 0 when a longer text shares its batch. When this test
    # fails, a bert-score release has fixed it: compare its batched scores with ours, and if
    # they agree, score through bert_score.BERTScorer again and drop _greedy_match from
    # rag_evaluator/embeddings.py (and this test).
    alone = _upstream(batch_size=1)[2]
    batched = _upstream(batch_size=64)[2]
    assert alone == pytest.approx(0.0920, abs=5e-5)
    assert batched == pytest.approx(0.0945, abs=5e-5)


def test_bert_score_reports_progress_after_each_batch(scorer: BertScoreModel) -> None:
    pairs = other_pairs(BERTSCORE_BATCH_SIZE + 10, seed=5, longest=4)
    calls: list[tuple[str, int, int]] = []
    scorer.score(
        [candidate for candidate, _ in pairs],
        [truth for _, truth in pairs],
        lambda label, done, total: calls.append((label, done, total)),
    )
    distinct = len({text for pair in pairs for text in pair})
    assert [label for label, _, _ in calls] == ["BERTScore"] * len(calls)
    assert len(calls) == -(-distinct // BERTSCORE_BATCH_SIZE)  # one call per batch
    done = [count for _, count, _ in calls]
    assert done == sorted(set(done)) and done[-1] == distinct
    assert {total for _, _, total in calls} == {distinct}
