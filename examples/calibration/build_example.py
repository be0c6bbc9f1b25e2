"""Build the calibration example from HaluEval's human-labelled general data.

    python examples/calibration/build_example.py [PATH/TO/halueval_general_first500.jsonl]

Writes, beside this script:

- ``results.csv``: a results file in rag-eval's format for the 500 ChatGPT answers, whose
  Precision column comes from a simple offline heuristic (below), not from Claude: this
  example must be reproducible without an API key. Ground Truth is empty (HaluEval's
  general data has none).
- ``human_labels.csv``: the HaluEval annotators' label of a seeded random sample of 100 of
  those answers, as Precision (1 = no hallucination, 0 = hallucination).

The heuristic "judge" scores precision 0 when an answer names a year (1500-2099) or carries
an AI-assistant disclaimer ("As an AI language model", "I cannot", "I'm sorry", ...), the
two surface signs most often seen in this data's hallucinated answers, and 1 otherwise.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

from rag_evaluator.inputs.tables import write_csv_atomic
from rag_evaluator.results.summary import SummaryLine, format_fraction

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = (
    HERE.parents[2] / "shared" / "realdata" / "judge" / "halueval_general_first500.jsonl"
)
LABELLED = 100
SAMPLE_SEED = 2023

_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_DISCLAIMER = re.compile(
    r"\bas an ai\b|\bai language model\b|\bi cannot\b|\bi'm sorry\b|\bi am sorry\b"
    r"|\bi do not have\b|\bi don't have\b",
    re.IGNORECASE,
)


def heuristic_verdict(answer: str) -> tuple[int, str]:
    """Precision (0 or 1) and a one-line reason, from the answer's text alone."""
    year = _YEAR.search(answer)
    if year:
        return 0, f"Names a year ({year.group(0)}); specific dates are often invented."
    disclaimer = _DISCLAIMER.search(answer)
    if disclaimer:
        return 0, (
            f"Carries an assistant disclaimer ('{disclaimer.group(0)}'), often followed by "
            "made-up content."
        )
    return 1, "No year and no assistant disclaimer found."


def build(source: Path, folder: Path) -> tuple[Path, Path]:
    """Write results.csv and human_labels.csv into ``folder``; their paths."""
    entries = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    rows: list[list[object]] = []
    precision_total = 0
    for entry in entries:
        precision, reason = heuristic_verdict(entry["chatgpt_response"])
        precision_total += precision
        rows.append(
            [
                int(entry["ID"]),
                entry["user_query"],
                "",
                entry["chatgpt_response"],
                precision,
                reason,
                "no",
                "",
                "",
                "offline heuristic, not Claude (see README.md)",
            ]
        )
    summary = [
        SummaryLine("Total Questions", str(len(rows))),
        SummaryLine("Precision", format_fraction(precision_total, len(rows))),
        SummaryLine("Unscored", "0"),
        SummaryLine("Model", "none: offline heuristic (examples/calibration/README.md)"),
    ]
    header = [
        "Question Number",
        "Question",
        "Ground Truth",
        "RAG Answer",
        "Precision",
        "Reasoning",
        "Consensus",
        "Votes",
        "Error",
        "Note",
    ]
    results_path = folder / "results.csv"
    write_csv_atomic(results_path, [[line.text()] for line in summary] + [header] + rows)

    # People label a random sample of the run: the prediction-powered estimate needs it.
    sample = sorted(
        random.Random(SAMPLE_SEED).sample(entries, LABELLED), key=lambda e: int(e["ID"])
    )
    labels_path = folder / "human_labels.csv"
    write_csv_atomic(
        labels_path,
        [["Question Number", "Precision", "HaluEval hallucination"]]
        + [
            [int(entry["ID"]), 0 if entry["hallucination"] == "yes" else 1, entry["hallucination"]]
            for entry in sample
        ],
    )
    return results_path, labels_path


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SOURCE, HERE)
