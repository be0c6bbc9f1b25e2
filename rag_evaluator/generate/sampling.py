"""Which chunks the questions are about: types and their mix, spread, multi-hop pairs.

- ``--types`` names the question types, optionally weighted (``factual=3,multi_hop=1``); the
  counts per type are the weights' shares of ``--count`` by the largest-remainder method, and
  the first round's types are shuffled (seeded) so every stretch of questions mixes them.
- Chunks are spread across documents: the documents in a seeded order, each document's chunks
  shuffled, then dealt round-robin (one chunk of each document in turn), so 50 questions over
  10 documents ask about every document before any twice. Past the last chunk the order starts
  again and the questions asked get a new ``variant`` (the prompt asks for another detail).
- ``multi_hop`` pairs a chunk with its most related other chunk: by shared keywords (seed 000's
  keywords; at least 2 shared, keywords found in more than half of the chunks ignored, ranked by
  Jaccard similarity) or by embeddings (cosine at least ``EMBEDDING_PAIR_THRESHOLD``).

Everything is deterministic for a seed, so a resumed run plans the very same questions.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rag_evaluator.errors import UsageError
from rag_evaluator.generate.documents import Chunk
from rag_evaluator.generate.options import COMPARISON as COMPARISON
from rag_evaluator.generate.options import DEFAULT_TYPES as DEFAULT_TYPES
from rag_evaluator.generate.options import FACTUAL as FACTUAL
from rag_evaluator.generate.options import MULTI_HOP as MULTI_HOP
from rag_evaluator.generate.options import QUESTION_TYPES as QUESTION_TYPES
from rag_evaluator.generate.options import UNANSWERABLE as UNANSWERABLE
from rag_evaluator.offline.lexical import extract_keywords

MIN_SHARED_KEYWORDS = 2
# A keyword found in more than this share of the chunks says nothing about relatedness.
COMMON_KEYWORD_SHARE = 0.5
EMBEDDING_PAIR_THRESHOLD = 0.5


def parse_types(text: str) -> dict[str, int]:
    """``factual,multi_hop`` (weight 1 each) or ``factual=3,multi_hop=1`` -> weights by type."""
    weights: dict[str, int] = {}
    known = ", ".join(QUESTION_TYPES)
    for item in text.split(","):
        name, separator, weight_text = item.strip().partition("=")
        name = name.strip().lower().replace("-", "_")
        if not name:
            continue
        if name not in QUESTION_TYPES:
            raise UsageError(f"Unknown question type '{name}' in --types. Use: {known}")
        weight = 1
        if separator:
            try:
                weight = int(weight_text.strip())
            except ValueError:
                weight = -1
            if weight < 1:
                raise UsageError(
                    f"--types: the weight of {name} must be a whole number of at least 1 (got "
                    f"'{weight_text.strip()}'), e.g. --types factual=3,unanswerable=1"
                )
        if name in weights:
            raise UsageError(f"--types names {name} twice. Name each type once")
        weights[name] = weight
    if not weights:
        raise UsageError(f"--types is empty. Name at least one of: {known}")
    return weights


def type_counts(weights: Mapping[str, int], count: int) -> dict[str, int]:
    """Split ``count`` questions among the types by weight (largest remainder; ties go to the
    type named first)."""
    total = sum(weights.values())
    exact = {name: count * weight / total for name, weight in weights.items()}
    counts = {name: int(share) for name, share in exact.items()}
    left = count - sum(counts.values())
    names = list(weights)
    order = sorted(names, key=lambda name: (counts[name] - exact[name], names.index(name)))
    for name in order[:left]:
        counts[name] += 1
    return counts


@dataclass(frozen=True)
class QuestionSlot:
    """One question to ask: its number, type, the chunks it is about, and its variant (how
    many times the chunk order had started again when it was planned)."""

    number: int
    question_type: str
    chunk_ids: tuple[int, ...]
    variant: int = 0


class PartnerFinder(Protocol):
    """Finds the chunk most related to a chunk, for multi-hop questions."""

    def partner(self, chunk_id: int) -> int | None: ...


class KeywordPartners:
    """Related chunks by shared keywords (an inverted index, built once)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._chunks = {chunk.chunk_id: chunk for chunk in chunks}
        self._keywords: dict[int, frozenset[tuple[object, ...]]] = {}
        postings: dict[tuple[object, ...], list[int]] = defaultdict(list)
        for chunk in chunks:
            keywords = frozenset(extract_keywords(chunk.text).items)
            self._keywords[chunk.chunk_id] = keywords
            for keyword in keywords:
                postings[keyword].append(chunk.chunk_id)
        limit = max(2, int(len(chunks) * COMMON_KEYWORD_SHARE))
        self._postings = {
            keyword: ids for keyword, ids in postings.items() if 1 < len(ids) <= limit
        }

    def partner(self, chunk_id: int) -> int | None:
        own = self._keywords.get(chunk_id, frozenset())
        shared: Counter[int] = Counter()
        for keyword in own:
            for other in self._postings.get(keyword, ()):
                if other != chunk_id:
                    shared[other] += 1
        document = self._chunks[chunk_id].document
        best: tuple[float, int, int] | None = None
        best_id: int | None = None
        for other, common in shared.items():
            if common < MIN_SHARED_KEYWORDS:
                continue
            union = len(own | self._keywords[other])
            rank = (common / union, self._chunks[other].document != document, -other)
            if best is None or rank > best:
                best, best_id = rank, other
        return best_id


