"""How fast and lean a judge run is, against the test fake with a configurable latency.

Prints, with the machine first:

1. throughput (questions/s) at --concurrency 1, 4, 16 and 64 with 0.2 s and 1 s of latency
   per call, and the speed-up over --concurrency 1 (one whole run per setting, as the
   latency dominates; the 1 s series uses fewer questions at low concurrency, said in the
   output), and whether every setting wrote the same results table;
   then the defaults' throughput: --concurrency 16 with no --delay (no spacing) against
   --concurrency 1 with no --delay (its default 0.5 s between call starts), same run, same
   latency;
2. the tool's own overhead per question at zero latency and no delay: a whole run against the
   same server, minus the same number of bare SDK calls (target: at most 2 ms);
3. the checkpoint's cost per question (append + fsync);
4. resume start-up for a 100,000-question checkpoint (target: under 2 s);
5. peak memory per question of a large run (target: a 1,000,000-question run under 1 GB);
6. the estimate against the actual cost on the repository's sample data.

The fake server runs in a process of its own so that it does not share the run's GIL. Run:

    .venv/bin/python benchmarks/judge_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY / "tests"))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

from timing import alternate, format_ratio, format_stats, machine  # noqa: E402


def _serve(ready: multiprocessing.Queue, latency: multiprocessing.Value) -> None:  # type: ignore[type-arg]
    from fakes.anthropic_server import FakeAnthropicServer

    with FakeAnthropicServer() as server:
        ready.put((server.base_url, server.expected_api_key))
        while True:
            server.response_delay_seconds = latency.value
            # Keep the recorded requests from growing without bound in long runs.
            with server._lock:
                server.requests.clear()
                server.all_requests.clear()
            time.sleep(0.2)


class FakeApi:
    """The fake API in its own process, with a latency the benchmark can change."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.latency = context.Value("d", 0.0)
        ready: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
        self.process = context.Process(target=_serve, args=(ready, self.latency), daemon=True)
        self.process.start()
        self.base_url, self.api_key = ready.get(timeout=60)

    def set_latency(self, seconds: float) -> None:
        self.latency.value = seconds
        time.sleep(0.5)  # the server picks it up within 0.2 s

    def close(self) -> None:
        self.process.terminate()
        self.process.join(10)


