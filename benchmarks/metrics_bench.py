"""Throughput of the offline metric families, and what the one-pass embedding saves.

Prints rows/s for 10,000 synthetic rows of lexical, overlap and retrieval, and for 1,000 rows
of semantic (model loading timed apart), then embeds the semantic rows' texts twice: once as
the run does (every distinct text in one batched call) and once with one encode call per row,
and prints the ratio. Never asserted in tests; run it by hand:

    .venv/bin/python benchmarks/metrics_bench.py [--rows 10000] [--semantic-rows 1000]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import TypeVar

from rag_evaluator.core.records import EvaluationItem
from rag_evaluator.embeddings import load_bert_scorer, load_text_embedder
from rag_evaluator.metrics import MetricOptions, compute_offline_metrics, split_sentences

ResultT = TypeVar("ResultT")

TOPICS = ["premium", "base rate", "deductible", "discount", "rate change", "coverage limit"]
WORDS = [
    "policy",
    "vehicle",
    "driver",
    "claim",
    "insurer",
    "annual",
    "monthly",
    "territory",
    "factor",
    "rule",
    "amount",
    "table",
    "schedule",
    "filing",
    "manual",
    "rating",
    "plan",
    "class",
    "symbol",
    "liability",
    "collision",
    "comprehensive",
]


def _sentence(rng: random.Random, length: int) -> str:
    words = [rng.choice(WORDS) for _ in range(length)]
    return " ".join(words).capitalize() + "."


def synthetic_items(count: int, seed: int = 7) -> list[EvaluationItem]:
    """Rows shaped like real RAG output: short answers, five ranked chunks from a shared pool."""
    rng = random.Random(seed)
    pool = [f"Chunk {index}: {_sentence(rng, 22)}" for index in range(max(50, count // 20))]
    items: list[EvaluationItem] = []
    for number in range(1, count + 1):
        topic = rng.choice(TOPICS)
        territory = rng.randint(100, 199)
        amount = rng.randint(100, 999)
        ground_truth = f"The {topic} for Territory {territory} is ${amount}. {_sentence(rng, 8)}"
        if number % 5 == 0:
            ground_truth += f"\n* Rule C-{rng.randint(1, 9)}\n* Rule C-{rng.randint(10, 19)}"
        if number % 17 == 0:
            answer = "I don't know based on the documents provided."
        else:
            answer = (
                f"According to the manual, the {topic} for Territory {territory} is "
                f"{amount}.00 dollars. {_sentence(rng, 10)}"
            )
        contexts = rng.sample(pool, 5)
        relevant = [contexts[rng.randint(0, 4)], rng.choice(pool)]
        items.append(
            EvaluationItem(
                question_number=number,
                question=f"What is the {topic} for Territory {territory}?",
                ground_truth=ground_truth,
                rag_answer=answer,
                contexts=contexts,
                relevant_contexts=relevant,
                required_facts=[f"${amount}", f"Territory {territory}"],
            )
        )
    return items


def timed(action: Callable[[], ResultT]) -> tuple[ResultT, float]:
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def report(label: str, rows: int, seconds: float) -> None:
    print(f"{label:<34} {rows:>6} rows {seconds:>8.2f} s {rows / seconds:>10.1f} rows/s")


def bench_offline(rows: int) -> None:
    items = synthetic_items(rows)
    options = MetricOptions(k=5)
    # Warm the libraries (imports, scorer construction) so rows/s measures scoring.
    compute_offline_metrics(items[:5], ["lexical", "overlap", "retrieval"], options)
    for families in (["lexical"], ["overlap"], ["retrieval"], ["lexical", "overlap", "retrieval"]):
        _, seconds = timed(
            lambda families=families: compute_offline_metrics(items, families, options)
        )
        report(",".join(families), rows, seconds)


def row_texts(item: EvaluationItem) -> list[str]:
    """What a per-row implementation embeds for one row's semantic metrics."""
    return [
        item.question,
        item.rag_answer,
        item.ground_truth,
        *(item.contexts or []),
        *split_sentences(item.rag_answer),
    ]


def bench_semantic(rows: int) -> None:
    items = synthetic_items(rows, seed=11)
    _, load_seconds = timed(lambda: (load_text_embedder(None), load_bert_scorer(None)))
    print(f"{'load MiniLM + BERTScore model':<34} {load_seconds:>20.2f} s")
    result, seconds = timed(lambda: compute_offline_metrics(items, ["semantic"], MetricOptions()))
    report("semantic (embeddings + BERTScore)", rows, seconds)
    assert len(result.scores) == rows

    embedder = load_text_embedder(None)
    every_row = [row_texts(item) for item in items]
    distinct = list(dict.fromkeys(text for texts in every_row for text in texts))
    total = sum(len(texts) for texts in every_row)
    calls_before = embedder.encode_calls
    _, batched_seconds = timed(lambda: embedder.embed_all(distinct))
    batched_calls = embedder.encode_calls - calls_before
    calls_before = embedder.encode_calls
    _, per_row_seconds = timed(lambda: [embedder.encode(texts) for texts in every_row])
    per_row_calls = embedder.encode_calls - calls_before
    print(
        f"embedding {rows} rows: {len(distinct)} distinct of {total} texts\n"
        f"  one batched pass            {batched_seconds:>8.2f} s ({batched_calls} encode call)\n"
        f"  one encode call per row     {per_row_seconds:>8.2f} s ({per_row_calls} encode calls)\n"
        f"  ratio per-row / one-pass    {per_row_seconds / batched_seconds:>8.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--semantic-rows", type=int, default=1_000)
    arguments = parser.parse_args()
    bench_offline(arguments.rows)
    bench_semantic(arguments.semantic_rows)


if __name__ == "__main__":
    main()
