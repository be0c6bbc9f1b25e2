"""Throughput of the offline metric families, and what each part of the embedding pass saves.

Every comparison runs its cases alternated in one process (A B A B ...), repeats them and
prints min / median / max with ``benchmarks/timing.py``; quote medians, with the machine line.

1. Lexical, overlap and retrieval on synthetic rows (rows/s).
2. The lexical family with keyword_coverage computed once per row (the run today) against the
   same metrics computed one library function at a time, where answer_completeness computes
   keyword_coverage again (the run before issue 15's fix).
3. The two savings of the semantic family's one embedding pass, apart:
   - duplicate-text removal: one batched pass over every text of every row, against one
     batched pass over the distinct texts;
   - batching across rows: one encode call per row, against one batched pass, over the same
     texts.
   Measured on rows whose contexts are their own (nothing shared across rows, the fair
   case), and on rows drawing their contexts from a pool shared by all rows (the earlier
   benchmark's data, where removing duplicates looks much bigger than it is on real runs).
4. Long contexts: read whole (the model reads the first 256 word pieces) against cut into
   passages the model reads whole (what the run does since issue 8 item 2).
5. The whole semantic family (embeddings + BERTScore) and model loading.
6. Overlap matching (--match overlap, context_overlap): ROUGE-L recall of every golden
   chunk against every retrieved chunk, as rouge-score's RougeScorer.score per pair
   (tokenizing both texts and a pure-Python LCS table each time) against what the run does
   (each chunk tokenized once, rapidfuzz's LCS on token codes); then the retrieval family
   with exact and overlap matching on --overlap-rows questions of 10 retrieved and 3
   golden chunks.
7. ``--metrics overlap`` (or the families of ``--offline-families``) as whole processes on
   ``--offline-rows`` realistic rows: rag-eval with its inputs held and streamed into the
   spool, against sacreBLEU and rouge-score called directly (``bare_overlap_metrics.py``,
   overlap only): wall, CPU and peak RSS.

Never asserted in tests; run it by hand:

    .venv/bin/python benchmarks/metrics_bench.py [--rows 10000] [--semantic-rows 60]
        [--repeats 5] [--parts 1,2,3,4,5,6,7] [--overlap-rows 10000] [--offline-rows 20000]
        [--offline-families overlap,lexical] [--before DIR] [--offline-cases streamed]
        [--no-warm-up]

``--before DIR`` (a folder holding an older ``rag_evaluator/``) runs that copy too in part 7.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from timing import (
    Stats,
    alternate,
    format_ratio,
    format_stats,
    machine,
    run_measured,
    user_environment,
)

from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.metrics import MetricOptions, compute_offline_metrics, split_sentences
from rag_evaluator.offline import lexical
from rag_evaluator.offline.embeddings import load_text_embedder
from rag_evaluator.offline.registry import LEXICAL_METRICS, LexicalInputs

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


def synthetic_items(
    count: int, seed: int = 7, shared_pool: bool = True, context_sentences: int = 1
) -> list[EvaluationItem]:
    """Rows shaped like real RAG output: short answers and five ranked chunks.

    With ``shared_pool`` the chunks come from a pool of max(50, count / 20) chunks shared by
    every row (so most chunk texts repeat across rows); without it every row has its own
    chunks. ``context_sentences`` sets a chunk's length (22 words per sentence).
    """
    rng = random.Random(seed)

    def chunk(label: str) -> str:
        body = " ".join(_sentence(rng, 22) for _ in range(context_sentences))
        return f"Chunk {label}: {body}"

    pool = [chunk(str(index)) for index in range(max(50, count // 20))] if shared_pool else []
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
        if shared_pool:
            contexts = rng.sample(pool, 5)
            relevant = [contexts[rng.randint(0, 4)], rng.choice(pool)]
        else:
            contexts = [chunk(f"{number}.{rank}") for rank in range(1, 6)]
            relevant = [contexts[rng.randint(0, 4)], chunk(f"{number}.golden")]
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


def alternate_wall_and_cpu(
    cases: dict[str, Callable[[], object]], repeats: int, warmup: int = 1
) -> tuple[dict[str, Stats], dict[str, Stats]]:
    """``timing.alternate`` over ``cases``, returning wall-clock and CPU-time statistics.

    The CPU time of this process (all its threads) counts the work done and hardly moves
    when other processes load the machine, where wall-clock time can move 5x between
    rounds; the two together say what a user waits and what the work costs.
    """
    cpu: dict[str, list[float]] = {name: [] for name in cases}

    def measured(name: str, run: Callable[[], object]) -> Callable[[], object]:
        def wrapper() -> object:
            start = time.process_time()
            result = run()
            cpu[name].append(time.process_time() - start)
            return result

        return wrapper

    wall = alternate({name: measured(name, run) for name, run in cases.items()}, repeats, warmup)
    return wall, {name: Stats(name, tuple(values[warmup:])) for name, values in cpu.items()}


def print_wall_and_cpu(
    wall: dict[str, Stats], cpu: dict[str, Stats], ratios: Sequence[tuple[str, str, str]]
) -> None:
    """Both statistics, and each (title, slower, faster) ratio in both."""
    print("  wall-clock:")
    print(format_stats(wall))
    print("  CPU time of the process:")
    print(format_stats(cpu))
    for title, slower, faster in ratios:
        if title:
            print(f"  {title}:")
        print(f"  wall {format_ratio(wall, slower, faster).strip()}")
        print(f"  CPU  {format_ratio(cpu, slower, faster).strip()}")


def heading(text: str) -> None:
    print(f"\n{text}")


def rows_per_second(stats_median: float, rows: int) -> str:
    rate = rows / stats_median
    return f"{rate:,.0f} rows/s" if rate >= 100 else f"{rate:.3g} rows/s"


def bench_families(rows: int, repeats: int) -> None:
    items = synthetic_items(rows)
    options = MetricOptions(k=5)
    families = {
        "lexical": ["lexical"],
        "overlap": ["overlap"],
        "retrieval (exact)": ["retrieval"],
        "quality": ["quality"],
        "lexical,overlap,retrieval": ["lexical", "overlap", "retrieval"],
    }
    cases: dict[str, Callable[[], object]] = {
        name: (lambda chosen=chosen: compute_offline_metrics(items, chosen, options))
        for name, chosen in families.items()
    }
    wall, cpu = alternate_wall_and_cpu(cases, repeats)
    heading(f"1. Offline families on {rows:,} rows (seconds per run)")
    print_wall_and_cpu(wall, cpu, [])
    for name in cases:
        print(
            f"  {name}: median {rows_per_second(wall[name].median, rows)} wall-clock, "
            f"{rows_per_second(cpu[name].median, rows)} of CPU"
        )


def _lexical_row_each_function(item: EvaluationItem) -> list[float | None]:
    """The eight lexical metrics one library function at a time: answer_completeness computes
    keyword_coverage again, as the run did before issue 15."""
    answer, truth = item.rag_answer, item.ground_truth
    return [
        lexical.exact_match(answer, truth),
        lexical.keyword_coverage(answer, truth),
        lexical.number_match(answer, truth),
        lexical.answer_completeness(answer, truth),
        lexical.citation_quality(answer),
        lexical.dont_know(answer),
        lexical.list_coverage(answer, truth),
        lexical.fact_score(answer, item.required_facts or []),
    ]


def _lexical_row_as_the_run(item: EvaluationItem) -> list[float | None]:
    row = LexicalInputs.of(item)
    return [definition.compute(row) for definition in LEXICAL_METRICS.values()]


def bench_lexical_waste(rows: int, repeats: int) -> None:
    items = synthetic_items(rows)
    once = [_lexical_row_as_the_run(item) for item in items]
    twice = [_lexical_row_each_function(item) for item in items]
    assert once == twice, "both ways must give the same scores"
    before, now = "coverage computed twice (before)", "coverage once per row (now)"
    wall, cpu = alternate_wall_and_cpu(
        {
            before: lambda: [_lexical_row_each_function(item) for item in items],
            now: lambda: [_lexical_row_as_the_run(item) for item in items],
        },
        repeats,
    )
    heading(f"2. Lexical family, keyword_coverage once per row ({rows:,} rows)")
    print_wall_and_cpu(wall, cpu, [("", before, now)])


def row_texts(item: EvaluationItem) -> list[str]:
    """What a per-row implementation embeds for one row's semantic metrics."""
    return [
        item.question,
        item.rag_answer,
        item.ground_truth,
        *(item.contexts or []),
        *split_sentences(item.rag_answer),
    ]


