"""Make the README's sample report and its screenshot (docs/report.png).

Runs the whole job on the repository's sample data in a temporary folder: ``rag-eval
convert``, then ``rag-eval evaluate --metrics judge,lexical,overlap,retrieval --report``
with the judge played by the test suite's fake Anthropic server (scripted verdicts, so no
key and no network are needed and the figures never change), then opens the report in
headless Chromium and saves a screenshot.

    .venv/bin/python docs/make_sample_report.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY / "tests"))

from fakes.anthropic_server import FakeAnthropicServer, verdict  # noqa: E402

SCREENSHOT = REPOSITORY / "docs" / "report.png"
WINDOW = (1280, 1800)

# What the judge says about the sample answers that are not simply right.
VERDICTS = {
    "What is the daily meal allowance when travelling domestically?": [
        verdict(0, 0, 1, summary="Wrong daily amount: $50 instead of $60.")
    ],
    "How often do network passwords have to be changed?": [
        verdict(0, 0, 1, summary="Says every 90 days; the policy says every 180 days.")
    ],
    "Are pets allowed in the office?": [
        verdict(1, 0, 0, summary="Says it found nothing, while the handbook answers the question.")
    ],
    "Which class of airfare can be booked for flights under six hours?": [
        verdict(
            1,
            1,
            1,
            reasoning="The extra claim on premium economy is borderline: not in the ground truth.",
            summary="Economy class, with an unsupported remark on premium economy.",
        ),
        verdict(0, 1, 1, summary="Adds an unsupported rule about premium economy."),
        verdict(1, 1, 1, summary="Economy class, as expected."),
        verdict(0, 1, 1, summary="The premium economy rule is not in the ground truth."),
    ],
    "Who approves overtime for hourly employees?": [
        verdict(
            1,
            1,
            1,
            reasoning="Leaves out that approval comes before the overtime; arguably complete.",
            summary="The line manager approves, in TimeTrack.",
        ),
        verdict(1, 1, 1, summary="Correct: the line manager, in advance."),
        verdict(1, 0, 1, summary="Misses that approval comes before the overtime."),
        verdict(1, 1, 1, summary="Correct and complete."),
    ],
    "What is the notice period when an employee resigns?": [
        verdict(1, 0, 1, summary="Misses the eight weeks for people managers.")
    ],
}


def rag_eval(arguments: list[str], cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "rag_evaluator", *arguments], cwd=cwd, env=env, check=True
    )


def make_report(folder: Path) -> Path:
    for name in ("questions.csv", "ground_truth.csv"):
        shutil.copy(REPOSITORY / name, folder / name)
    shutil.copytree(REPOSITORY / "RAG_JSON_Files", folder / "RAG_JSON_Files")
    env = dict(os.environ)
    env["RAG_EVAL_CHECKPOINT_DIR"] = str(folder / "state")
    env["RAG_EVAL_CACHE_DIR"] = str(folder / "cache")
    rag_eval(["convert"], folder, env)
    with FakeAnthropicServer() as server:
        for question, responses in VERDICTS.items():
            server.script(question, *responses)
        env["ANTHROPIC_BASE_URL"] = server.base_url
        env["ANTHROPIC_API_KEY"] = server.expected_api_key
        rag_eval(
            [
                "evaluate",
                "--model",
                "haiku",
                "--metrics",
                "judge,lexical,overlap,retrieval",
                "--seed",
                "7",
                "--delay",
                "0",
                "--yes",
                "--report",
            ],
            folder,
            env,
        )
    (report,) = sorted((folder / "Evaluation_Runs").glob("*.html"))
    return report


def screenshot(report: Path, target: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        raw = Path(profile) / "shot.png"
        subprocess.run(
            [
                os.environ.get("RAG_EVAL_CHROMIUM", "chromium"),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={WINDOW[0]},{WINDOW[1]}",
                f"--screenshot={raw}",
                report.as_uri(),
            ],
            check=True,
            capture_output=True,
        )
        image = Image.open(raw).convert("RGB")
    # A 64-colour palette keeps the picture sharp and the file small.
    buffer = io.BytesIO()
    image.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(
        buffer, format="PNG", optimize=True
    )
    target.write_bytes(buffer.getvalue())
    print(f"{target}: {len(buffer.getvalue()) / 1000:.0f} KB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="make the run in this folder and keep it")
    arguments = parser.parse_args()
    if arguments.keep is not None:
        arguments.keep.mkdir(parents=True, exist_ok=False)
        report = make_report(arguments.keep)
        screenshot(report, SCREENSHOT)
        print(f"report: {report}")
        return
    with tempfile.TemporaryDirectory() as folder:
        report = make_report(Path(folder))
        screenshot(report, SCREENSHOT)


if __name__ == "__main__":
    main()
