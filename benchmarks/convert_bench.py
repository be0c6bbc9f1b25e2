"""How fast convert matches 10,000 answers to 10,000 questions, against the best plain difflib.

Generates a question set and one RAG entry per question whose question text is a copy
with realistic damage (case and spacing, typos, dropped or swapped words, small
rewordings), some of it replaced by unrelated questions. Every timing goes through
``benchmarks/timing.py``: cases alternate in one process (A B A B ...), repeat, and print
min / median / max. Then:

1. times the whole ``convert`` (questions.csv and a RAG JSON file in a temporary folder ->
   rag_answers.csv), and ``assign_entries`` alone (the matching, all cores);
2. compares the tool's matching with the best plain-difflib implementation on the same
   work: both get the same exact-text shortcut (an answer equal to a question after
   normalisation scores 100 without scoring, a repeated text is scored once), so only the
   distinct answers that need scoring are timed, a random sample of them against every
   question. difflib is used the way ``difflib.get_close_matches`` uses it: one
   ``SequenceMatcher`` per question (``set_seq2``, so its index of the question is built
   once), ``real_quick_ratio`` and ``quick_ratio`` (upper bounds) rejecting a pair before
   ``ratio``, and the best score so far raising the bar. Its decisions (best question at or
   above 0.85, lowest number on a tie, the original tool's ``SequenceMatcher(None, answer,
   question)``) are compared with the tool's. Printed twice: one core each (the fair
   ratio; the process is pinned to one CPU, so rapidfuzz's threads share it), and all
   cores each (rapidfuzz's threads; difflib in one process per core);
3. checks on a few answers, pair by pair against every question, that difflib never scores
   above rapidfuzz (``fuzz.ratio`` counts a longest common subsequence, difflib a greedy
   one), with the plain ``SequenceMatcher(None, answer, question).ratio()``;
4. measures on a large sample of answers how often the two agree on match / no match at
   the threshold, and on which question. Because difflib <= rapidfuzz for every pair
   (step 3), difflib only has to be run on the questions rapidfuzz puts at or above the
   threshold, which makes a sample of thousands affordable.

Run: ``.venv/bin/python benchmarks/convert_bench.py`` (about five minutes on two cores).
Options: ``--size``, ``--speed-sample``, ``--repeats``, ``--pair-sample``,
``--agreement-sample``, ``--seed``.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import json
import logging
import os
import random
import resource
import string
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from multiprocessing import Pool
from multiprocessing.pool import Pool as PoolType
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process
from timing import Stats, alternate, format_ratio, format_stats, machine

from rag_evaluator.convert.matching import (
    DEFAULT_THRESHOLD,
    Confidence,
    assign_entries,
    best_candidates,
    normalise_question,
)
from rag_evaluator.convert.run import convert
from rag_evaluator.inputs.shapes import RagEntry

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


def difflib_best(
    texts: Sequence[str], questions: Sequence[str], threshold: float = DEFAULT_THRESHOLD
) -> list[tuple[int, float] | None]:
    """Each text's best question at or above ``threshold`` with difflib, at its fastest.

    The original tool's score, ``SequenceMatcher(None, answer, question).ratio()``, computed
    the way ``difflib.get_close_matches`` computes it: one matcher per question
    (``set_seq2`` builds its index of the question once), and the cheap upper bounds
    ``real_quick_ratio`` and ``quick_ratio`` rejecting a pair before ``ratio``. The bar is
    the threshold, then the best score so far (a later question must beat it: a tie keeps
    the lower question number, as in the tool). Returns (question index, score 0-100) or
    ``None``.
    """
    # A hair under the threshold, as the tool compares scores rounded to 9 decimals.
    bars = [threshold / 100 - 1e-9] * len(texts)
    best_index = [-1] * len(texts)
    matcher = difflib.SequenceMatcher()
    for index, question in enumerate(questions):
        matcher.set_seq2(question)
        for row, text in enumerate(texts):
            bar = bars[row]
            matcher.set_seq1(text)
            if best_index[row] < 0:
                if matcher.real_quick_ratio() < bar or matcher.quick_ratio() < bar:
                    continue
                score = matcher.ratio()
                if score < bar:
                    continue
            else:
                if matcher.real_quick_ratio() <= bar or matcher.quick_ratio() <= bar:
                    continue
                score = matcher.ratio()
                if score <= bar:
                    continue
            bars[row] = score
            best_index[row] = index
    results: list[tuple[int, float] | None] = []
    for index, score in zip(best_index, bars, strict=True):
        rounded = round(score * 100, 9)
        results.append((index, rounded) if index >= 0 and rounded >= threshold else None)
    return results


_POOL_QUESTIONS: list[str] = []


def _set_pool_questions(questions: list[str]) -> None:
    global _POOL_QUESTIONS
    _POOL_QUESTIONS = questions


def _difflib_slice(task: tuple[list[str], int, int]) -> list[tuple[int, float] | None]:
    texts, start, stop = task
    found = difflib_best(texts, _POOL_QUESTIONS[start:stop])
    return [None if item is None else (start + item[0], item[1]) for item in found]


def difflib_best_on_all_cores(
    pool: PoolType, texts: list[str], questions: int, workers: int
) -> list[tuple[int, float] | None]:
    """``difflib_best`` with the questions shared out over one process per core.

    Sharing out the questions, not the texts, keeps each question's ``set_seq2`` done
    once. Per text the best of the slices wins, the earlier slice on a tie, as in one pass.
    """
    size = -(-questions // workers)
    tasks = [(texts, start, min(start + size, questions)) for start in range(0, questions, size)]
    best: list[tuple[int, float] | None] = [None] * len(texts)
    for part in pool.map(_difflib_slice, tasks):
        for row, found in enumerate(part):
            if found is not None and (best[row] is None or found[1] > best[row][1]):
                best[row] = found
    return best


@contextmanager
def one_cpu() -> Iterator[None]:
    """Pin this process to one CPU (every thread it has, and so those they start), then restore."""
    saved = os.sched_getaffinity(0)
    threads = [int(name) for name in os.listdir("/proc/self/task")]
    for thread in threads:
        os.sched_setaffinity(thread, {min(saved)})
    try:
        yield
    finally:
        for thread in threads:
            with suppress(ProcessLookupError):
                os.sched_setaffinity(thread, saved)


def cpu_seconds() -> float:
    """User + system CPU time of this process, all its threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def counting_cpu(run: Callable[[], object], spent: list[float]) -> Callable[[], object]:
    """``run``, appending the CPU time of each call to ``spent`` (wall clock is timing.py's)."""

    def counted() -> object:
        start = cpu_seconds()
        try:
            return run()
        finally:
            spent.append(cpu_seconds() - start)

    return counted


