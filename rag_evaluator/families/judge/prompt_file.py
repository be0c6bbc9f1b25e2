"""Where the judge's system prompt comes from: --prompt, ./evaluation_prompt.txt, or built in."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from rag_evaluator.errors import InputError
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.inputs.files import decode_text, not_a_file

logger = logging.getLogger(__name__)

PROMPT_FILE_NAME = "evaluation_prompt.txt"
BUILT_IN_ORIGIN = "built-in default"


@dataclass(frozen=True)
class SystemPrompt:
    """The system prompt text and where it came from (a file path or ``BUILT_IN_ORIGIN``)."""

    text: str
    origin: str
    path: Path | None = None


def _read_prompt(path: Path, fix: str) -> SystemPrompt:
    kind = not_a_file(path)
    if kind is not None:
        raise InputError(f"{path} is {kind}, not a prompt file. {fix}", path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(f"Cannot read prompt file {path} ({reason}). {fix}", path) from exc
    text, _, warnings = decode_text(data, path)
    for warning in warnings:
        logger.warning(warning)
    if "\x00" in text:
        raise InputError(
            f"Prompt file {path} contains NUL bytes, so it is not a text file. {fix}",
            path,
        )
    if not text.strip():
        raise InputError(f"Prompt file {path} is empty. {fix}", path)
    return SystemPrompt(text=text, origin=str(path), path=path)


def load_system_prompt(explicit_path: Path | None, working_directory: Path) -> SystemPrompt:
    """The prompt from ``--prompt``, else ``./evaluation_prompt.txt``, else the built-in one.

    The text is used as it is (no substitution). A ``--prompt`` file that does not exist is
    an error; a missing ``evaluation_prompt.txt`` just means the built-in prompt.
    """
    if explicit_path is not None:
        path = explicit_path if explicit_path.is_absolute() else working_directory / explicit_path
        if not path.exists():
            raise InputError(
                f"Prompt file {explicit_path} not found. Check the path given to --prompt, "
                f"or leave the option out to use ./{PROMPT_FILE_NAME} or the built-in prompt",
                path,
            )
        return _read_prompt(
            path,
            "Pass a UTF-8 text file holding the judging rubric to --prompt, "
            "or leave the option out",
        )
    local = working_directory / PROMPT_FILE_NAME
    if local.exists():
        return _read_prompt(
            local,
            f"Make ./{PROMPT_FILE_NAME} a UTF-8 text file holding the judging rubric, "
            "or rename it to use the built-in prompt",
        )
    return SystemPrompt(text=DEFAULT_SYSTEM_PROMPT, origin=BUILT_IN_ORIGIN)
