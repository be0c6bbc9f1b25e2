"""The baseline of `judge_bench.py --only per-question`: a bare `anthropic` SDK loop that sends
the judge requests `rag-eval evaluate` would send for the inputs in a folder, one after the
other, and prints its CPU seconds and peak RSS. Run by the benchmark as a process of its own:

    python benchmarks/bare_sdk_judge.py FOLDER MODEL
"""

from __future__ import annotations

import csv
import resource
import sys
from pathlib import Path

import anthropic

from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.cost import caches_system_prompt
from rag_evaluator.llm.models import resolve_model
from rag_evaluator.llm.providers.anthropic import messages_body


def _column(path: Path, name: str) -> dict[int, str]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {int(row["Question Number"]): row[name] for row in csv.DictReader(handle)}


def main() -> None:
    folder, model_name = Path(sys.argv[1]), sys.argv[2]
    questions = _column(folder / "questions.csv", "Question")
    ground_truths = _column(folder / "ground_truth.csv", "Ground Truth")
    answers = _column(folder / "rag_answers.csv", "RAG Answer")
    model = resolve_model(model_name)
    family = JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES)
    client = anthropic.Anthropic(max_retries=0)
    for number, question in questions.items():
        request = family.request(
            EvaluationItem(number, question, ground_truths[number], answers[number])
        )
        cached = caches_system_prompt(request.system, model)
        client.messages.create(**messages_body(request, model.model_id, cache_system=cached))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write(f"CPU_S {usage.ru_utime + usage.ru_stime}\nPEAK_RSS_KB {usage.ru_maxrss}\n")


if __name__ == "__main__":
    main()
