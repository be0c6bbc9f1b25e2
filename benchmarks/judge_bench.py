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
2b. per question, as whole processes: `rag-eval evaluate` against a bare `anthropic` SDK loop
   (benchmarks/bare_sdk_judge.py) sending the same judge requests to the same server,
   alternated, on generated realistic texts (five contexts of ~1,500 characters, a
   600-character answer, a 300-character ground truth): CPU and wall per question (the slope
   between two run sizes), peak RSS, start to first call (target: CPU at most 0.5 ms over);
2c. start to the first judge call at 100,000 short questions, fresh and resuming (target:
   under 2 s);
3. the checkpoint's cost per question (append, fsynced within a second);
4. resume start-up for a 100,000-question checkpoint (target: under 2 s);
5. peak memory per question of a large run (target: a 1,000,000-question run under 1 GB);
5b. the same with realistic texts, the inputs held against streamed into the on-disk spool,
   as three CSVs and as one JSON Lines dataset;
5c. (only with ``--only million``) 1,000,000 realistic questions streamed: start to the first
   call and peak RSS by then (writes about 17 GB to the temporary folder);
5d. the same as 5b for --batch runs: one window, small windows and the default windows;
6. the estimate against the actual cost on the repository's sample data.

The fake server runs in a process of its own so that it does not share the run's GIL. Run:

    .venv/bin/python benchmarks/judge_bench.py [--quick] [--only PART] [--before DIR]

``--before DIR`` (a folder holding an older ``rag_evaluator/``) runs that copy too, alternated
with the package as it is, in ``per-question`` and ``first-call``.
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY / "tests"))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

from timing import (  # noqa: E402
    alternate,
    format_ratio,
    format_stats,
    machine,
    reported_figure,
    run_measured,
    user_environment,
)

# The first-call clock: asked to arm, then armed (the calls recorded before forgotten).
_ARM = -1.0
_ARMED = -2.0


def _serve(
    ready: multiprocessing.Queue,  # type: ignore[type-arg]
    latency: multiprocessing.Value,  # type: ignore[type-arg]
    first_call: multiprocessing.Value,  # type: ignore[type-arg]
) -> None:
    from fakes.anthropic_server import FakeAnthropicServer

    with FakeAnthropicServer() as server:
        ready.put((server.base_url, server.expected_api_key))
        cleared = time.monotonic()
        while True:
            server.response_delay_seconds = latency.value
            # Asked to arm (-1): forget the calls recorded so far (a stopped run's last calls
            # may arrive after it), then armed (-2): note when the first Messages call of the
            # next run arrives, to within the 2 ms this loop sleeps.
            if first_call.value == _ARM:
                with server._lock:
                    server.requests.clear()
                first_call.value = _ARMED
            elif first_call.value == _ARMED and server.requests:
                first_call.value = time.time()
            if time.monotonic() - cleared > 0.2:
                # Keep the recorded requests from growing without bound in long runs.
                with server._lock:
                    if first_call.value >= 0:
                        server.requests.clear()
                    server.all_requests.clear()
                cleared = time.monotonic()
            time.sleep(0.002 if first_call.value < 0 else 0.05)


