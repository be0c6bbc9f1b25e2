"""How long `rag-eval --help` (and each command's `--help`) takes, as a whole process.

Each case is a fresh process, as a user starts it; the baseline is `python -c pass` with the
same interpreter, measured in the same run (the cases alternate: A B A B ...). Prints the
medians and the ratio to the baseline (target: `rag-eval --help` under 0.3 s). Run:

    .venv/bin/python benchmarks/startup_bench.py [--repeats N] [--before DIR]

``--before DIR`` adds the same cases for another copy of the package (a folder holding
``rag_evaluator/``, e.g. ``git archive <commit> rag_evaluator | tar -x -C DIR``), run with
the same interpreter, so that a change is measured against what it replaced in one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import alternate, format_ratio, format_stats, machine

COMMANDS = ("evaluate", "generate", "convert", "compare", "calibrate", "report", "review")


def _console_script() -> list[str]:
    """The installed `rag-eval` beside this interpreter, else the module."""
    script = Path(sys.executable).with_name("rag-eval")
    if script.exists():
        return [str(script)]
    found = shutil.which("rag-eval")
    return [found] if found else [sys.executable, "-m", "rag_evaluator"]


def _runner(command: list[str], folder: Path | None = None) -> object:
    """A case: ``command`` as a process; with ``folder``, run there (``python -m`` imports the
    package from the current folder first) with ``folder`` on the path."""
    environment = None if folder is None else {**os.environ, "PYTHONPATH": str(folder)}

    def run() -> None:
        subprocess.run(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
            cwd=folder,
            env=environment,
        )

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=11, help="runs of each case")
    parser.add_argument("--before", type=Path, help="a folder holding an older rag_evaluator/")
    arguments = parser.parse_args()
    print(f"startup_bench on {machine()}")
    script = _console_script()
    cases = {
        "python -c pass": _runner([sys.executable, "-c", "pass"]),
        "rag-eval --help": _runner([*script, "--help"]),
        **{f"rag-eval {name} --help": _runner([*script, name, "--help"]) for name in COMMANDS},
    }
    if arguments.before is not None:
        older = arguments.before.resolve()
        module = [sys.executable, "-m", "rag_evaluator"]
        cases["before: rag-eval --help"] = _runner([*module, "--help"], older)
        cases["before: rag-eval evaluate --help"] = _runner([*module, "evaluate", "--help"], older)
    stats = alternate(cases, repeats=arguments.repeats)  # type: ignore[arg-type]
    print("\nWhole process, wall clock (ms):")
    print(format_stats(stats, per=1 / 1000, unit="ms"))
    print("\nAgainst the bare interpreter:")
    for name in cases:
        if name != "python -c pass":
            print(format_ratio(stats, name, "python -c pass"))
    baseline = stats["python -c pass"].median
    print("\nThe tool's own start-up (median minus the bare interpreter's):")
    for name, case in stats.items():
        if name != "python -c pass":
            print(f"  {name:<28} {(case.median - baseline) * 1000:7.0f} ms")
    print(f"\n`rag-eval --help`: median {stats['rag-eval --help'].median:.3f} s (target: < 0.3 s)")


if __name__ == "__main__":
    main()
