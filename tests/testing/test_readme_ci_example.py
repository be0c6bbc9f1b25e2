"""The README's GitHub Actions example, run as far as it goes without GitHub: its workflow parsed
and checked (the cache folder is the one rag-eval writes, the uploaded folder the one the run
writes its results and report to), then its shell steps run here, twice, as two CI runs sharing
the cache would (the second pays for nothing), against the fake Anthropic API."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakes.anthropic_server import FakeAnthropicServer

README = Path(__file__).resolve().parents[2] / "README.md"
GOLDEN = [
    ("Who approves travel?", "The line manager approves travel."),
    ("How many days of annual leave do employees get?", "Employees get 25 days of annual leave."),
    ("Where are expense receipts submitted?", "Expense receipts are submitted in the portal."),
]


def _ci_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## CI gates")
    return text[start : text.index("\n## ", start + 1)]


def _block(language: str) -> str:
    (block,) = re.findall(rf"```{language}\n(.*?)```", _ci_section(), re.DOTALL)
    return block


def _workflow() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    workflow = yaml.safe_load(_block("yaml"))
    # YAML 1.1 reads the key `on` as true; GitHub reads it as "on".
    assert workflow.get("on", workflow.get(True)) == "pull_request"
    (job,) = workflow["jobs"].values()
    return job, job["steps"]


def _step(steps: list[dict[str, Any]], action: str) -> tuple[int, dict[str, Any]]:
    (found,) = [(i, s) for i, s in enumerate(steps) if s.get("uses", "").startswith(action + "@")]
    return found


def _evaluate_command(steps: list[dict[str, Any]]) -> tuple[int, list[str]]:
    (found,) = [
        (index, shlex.split(step["run"]))
        for index, step in enumerate(steps)
        if step.get("run", "").startswith("rag-eval evaluate")
    ]
    return found


def _option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_the_workflow_caches_the_folder_rag_eval_writes_and_uploads_the_run() -> None:
    job, steps = _workflow()
    cache_dir = job["env"]["RAG_EVAL_CACHE_DIR"]
    assert _step(steps, "actions/checkout")[0] == 0
    assert _step(steps, "actions/setup-python")[1]["with"]["python-version"] == "3.11"
    restore_at, restore = _step(steps, "actions/cache/restore")
    save_at, save = _step(steps, "actions/cache/save")
    upload_at, upload = _step(steps, "actions/upload-artifact")
    evaluate_at, command = _evaluate_command(steps)
    # Restored before the run, saved after it: the same folder, under the same key.
    assert restore_at < evaluate_at < save_at
    assert restore["with"]["path"] == save["with"]["path"] == cache_dir
    assert restore["with"]["key"] == save["with"]["key"]
    assert restore["with"]["key"].startswith(restore["with"]["restore-keys"])
    # A failed gate exits 3: the cache and the report are kept all the same.
    assert save["if"] == upload["if"] == "always()"
    assert upload_at > evaluate_at
    assert upload["with"]["path"] == _option(command, "--output-dir")
    assert "--report" in command
    assert {"--fail-under", "--fail-over", "--yes"} <= set(command)


def _write_project(root: Path) -> None:
    """What the workflow's repository holds: the golden set and the README's pytest test."""
    records = [
        {"question": question, "answer": truth, "ground_truth": truth} for question, truth in GOLDEN
    ]
    root.joinpath("golden.jsonl").write_text(
        "".join(json.dumps(record) + "\n" for record in records), encoding="utf-8"
    )
    root.joinpath("tests").mkdir()
    root.joinpath("tests", "test_answers.py").write_text(_block("python"), encoding="utf-8")


def _run_steps(steps: list[dict[str, Any]], env: dict[str, str], root: Path) -> list[str]:
    """Run the workflow's shell steps here; the commands run (pip install is left out: it
    would reach the network, and rag-eval is installed in this environment)."""
    ran = []
    for step in steps:
        command = step.get("run")
        if command is None:
            continue
        if command.startswith("pip install"):
            continue
        result = subprocess.run(
            ["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
        ran.append(command.split()[0])
    return ran


@pytest.mark.needs_extra("overlap")
def test_the_workflow_steps_run_and_a_second_run_pays_for_nothing(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer
) -> None:
    job, steps = _workflow()
    _write_project(tmp_path)
    env = dict(os.environ)
    for name, value in job["env"].items():
        # ${{ secrets.ANTHROPIC_API_KEY }}: here, the fake server's key already in the env.
        if "${{" not in str(value):
            env[name] = str(value)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    # The runner's state folder is thrown away with it; here, the checkpoints stay in tmp_path.
    env["RAG_EVAL_CHECKPOINT_DIR"] = str(tmp_path / "checkpoints")

    assert _run_steps(steps, env, tmp_path) == ["rag-eval", "pytest"]
    paid = len(fake_anthropic.requests)
    assert paid >= len(GOLDEN)
    cache_dir = tmp_path / job["env"]["RAG_EVAL_CACHE_DIR"]
    assert (cache_dir / "responses.sqlite3").is_file()
    uploaded = tmp_path / _option(_evaluate_command(steps)[1], "--output-dir")
    assert len(list(uploaded.glob("*.html"))) == 1
    assert len(list(uploaded.glob("*.csv"))) == 1

    # The next CI run restores the cache: nothing is asked again.
    _run_steps(steps, env, tmp_path)
    assert len(fake_anthropic.requests) == paid
    assert len(list(uploaded.glob("*.html"))) == 2