def write_inputs(directory: Path, count: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    rows = [
        (n, f"What is the limit for item {n}?", f"The limit is {n * 10} units.", f"{n * 10} units.")
        for n in range(1, count + 1)
    ]
    for name, header, column in (
        ("questions.csv", ["Question Number", "Question"], 1),
        ("ground_truth.csv", ["Question Number", "Ground Truth"], 2),
        ("rag_answers.csv", ["Question Number", "RAG Answer"], 3),
    ):
        with (directory / name).open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows([row[0], row[column]] for row in rows)


def run_evaluate(
    api: FakeApi, directory: Path, *arguments: str, default_delay: bool = False
) -> tuple[float, int]:
    """One ``rag-eval evaluate`` process: wall seconds and peak RSS in KB. ``--delay 0``
    unless ``default_delay`` (then no ``--delay``: the tool's default spacing)."""
    for leftover in directory.glob("Evaluation_Runs"):
        shutil.rmtree(leftover)
    environment = {
        **os.environ,
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": api.api_key,
        "RAG_EVAL_CHECKPOINT_DIR": str(directory / "checkpoints"),
        "RAG_EVAL_CACHE_DIR": str(directory / "cache"),
    }
    command = [
        sys.executable,
        "-c",
        "import resource, sys\n"
        "from rag_evaluator.cli.app import main\n"
        "try:\n    main()\n"
        "finally:\n"
        "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    sys.stderr.write(f'PEAK_RSS_KB {peak}\\n')\n",
        "evaluate",
        "--model",
        "haiku",
        "--yes",
        "--no-cache",
        "--seed",
        "1",
        *([] if default_delay else ["--delay", "0"]),
        *arguments,
    ]
    started = time.perf_counter()
    completed = subprocess.run(
        command, cwd=directory, env=environment, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(completed.stderr[-2000:])
    peak = next(
        int(line.split()[1])
        for line in completed.stderr.splitlines()
        if line.startswith("PEAK_RSS_KB")
    )
    return seconds, peak


def throughput(api: FakeApi, base: Path, quick: bool) -> None:
    # One run per setting: the fake's latency dominates each run, so repeats differ little
    # (the tool's own costs are measured alternated and repeated in parts 2 to 4).
    print("\n1. Throughput against the fake API (questions/s; a whole process per run)")
    for latency, counts in ((0.2, (2000, 2000, 2000, 2000)), (1.0, (200, 400, 2000, 2000))):
        if quick:
            counts = tuple(max(40, count // 20) for count in counts)
        api.set_latency(latency)
        results: dict[int, float] = {}
        tables: dict[int, tuple[int, str]] = {}
        for concurrency, count in zip((1, 4, 16, 64), counts, strict=True):
            directory = base / f"throughput-{latency}-{concurrency}"
            write_inputs(directory, count)
            seconds, _ = run_evaluate(api, directory, "--concurrency", str(concurrency))
            results[concurrency] = count / seconds
            tables[concurrency] = (count, results_table_text(directory))
            print(
                f"  latency {latency:g} s, --concurrency {concurrency:>2}: {count:>5} questions "
                f"in {seconds:7.1f} s = {results[concurrency]:7.1f} questions/s"
            )
        for concurrency in (4, 16, 64):
            print(
                f"  latency {latency:g} s: --concurrency {concurrency} is "
                f"{results[concurrency] / results[1]:.1f}x --concurrency 1"
            )
        by_count: dict[int, set[str]] = {}
        for count, table in tables.values():
            by_count.setdefault(count, set()).add(table)
        same = all(len(texts) == 1 for texts in by_count.values())
        print(
            f"  latency {latency:g} s: the results tables of runs over the same questions are "
            f"{'identical' if same else 'DIFFERENT'}"
        )


def default_delay_throughput(api: FakeApi, base: Path, quick: bool) -> None:
    """What a user gets without --delay: --concurrency 1 is spaced 0.5 s apart, a concurrent
    run is not spaced at all (the API's rate-limit signals pace it)."""
    latency = 0.2
    print(
        f"\n1b. Throughput with the default delay (no --delay given), latency {latency:g} s "
        "(questions/s; a whole process per run)"
    )
    api.set_latency(latency)
    counts = {1: 30, 16: 400} if quick else {1: 100, 16: 2000}
    results: dict[int, float] = {}
    for concurrency, count in counts.items():
        directory = base / f"default-delay-{concurrency}"
        write_inputs(directory, count)
        seconds, _ = run_evaluate(
            api, directory, "--concurrency", str(concurrency), default_delay=True
        )
        results[concurrency] = count / seconds
        print(
            f"  default delay, --concurrency {concurrency:>2}: {count:>5} questions in "
            f"{seconds:7.1f} s = {results[concurrency]:7.1f} questions/s"
        )
    print(
        f"  default delay: --concurrency 16 is {results[16] / results[1]:.1f}x "
        "--concurrency 1 (each with its default delay)"
    )


def results_table_text(directory: Path) -> str:
    """The run's results table without its summary rows (which hold timings and costs)."""
    (path,) = sorted((directory / "Evaluation_Runs").glob("*.csv"))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("#SUMMARY"))


def overhead(api: FakeApi, base: Path, quick: bool) -> None:
    print("\n2. The tool's own overhead per question (zero latency, no delay, one call each)")
    import anthropic

    from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT, build_user_message
    from rag_evaluator.families.judge.verdicts import VERDICT_SCHEMA

    api.set_latency(0.0)
    count = 200 if quick else 1000
    directory = base / "overhead"
    write_inputs(directory, count)
    client = anthropic.Anthropic(api_key=api.api_key, base_url=api.base_url, max_retries=0)

    def bare_sdk_calls() -> None:
        for number in range(1, count + 1):
            client.messages.create(
                model="claude-haiku-5-5",
                max_tokens=2000,
                system=DEFAULT_SYSTEM_PROMPT,
                messages=[
                    {
                        "role": "user",
                        "content": build_user_message(
                            f"What is the limit for item {number}?",
                            f"The limit is {number * 10} units.",
                            f"{number * 10} units.",
                        ),
                    }
                ],
                output_config={"format": {"type": "json_schema", "schema": VERDICT_SCHEMA}},
            )

    def whole_run() -> None:
        run_evaluate(api, directory)

    # Process start-up and imports are part of a run but not of its per-question cost:
    # measure a run of 1 question too and take it off.
    small = base / "overhead-one"
    write_inputs(small, 1)

    def one_question_run() -> None:
        run_evaluate(api, small)

    stats = alternate(
        {
            "rag-eval run": whole_run,
            "run of 1 question": one_question_run,
            "bare SDK": bare_sdk_calls,
        },
        repeats=3,
    )
    print(format_stats(stats, per=count / 1000, unit="ms per question (whole run)"))
    per_question = (stats["rag-eval run"].median - stats["run of 1 question"].median) / count
    sdk = stats["bare SDK"].median / count
    print(
        f"  per question: run {per_question * 1000:.2f} ms, bare SDK call {sdk * 1000:.2f} ms, "
        f"rag-eval's own overhead {max(0.0, per_question - sdk) * 1000:.2f} ms (target: <= 2 ms)"
    )
    client.close()


def checkpoint_cost(base: Path) -> None:
    print("\n3. Checkpoint cost per question (append + fsync)")
    from rag_evaluator.families.base import QuestionRecord
    from rag_evaluator.families.judge.family import JudgeFamily
    from rag_evaluator.families.judge.results import JudgeResult, Scores
    from rag_evaluator.inputs.records import TokenUsage
    from rag_evaluator.llm.checkpoint.store import CheckpointHeader, CheckpointWriter
    from rag_evaluator.llm.fingerprint import fingerprint_run

    families = {"judge": JudgeFamily("prompt", ("unclear",))}
    header = CheckpointHeader(
        fingerprint_run(b"q", b"g", b"a", "m", "p"), 1, list(range(2000)), "built-in", [], "now"
    )
    path = base / "checkpoint-cost.jsonl"
    records = [
        QuestionRecord(
            number,
            {
                "judge": JudgeResult(
                    scores=Scores(1, 1, 1),
                    summary="Correct and complete.",
                    usage=TokenUsage(900, 120),
                    calls=1,
                    cost_usd=0.0002,
                )
            },
        )
        for number in range(2000)
    ]

    def append_all() -> None:
        with CheckpointWriter.create(path, header, families) as writer:
            for record in records:
                writer.append(record)

    stats = alternate({"append + fsync": append_all}, repeats=3)
    print(format_stats(stats, per=len(records) / 1000, unit="ms per question"))


def resume_start_up(base: Path) -> None:
    print("\n4. Resume start-up of a 100,000-question checkpoint (target: under 2 s)")
    from rag_evaluator.families.base import QuestionRecord
    from rag_evaluator.families.judge.family import JudgeFamily
    from rag_evaluator.families.judge.results import JudgeResult, Scores
    from rag_evaluator.inputs.records import TokenUsage
    from rag_evaluator.llm.checkpoint.store import (
        CheckpointHeader,
        CheckpointWriter,
        load_checkpoint,
        record_to_json,
        rewrite_checkpoint,
    )
    from rag_evaluator.llm.fingerprint import fingerprint_run

    families = {"judge": JudgeFamily("prompt", ("unclear",))}
    count = 100_000
    path = base / "resume-100k.jsonl"
    header = CheckpointHeader(
        fingerprint_run(b"q", b"g", b"a", "m", "p"), 1, list(range(count)), "built-in", [], "now"
    )
    CheckpointWriter.create(path, header, families).close()
    record = QuestionRecord(
        0,
        {
            "judge": JudgeResult(
                scores=Scores(1, 1, 1),
                summary="Correct and complete: the answer states the same facts.",
                usage=TokenUsage(900, 120),
                calls=1,
                cost_usd=0.0002,
            )
        },
    )
    line = record_to_json(record, families)
    with path.open("a", encoding="utf-8") as handle:
        for number in range(count):
            line["question_number"] = number
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")

    def load() -> None:
        loaded = load_checkpoint(path, families)
        assert loaded is not None and len(loaded.results) == count

    def resume() -> None:
        loaded = load_checkpoint(path, families)
        assert loaded is not None
        CheckpointWriter.resume(loaded, families).close()

    def resume_rewriting() -> None:
        # Before issue 15 every resume rewrote and fsynced the whole file; now only a resume
        # that must upgrade format 1 does (a torn last line is cut off in place). The rewrite
        # now reads each record back from the file, so this costs more than it did then.
        loaded = load_checkpoint(path, families)
        assert loaded is not None
        rewrite_checkpoint(loaded, families)
        CheckpointWriter.resume(loaded, families).close()

    stats = alternate(
        {
            "load": load,
            "load + open for appending (now)": resume,
            "load + rewrite + open (before)": resume_rewriting,
        },
        repeats=3,
    )
    print(format_stats(stats, unit="s"))
    print(format_ratio(stats, "load + rewrite + open (before)", "load + open for appending (now)"))


def memory(api: FakeApi, base: Path, quick: bool) -> None:
    print("\n5. Peak memory of a run (zero latency, --concurrency 8)")
    api.set_latency(0.0)
    sizes = (2_000, 10_000) if quick else (5_000, 25_000)
    peaks = []
    for count in sizes:
        directory = base / f"memory-{count}"
        write_inputs(directory, count)
        seconds, peak = run_evaluate(api, directory, "--concurrency", "8")
        peaks.append(peak)
        log_bytes = sum(path.stat().st_size for path in directory.glob("rag_eval.log*"))
        print(
            f"  {count:>6} questions: peak RSS {peak / 1024:.0f} MB ({seconds:.0f} s); "
            f"rag_eval.log {log_bytes / count:.0f} bytes per question"
        )
    per_question = (peaks[1] - peaks[0]) * 1024 / (sizes[1] - sizes[0])
    print(
        f"  growth: {per_question / 1024:.2f} KB per question; 1,000,000 questions would peak "
        f"at about {(peaks[0] * 1024 + per_question * (1_000_000 - sizes[0])) / 1024**3:.2f} GB"
    )


def estimate_against_actual(api: FakeApi, base: Path) -> None:
    print("\n6. Estimate against actual cost on the sample data (the fake's token counts)")
    api.set_latency(0.0)
    directory = base / "sample"
    directory.mkdir()
    for name in ("questions.csv", "ground_truth.csv"):
        shutil.copy(REPOSITORY / name, directory / name)
    shutil.copytree(REPOSITORY / "RAG_JSON_Files", directory / "RAG_JSON_Files")
    subprocess.run(
        [sys.executable, "-m", "rag_evaluator", "convert"], cwd=directory, capture_output=True
    )
    for model in ("haiku", "sonnet"):
        run_evaluate(api, directory, "--model", model)
        results = sorted((directory / "Evaluation_Runs").glob("*.csv"))[-1]
        summary = {
            row[0].split(": ", 2)[1]: row[0].split(": ", 2)[2]
            for row in csv.reader(results.open(encoding="utf-8"))
            if row and row[0].startswith("#SUMMARY:")
        }
        print(
            f"  {model}: estimated {summary['Estimated Cost']}, actual {summary['Cost']} "
            "(the fake writes short replies: real replies cost more)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer questions, a rough look")
    parser.add_argument(
        "--only",
        choices=[
            "throughput",
            "default-delay",
            "overhead",
            "checkpoint",
            "resume",
            "memory",
            "estimate",
        ],
    )
    arguments = parser.parse_args()
    print(f"judge_bench on {machine()}")
    base = Path(tempfile.mkdtemp(prefix="judge-bench-"))
    api = FakeApi()
    try:
        steps = {
            "throughput": lambda: throughput(api, base, arguments.quick),
            "default-delay": lambda: default_delay_throughput(api, base, arguments.quick),
            "overhead": lambda: overhead(api, base, arguments.quick),
            "checkpoint": lambda: checkpoint_cost(base),
            "resume": lambda: resume_start_up(base),
            "memory": lambda: memory(api, base, arguments.quick),
            "estimate": lambda: estimate_against_actual(api, base),
        }
        for name, step in steps.items():
            if arguments.only in (None, name):
                step()
    finally:
        api.close()
        shutil.rmtree(base, ignore_errors=True)
    _ = resource  # peak memory is read inside each run's own process


if __name__ == "__main__":
    main()