def bench_embedding_savings(rows: int, repeats: int, shared_pool: bool) -> None:
    embedder = load_text_embedder(None)
    items = synthetic_items(rows, seed=11, shared_pool=shared_pool)
    every_row = [row_texts(item) for item in items]
    every_text = [text for texts in every_row for text in texts]
    distinct = list(dict.fromkeys(every_text))
    # Batching apart: per-row calls over the same distinct texts (each text in the call of the
    # first row holding it), against one pass over them.
    seen: set[str] = set()
    first_seen: list[list[str]] = []
    for texts in every_row:
        new = [text for text in dict.fromkeys(texts) if text not in seen]
        seen.update(new)
        if new:
            first_seen.append(new)

    def per_row(batches: Sequence[Sequence[str]]) -> Callable[[], object]:
        return lambda: [embedder.encode(texts) for texts in batches]

    cases: dict[str, Callable[[], object]] = {
        "one pass, every text": lambda: embedder.encode(every_text),
        "one pass, distinct texts": lambda: embedder.encode(distinct),
        "per-row calls, every text": per_row(every_row),
        "per-row calls, distinct texts": per_row(first_seen),
    }
    wall, cpu = alternate_wall_and_cpu(cases, repeats)
    pool = "contexts from a pool shared by all rows" if shared_pool else "contexts of their own"
    heading(
        f"3{'b' if shared_pool else 'a'}. Embedding {rows} rows with {pool}: "
        f"{len(distinct):,} distinct of {len(every_text):,} texts"
    )
    print_wall_and_cpu(
        wall,
        cpu,
        [
            (
                "duplicate-text removal (same batching)",
                "one pass, every text",
                "one pass, distinct texts",
            ),
            ("", "per-row calls, every text", "per-row calls, distinct texts"),
            (
                "batching across rows (same texts)",
                "per-row calls, distinct texts",
                "one pass, distinct texts",
            ),
            ("", "per-row calls, every text", "one pass, every text"),
            (
                "both (a naive per-row implementation against the run)",
                "per-row calls, every text",
                "one pass, distinct texts",
            ),
        ],
    )


