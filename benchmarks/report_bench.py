"""The HTML report of a 5,000-question run: its size and how fast its first screen renders.

Builds results files as ``rag-eval evaluate`` writes them (the real writer): 5,000 questions
with the judge's three metrics (a tenth of the questions hedged) and the lexical, overlap and
retrieval columns, with texts of two lengths:

- ``sample``: as long as the repository's sample data (question ~70 characters, ground
  truth and answer ~110, the judge's reasoning ~80);
- ``long``: as long as public RAG data sets (question ~80, ground truth ~250, answer ~350,
  reasoning ~200), the text alone is then about 5 MB;

plus rag_answers.csv with five retrieved contexts of ~500 characters per question, drawn
from 2,000 chunks. Then:

- ``rag-eval report`` (the pipeline) writes the page, with and without the contexts:
  the time to build it and its size, split into table, contexts and the rest;
- headless Chromium opens the page (the network closed, the tab in front) and reports,
  from the page's own clock: first contentful paint, DOMContentLoaded, the script's
  ``report-ready`` mark and the load event, repeated; the same page with scripts turned
  off is the baseline, so the ratio is what the script costs the first screen.

Targets (issue 13): under 5 MB, first screen under 2 s. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/report_bench.py [--questions 5000] [--repeats 5] [--quick]

``--quick``: 1,000 questions, 2 repeats (a check that it runs; the figures are noisier).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from timing import Stats, alternate, format_ratio, format_stats, machine

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from browser import DevToolsBrowser, devtools_browser

from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores, Vote
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.offline.registry import RATE_COLUMNS
from rag_evaluator.report.run import ReportRequest, build_report
from rag_evaluator.results.rows import ResultRow
from rag_evaluator.results.summary import RunFacts, build_summary
from rag_evaluator.results.writer import write_results

OFFLINE_COLUMNS = [
    "exact_match",
    "keyword_coverage",
    "number_match",
    "answer_completeness",
    "citation_quality",
    "dont_know",
    "fact_score",
    "bleu",
    "rouge1",
    "rouge2",
    "rouge_l",
    "precision_at_k",
    "recall_at_k",
    "f1_at_k",
    "mrr",
    "ndcg_at_k",
    "hybrid_log_rank",
]
WORDS = [
    "employee",
    "employees",
    "policy",
    "handbook",
    "section",
    "days",
    "leave",
    "annual",
    "budget",
    "manager",
    "approval",
    "travel",
    "expense",
    "report",
    "receipts",
    "within",
    "calendar",
    "year",
    "public",
    "holidays",
    "office",
    "remote",
    "contract",
    "notice",
    "period",
    "payroll",
    "benefits",
    "insurance",
    "coverage",
    "month",
    "start",
    "date",
    "retirement",
    "plan",
    "contributions",
    "salary",
    "percent",
    "training",
    "course",
    "security",
    "password",
    "device",
    "laptop",
    "incident",
    "team",
    "portal",
    "request",
    "form",
    "weeks",
    "hours",
    "the",
    "a",
    "of",
    "to",
    "in",
    "and",
    "for",
    "on",
    "with",
    "by",
    "is",
    "are",
    "must",
    "may",
    "can",
    "be",
    "has",
    "have",
    "after",
    "before",
    "each",
    "every",
    "per",
    "up",
    "at",
    "from",
    "as",
]


def sentence(rng: random.Random, characters: int) -> str:
    words: list[str] = []
    while sum(len(word) + 1 for word in words) < characters:
        word = rng.choice(WORDS)
        if rng.random() < 0.08:
            word = str(rng.randint(2, 900))
        words.append(word)
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


# (low, high) characters of question, ground truth, answer and reasoning.
PROFILES = {
    "sample": ((50, 90), (60, 160), (60, 160), (40, 120)),
    "long": ((50, 110), (120, 380), (150, 550), (120, 280)),
}


def make_run(folder: Path, questions: int, profile: str, seed: int = 0) -> tuple[Path, Path]:
    """A results file and its rag_answers.csv (with contexts)."""
    question_length, truth_length, answer_length, reasoning_length = PROFILES[profile]
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    chunks = [sentence(rng, rng.randint(350, 650)) for _ in range(2000)]
    judge = JudgeFamily("prompt", ("borderline",))
    rows: list[ResultRow] = []
    contexts: dict[int, list[str]] = {}
    for number in range(1, questions + 1):
        item = EvaluationItem(
            number,
            sentence(rng, rng.randint(*question_length)).rstrip(".") + "?",
            sentence(rng, rng.randint(*truth_length)),
            sentence(rng, rng.randint(*answer_length)),
        )
        contexts[number] = rng.sample(chunks, 5)
        scores = Scores(*(int(rng.random() < 0.85) for _ in range(3)))
        hedged = rng.random() < 0.1
        result = JudgeResult(
            scores=scores,
            summary=sentence(rng, rng.randint(*reasoning_length)),
            consensus=hedged,
            initial_scores=Scores(1, 1, 1) if hedged else None,
            votes=tuple(Vote(scores) for _ in range(3)) if hedged else (),
            hedge_phrases=("borderline",) if hedged else (),
            calls=4 if hedged else 1,
            usage=TokenUsage(1500, 120),
            cost_usd=0.0006,
        )
        # A 0/1 metric holds 0 or 1: the results file declares its kind and the report
        # refuses a rate column holding a score.
        metrics = {
            name: (
                None
                if rng.random() < 0.03
                else float(rng.random() < 0.5)
                if name in RATE_COLUMNS
                else round(rng.random(), 4)
            )
            for name in OFFLINE_COLUMNS
        }
        rows.append(ResultRow(item, QuestionRecord(number, {"judge": result}), metrics))
    facts = RunFacts(
        judged=True,
        model_id="claude-haiku-5-5",
        seed=seed,
        prompt_origin="built-in default",
        calls=sum(row.record.calls for row in rows if row.record),
        cost_usd=3.1,
        coverage=(questions, questions),
        metric_columns=OFFLINE_COLUMNS,
    )
    results, _ = write_results(
        folder,
        datetime(2026, 11, 23, 1, 44, 12),
        build_summary(rows, facts, [judge]),
        rows,
        families=[judge],
        metric_columns=OFFLINE_COLUMNS,
    )
    answers = folder / "rag_answers.csv"
    with answers.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question Number", "RAG Answer", "Contexts"])
        for row in rows:
            number = row.item.question_number
            writer.writerow([number, row.item.rag_answer, json.dumps(contexts[number])])
    return results, answers


def size_breakdown(page: str) -> str:
    total = len(page.encode("utf-8"))
    tables = sum(
        len(match.group(0).encode("utf-8"))
        for match in re.finditer(r"<tbody>.*?</tbody>", page, re.DOTALL)
    )
    found = re.search(r'<script type="application/octet-stream" id="contexts">(.*?)</script>', page)
    contexts = len(found.group(1)) if found else 0
    rest = total - tables - contexts
    return (
        f"{total / 1e6:.2f} MB (table rows {tables / 1e6:.2f} MB, "
        f"contexts {contexts / 1e6:.2f} MB, everything else {rest / 1e6:.2f} MB)"
    )


PAGE_TIMES = """(() => {
  const navigation = performance.getEntriesByType("navigation")[0];
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  const ready = performance.getEntriesByName("report-ready")[0];
  return {
    fcp: paint ? paint.startTime : null,
    dcl: navigation.domContentLoadedEventEnd,
    ready: ready ? ready.startTime : null,
    load: navigation.loadEventEnd,
  };
})()"""


def open_times(browser: DevToolsBrowser, url: str, javascript: bool) -> dict[str, float]:
    page = browser.open(url, javascript=javascript)
    # The paint entry is recorded once the first frame is drawn, a moment after load.
    deadline = time.monotonic() + 10
    times = page.evaluate(PAGE_TIMES) if javascript else {}
    while javascript and times["fcp"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
        times = page.evaluate(PAGE_TIMES)
    page.close()
    return times


def browser_figures(path: Path, repeats: int) -> None:
    url = path.as_uri()
    with devtools_browser() as browser:
        collected: dict[str, list[float]] = {}
        for _ in range(repeats):
            started = time.perf_counter()
            times = open_times(browser, url, javascript=True)
            collected.setdefault("open to load, wall clock (scripts on)", []).append(
                time.perf_counter() - started
            )
            started = time.perf_counter()
            open_times(browser, url, javascript=False)
            collected.setdefault("open to load, wall clock (scripts off)", []).append(
                time.perf_counter() - started
            )
            for name, key in (
                ("first contentful paint", "fcp"),
                ("DOMContentLoaded", "dcl"),
                ("report-ready (script done)", "ready"),
                ("load event", "load"),
            ):
                if times.get(key) is not None:
                    collected.setdefault(name, []).append(times[key] / 1000)
    stats = {name: Stats(name, tuple(values)) for name, values in collected.items()}
    print(format_stats(stats, unit="s"))
    print(
        format_ratio(
            stats, "open to load, wall clock (scripts on)", "open to load, wall clock (scripts off)"
        ).replace(" / ", " vs ")
    )


def bench_profile(root: Path, profile: str, questions: int, repeats: int) -> None:
    results, answers = make_run(root, questions, profile)
    print(f"\n== {profile} texts; results file {results.stat().st_size / 1e6:.2f} MB")
    with_contexts = root / "with_contexts.html"
    without = root / "without_contexts.html"

    def build_with() -> None:
        build_report(ReportRequest([results], output_path=with_contexts, answers_paths=[answers]))

    def build_without() -> None:
        build_report(ReportRequest([results], output_path=without))

    stats = alternate(
        {"build, with contexts": build_with, "build, without contexts": build_without},
        repeats=max(repeats // 2, 1),
    )
    print("Python, results file to written page:")
    print(format_stats(stats, unit="s"))
    print(f"page with contexts:    {size_breakdown(with_contexts.read_text('utf-8'))}")
    print(f"page without contexts: {size_breakdown(without.read_text('utf-8'))}")
    print("Chromium, the page with contexts (seconds from navigation start):")
    browser_figures(with_contexts, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--quick", action="store_true", help="1,000 questions and 2 repeats (overrides both)"
    )
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.questions, arguments.repeats = 1000, 2
    print(f"report_bench: {arguments.questions} questions; {machine()}")
    with tempfile.TemporaryDirectory() as folder:
        for profile in PROFILES:
            bench_profile(Path(folder) / profile, profile, arguments.questions, arguments.repeats)


if __name__ == "__main__":
    main()
