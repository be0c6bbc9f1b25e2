"""Reading an input file's bytes, with an error that names the file and the fix."""

from __future__ import annotations

from pathlib import Path

from rag_evaluator.errors import InputError


def read_input_bytes(path: Path) -> bytes:
    """The bytes of ``path``, or an ``InputError`` saying why they cannot be read."""
    try:
        return path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(
            f"Cannot read {path}: {reason}. Check that it exists and that you may read it", path
        ) from exc
