"""A/B timing for the benchmarks: alternate the cases in one process, repeat, report spread.

Figures on shared machines drift by up to 3x between periods, so a comparison is only fair
when its cases run interleaved (A B A B ...) in the same process. Every benchmark times its
cases with ``alternate`` and prints ``format_stats`` lines and ``format_ratio`` lines, so an
outside reader can rerun it and compare medians, never a single run.

    stats = alternate({"tool": run_tool, "baseline": run_baseline}, repeats=5)
    print(format_stats(stats, unit="s"))
    print(format_ratio(stats, "baseline", "tool"))
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Stats:
    """Wall-clock seconds of the repeats of one case."""

    name: str
    seconds: tuple[float, ...]

    @property
    def minimum(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def maximum(self) -> float:
        return max(self.seconds)


def alternate(
    cases: Mapping[str, Callable[[], object]], repeats: int = 5, warmup: int = 1
) -> dict[str, Stats]:
    """Run every case ``repeats`` times, interleaved (A B A B ...), after ``warmup`` rounds.

    The garbage collector runs between timings, not inside them.
    """
    for _ in range(warmup):
        for run in cases.values():
            run()
    timings: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, run in cases.items():
            gc.collect()
            start = time.perf_counter()
            run()
            timings[name].append(time.perf_counter() - start)
    return {name: Stats(name, tuple(values)) for name, values in timings.items()}


def format_stats(stats: Mapping[str, Stats], *, per: float = 1.0, unit: str = "s") -> str:
    """One line per case: min / median / max, each divided by ``per`` (e.g. per question)."""
    width = max(len(name) for name in stats)
    lines = []
    for name, case in stats.items():
        values = (case.minimum / per, case.median / per, case.maximum / per)
        shown = " / ".join(f"{value:.4g}" for value in values)
        lines.append(
            f"  {name:<{width}}  min / median / max: {shown} {unit} ({len(case.seconds)} runs)"
        )
    return "\n".join(lines)


def format_ratio(stats: Mapping[str, Stats], slower: str, faster: str) -> str:
    """``baseline / tool``: the median ratio, with the range of per-round ratios."""
    pairs = zip(stats[slower].seconds, stats[faster].seconds, strict=True)
    ratios = [a / b for a, b in pairs if b > 0]
    if not ratios:
        return f"  {slower} / {faster}: n/a"
    median = statistics.median(ratios)
    return (
        f"  {slower} / {faster}: median {median:.3g}x "
        f"(per-round min {min(ratios):.3g}x, max {max(ratios):.3g}x)"
    )


def machine() -> str:
    """What the figures were measured on, for the first line of every benchmark's output."""
    import os

    return (
        f"{platform.machine()}, {os.cpu_count()} CPU core(s), Python {platform.python_version()}, "
        f"{platform.system()}"
    )


def user_environment(older: Path | None = None, **variables: str) -> dict[str, str]:
    """This process's environment as a user's run has it (the bytecode compiled once and kept,
    whatever this shell says), ``older`` (a copy of the package) first on the path, and
    ``variables``."""
    inherited = {
        key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"
    }
    return {**inherited, **({"PYTHONPATH": str(older)} if older is not None else {}), **variables}


def reported_figure(stderr: str, name: str) -> float:
    """A figure a measured process wrote last on stderr (``CPU_S 1.25``, ``PEAK_RSS_KB 88``)."""
    return next(float(line.split()[1]) for line in stderr.splitlines() if line.startswith(name))


@dataclass(frozen=True)
class MeasuredRun:
    """A whole measured process: wall and CPU seconds, peak RSS in KB, what it wrote to stderr."""

    wall: float
    cpu: float
    peak_kb: int
    stderr: str


def run_measured(command: list[str], folder: Path, environment: dict[str, str]) -> MeasuredRun:
    """Run ``command`` (one that reports ``CPU_S`` and ``PEAK_RSS_KB`` on stderr) in ``folder``
    to its end; a failure raises with the end of its stderr."""
    started = time.perf_counter()
    completed = subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(completed.stderr[-2000:])
    return MeasuredRun(
        wall,
        reported_figure(completed.stderr, "CPU_S"),
        int(reported_figure(completed.stderr, "PEAK_RSS_KB")),
        completed.stderr,
    )
