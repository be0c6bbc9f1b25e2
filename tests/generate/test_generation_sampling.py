"""Question types, their mix, chunks spread across documents, multi-hop pairs, rounds."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.errors import UsageError
from rag_evaluator.generate.documents import Chunk
from rag_evaluator.generate.sampling import (
    COMPARISON,
    FACTUAL,
    MULTI_HOP,
    UNANSWERABLE,
    EmbeddingPartners,
    KeywordPartners,
    SlotPlanner,
    parse_types,
    spread_order,
    type_counts,
)


def _chunk(chunk_id: int, document: str, text: str = "") -> Chunk:
    text = text or f"Chunk {chunk_id} of {document} says something about item{chunk_id}."
    return Chunk(chunk_id, document, 0, len(text), text)


def test_types_without_weights_weigh_one_each() -> None:
    assert parse_types("factual, Multi-Hop") == {FACTUAL: 1, MULTI_HOP: 1}


def test_types_with_weights() -> None:
    assert parse_types("factual=3,unanswerable=1") == {FACTUAL: 3, UNANSWERABLE: 1}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("factual,opinion", "Unknown question type 'opinion'"),
        ("factual=0", "weight of factual must be a whole number of at least 1"),
        ("factual=two", "weight of factual must be a whole number"),
        ("factual,factual", "names factual twice"),
        (" , ", "--types is empty"),
    ],
)
def test_bad_types_are_usage_errors(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_types(text)


def test_counts_follow_the_weights_by_largest_remainder() -> None:
    weights = {FACTUAL: 3, COMPARISON: 2, MULTI_HOP: 2, UNANSWERABLE: 1}
    assert type_counts(weights, 50) == {FACTUAL: 19, COMPARISON: 13, MULTI_HOP: 12, UNANSWERABLE: 6}
    assert type_counts(weights, 1) == {FACTUAL: 1, COMPARISON: 0, MULTI_HOP: 0, UNANSWERABLE: 0}


@given(
    weights=st.dictionaries(
        st.sampled_from([FACTUAL, COMPARISON, MULTI_HOP, UNANSWERABLE]),
        st.integers(min_value=1, max_value=9),
        min_size=1,
    ),
    count=st.integers(min_value=1, max_value=500),
)
def test_counts_add_up_and_stay_within_one_of_the_exact_share(
    weights: dict[str, int], count: int
) -> None:
    counts = type_counts(weights, count)
    assert sum(counts.values()) == count
    total = sum(weights.values())
    for name, weight in weights.items():
        assert abs(counts[name] - count * weight / total) < 1


def test_spread_order_visits_every_document_before_any_twice() -> None:
    chunks = [_chunk(index, "big.md") for index in range(6)]
    chunks += [_chunk(6, "small.md"), _chunk(7, "tiny.md")]
    order = spread_order(chunks, random.Random(1))
    documents = [chunks[chunk_id].document for chunk_id in order]
    assert set(documents[:3]) == {"big.md", "small.md", "tiny.md"}
    assert sorted(order) == list(range(8))


def test_the_same_seed_plans_the_same_slots_and_another_seed_others() -> None:
    chunks = [_chunk(index, f"doc{index % 3}.md") for index in range(9)]
    counts = {FACTUAL: 5, COMPARISON: 3, UNANSWERABLE: 2}

    def plan(seed: int) -> list:
        planner = SlotPlanner(chunks, None, seed)
        return planner.plan(planner.first_round_types(counts))

    assert plan(7) == plan(7)
    assert plan(7) != plan(8)
    slots = plan(7)
    assert [slot.number for slot in slots] == list(range(1, 11))
    assert Counter(slot.question_type for slot in slots) == counts


def test_past_the_last_chunk_the_order_starts_again_with_a_new_variant() -> None:
    chunks = [_chunk(0, "a.md"), _chunk(1, "b.md")]
    planner = SlotPlanner(chunks, None, 1)
    slots = planner.plan([FACTUAL] * 5)
    assert [slot.variant for slot in slots] == [0, 0, 1, 1, 2]
    assert slots[0].chunk_ids == slots[2].chunk_ids


def test_later_rounds_number_on_and_take_the_next_chunks() -> None:
    chunks = [_chunk(index, f"doc{index}.md") for index in range(4)]
    planner = SlotPlanner(chunks, None, 3)
    first = planner.plan([FACTUAL, FACTUAL])
    second = planner.plan([COMPARISON])
    assert second[0].number == 3
    assert second[0].chunk_ids[0] not in {first[0].chunk_ids[0], first[1].chunk_ids[0]}


def test_keyword_partners_pick_the_chunk_sharing_the_most_keywords() -> None:
    chunks = [
        _chunk(0, "a.md", "The TideGauge T4 calibration happens in Bergen every twelve months."),
        _chunk(1, "b.md", "Calibration of the TideGauge T4 is done in the Bergen laboratory."),
        _chunk(2, "c.md", "Hotel nights are capped at 180 EUR in Oslo."),
        _chunk(3, "d.md", "Meals abroad are paid at 60 EUR a day, in Oslo too."),
    ]
    partners = KeywordPartners(chunks)
    assert partners.partner(0) == 1
    assert partners.partner(1) == 0
    assert partners.partner(2) == 3


def test_keyword_partners_need_two_shared_keywords() -> None:
    chunks = [
        _chunk(0, "a.md", "Bergen hosts the laboratory."),
        _chunk(1, "b.md", "Bergen has rain."),
        _chunk(2, "c.md", "Parking spaces are booked ahead."),
    ]
    assert KeywordPartners(chunks).partner(0) is None


def test_embedding_partners_take_the_most_similar_chunk_above_the_threshold() -> None:
    cosines = {0: [1.0, 0.6, 0.9], 1: [0.6, 1.0, 0.3], 2: [0.9, 0.3, 1.0]}
    partners = EmbeddingPartners([0, 1, 2], lambda chunk_id: cosines[chunk_id], threshold=0.65)
    assert partners.partner(0) == 2
    assert partners.partner(1) is None


def test_multi_hop_slots_take_related_pairs_once_each() -> None:
    chunks = [
        _chunk(0, "a.md", "The TideGauge T4 calibration happens in Bergen every year."),
        _chunk(1, "b.md", "Calibration of the TideGauge T4 is done in the Bergen laboratory."),
        _chunk(2, "c.md", "Parking spaces are booked one day ahead."),
    ]
    planner = SlotPlanner(chunks, KeywordPartners(chunks), 5)
    assert planner.has_pairs()
    slots = planner.plan([MULTI_HOP, MULTI_HOP])
    assert {frozenset(slot.chunk_ids) for slot in slots} == {frozenset({0, 1})}
    assert [slot.variant for slot in slots] == [0, 1]


def test_multi_hop_without_any_pair_becomes_factual() -> None:
    chunks = [_chunk(0, "a.md", "Parking is booked ahead."), _chunk(1, "b.md", "Rain falls.")]
    planner = SlotPlanner(chunks, KeywordPartners(chunks), 5)
    assert not planner.has_pairs()
    (slot,) = planner.plan([MULTI_HOP])
    assert slot.question_type == FACTUAL
    assert len(slot.chunk_ids) == 1
