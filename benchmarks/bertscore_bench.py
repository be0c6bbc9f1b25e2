"""What making BERTScore independent of the other rows costs (issue 16), and how far rows moved.

Scores the same answer / ground-truth pairs two ways, alternated in one process (A B A B ...)
with ``benchmarks/timing.py``:

- bert-score's own ``BERTScorer.score`` in batches of 64: what the run did before the fix (a
  row's score then depends on the texts batched with it);
- ``rag_evaluator.offline.embeddings.BertScoreModel.score``: bert-score's embedding pass, batches of
  64, and greedy matching that excludes padding (what the run does now).

Then prints how much the old batched scores differ from each pair scored alone. Run it by
hand:

    .venv/bin/python benchmarks/bertscore_bench.py [--pairs 300] [--repeats 5]
"""

from __future__ import annotations

import argparse
import random
import statistics

from metrics_bench import alternate_wall_and_cpu, print_wall_and_cpu
from timing import machine

from rag_evaluator.offline.embeddings import (
    BERTSCORE_BATCH_SIZE,
    DEFAULT_MODEL_BERTSCORE_LAYERS,
    default_model_path,
    load_bert_scorer,
)

VOCABULARY = (
    "the premium for territory 118 is computed from the base rate and a factor table while "
    "rule C-1 defines the territories and the insurer files its rates every spring with the "
    "state regulator who reviews each filing before it takes effect on the first of June "
    "unless the commissioner objects in writing within thirty days"
)
WORDS = VOCABULARY.split(" ")


def synthetic_pairs(count: int, seed: int = 5) -> tuple[list[str], list[str]]:
    """Answers of 3 to 80 words and ground truths of 1 to 40: lengths as varied as in real
    runs, where a short ground truth often shares a batch with long answers."""
    rng = random.Random(seed)

    def text(shortest: int, longest: int) -> str:
        words = [rng.choice(WORDS) for _ in range(rng.randint(shortest, longest))]
        return " ".join(words).capitalize() + "."

    answers = [text(3, 80) for _ in range(count)]
    truths = [text(1, 40) for _ in range(count)]
    return answers, truths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    print(f"Machine: {machine()}")

    from bert_score import BERTScorer

    answers, truths = synthetic_pairs(arguments.pairs)
    ours = load_bert_scorer(None)
    upstream = BERTScorer(
        model_type=str(default_model_path()),
        num_layers=DEFAULT_MODEL_BERTSCORE_LAYERS,
        use_fast_tokenizer=True,
    )

    def before() -> object:
        return upstream.score(answers, truths, batch_size=BERTSCORE_BATCH_SIZE)

    def now() -> object:
        return ours.score(answers, truths)

    wall, cpu = alternate_wall_and_cpu(
        {"bert-score batched (before)": before, "padding excluded (now)": now},
        arguments.repeats,
    )
    print(f"\nBERTScore of {arguments.pairs} pairs, batches of {BERTSCORE_BATCH_SIZE}")
    print_wall_and_cpu(wall, cpu, [("", "padding excluded (now)", "bert-score batched (before)")])

    batched_f1 = upstream.score(answers, truths, batch_size=BERTSCORE_BATCH_SIZE)[2].tolist()
    now_f1 = [f1 for _, _, f1 in ours.score(answers, truths)]
    alone_f1 = [ours.score([a], [t])[0][2] for a, t in zip(answers, truths, strict=True)]
    moved = [abs(b - a) for b, a in zip(batched_f1, alone_f1, strict=True)]
    still = max(abs(n - a) for n, a in zip(now_f1, alone_f1, strict=True))
    print(
        f"\nF1 batched by bert-score vs the pair alone: {sum(m > 1e-6 for m in moved)} of "
        f"{len(moved)} rows differ by more than 1e-6 (median {statistics.median(moved):.2g}, "
        f"max {max(moved):.2g})\nF1 now vs the pair alone: max difference {still:.2g}"
    )


if __name__ == "__main__":
    main()