def bench_long_contexts(rows: int, repeats: int) -> None:
    embedder = load_text_embedder(None)
    # 12 sentences of 22 words: about 330 word pieces, past the model's 254.
    items = synthetic_items(rows, seed=13, shared_pool=False, context_sentences=12)
    contexts = list(dict.fromkeys(text for item in items for text in item.contexts or []))
    pieces = embedder.count_word_pieces(contexts)
    passages = sum(len(embedder.passages(context)) for context in contexts)
    whole = "read whole, cut at 254 word pieces (before)"
    wall, cpu = alternate_wall_and_cpu(
        {
            whole: lambda: embedder.embed_all(contexts),
            "in passages (now)": lambda: embedder.embed_all((), contexts),
        },
        repeats,
    )
    heading(
        f"4. {len(contexts)} long contexts (median {sorted(pieces)[len(pieces) // 2]} word "
        f"pieces) embedded whole vs in {passages} passages"
    )
    print_wall_and_cpu(wall, cpu, [("", "in passages (now)", whole)])


_LOAD_MODELS = (
    "from rag_evaluator.offline.embeddings import load_bert_scorer, load_text_embedder; "
    "load_text_embedder(None); load_bert_scorer(None)"
)


def bench_semantic_family(rows: int, repeats: int) -> None:
    items = synthetic_items(rows, seed=17, shared_pool=False)
    # A new process each time, as a user's run starts: imports (torch, transformers) and
    # both models loaded from disk.
    loading = alternate(
        {
            "new process loading MiniLM + BERTScore model": lambda: subprocess.run(
                [sys.executable, "-c", _LOAD_MODELS], check=True, capture_output=True
            )
        },
        repeats=repeats,
        warmup=1,
    )
    name = "semantic (embeddings + BERTScore)"
    wall, cpu = alternate_wall_and_cpu(
        {name: lambda: compute_offline_metrics(items, ["semantic"], MetricOptions())}, repeats
    )
    heading(f"5. Semantic family on {rows} rows (models loaded), and model loading")
    print_wall_and_cpu(wall, cpu, [])
    print(f"  wall-clock median {rows_per_second(wall[name].median, rows)}")
    print(format_stats(loading))


def overlap_items(count: int, seed: int = 11) -> list[EvaluationItem]:
    """Rows with 10 retrieved chunks of ~66 words and 3 golden chunks of ~44 words, each
    golden chunk a stretch of some retrieved chunk cut at other boundaries (or absent)."""
    rng = random.Random(seed)
    items: list[EvaluationItem] = []
    for number in range(1, count + 1):
        retrieved = [" ".join(_sentence(rng, 22) for _ in range(3)) for _ in range(10)]
        golden = []
        for _ in range(3):
            source = rng.choice(retrieved).split()
            start = rng.randint(0, 20)
            golden.append(" ".join(source[start : start + 44]) + " " + _sentence(rng, 4))
        items.append(
            EvaluationItem(number, "Q?", "A.", "A.", contexts=retrieved, relevant_contexts=golden)
        )
    return items


