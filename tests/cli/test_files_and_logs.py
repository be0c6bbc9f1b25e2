"""File modes of what the tool writes, and a debug log that cannot be written."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from rag_evaluator.atomic import write_bytes_atomic, write_text_atomic
from rag_evaluator.cli.logs import configure_logging


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_shared_outputs_follow_the_umask_like_a_plain_open(tmp_path: Path, umask_022) -> None:
    target = tmp_path / "rag_answers.csv"
    write_text_atomic(target, "Question Number,RAG Answer\n")
    assert _mode(target) == 0o644
    assert target.read_text() == "Question Number,RAG Answer\n"


def test_private_files_are_private_whatever_the_umask(tmp_path: Path, umask_022) -> None:
    target = tmp_path / "checkpoint.jsonl"
    write_bytes_atomic(target, b"{}\n", mode=0o600)
    assert _mode(target) == 0o600


def test_replacing_leaves_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    write_text_atomic(target, "old")
    write_text_atomic(target, "new")
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]
    assert target.read_text() == "new"


def test_an_unwritable_log_location_warns_and_carries_on(tmp_path: Path, capsys) -> None:
    log_path = tmp_path / "no-such-folder" / "rag_eval.log"
    configure_logging(log_path)
    logging.getLogger("rag_evaluator.test").warning("still shown on the terminal")
    captured = capsys.readouterr()
    assert "Cannot write the debug log" in captured.err
    assert "still shown on the terminal" in captured.err
    assert not log_path.exists()


def test_the_log_is_overwritten_per_run_and_capped(tmp_path: Path) -> None:
    log_path = tmp_path / "rag_eval.log"
    (tmp_path / "rag_eval.log.1").write_text("an older run's rolled-over log")
    configure_logging(log_path, max_bytes=2000)
    logger = logging.getLogger("rag_evaluator.test")
    for number in range(200):
        logger.info("line %d of a long run", number)
    rolled = tmp_path / "rag_eval.log.1"
    assert rolled.is_file() and "older run" not in rolled.read_text(encoding="utf-8")
    assert log_path.stat().st_size <= 2000
    assert rolled.stat().st_size <= 2000
    assert "line 199" in log_path.read_text(encoding="utf-8")
