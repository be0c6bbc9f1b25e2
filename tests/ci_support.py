"""Helpers for the CI outputs' tests (``--junit``, the GitHub step summary)."""

from __future__ import annotations

from pathlib import Path

from report_support import Question, write_run


def compared_runs(tmp_path: Path) -> tuple[Path, Path]:
    """A baseline and a run whose exact_match falls (27/30 to 3/30) while rouge1 holds; the
    run also has a metric the baseline lacks."""

    def run(path: Path, ones: bool, extra: bool) -> Path:
        questions = [
            Question(
                n,
                f"Q{n}?",
                "A.",
                "A.",
                metrics={
                    "exact_match": float((n % 10 != 0) == ones),
                    "rouge1": 0.5 + (n % 3) / 10,
                    **({"bleu": 0.2} if extra else {}),
                },
            )
            for n in range(1, 31)
        ]
        return write_run(path, questions)

    return run(tmp_path / "base.csv", True, False), run(tmp_path / "new.csv", False, True)
