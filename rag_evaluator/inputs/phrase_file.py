"""``--fallback-phrases``: a comma list, or ``@FILE`` with one phrase per line."""

from __future__ import annotations

import logging
from pathlib import Path

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.files import decode_text, not_a_file, read_input_bytes
from rag_evaluator.offline.quality import parse_phrase_list

logger = logging.getLogger(__name__)

FILE_PREFIX = "@"


def load_phrase_option(raw: str) -> tuple[str, ...]:
    """The phrases of ``raw``: ``@path`` reads a file (one phrase per line, so phrases may
    hold commas; blank lines and lines starting with ``#`` are skipped), anything else is a
    comma list. An empty value or file gives no phrase."""
    text = raw.strip()
    if not text.startswith(FILE_PREFIX):
        return parse_phrase_list(text)
    path = Path(text.removeprefix(FILE_PREFIX).strip()).expanduser()
    kind = not_a_file(path)
    if kind is not None:
        raise InputError(
            f"--fallback-phrases {text}: {path} is {kind}. Give a text file with one phrase "
            "per line",
            path,
        )
    content, _, warnings = decode_text(read_input_bytes(path), path)
    for warning in warnings:
        logger.warning(warning)
    lines = (" ".join(line.split()) for line in content.splitlines())
    return tuple(dict.fromkeys(line for line in lines if line and not line.startswith("#")))