class FakeApi:
    """The fake API in its own process, with a latency the benchmark can change."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.latency = context.Value("d", 0.0)
        self.first_call = context.Value("d", 0.0)
        ready: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
        self.process = context.Process(
            target=_serve, args=(ready, self.latency, self.first_call), daemon=True
        )
        self.process.start()
        self.base_url, self.api_key = ready.get(timeout=60)

    def set_latency(self, seconds: float) -> None:
        self.latency.value = seconds
        time.sleep(0.5)  # the server picks it up within 0.2 s

    def arm_first_call(self) -> None:
        """Note the time of the next Messages call (read it with ``first_call_time``)."""
        self.first_call.value = _ARM
        deadline = time.monotonic() + 10
        while self.first_call.value == _ARM:  # the server's loop notices within 0.05 s
            if time.monotonic() > deadline:
                raise RuntimeError("the fake API did not arm its first-call clock")
            time.sleep(0.005)

    def first_call_time(self) -> float | None:
        """``time.time()`` of the first Messages call since ``arm_first_call``, if any."""
        return self.first_call.value if self.first_call.value > 0 else None

    def close(self) -> None:
        self.process.terminate()
        self.process.join(10)


# `rag-eval` as a process that reports its CPU seconds and peak RSS when it ends.
MEASURED_CLI = [
    sys.executable,
    "-c",
    "import resource, sys\n"
    "from rag_evaluator.cli.app import main\n"
    "try:\n    main()\n"
    "finally:\n"
    "    usage = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    sys.stderr.write(f'CPU_S {usage.ru_utime + usage.ru_stime}\\n')\n"
    "    sys.stderr.write(f'PEAK_RSS_KB {usage.ru_maxrss}\\n')\n",
]


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


_VOCABULARY = (
    "the policy covers claims filed within ninety days of the incident and requires a signed "
    "form from the account holder together with receipts for every expense listed in section "
    "four unless the regional office grants an exception in writing after reviewing the case "
    "history of the customer including earlier payments refunds and open disputes"
)
_WORDS = _VOCABULARY.split()


def _text(rng: random.Random, characters: int) -> str:
    """Sentences of ordinary words, about ``characters`` long (a realistic RAG text)."""
    words: list[str] = []
    length = 0
    while length < characters:
        sentence = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 20)))
        words.append(sentence.capitalize() + ".")
        length += len(sentence) + 2
    return " ".join(words)[:characters]


def write_realistic_inputs(directory: Path, count: int) -> int:
    """The issue's realistic texts: per question five retrieved contexts of ~1,500 characters,
    a 600-character answer and a 300-character ground truth. Returns the bytes of text."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(26)
    files = {
        name: (directory / name).open("w", newline="", encoding="utf-8")
        for name in ("questions.csv", "ground_truth.csv", "rag_answers.csv")
    }
    writers = {name: csv.writer(handle) for name, handle in files.items()}
    writers["questions.csv"].writerow(["Question Number", "Question"])
    writers["ground_truth.csv"].writerow(["Question Number", "Ground Truth"])
    writers["rag_answers.csv"].writerow(["Question Number", "RAG Answer", "Contexts"])
    text_bytes = 0
    for number in range(1, count + 1):
        question = f"What does the policy say about case {number}? " + _text(rng, 40)
        ground_truth = _text(rng, 300)
        answer = _text(rng, 600)
        contexts = [_text(rng, 1500) for _ in range(5)]
        writers["questions.csv"].writerow([number, question])
        writers["ground_truth.csv"].writerow([number, ground_truth])
        writers["rag_answers.csv"].writerow([number, answer, json.dumps(contexts)])
        text_bytes += len(question) + len(ground_truth) + len(answer) + sum(map(len, contexts))
    for handle in files.values():
        handle.close()
    return text_bytes