def rapidfuzz_decisions(
    texts: list[str], questions: list[str], threshold: float = DEFAULT_THRESHOLD
) -> list[tuple[int, float] | None]:
    """The tool's matching of ``texts``: its best question, kept when at the threshold."""
    found = best_candidates(texts, questions)
    return [
        (best.index, best.score) if best is not None and best.score >= threshold else None
        for best in found
    ]


def time_convert(folder: Path, question_map: dict[int, str], entries: list[RagEntry]) -> Stats:
    """The convert pipeline on these questions and entries (files in, CSV out), timed."""
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
        stats = alternate(
            {"convert": lambda: convert(json_dir, questions_path, folder / "rag_answers.csv")},
            repeats=3,
            warmup=0,
        )
    finally:
        logging.disable(logging.NOTSET)
    return stats["convert"]


def pinned(run: Callable[[], object]) -> Callable[[], object]:
    """``run`` on one CPU."""

    def on_one_cpu() -> object:
        with one_cpu():
            return run()

    return on_one_cpu


def compare_speed(
    sample: list[str],
    questions: list[str],
    repeats: int,
    to_score: int,
    tool_full: dict[str, Stats],
) -> None:
    """Step 2: the tool against the best plain difflib on the same sample, one core and all."""
    tool, baseline = "rapidfuzz (rag-eval)", "difflib (best plain)"
    workers = len(os.sched_getaffinity(0))
    tool_found = rapidfuzz_decisions(sample, questions)
    baseline_found = difflib_best(sample, questions)
    pairs = list(zip(tool_found, baseline_found, strict=True))
    same = sum(
        (a is None and b is None) or (a is not None and b is not None and a[0] == b[0])
        for a, b in pairs
    )
    only_tool = sum(a is not None and b is None for a, b in pairs)
    print(
        f"2. speed against the best plain difflib: {len(sample)} of the {to_score:,} answers "
        f"that need scoring, each against all {len(questions):,} questions"
    )
    print(
        f"   decisions at {DEFAULT_THRESHOLD:g}: the same question or the same no-match on "
        f"{same} of {len(sample)}; rapidfuzz matches where difflib does not on {only_tool} "
        "(rapidfuzz >= difflib, see step 3)"
    )
    with Pool(workers, initializer=_set_pool_questions, initargs=(questions,)) as pool:
        assert difflib_best_on_all_cores(pool, sample, len(questions), workers) == baseline_found
        cpu: dict[str, list[float]] = {tool: [], baseline: []}
        one = alternate(
            {
                tool: pinned(counting_cpu(lambda: best_candidates(sample, questions), cpu[tool])),
                baseline: pinned(
                    counting_cpu(lambda: difflib_best(sample, questions), cpu[baseline])
                ),
            },
            repeats=repeats,
            warmup=0,
        )
        every = alternate(
            {
                tool: lambda: best_candidates(sample, questions),
                baseline: lambda: difflib_best_on_all_cores(pool, sample, len(questions), workers),
            },
            repeats=repeats,
        )
        # difflib's per-question set-up (set_seq2) is paid once per call whatever the
        # number of answers: timed alone, so the extrapolation scales only the rest.
        set_up = alternate(
            {
                "one core": pinned(lambda: difflib_best([], questions)),
                "all cores": lambda: difflib_best_on_all_cores(pool, [], len(questions), workers),
            },
            repeats=repeats,
        )
    print("   one core each (the fair ratio; the process pinned to one CPU), wall clock:")
    print(format_stats(one))
    print(format_ratio(one, baseline, tool))
    # CPU time is what a busy machine (other jobs on the same cores) disturbs least.
    cpu_stats = {name: Stats(name, tuple(spent)) for name, spent in cpu.items()}
    print("   the same runs in CPU time:")
    print(format_stats(cpu_stats, unit="CPU s"))
    print(format_ratio(cpu_stats, baseline, tool))
    print(f"   all {workers} cores each (rapidfuzz's threads; difflib in {workers} processes):")
    print(format_stats(every))
    print(format_ratio(every, baseline, tool))
    print(f"   at full size, {to_score:,} answers to score (medians; difflib extrapolated):")
    for label, sample_stats, set_up_stats, tool_stats in (
        ("one core", one, set_up["one core"], tool_full["one core"]),
        ("all cores", every, set_up["all cores"], tool_full["all cores"]),
    ):
        per_answer = (sample_stats[baseline].median - set_up_stats.median) / len(sample)
        difflib_seconds = set_up_stats.median + per_answer * to_score
        print(
            f"   {label}: difflib about {difflib_seconds:,.0f} s, the tool's matching "
            f"{tool_stats.median:.2f} s: {difflib_seconds / tool_stats.median:,.0f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--speed-sample", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pair-sample", type=int, default=5)
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
    normalised_questions = [normalise_question(text) for text in questions]
    normalised_answers = [normalise_question(entry.question or "") for entry in entries]
    # The exact-text shortcut both sides get: equal after normalisation scores 100 without
    # scoring, and a text repeated by several answers is scored once.
    exact = set(normalised_questions)
    to_score = list(dict.fromkeys(text for text in normalised_answers if text not in exact))
    print(machine())
    print(
        f"{size:,} questions, {len(entries):,} answers: "
        f"{sum(text in exact for text in normalised_answers):,} equal a question after "
        f"normalisation, {len(to_score):,} distinct others need scoring"
    )

    with tempfile.TemporaryDirectory() as folder:
        convert_stats = time_convert(Path(folder), question_map, entries)
    print("1. rag-eval convert end to end (read CSV and JSON, match, write CSV):")
    print(format_stats({"convert": convert_stats}))

    def match_all() -> object:
        return assign_entries(entries, question_map, threshold)

    matching_stats = alternate(
        {"all cores": match_all, "one core": pinned(match_all)}, repeats=3, warmup=0
    )
    assignment = assign_entries(entries, question_map, threshold)
    levels = Counter(match.confidence for match in assignment.matched)
    print(
        "   its matching alone (assign_entries): "
        f"{len(assignment.matched):,} rows ("
        + ", ".join(f"{level.value} {levels[level]:,}" for level in Confidence if levels[level])
        + f"), {len(assignment.unmatched):,} unmatched, "
        f"{len(assignment.lost_claims):,} lost to a better match"
    )
    print(format_stats(matching_stats))

    speed_sample = random.Random(arguments.seed).sample(to_score, arguments.speed_sample)
    compare_speed(
        speed_sample,
        normalised_questions,
        arguments.repeats,
        len(to_score),
        matching_stats,
    )

    pair_sample = rng.sample(to_score, arguments.pair_sample)
    start = time.perf_counter()
    slow_matrix = np.array(
        [
            [difflib_ratio(text, question) for question in normalised_questions]
            for text in pair_sample
        ]
    )
    fast_matrix = process.cdist(
        pair_sample, normalised_questions, scorer=fuzz.ratio, dtype=np.float64, workers=-1
    )
    excess = slow_matrix - fast_matrix
    print(
        f"3. every pair of {len(pair_sample)} answers and all questions "
        f"({time.perf_counter() - start:.0f} s): difflib above rapidfuzz on "
        f"{int((excess > 1e-9).sum())} of {excess.size:,} pairs (beyond float rounding); "
        f"rapidfuzz above difflib on {int((excess < -1e-9).sum()):,} pairs, by "
        f"{float(-excess.min()):.1f} at most"
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
        f"4. agreement at threshold {threshold:g} on {len(sample):,} answers "
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