def _recalls_rouge_score(items: Sequence[EvaluationItem]) -> list[float]:
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer(["rougeL"])
    return [
        scorer.score(golden, retrieved)["rougeL"].recall
        for item in items
        for retrieved in item.contexts or []
        for golden in item.relevant_contexts or []
    ]


def _recalls_tokenized_once(items: Sequence[EvaluationItem]) -> list[float]:
    from rag_evaluator.offline.chunk_overlap import ChunkTokens, rouge_l_recall

    tokens = ChunkTokens()
    recalls: list[float] = []
    for item in items:
        golden = [tokens.encode(chunk) for chunk in item.relevant_contexts or []]
        for retrieved in item.contexts or []:
            encoded = tokens.encode(retrieved)
            recalls += [rouge_l_recall(chunk, encoded) for chunk in golden]
    return recalls


def bench_overlap_matching(pair_rows: int, rows: int, repeats: int) -> None:
    sample = overlap_items(pair_rows)
    slow, fast = _recalls_rouge_score(sample), _recalls_tokenized_once(sample)
    assert all(abs(a - b) < 1e-12 for a, b in zip(slow, fast, strict=True)), "same recalls"
    before = "RougeScorer.score per pair"
    now = "tokenized once + rapidfuzz LCS (now)"
    wall, cpu = alternate_wall_and_cpu(
        {
            before: lambda: _recalls_rouge_score(sample),
            now: lambda: _recalls_tokenized_once(sample),
        },
        repeats,
    )
    heading(f"6. Overlap matching: ROUGE-L recall of {len(fast):,} chunk pairs ({pair_rows} rows)")
    print_wall_and_cpu(wall, cpu, [("", before, now)])
    pairs_per_second = len(fast) / cpu[now].median
    print(f"  now: {pairs_per_second:,.0f} pairs/s of CPU (median)")

    items = overlap_items(rows)
    cases: dict[str, Callable[[], object]] = {
        f"retrieval --match {match}": (
            lambda match=match: compute_offline_metrics(
                items, ["retrieval"], MetricOptions(k=5, match=match)
            )
        )
        for match in ("exact", "overlap")
    }
    wall, cpu = alternate_wall_and_cpu(cases, max(2, repeats // 2))
    heading(f"6b. The retrieval family on {rows:,} rows of 10 retrieved and 3 golden chunks")
    print_wall_and_cpu(wall, cpu, [])
    for name in cases:
        print(f"  {name}: median {rows_per_second(wall[name].median, rows)} wall-clock")


def _process_figures(
    command: list[str], folder: Path, spool_mb: str, older: Path | None = None
) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS (KB) of ``command`` run in ``folder``; with
    ``older``, the copy of the package in that folder."""
    environment = user_environment(older, RAG_EVAL_SPOOL_MB=spool_mb, TMPDIR=str(folder))
    shutil.rmtree(folder / "Evaluation_Runs", ignore_errors=True)
    measured = run_measured(command, folder, environment)
    return measured.wall, measured.cpu, measured.peak_kb


# Part 7's baseline per family: the libraries called directly (overlap only; lexical is the
# tool's own code, so it is compared with the tool before).
_BARE_BASELINES = {"overlap": "bare_overlap_metrics.py"}


# Part 7's cases: rag-eval with its inputs held and streamed, and the libraries directly.
OFFLINE_CASES = ("held", "streamed", "libraries")


def bench_offline_processes(
    rows: int,
    repeats: int,
    families: Sequence[str] = ("overlap",),
    before: Path | None = None,
    *,
    kinds: Sequence[str] = OFFLINE_CASES,
    warm_up: bool = True,
) -> None:
    heading(
        f"7. --metrics {' / '.join(families)} as whole processes on {rows:,} realistic rows (a "
        "600-character answer, a 300-character ground truth, five 1,500-character contexts): "
        "rag-eval, its inputs held and streamed into the spool"
        + (", and the package in --before" if before is not None else "")
        + ", against sacreBLEU and rouge-score called directly (bare_overlap_metrics.py) for "
        f"overlap; alternated, {repeats} round(s){' after a warm-up' if warm_up else ''}, "
        "medians"
    )
    # The judge benchmark's data and its measured rag-eval process.
    from judge_bench import MEASURED_CLI, write_realistic_inputs_quickly

    folder = Path(tempfile.mkdtemp(prefix="metrics-bench-"))
    try:
        write_realistic_inputs_quickly(folder, rows)
        for family in families:
            tool = [*MEASURED_CLI, "evaluate", "--metrics", family]
            cases = _offline_cases(tool, family, before, kinds)
            figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name in cases}
            for round_number in range(repeats + warm_up):
                for name, (command, spool_mb, older) in cases.items():
                    measured = _process_figures(command, folder, spool_mb, older)
                    if round_number or not warm_up:
                        figures[name].append(measured)
            print(f"  --metrics {family}:")
            _print_offline_processes(figures, rows)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _offline_cases(
    tool: list[str], family: str, before: Path | None, kinds: Sequence[str]
) -> dict[str, tuple[list[str], str, Path | None]]:
    """Part 7's processes by name: (command, RAG_EVAL_SPOOL_MB, the older package or None)."""
    cases: dict[str, tuple[list[str], str, Path | None]] = {}
    for kind, spool_mb in (("held", "1000000"), ("streamed", "0")):
        if kind in kinds:
            cases[f"rag-eval, {kind}"] = (tool, spool_mb, None)
            if before is not None:
                cases[f"before, {kind}"] = (tool, spool_mb, before)
    if "libraries" in kinds and family in _BARE_BASELINES:
        bare = Path(__file__).resolve().parent / _BARE_BASELINES[family]
        cases["libraries directly"] = ([sys.executable, str(bare), "."], "0", None)
    return cases


def _print_offline_processes(figures: dict[str, list[tuple[float, float, int]]], rows: int) -> None:
    medians = {
        name: tuple(statistics.median(run[index] for run in runs) for index in range(3))
        for name, runs in figures.items()
    }
    bare = medians.get("libraries directly")
    for name, (wall, cpu, peak) in medians.items():
        ratio = f" ({cpu / bare[1]:.2f}x the libraries' CPU)" if bare is not None else ""
        print(
            f"    {name:<19} wall {wall:6.1f} s, CPU {cpu:6.1f} s{ratio}, "
            f"peak RSS {peak / 1024:.0f} MB, {rows / wall:,.0f} rows/s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--semantic-rows", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--overlap-rows", type=int, default=10_000)
    parser.add_argument("--offline-rows", type=int, default=20_000, help="part 7's rows")
    parser.add_argument(
        "--offline-families", default="overlap", help="part 7's families, e.g. overlap,lexical"
    )
    parser.add_argument(
        "--before", type=Path, help="part 7: a folder holding an older rag_evaluator/, run too"
    )
    parser.add_argument(
        "--offline-cases", default=",".join(OFFLINE_CASES), help="part 7's cases, e.g. streamed"
    )
    parser.add_argument(
        "--warm-up", action=argparse.BooleanOptionalAction, default=True, help="part 7"
    )
    parser.add_argument("--parts", default="1,2,3,4,5,6,7", help="which parts to run, e.g. 3,4")
    arguments = parser.parse_args()
    parts = {part.strip() for part in arguments.parts.split(",")}
    print(f"Machine: {machine()}")
    if "1" in parts:
        bench_families(arguments.rows, arguments.repeats)
    if "2" in parts:
        bench_lexical_waste(arguments.rows, arguments.repeats)
    if "3" in parts:
        bench_embedding_savings(arguments.semantic_rows, arguments.repeats, shared_pool=False)
        bench_embedding_savings(arguments.semantic_rows, arguments.repeats, shared_pool=True)
    if "4" in parts:
        bench_long_contexts(arguments.semantic_rows // 3, arguments.repeats)
    if "5" in parts:
        bench_semantic_family(arguments.semantic_rows, arguments.repeats)
    if "6" in parts:
        bench_overlap_matching(40, arguments.overlap_rows, arguments.repeats)
    if "7" in parts:
        bench_offline_processes(
            arguments.offline_rows,
            min(arguments.repeats, 3),
            [family.strip() for family in arguments.offline_families.split(",")],
            arguments.before.resolve() if arguments.before is not None else None,
            kinds=[kind.strip() for kind in arguments.offline_cases.split(",")],
            warm_up=arguments.warm_up,
        )


if __name__ == "__main__":
    main()