class EmbeddingPartners:
    """Related chunks by the cosine of their embeddings (``similarities(chunk_id)`` gives the
    cosine of that chunk with every chunk, in ``chunk_ids`` order)."""

    def __init__(
        self,
        chunk_ids: Sequence[int],
        similarities: Callable[[int], Sequence[float]],
        threshold: float = EMBEDDING_PAIR_THRESHOLD,
    ) -> None:
        self._chunk_ids = list(chunk_ids)
        self._similarities = similarities
        self._threshold = threshold

    def partner(self, chunk_id: int) -> int | None:
        best_id: int | None = None
        best = self._threshold
        for other, cosine in zip(self._chunk_ids, self._similarities(chunk_id), strict=True):
            value = float(cosine)
            # The first chunk at the threshold counts; later ones must beat the best so far.
            if other != chunk_id and (value > best or (best_id is None and value >= best)):
                best, best_id = value, other
        return best_id


def spread_order(chunks: Sequence[Chunk], rng: random.Random) -> list[int]:
    """Chunk ids dealt round-robin across the documents (both shuffled with ``rng``)."""
    by_document: dict[str, list[int]] = defaultdict(list)
    for chunk in chunks:
        by_document[chunk.document].append(chunk.chunk_id)
    documents = sorted(by_document)
    rng.shuffle(documents)
    queues = []
    for document in documents:
        ids = by_document[document]
        rng.shuffle(ids)
        queues.append(ids)
    order: list[int] = []
    depth = 0
    while len(order) < len(chunks):
        for ids in queues:
            if depth < len(ids):
                order.append(ids[depth])
        depth += 1
    return order


class SlotPlanner:
    """Plans question slots round by round, deterministically for a seed.

    Single-chunk types share one cursor over the spread order; multi-hop questions walk the
    same order taking the chunks that have a related partner (each unordered pair once per
    pass). A resumed run replays the same rounds and gets the same slots.
    """

    def __init__(self, chunks: Sequence[Chunk], partners: PartnerFinder | None, seed: int) -> None:
        if not chunks:
            raise ValueError("no chunk to plan questions about")
        self._rng = random.Random(seed)
        self._order = spread_order(chunks, self._rng)
        self._partners = partners
        self._next_number = 1
        self._single_cursor = 0
        self._pairs: list[tuple[int, int]] | None = None
        self._pair_cursor = 0

    def _pair_list(self) -> list[tuple[int, int]]:
        if self._pairs is None:
            pairs: list[tuple[int, int]] = []
            seen: set[frozenset[int]] = set()
            if self._partners is not None:
                for chunk_id in self._order:
                    other = self._partners.partner(chunk_id)
                    if other is None or frozenset((chunk_id, other)) in seen:
                        continue
                    seen.add(frozenset((chunk_id, other)))
                    pairs.append((chunk_id, other))
            self._pairs = pairs
        return self._pairs

    def has_pairs(self) -> bool:
        return bool(self._pair_list())

    def first_round_types(self, counts: Mapping[str, int]) -> list[str]:
        """The first round's types: the counts as a multiset, in a seeded shuffle."""
        types = [name for name in QUESTION_TYPES for _ in range(counts.get(name, 0))]
        self._rng.shuffle(types)
        return types

    def plan(self, types: Sequence[str]) -> list[QuestionSlot]:
        """The next slots, one per type given, numbered on from the previous round's."""
        slots = []
        for question_type in types:
            if question_type == MULTI_HOP and self.has_pairs():
                pairs = self._pair_list()
                variant, index = divmod(self._pair_cursor, len(pairs))
                chunk_ids: tuple[int, ...] = pairs[index]
                self._pair_cursor += 1
            else:
                variant, index = divmod(self._single_cursor, len(self._order))
                chunk_ids = (self._order[index],)
                self._single_cursor += 1
                if question_type == MULTI_HOP:
                    question_type = FACTUAL
            slots.append(QuestionSlot(self._next_number, question_type, chunk_ids, variant))
            self._next_number += 1
        return slots
