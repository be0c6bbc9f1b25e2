"""What a run keeps of its embeddings from one chunk of questions to the next."""

from __future__ import annotations

import numpy as np

from rag_evaluator.offline.embeddings import EmbeddingMemory


def _vector(value: float, rows: int = 1) -> np.ndarray:
    return np.full((rows, 4), value, dtype=np.float32)


def test_a_text_is_recalled_as_whole_or_in_passages_as_it_was_kept() -> None:
    memory = EmbeddingMemory()
    memory.remember("a context", _vector(1.0, rows=3), in_passages=True)
    memory.remember("a context", _vector(2.0)[0], in_passages=False)
    passages = memory.recall("a context", in_passages=True)
    whole = memory.recall("a context", in_passages=False)
    assert passages is not None and passages.shape == (3, 4) and passages[0, 0] == 1.0
    assert whole is not None and whole.shape == (4,) and whole[0] == 2.0
    assert memory.recall("another text", in_passages=False) is None


def test_kept_vectors_are_copies_not_views_of_the_chunk_table() -> None:
    table = _vector(5.0, rows=10)
    memory = EmbeddingMemory()
    memory.remember("text", table[3], in_passages=False)
    table[3] = 0.0
    kept = memory.recall("text", in_passages=False)
    assert kept is not None and kept.base is None and kept[0] == 5.0


def test_the_least_recently_used_go_first_past_the_size() -> None:
    one_vector = _vector(0.0)[0].nbytes  # 16 bytes
    memory = EmbeddingMemory(max_bytes=3 * one_vector)
    for name in ("a", "b", "c"):
        memory.remember(name, _vector(1.0)[0], in_passages=False)
    assert memory.recall("a", in_passages=False) is not None  # now the most recent
    memory.remember("d", _vector(1.0)[0], in_passages=False)
    assert memory.recall("b", in_passages=False) is None
    assert all(memory.recall(name, in_passages=False) is not None for name in ("a", "c", "d"))
    # A text larger than the whole memory is not kept (and drops nothing).
    memory.remember("huge", _vector(1.0, rows=4), in_passages=True)
    assert memory.recall("huge", in_passages=True) is None
    assert memory.recall("a", in_passages=False) is not None
