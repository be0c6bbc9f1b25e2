"""The rule in conftest.py for tests that need an optional extra, run in a child pytest.

Without the extra such a test is skipped with the install command as the reason; with
``RAG_EVAL_TEST_NO_SKIPS`` set (scripts/test, CI) any skip fails the run instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

SAMPLE_TESTS = """
import pytest


@pytest.mark.needs_extra("overlap")
def test_needs_overlap():
    import sacrebleu  # noqa: F401


def test_skips_itself():
    pytest.skip("not on this platform")


def test_plain():
    pass


@pytest.mark.needs_extra("chromium")
def test_needs_chromium():
    pass
"""

# The extras' packages made unimportable, as on a machine without the extra; then pytest
# with this suite's conftest.py as a plugin.
_RUN_PYTEST = """
import sys

import pytest

for name in filter(None, sys.argv[1].split(",")):
    sys.modules[name] = None
sys.exit(pytest.main([sys.argv[2], "-q", "-rs", "-p", "conftest", "-p", "no:cacheprovider"]))
"""


def run_child_pytest(
    tmp_path: Path, *, blocked: str, no_skips: bool, chromium: str = ""
) -> subprocess.CompletedProcess[str]:
    """The sample tests in a child pytest; ``chromium`` is ``$RAG_EVAL_CHROMIUM`` (a program
    that exists, so the Chromium test runs, unless a test says otherwise)."""
    test_file = tmp_path / "test_sample.py"
    test_file.write_text(SAMPLE_TESTS)
    environment = {**os.environ, "PYTHONPATH": str(TESTS)}
    environment["RAG_EVAL_CHROMIUM"] = chromium or sys.executable
    environment.pop("RAG_EVAL_TEST_NO_SKIPS", None)
    if no_skips:
        environment["RAG_EVAL_TEST_NO_SKIPS"] = "1"
    return subprocess.run(
        [sys.executable, "-c", _RUN_PYTEST, blocked, str(test_file)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_test_needing_a_missing_extra_is_skipped_with_the_install_command(
    tmp_path: Path,
) -> None:
    completed = run_child_pytest(tmp_path, blocked="sacrebleu", no_skips=False)
    assert completed.returncode == 0, completed.stdout
    # (rouge_score is listed too where it is not installed either.)
    assert "needs the 'overlap' extra (missing: sacrebleu" in completed.stdout
    assert "); install it with: pip install -e '.[overlap]'" in completed.stdout
    assert "2 passed, 2 skipped" in completed.stdout


@pytest.mark.needs_extra("overlap")
def test_with_the_extra_installed_the_test_runs(tmp_path: Path) -> None:
    completed = run_child_pytest(tmp_path, blocked="", no_skips=False)
    assert "3 passed, 1 skipped" in completed.stdout, completed.stdout


@pytest.mark.needs_extra("overlap")
def test_a_test_needing_chromium_is_skipped_without_it_with_how_to_install_it(
    tmp_path: Path,
) -> None:
    missing = str(tmp_path / "no-such-chromium")
    completed = run_child_pytest(tmp_path, blocked="", no_skips=False, chromium=missing)
    assert completed.returncode == 0, completed.stdout
    output = " ".join(completed.stdout.split())
    assert (
        "needs the 'chromium' extra (missing: chromium); install it with: apt-get install "
        "chromium (./scripts/test does it when run as root), or set RAG_EVAL_CHROMIUM to a "
        "Chrome or Chromium executable"
    ) in output
    assert "2 passed, 2 skipped" in completed.stdout


def test_in_ci_every_skip_is_a_failure(tmp_path: Path) -> None:
    completed = run_child_pytest(tmp_path, blocked="sacrebleu", no_skips=True)
    assert completed.returncode == 1, completed.stdout
    # A skip at set-up (the marker) is an error, one inside the test a failure.
    assert "1 failed, 2 passed, 1 error" in completed.stdout
    output = " ".join(completed.stdout.split())
    assert (
        "RAG_EVAL_TEST_NO_SKIPS is set (scripts/test, CI): a skipped test fails. Skipped: "
        "needs the 'overlap' extra"
    ) in output
    assert "a skipped test fails. Skipped: not on this platform" in output