def run_environment(
    api: FakeApi,
    directory: Path,
    older: Path | None = None,
    variables: dict[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a measured run in ``directory``: the fake API, its own checkpoint
    and cache folders, ``older`` (a copy of the package) first on the path, ``variables``."""
    return user_environment(
        older,
        ANTHROPIC_BASE_URL=api.base_url,
        ANTHROPIC_API_KEY=api.api_key,
        RAG_EVAL_CHECKPOINT_DIR=str(directory / "checkpoints"),
        RAG_EVAL_CACHE_DIR=str(directory / "cache"),
        **(variables or {}),
    )


def run_evaluate(
    api: FakeApi,
    directory: Path,
    *arguments: str,
    default_delay: bool = False,
    variables: dict[str, str] | None = None,
) -> tuple[float, int]:
    """One ``rag-eval evaluate`` process: wall seconds and peak RSS in KB. ``--delay 0``
    unless ``default_delay`` (then no ``--delay``: the tool's default spacing); ``variables``
    are added to its environment."""
    for leftover in directory.glob("Evaluation_Runs"):
        shutil.rmtree(leftover)
    shutil.rmtree(directory / "checkpoints", ignore_errors=True)
    environment = run_environment(api, directory, variables=variables)
    command = [
        *MEASURED_CLI,
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
    measured = run_measured(command, directory, environment)
    return measured.wall, measured.peak_kb


@dataclass(frozen=True)
class ProcessFigures:
    """One whole process: wall and CPU seconds, peak RSS, seconds from start to first call."""

    wall: float
    cpu: float
    peak_kb: int
    first_call: float | None


def measure_process(
    api: FakeApi, command: list[str], directory: Path, older: Path | None = None
) -> ProcessFigures:
    """Run ``command`` in ``directory`` against the fake (fresh checkpoint and cache folders);
    with ``older``, the copy of the package in that folder."""
    for leftover in ("Evaluation_Runs", "checkpoints", "cache"):
        shutil.rmtree(directory / leftover, ignore_errors=True)
    environment = run_environment(api, directory, older)
    api.arm_first_call()
    started_at = time.time()
    measured = run_measured(command, directory, environment)
    first = api.first_call_time()
    return ProcessFigures(
        measured.wall,
        measured.cpu,
        measured.peak_kb,
        None if first is None else first - started_at,
    )


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


def per_question(api: FakeApi, base: Path, quick: bool, before: Path | None = None) -> None:
    """The tool against a bare SDK loop, both whole processes sending the same judge requests
    for the realistic texts, alternated; per question = the slope between two run sizes, so
    that start-up is not spread over the questions."""
    sizes = (50, 250) if quick else (200, 2000)
    rounds = 3 if quick else 5
    print(
        f"\n2b. Per-question overhead, whole processes (realistic texts, zero latency, "
        f"--concurrency 1, no delay, response cache on; {sizes[0]} and {sizes[1]} questions, "
        f"{rounds} rounds, medians)"
    )
    api.set_latency(0.0)
    folders = {size: base / f"per-question-{size}" for size in sizes}
    for size, folder in folders.items():
        text = write_realistic_inputs(folder, size)
    print(f"  text per question: {text / sizes[-1] / 1024:.1f} KB")
    cases = {"rag-eval evaluate": TOOL_JUDGE, "bare SDK loop": BARE_SDK_JUDGE}
    if before is not None:
        cases["rag-eval before"] = TOOL_JUDGE
    figures: dict[tuple[str, int], list[ProcessFigures]] = {}
    for round_number in range(rounds + 1):
        for name, command in cases.items():
            older = before if name == "rag-eval before" else None
            for size, folder in folders.items():
                measured = measure_process(api, command, folder, older)
                if round_number:  # the first round warms the disk cache and the server
                    figures.setdefault((name, size), []).append(measured)
    _print_per_question(figures, cases, sizes)


def _print_per_question(
    figures: dict[tuple[str, int], list[ProcessFigures]],
    cases: dict[str, list[str]],
    sizes: tuple[int, int],
) -> None:
    small, large = sizes
    slopes: dict[str, tuple[float, float]] = {}
    for name in cases:

        def median(attribute: str, size: int, name: str = name) -> float:
            return statistics.median(getattr(run, attribute) for run in figures[(name, size)])

        cpu = (median("cpu", large) - median("cpu", small)) / (large - small)
        wall = (median("wall", large) - median("wall", small)) / (large - small)
        slopes[name] = (cpu, wall)
        first = [run.first_call for run in figures[(name, large)] if run.first_call is not None]
        print(
            f"  {name:<18} per question: CPU {cpu * 1000:.2f} ms, wall {wall * 1000:.2f} ms; "
            f"{large} questions: wall {median('wall', large):.2f} s, "
            f"CPU {median('cpu', large):.2f} s, peak RSS {median('peak_kb', large) / 1024:.0f} MB, "
            f"start to first call {statistics.median(first):.2f} s"
        )
    (tool_cpu, tool_wall), (sdk_cpu, sdk_wall) = (
        slopes["rag-eval evaluate"],
        slopes["bare SDK loop"],
    )
    print(
        f"  rag-eval's own cost per question: CPU {(tool_cpu - sdk_cpu) * 1000:.2f} ms, wall "
        f"{(tool_wall - sdk_wall) * 1000:.2f} ms (target: CPU at most 0.5 ms); "
        f"tool / SDK per question: CPU {tool_cpu / sdk_cpu:.2f}x, wall {tool_wall / sdk_wall:.2f}x"
    )


def seconds_to_first_call(
    api: FakeApi,
    directory: Path,
    *,
    fresh: bool,
    older: Path | None = None,
    variables: dict[str, str] | None = None,
) -> float:
    """Start ``rag-eval evaluate`` in ``directory``, stop it (Ctrl-C, a clean stop that keeps
    the checkpoint) once its first judge call arrives: the seconds from start to that call.
    ``fresh``: with no checkpoint or cache (else the last run's, to resume); ``older``: the
    copy of the package in that folder."""
    if fresh:
        for leftover in ("Evaluation_Runs", "checkpoints", "cache"):
            shutil.rmtree(directory / leftover, ignore_errors=True)
    environment = run_environment(api, directory, older, variables)
    seconds, _ = until_first_call(api, directory, environment)
    return seconds


TOOL_JUDGE = [*MEASURED_CLI, "evaluate", "--model", "haiku", "--yes", "--seed", "1", "--delay", "0"]
BARE_SDK_JUDGE = [
    sys.executable,
    str(REPOSITORY / "benchmarks" / "bare_sdk_judge.py"),
    ".",
    "haiku",
]


def until_first_call(
    api: FakeApi, directory: Path, environment: dict[str, str], command: list[str] = TOOL_JUDGE
) -> tuple[float, str]:
    """Run ``command`` (``rag-eval evaluate``) in ``directory`` and stop it (Ctrl-C, a clean
    stop that keeps the checkpoint) once its first judge call arrives: the seconds from start
    to that call, and what it wrote to stderr (its CPU and peak RSS last)."""
    api.arm_first_call()
    started_at = time.time()
    # A file, not a pipe: a run writing more than a pipe holds before its first call would
    # block on it.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            command,
            cwd=directory,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        while api.first_call_time() is None and process.poll() is None:
            time.sleep(0.01)
        first = api.first_call_time()
        process.send_signal(signal.SIGINT)
        process.wait(600)
        stderr.seek(0)
        written = stderr.read()
    if first is None:
        raise RuntimeError(f"the run ended (exit {process.returncode}) before any call")
    return first - started_at, written


def first_call(api: FakeApi, base: Path, quick: bool, before: Path | None = None) -> None:
    count = 20_000 if quick else 100_000
    rounds = 2 if quick else 5
    print(
        f"\n2c. Start to the first judge call, {count:,} short questions (fresh, then resuming "
        f"the stopped run; {rounds} rounds, medians)"
    )
    api.set_latency(0.0)
    directory = base / f"first-call-{count}"
    write_inputs(directory, count)
    versions: dict[str, Path | None] = {"": None}
    if before is not None:
        versions["before: "] = before  # alternated with the package as it is, round by round
    times: dict[str, list[float]] = {}
    for _ in range(rounds):
        for label, older in versions.items():
            for fresh in (True, False):
                seconds = seconds_to_first_call(api, directory, fresh=fresh, older=older)
                times.setdefault(f"{label}{'fresh' if fresh else 'resuming'}", []).append(seconds)
        # The baseline: a hand-written SDK loop reading the same three files, then calling.
        environment = run_environment(api, directory)
        seconds, _ = until_first_call(api, directory, environment, BARE_SDK_JUDGE)
        times.setdefault("bare SDK loop", []).append(seconds)
    for name, values in times.items():
        shown = ", ".join(f"{value:.2f}" for value in values)
        print(
            f"  {name:<16} median {statistics.median(values):.2f} s ({shown}) (target: under 2 s)"
        )


def checkpoint_cost(base: Path) -> None:
    print(
        "\n3. Checkpoint cost per question: each line fsynced within a second (the default) "
        "against an fsync per line"
    )
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

    def append_all(sync_interval: float) -> None:
        with CheckpointWriter.create(path, header, families, sync_interval=sync_interval) as writer:
            for record in records:
                writer.append(record)

    stats = alternate(
        {
            "fsynced within a second": lambda: append_all(1.0),
            "an fsync per line": lambda: append_all(0.0),
        },
        repeats=3,
    )
    print(format_stats(stats, per=len(records) / 1000, unit="ms per question"))
    print(format_ratio(stats, "an fsync per line", "fsynced within a second"))


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


def memory_realistic(api: FakeApi, base: Path, quick: bool) -> None:
    sizes = (2_000, 8_000) if quick else (10_000, 40_000)
    print(
        "\n5b. Peak memory of whole runs with realistic texts (8.5 KB per question; zero "
        "latency, --concurrency 8): the inputs held against streamed into the spool, as three "
        "CSVs, as one JSON Lines --dataset and as one JSON document --dataset"
    )
    api.set_latency(0.0)
    modes = {  # RAG_EVAL_SPOOL_MB, the inputs
        "held": ("1000000", ()),
        "streamed": ("0", ()),
        "dataset held": ("1000000", ("--dataset", "dataset.jsonl")),
        "dataset streamed": ("0", ("--dataset", "dataset.jsonl")),
        "document held": ("1000000", ("--dataset", "dataset.json")),
        "document streamed": ("0", ("--dataset", "dataset.json")),
    }
    peaks: dict[str, list[int]] = {mode: [] for mode in modes}
    for count in sizes:
        directory = base / f"memory-realistic-{count}"
        text_bytes = write_realistic_inputs(directory, count)
        write_dataset_of_inputs(directory)
        for mode, (megabytes, inputs) in modes.items():
            seconds, peak = run_evaluate(
                api,
                directory,
                "--concurrency",
                "8",
                *inputs,
                variables={"RAG_EVAL_SPOOL_MB": megabytes},
            )
            peaks[mode].append(peak)
            print(
                f"  {count:>6} questions ({text_bytes / 1024**2:.0f} MB of text), {mode:<16}: "
                f"peak RSS {peak / 1024:.0f} MB ({seconds:.0f} s)"
            )
        if count == sizes[-1]:
            for mode in ("held", "streamed"):
                seconds = seconds_to_first_call(
                    api, directory, fresh=True, variables={"RAG_EVAL_SPOOL_MB": modes[mode][0]}
                )
                print(f"  {count:>6} questions, {mode:<16}: start to first call {seconds:.1f} s")
    for mode, (small, large) in peaks.items():
        per_question = (large - small) * 1024 / (sizes[1] - sizes[0])
        million = (small * 1024 + per_question * (1_000_000 - sizes[0])) / 1024**3
        print(
            f"  {mode:<16} growth {per_question / 1024:.2f} KB per question; 1,000,000 "
            f"questions would peak at about {million:.2f} GB (target: under 1 GB)"
        )


def memory_batch(api: FakeApi, base: Path, quick: bool) -> None:
    sizes = (2_000, 8_000) if quick else (10_000, 40_000)
    small_window = "4" if quick else "32"
    print(
        "\n5d. Peak memory of whole --batch runs with realistic texts (zero latency, "
        "--batch-poll 0.05, the inputs streamed into the spool): every question in one window, "
        f"windows of {small_window} MB of texts and requests (RAG_EVAL_BATCH_WINDOW_MB), and the "
        "default windows"
    )
    api.set_latency(0.0)
    modes = {
        "one window": "1000000",
        f"{small_window} MB windows": small_window,
        "default windows": None,
    }
    peaks: dict[str, list[int]] = {mode: [] for mode in modes}
    for count in sizes:
        directory = base / f"memory-realistic-{count}"
        write_realistic_inputs(directory, count)
        for mode, megabytes in modes.items():
            variables = {"RAG_EVAL_SPOOL_MB": "0"}
            if megabytes is not None:
                variables["RAG_EVAL_BATCH_WINDOW_MB"] = megabytes
            seconds, peak = run_evaluate(
                api, directory, "--batch", "--batch-poll", "0.05", variables=variables
            )
            peaks[mode].append(peak)
            print(
                f"  {count:>6} questions, {mode:<16}: "
                f"peak RSS {peak / 1024:.0f} MB ({seconds:.0f} s)"
            )
    growth = {
        mode: (large - small) * 1024 / (sizes[1] - sizes[0])
        for mode, (small, large) in peaks.items()
    }
    for mode in list(modes)[:2]:
        print(f"  {mode:<16} growth {growth[mode] / 1024:.2f} KB per question")
    # Past a window, a run grows by what the small windows show (a window's texts are let go).
    million = (
        peaks["default windows"][1] * 1024
        + growth[f"{small_window} MB windows"] * (1_000_000 - sizes[1])
    ) / 1024**3
    print(
        f"  1,000,000 questions with the default windows would peak at about {million:.2f} GB "
        "(target: under 1 GB)"
    )


def write_dataset_of_inputs(directory: Path) -> None:
    """The three CSVs of ``directory`` as one JSON Lines dataset, ``dataset.jsonl``, and as
    one JSON document, ``dataset.json`` (the records under "testCases", as deepeval saves a
    run): a record per question (question, ground_truth, answer, contexts), read and written
    a row at a time."""
    names = ("questions.csv", "ground_truth.csv", "rag_answers.csv")
    handles = [(directory / name).open(newline="", encoding="utf-8") for name in names]
    with (
        (directory / "dataset.jsonl").open("w", encoding="utf-8") as lines,
        (directory / "dataset.json").open("w", encoding="utf-8") as document,
    ):
        readers = [csv.reader(handle) for handle in handles]
        for reader in readers:
            next(reader)  # the header
        document.write('{"testRunId": "bench", "testCases": [\n')
        rows = zip(*readers, strict=True)
        for index, ((number, question), (_, truth), (_, answer, contexts)) in enumerate(rows):
            record = {
                "id": int(number),
                "question": question,
                "ground_truth": truth,
                "answer": answer,
                "contexts": json.loads(contexts),
            }
            lines.write(json.dumps(record) + "\n")
            document.write(("," if index else "") + json.dumps(record, indent=1) + "\n")
        document.write("]}\n")
    for handle in handles:
        handle.close()


def write_realistic_inputs_quickly(directory: Path, count: int) -> int:
    """``write_realistic_inputs``'s shapes for a million questions in minutes: each question
    its own, the texts drawn from a pool of generated ones. Returns the bytes of text."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(26)
    truths = [_text(rng, 300) for _ in range(500)]
    answers = [_text(rng, 600) for _ in range(500)]
    contexts = [json.dumps([_text(rng, 1500) for _ in range(5)]) for _ in range(500)]
    names = ("questions.csv", "ground_truth.csv", "rag_answers.csv")
    handles = [(directory / name).open("w", newline="", encoding="utf-8") for name in names]
    questions, ground_truth, rag_answers = (csv.writer(handle) for handle in handles)
    questions.writerow(["Question Number", "Question"])
    ground_truth.writerow(["Question Number", "Ground Truth"])
    rag_answers.writerow(["Question Number", "RAG Answer", "Contexts"])
    text_bytes = 0
    for number in range(1, count + 1):
        pick = rng.randrange(500)
        question = f"What does the policy say about case {number}? " + truths[pick][:40]
        questions.writerow([number, question])
        ground_truth.writerow([number, truths[pick]])
        rag_answers.writerow([number, answers[pick], contexts[pick]])
        text_bytes += len(question) + len(truths[pick]) + len(answers[pick]) + 7500
    for handle in handles:
        handle.close()
    return text_bytes


def million(api: FakeApi, base: Path, quick: bool) -> None:
    count = 100_000 if quick else 1_000_000
    print(
        f"\n5c. {count:,} realistic questions, streamed into the spool: start to the first "
        "judge call and peak RSS by then (the run is stopped there with Ctrl-C)"
    )
    api.set_latency(0.0)
    directory = base / f"million-{count}"
    started = time.perf_counter()
    text_bytes = write_realistic_inputs_quickly(directory, count)
    size = sum(path.stat().st_size for path in directory.glob("*.csv"))
    print(
        f"  inputs: {size / 1024**3:.2f} GB of CSV ({text_bytes / count / 1024:.1f} KB of text "
        f"per question), written in {time.perf_counter() - started:.0f} s"
    )
    environment = run_environment(api, directory, variables={"TMPDIR": str(directory)})
    seconds, stderr = until_first_call(api, directory, environment)
    peak = reported_figure(stderr, "PEAK_RSS_KB")
    print(
        f"  start to first call {seconds:.0f} s; peak RSS by the stop "
        f"{peak / 1024:.0f} MB (target: a whole run under 1 GB)"
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
            "per-question",
            "first-call",
            "checkpoint",
            "resume",
            "memory",
            "memory-realistic",
            "memory-batch",
            "million",
            "estimate",
        ],
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="a folder holding an older rag_evaluator/: per-question and first-call run it too",
    )
    arguments = parser.parse_args()
    before = arguments.before.resolve() if arguments.before is not None else None
    print(f"judge_bench on {machine()}")
    base = Path(tempfile.mkdtemp(prefix="judge-bench-"))
    api = FakeApi()
    try:
        steps = {
            "throughput": lambda: throughput(api, base, arguments.quick),
            "default-delay": lambda: default_delay_throughput(api, base, arguments.quick),
            "overhead": lambda: overhead(api, base, arguments.quick),
            "per-question": lambda: per_question(api, base, arguments.quick, before),
            "first-call": lambda: first_call(api, base, arguments.quick, before),
            "checkpoint": lambda: checkpoint_cost(base),
            "resume": lambda: resume_start_up(base),
            "memory": lambda: memory(api, base, arguments.quick),
            "memory-realistic": lambda: memory_realistic(api, base, arguments.quick),
            "memory-batch": lambda: memory_batch(api, base, arguments.quick),
            # Not in a run of every part: it writes 8.5 GB of inputs and spools them again.
            "million": lambda: million(api, base, arguments.quick),
            "estimate": lambda: estimate_against_actual(api, base),
        }
        for name, step in steps.items():
            if arguments.only == name or (arguments.only is None and name != "million"):
                step()
    finally:
        api.close()
        shutil.rmtree(base, ignore_errors=True)
    _ = resource  # peak memory is read inside each run's own process


if __name__ == "__main__":
    main()
