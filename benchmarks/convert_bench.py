"""How fast convert matches 10,000 answers to 10,000 questions, against a difflib baseline.

Generates a question set and one RAG entry per question whose question text is a
copy with realistic damage (case and spacing, typos, dropped or swapped words,
small rewordings), some of it replaced by unrelated questions. Then:

1. times the whole ``convert`` (questions.csv and a RAG JSON file in a temporary folder
   -> rag_answers.csv), then ``assign_entries`` alone, the vectorised rapidfuzz matching
   that is most of it;
2. times the original tool's approach, ``difflib.SequenceMatcher.ratio`` of one answer
   against every question, on a few answers and extrapolates to all of them; on those
   answers it also checks, pair by pair, that difflib never scores above rapidfuzz
   (``fuzz.ratio`` counts a longest common subsequence, difflib a greedy one);
3. measures on a large sample of answers how often the two agree on match / no match at the
   threshold, and on which question. Because difflib <= rapidfuzz for every pair
   (checked in step 2), difflib only has to be run on the questions rapidfuzz puts at
   or above the threshold, which makes a sample of thousands affordable.

Run: ``.venv/bin/python benchmarks/convert_bench.py`` (about a minute and a half on two
cores). Options: ``--size``, ``--naive-sample``, ``--agreement-sample``, ``--seed``.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import json
import logging
import os
import random
import string
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process

from rag_evaluator.core.matching import (
    DEFAULT_THRESHOLD,
    Confidence,
    assign_entries,
    normalise_question,
)
from rag_evaluator.core.rag_json_shapes import RagEntry
from rag_evaluator.pipeline.convert import convert

TEMPLATES = (
    "How many {unit} of {benefit} do {group} get in {place}?",
    "What is the {policy} policy for {group} working in {place}?",
    "Who approves {request} requests for {group} on the {team} team?",
    "When does {benefit} start for {group} who joined in {month}?",
    "Can {group} claim {expense} when travelling to {place} for the {team} team?",
    "What is the deadline for submitting {request} forms in {month}?",
    "Where do {group} in {place} report a {incident}?",
    "How much is the {expense} allowance for {group} on {team} projects in {place}?",
    "Which {policy} rules apply to {group} during {month} in the {place} office?",
    "Does the {policy} policy cover {expense} for {group} who work remotely from {place}?",
)
SLOTS = {
    "unit": ["days", "weeks", "hours", "sessions", "credits"],
    "benefit": [
        "paid time off",
        "parental leave",
        "health coverage",
        "dental cover",
        "gym membership",
        "sick leave",
        "learning budget",
        "pension matching",
    ],
    "group": [
        "new hires",
        "contractors",
        "interns",
        "part-time staff",
        "managers",
        "remote employees",
        "engineers",
        "sales representatives",
    ],
    "place": [
        "Lisbon",
        "Toronto",
        "Berlin",
        "Singapore",
        "Austin",
        "Nairobi",
        "Melbourne",
        "Warsaw",
        "Osaka",
        "Bogota",
    ],
    "policy": ["travel", "overtime", "security", "expense", "equipment", "remote work", "on-call"],
    "request": ["overtime", "vacation", "equipment", "training", "relocation", "visa"],
    "team": ["platform", "payments", "mobile", "data", "support", "design", "research"],
    "month": ["January", "March", "May", "July", "September", "November"],
    "expense": ["meals", "taxis", "hotel upgrades", "conference fees", "home internet", "parking"],
    "incident": ["lost badge", "phishing email", "stolen laptop", "data leak", "injury"],
}
UNRELATED = (
    "What is the airspeed velocity of an unladen swallow?",
    "Summarise the plot of a novel about a lighthouse keeper.",
    "Translate good morning into Portuguese and Japanese.",
    "Which planet in the solar system has the most moons?",
    "Write a haiku about a quiet office on a Friday.",
    "What year did the first transatlantic telegraph cable work?",
)
SYNONYMS = {
    "How many": "How much",
    "What is": "What's",
    "do": "can",
    "claim": "expense",
    "report": "flag",
    "working": "based",
    "Which": "What",
    "start": "begin",
}


def make_questions(count: int, rng: random.Random) -> list[str]:
    questions: list[str] = []
    seen: set[str] = set()
    while len(questions) < count:
        template = rng.choice(TEMPLATES)
        text = template.format(**{name: rng.choice(values) for name, values in SLOTS.items()})
        if text not in seen:
            seen.add(text)
            questions.append(text)
    return questions


def typo(text: str, rng: random.Random, edits: int) -> str:
    characters = list(text)
    for _ in range(edits):
        position = rng.randrange(len(characters))
        kind = rng.choice(("substitute", "delete", "insert", "transpose"))
        if kind == "substitute":
            characters[position] = rng.choice(string.ascii_lowercase)
        elif kind == "delete" and len(characters) > 1:
            del characters[position]
        elif kind == "insert":
            characters.insert(position, rng.choice(string.ascii_lowercase))
        elif position + 1 < len(characters):
            characters[position], characters[position + 1] = (
                characters[position + 1],
                characters[position],
            )
    return "".join(characters)


def reword(text: str, rng: random.Random) -> str:
    words = text.split()
    change = rng.choice(("drop", "swap", "synonym", "filler"))
    if change == "drop" and len(words) > 4:
        del words[rng.randrange(1, len(words) - 1)]
    elif change == "swap" and len(words) > 3:
        position = rng.randrange(len(words) - 1)
        words[position], words[position + 1] = words[position + 1], words[position]
    elif change == "synonym":
        joined = " ".join(words)
        for old, new in SYNONYMS.items():
            if old in joined:
                return joined.replace(old, new, 1)
    else:
        words.insert(rng.randrange(len(words)), rng.choice(("please", "exactly", "currently")))
    return " ".join(words)


def perturb(question: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.25:
        return question
    if roll < 0.40:
        return (
            "  " + question.upper().replace(" ", "  ") if rng.random() < 0.5 else question.lower()
        )
    if roll < 0.60:
        return typo(question, rng, rng.randint(1, 6))
    if roll < 0.75:
        # Heavy damage lands around the threshold, where scorers can disagree.
        return typo(reword(question, rng), rng, rng.randint(4, 14))
    if roll < 0.90:
        return reword(question, rng)
    return rng.choice(UNRELATED) + f" (ticket {rng.randint(1000, 9999)})"


def difflib_ratio(answer: str, question: str) -> float:
    """The original tool's score: ``SequenceMatcher(None, answer, question).ratio()``, 0-100."""
    return difflib.SequenceMatcher(None, answer, question).ratio() * 100


