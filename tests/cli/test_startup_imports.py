"""`rag-eval --help` starts without the heavy libraries and the pipelines (issue 26).

Structural, not timed: a fresh interpreter loads the command line (or shows a command's help)
and reports which modules it imported. The heavy ones are imported by the commands that use
them, when they run; `benchmarks/startup_bench.py` measures the time.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Libraries that take tens to thousands of milliseconds to import.
HEAVY_LIBRARIES = (
    "scipy",
    "numpy",
    "anthropic",
    "openai",
    "httpx",
    "rapidfuzz",
    "jinja2",
    "sentence_transformers",
    "torch",
    "pandas",
    "sqlite3",
    "rouge_score",
    "nltk",
)
# The tool's pipelines: each command imports its own when it runs.
PIPELINES = (
    "rag_evaluator.evaluate.run",
    "rag_evaluator.generate.run",
    "rag_evaluator.report.run",
    "rag_evaluator.compare.run",
    "rag_evaluator.calibrate.run",
    "rag_evaluator.convert.run",
    "rag_evaluator.llm.session",
    "rag_evaluator.families.base",
    "rag_evaluator.offline.runner",
    "rag_evaluator.stats.statistics",
)
COMMANDS = ("convert", "evaluate", "compare", "calibrate", "report", "generate", "review")

# Runs the command line in-process (exit code kept) and prints the modules it left loaded.
_PROBE = """
import json, sys
from rag_evaluator.cli.app import app
code = 0
if len(sys.argv) > 1:
    try:
        app(sys.argv[1:], prog_name="rag-eval")
    except SystemExit as stop:
        code = stop.code or 0
print("\\nMODULES " + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _loaded(*arguments: str) -> tuple[int, set[str]]:
    completed = subprocess.run(
        [sys.executable, "-c", _PROBE, *arguments],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    last = completed.stdout.rsplit("\nMODULES ", 1)
    assert len(last) == 2, completed.stderr
    report = json.loads(last[1])
    return report["code"], set(report["modules"])


def _heavy(modules: set[str]) -> list[str]:
    def top(name: str) -> str:
        return name.split(".", 1)[0]

    libraries = sorted({top(name) for name in modules if top(name) in HEAVY_LIBRARIES})
    return libraries + sorted(name for name in PIPELINES if name in modules)


def test_importing_the_command_line_loads_no_heavy_module() -> None:
    code, modules = _loaded()
    assert code == 0
    assert "rag_evaluator.cli.app" in modules
    assert _heavy(modules) == []


def test_help_exits_0_without_heavy_modules() -> None:
    code, modules = _loaded("--help")
    assert code == 0
    assert _heavy(modules) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_a_commands_help_loads_no_heavy_module(command: str) -> None:
    code, modules = _loaded(command, "--help")
    assert code == 0
    assert _heavy(modules) == []


def test_the_console_script_shows_help() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "rag_evaluator", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    for command in COMMANDS:
        assert command in completed.stdout


def test_the_evaluate_pipeline_imports_no_numpy() -> None:
    """A judge run imports numpy only when a jury's tally, an offline family or a merge of
    checkpoint records needs it: its import was a tenth of a second before the first call."""
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, rag_evaluator.evaluate.run, rag_evaluator.evaluate.judged, "
            "rag_evaluator.cli.evaluate; print('numpy' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.stdout.strip() == "False", completed.stderr
