"""The baseline of `metrics_bench.py` part 7: sacreBLEU and rouge-score called directly on the
rows of a folder's ground_truth.csv and rag_answers.csv (what `--metrics overlap` computes:
sentence BLEU with effective order, ROUGE-1/2/L F1 with stemming), one row at a time, the
scores written to a CSV; prints its CPU seconds and peak RSS. Run by the benchmark:

    python benchmarks/bare_overlap_metrics.py FOLDER
"""

from __future__ import annotations

import csv
import resource
import sys
from pathlib import Path

from rouge_score.rouge_scorer import RougeScorer
from sacrebleu.metrics import BLEU


def _column(path: Path, name: str) -> dict[int, str]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {int(row["Question Number"]): row[name] for row in csv.DictReader(handle)}


def main() -> None:
    folder = Path(sys.argv[1])
    csv.field_size_limit(256 * 1024 * 1024)
    truths = _column(folder / "ground_truth.csv", "Ground Truth")
    answers = _column(folder / "rag_answers.csv", "RAG Answer")
    bleu = BLEU(effective_order=True)
    rouge = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    with (folder / "bare_scores.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question Number", "bleu", "rouge1", "rouge2", "rouge_l"])
        for number in sorted(truths.keys() & answers.keys()):
            truth, answer = truths[number], answers[number]
            scores = rouge.score(truth, answer)
            writer.writerow(
                [
                    number,
                    bleu.sentence_score(answer, [truth]).score / 100,
                    *(scores[name].fmeasure for name in ("rouge1", "rouge2", "rougeL")),
                ]
            )
    usage = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write(f"CPU_S {usage.ru_utime + usage.ru_stime}\nPEAK_RSS_KB {usage.ru_maxrss}\n")


if __name__ == "__main__":
    main()