def time_convert(
    folder: Path, question_map: dict[int, str], entries: list[RagEntry]
) -> tuple[float, int]:
    """Seconds the convert pipeline takes on these questions and entries, and rows written."""
    questions_path = folder / "questions.csv"
    with questions_path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question Number", "Question"])
        writer.writerows(sorted(question_map.items()))
    json_dir = folder / "RAG_JSON_Files"
    json_dir.mkdir()
    records = [{"question": entry.question, "answer": entry.answer} for entry in entries]
    (json_dir / "bench.json").write_text(json.dumps({"results": records}), encoding="utf-8")
    # Thousands of unmatched-entry warnings would be timed as terminal output otherwise.
    logging.disable(logging.WARNING)
    try:
        start = time.perf_counter()
        report = convert(json_dir, questions_path, folder / "rag_answers.csv")
        seconds = time.perf_counter() - start
    finally:
        logging.disable(logging.NOTSET)
    return seconds, len(report.matched)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--naive-sample", type=int, default=10)
    parser.add_argument("--agreement-sample", type=int, default=4_000)
    parser.add_argument("--seed", type=int, default=2024)
    arguments = parser.parse_args()
    rng = random.Random(arguments.seed)
    threshold = DEFAULT_THRESHOLD
    size = arguments.size

    questions = make_questions(size, rng)
    targets = list(range(size))
    rng.shuffle(targets)
    entries = [
        RagEntry("bench.json", f"item {index + 1}", perturb(questions[target], rng), "answer")
        for index, target in enumerate(targets)
    ]
    question_map = {number: text for number, text in enumerate(questions, start=1)}
    print(f"{size:,} questions, {len(entries):,} answers, {os.cpu_count()} CPU(s)")

    with tempfile.TemporaryDirectory() as folder:
        convert_seconds, rows_written = time_convert(Path(folder), question_map, entries)
    print(
        f"1. rag-eval convert end to end (read CSV and JSON, match, write CSV): "
        f"{convert_seconds:.2f} s -> {rows_written:,} rows"
    )

    start = time.perf_counter()
    assignment = assign_entries(entries, question_map, threshold)
    rapidfuzz_seconds = time.perf_counter() - start
    levels = Counter(match.confidence for match in assignment.matched)
    print(
        f"   its matching alone (rapidfuzz cdist, all cores): {rapidfuzz_seconds:.2f} s -> "
        f"{len(assignment.matched):,} rows ("
        + ", ".join(f"{level.value} {levels[level]:,}" for level in Confidence if levels[level])
        + f"), {len(assignment.unmatched):,} unmatched, "
        f"{len(assignment.lost_claims):,} lost to a better match"
    )

    normalised_questions = [normalise_question(text) for text in questions]
    normalised_answers = [normalise_question(entry.question or "") for entry in entries]

    naive_indices = rng.sample(range(len(entries)), arguments.naive_sample)
    start = time.perf_counter()
    naive_scores = [
        [difflib_ratio(normalised_answers[index], question) for question in normalised_questions]
        for index in naive_indices
    ]
    naive_seconds = (time.perf_counter() - start) / len(naive_indices) * len(entries)
    print(
        f"2. difflib SequenceMatcher.ratio on every pair, one core: {len(naive_indices)} "
        f"answers timed, {naive_seconds:,.0f} s ({naive_seconds / 3600:.1f} h) extrapolated "
        f"to {len(entries):,}"
    )
    print(f"   speed ratio: rapidfuzz matching is {naive_seconds / rapidfuzz_seconds:,.0f}x faster")
    fast_matrix = process.cdist(
        [normalised_answers[index] for index in naive_indices],
        normalised_questions,
        scorer=fuzz.ratio,
        dtype=np.float64,
        workers=-1,
    )
    slow_matrix = np.array(naive_scores)
    excess = slow_matrix - fast_matrix
    print(
        f"   difflib above rapidfuzz on {int((excess > 1e-9).sum())} of {excess.size:,} pairs "
        f"(beyond float rounding); rapidfuzz above difflib on "
        f"{int((excess < -1e-9).sum()):,} pairs, by {float(-excess.min()):.1f} at most"
    )

    start = time.perf_counter()
    sample = sorted(rng.sample(range(len(entries)), min(arguments.agreement_sample, size)))
    sample_answers = [normalised_answers[index] for index in sample]
    decisions: Counter[tuple[bool, bool]] = Counter()
    same_question = both_matched = 0
    block = 1000
    for block_start in range(0, len(sample_answers), block):
        texts = sample_answers[block_start : block_start + block]
        scores = process.cdist(
            texts,
            normalised_questions,
            scorer=fuzz.ratio,
            score_cutoff=threshold - 1e-6,
            dtype=np.float64,
            workers=-1,
        )
        # Rounded as the tool rounds, so an exact 85 is not lost to float noise.
        scores = np.round(scores, 9)
        for row, text in enumerate(texts):
            candidates = np.flatnonzero(scores[row] >= threshold)
            fast_match = candidates.size > 0
            slow = [(difflib_ratio(text, normalised_questions[i]), -i) for i in candidates]
            best_slow = max(slow, default=(0.0, 0))
            slow_match = round(best_slow[0], 9) >= threshold
            decisions[fast_match, slow_match] += 1
            if fast_match and slow_match:
                both_matched += 1
                same_question += int(scores[row].argmax()) == -best_slow[1]
    agreeing = decisions[True, True] + decisions[False, False]
    print(
        f"3. agreement at threshold {threshold:g} on {len(sample):,} answers "
        f"({time.perf_counter() - start:.0f} s): match/no match agree on {agreeing:,} "
        f"({agreeing / len(sample):.2%}); same question on {same_question:,} of the "
        f"{both_matched:,} both matched"
    )
    for (fast_match, slow_match), count in sorted(decisions.items(), reverse=True):
        print(
            f"   rapidfuzz {'match' if fast_match else 'no match'}, "
            f"difflib {'match' if slow_match else 'no match'}: {count:,}"
        )


if __name__ == "__main__":
    main()
