"""Make the README's example of the LLM-judged families (*More judges*): its console and its
``#SUMMARY:`` rows.

Runs the whole job on the repository's sample data in a temporary folder, without
``evaluation_prompt.txt`` (so the judge's prompt is the built-in one): ``rag-eval convert``,
then ``rag-eval evaluate --metrics judge,ragas,factual_accuracy,classify,match,rubric`` with
every model role played by the test suite's fake Anthropic server. The figures are the
fake's: the verdicts below for the answers that are not simply right, its defaults elsewhere,
and a token per 4 characters; answer relevance uses the bundled MiniLM (the semantic extra).

    .venv/bin/python docs/make_llm_example.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY / "tests"))

from fakes.anthropic_server import FakeAnthropicServer, verdict  # noqa: E402

MEAL = "What is the daily meal allowance when travelling domestically?"
PASSWORDS = "How often do network passwords have to be changed?"
OVERTIME = "Who approves overtime for hourly employees?"
AIRFARE = "Which class of airfare can be booked for flights under six hours?"
NOTICE = "What is the notice period when an employee resigns?"
PETS = "Are pets allowed in the office?"
PETS_ANSWER = "I couldn't find any information about pets in the handbook."
# The questions whose retriever returned two contexts: the second is judged irrelevant.
TWO_CONTEXTS = (
    "How many days of paid time off do full-time employees get per year?",
    "What is the deadline for submitting expense reports after a business trip?",
    "Which days of the week are employees expected to work in the office?",
    "What should I do if I lose my company laptop?",
    MEAL,
    "How many sick days can I take without a doctor's note?",
    "What percentage of salary does the company match in the retirement plan?",
    PASSWORDS,
)

JUDGE = {
    MEAL: verdict(0, 0, 1, summary="Wrong daily amount: $50 instead of $60."),
    PASSWORDS: verdict(0, 0, 1, summary="Says every 90 days; the policy says every 180 days."),
    PETS: verdict(1, 0, 0, summary="Says it found nothing, while the handbook answers it."),
    NOTICE: verdict(1, 0, 1, summary="Misses the eight weeks for people managers."),
    OVERTIME: verdict(1, 0, 1, summary="Leaves out that approval comes before the overtime."),
}


def _factual(correctness: int, completeness: int, consistency: int) -> dict[str, Any]:
    return {
        "correctness": {"reasoning": "Compared with the ground truth.", "score": correctness},
        "completeness": {"reasoning": "Against the key facts.", "score": completeness},
        "consistency": {"reasoning": "No contradiction.", "score": consistency},
        "overall_reasoning": "See the criteria.",
        "confidence": 80,
    }


def _criteria(coherence: int, readability: int) -> dict[str, Any]:
    return {
        "criteria": [
            {"name": "coherence", "reasoning": "Scored.", "score": coherence},
            {"name": "readability", "reasoning": "Scored.", "score": readability},
            {"name": "harmlessness", "reasoning": "Nothing unsafe.", "score": 1},
        ]
    }


def _contexts(*relevant: bool) -> dict[str, Any]:
    return {
        "contexts": [
            {"index": index, "reasoning": "Judged.", "relevant": value, "score": 90 * value}
            for index, value in enumerate(relevant, start=1)
        ]
    }


def script(server: FakeAnthropicServer) -> None:
    """What the fake says about the sample answers that are not simply right."""
    for question, answer in JUDGE.items():
        server.script(question, answer)
    for question in TWO_CONTEXTS:
        server.script_role("contexts", question, _contexts(True, False))
    for question in (MEAL, PASSWORDS):
        unsupported = {"claim": "The answer's figure.", "reason": "Not in context.", "supported": 0}
        server.script_role("verdicts", question, {"verdicts": [unsupported]})
        server.script_role("correctness", question, _factual(30, 40, 100))
        server.script_role("label", question, {"reasoning": "Wrong figure.", "label": "WRONG"})
        server.script_role("is_matching", question, {"reasoning": "Wrong.", "is_matching": False})
    server.script_role("correctness", PETS, _factual(30, 40, 100))
    server.script_role("label", PETS, {"reasoning": "The handbook answers it.", "label": "WRONG"})
    server.script_role("is_matching", PETS, {"reasoning": "No answer.", "is_matching": False})
    # The questions call sees the answer alone: it is scripted by the answer's text.
    server.script_role(
        "questions",
        PETS_ANSWER,
        {"questions": ["Are there rules about pets in the handbook?"] * 3, "noncommittal": True},
    )
    server.script_role("correctness", NOTICE, _factual(80, 40, 100))
    server.script_role("label", NOTICE, {"reasoning": "Incomplete.", "label": "WRONG"})
    server.script_role("is_matching", NOTICE, {"reasoning": "Incomplete.", "is_matching": False})
    for question in (AIRFARE, NOTICE, PETS):
        server.script_role("criteria", question, _criteria(4, 4))
    for question in (OVERTIME, PASSWORDS):
        server.script_role("criteria", question, _criteria(5, 4))


def rag_eval(arguments: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run rag-eval; its terminal output (stderr, then stdout)."""
    done = subprocess.run(
        [sys.executable, "-m", "rag_evaluator", *arguments],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"rag-eval {arguments[0]} failed ({done.returncode}):\n{done.stderr}")
    return done.stderr + done.stdout


def make_example(folder: Path) -> str:
    for name in ("questions.csv", "ground_truth.csv"):
        shutil.copy(REPOSITORY / name, folder / name)
    shutil.copytree(REPOSITORY / "RAG_JSON_Files", folder / "RAG_JSON_Files")
    shutil.copy(REPOSITORY / "examples" / "rubric.toml", folder / "rubric.toml")
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    env["RAG_EVAL_CHECKPOINT_DIR"] = str(folder / "state")
    env["RAG_EVAL_CACHE_DIR"] = str(folder / "cache")
    rag_eval(["convert"], folder, env)  # exit 1: the sample holds one unmatched answer
    with FakeAnthropicServer() as server:
        script(server)
        env["ANTHROPIC_BASE_URL"] = server.base_url
        env["ANTHROPIC_API_KEY"] = server.expected_api_key
        console = rag_eval(
            [
                "evaluate",
                "--model",
                "haiku",
                "--metrics",
                "judge,ragas,factual_accuracy,classify,match,rubric",
                "--rubric",
                "rubric.toml",
                "--concurrency",
                "4",
                "--seed",
                "7",
                "--delay",
                "0",
                "--yes",
            ],
            folder,
            env,
        )
    (results,) = sorted((folder / "Evaluation_Runs").glob("*.csv"))
    summary = [
        line for line in results.read_text(encoding="utf-8").splitlines() if line.startswith("#")
    ]
    return console + "\n" + "\n".join(summary) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="make the run in this folder and keep it")
    arguments = parser.parse_args()
    if arguments.keep is not None:
        arguments.keep.mkdir(parents=True, exist_ok=False)
        print(make_example(arguments.keep))
        return
    with tempfile.TemporaryDirectory() as folder:
        print(make_example(Path(folder)))


if __name__ == "__main__":
    main()
