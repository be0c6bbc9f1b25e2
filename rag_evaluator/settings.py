"""The only reader of the environment and of ``.env``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dotenv import dotenv_values

from rag_evaluator.errors import ConfigError

API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
CHECKPOINT_DIR_VARIABLE = "RAG_EVAL_CHECKPOINT_DIR"
CACHE_DIR_VARIABLE = "RAG_EVAL_CACHE_DIR"
# Input files larger than this in all (megabytes) are read into an on-disk spool, not held.
SPOOL_VARIABLE = "RAG_EVAL_SPOOL_MB"
DEFAULT_SPOOL_MEGABYTES = 64.0
DEFAULT_SPOOL_BYTES = int(DEFAULT_SPOOL_MEGABYTES * 1024 * 1024)
# The first requests' text (megabytes) a --batch run sends and finishes a window at a time.
BATCH_WINDOW_VARIABLE = "RAG_EVAL_BATCH_WINDOW_MB"
DEFAULT_BATCH_WINDOW_MEGABYTES = 128.0
DEFAULT_BATCH_WINDOW_BYTES = int(DEFAULT_BATCH_WINDOW_MEGABYTES * 1024 * 1024)
# Questions a run of offline families only scores and writes together: only one chunk's
# texts, embeddings and scores are held. Large enough that a chunk's model batches are full
# and its per-chunk costs vanish, small enough that a chunk of long texts is a few megabytes.
OFFLINE_CHUNK_VARIABLE = "RAG_EVAL_OFFLINE_CHUNK_ROWS"
DEFAULT_OFFLINE_CHUNK_ROWS = 1000


# What each provider of ``--model PROVIDER/MODEL`` needs from the environment (one of each
# tuple): its credentials, and where it is when it is not found by default.
PROVIDER_VARIABLES: dict[str, tuple[tuple[str, ...], ...]] = {
    "anthropic": (("ANTHROPIC_API_KEY",),),
    "bedrock": (
        ("AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_PROFILE"),
        ("AWS_REGION", "AWS_DEFAULT_REGION"),
    ),
    "vertex": (("ANTHROPIC_VERTEX_PROJECT_ID",), ("CLOUD_ML_REGION",)),
    "openai": (("OPENAI_API_KEY",),),
    "azure": (("AZURE_OPENAI_API_KEY",), ("AZURE_OPENAI_ENDPOINT",), ("OPENAI_API_VERSION",)),
}
# Variables a provider may use but does not need, read for its messages (a credentials file
# that cannot be read is named).
OPTIONAL_PROVIDER_VARIABLES = ("GOOGLE_APPLICATION_CREDENTIALS",)


@dataclass(frozen=True)
class Settings:
    """What the environment says about this run."""

    api_key: str | None
    checkpoint_dir: Path | None
    cache_dir: Path | None = None
    # Three input CSVs larger than this together are spooled to disk as they are read.
    spool_above_bytes: int = DEFAULT_SPOOL_BYTES
    # Questions a run of offline families only scores and writes at a time.
    offline_chunk_rows: int = DEFAULT_OFFLINE_CHUNK_ROWS
    # A --batch run's questions go a window of this much first-request text at a time.
    batch_window_bytes: int = DEFAULT_BATCH_WINDOW_BYTES
    # The variables of PROVIDER_VARIABLES and OPTIONAL_PROVIDER_VARIABLES that are set (not
    # empty), by name.
    provider_values: Mapping[str, str] = field(default_factory=dict)

    def missing_for(self, provider: str) -> list[tuple[str, ...]]:
        """The groups of variables ``provider`` needs of which none is set."""
        return [
            group
            for group in PROVIDER_VARIABLES.get(provider, ())
            if not any(self.provider_values.get(name) for name in group)
        ]


def load_settings(working_directory: Path | None = None) -> Settings:
    """Read settings from the environment, filling gaps from ``.env`` in the working directory.

    Variables already set in the environment win over ``.env``, as python-dotenv does
    by default. ``.env`` values are copied into ``os.environ`` so the SDK sees them too.
    """
    env_file = (working_directory or Path.cwd()) / ".env"
    if env_file.is_file():
        for name, value in _read_env_file(env_file).items():
            if value is not None and name not in os.environ:
                if "\x00" in name or "\x00" in value:
                    raise ConfigError(
                        f"{env_file} holds a NUL byte in the line of {name!r}, so it is not a "
                        "text file. Rewrite .env as plain text lines NAME=value"
                    )
                os.environ[name] = value
    api_key = os.environ.get(API_KEY_VARIABLE, "").strip() or None
    checkpoint_dir = os.environ.get(CHECKPOINT_DIR_VARIABLE, "").strip()
    cache_dir = os.environ.get(CACHE_DIR_VARIABLE, "").strip()
    names = [name for groups in PROVIDER_VARIABLES.values() for group in groups for name in group]
    provider_values = {
        name: os.environ[name].strip()
        for name in (*names, *OPTIONAL_PROVIDER_VARIABLES)
        if os.environ.get(name, "").strip()
    }
    return Settings(
        api_key=api_key,
        checkpoint_dir=Path(checkpoint_dir).expanduser() if checkpoint_dir else None,
        cache_dir=Path(cache_dir).expanduser() if cache_dir else None,
        spool_above_bytes=_spool_above_bytes(os.environ.get(SPOOL_VARIABLE, "").strip()),
        offline_chunk_rows=_offline_chunk_rows(os.environ.get(OFFLINE_CHUNK_VARIABLE, "").strip()),
        batch_window_bytes=_batch_window_bytes(os.environ.get(BATCH_WINDOW_VARIABLE, "").strip()),
        provider_values=provider_values,
    )


def _megabytes(value: str) -> float | None:
    """A finite, non-negative number of megabytes; ``None`` for anything else."""
    try:
        megabytes = float(value)
    except ValueError:
        return None
    return megabytes if 0 <= megabytes < float("inf") else None


def _spool_above_bytes(value: str) -> int:
    """``RAG_EVAL_SPOOL_MB`` in bytes: a number of megabytes, 0 to spool every run."""
    if not value:
        return DEFAULT_SPOOL_BYTES
    megabytes = _megabytes(value)
    if megabytes is None:
        raise ConfigError(
            f"{SPOOL_VARIABLE} is {value!r}, not a size in megabytes. Set it to a number such "
            f"as {DEFAULT_SPOOL_MEGABYTES:g} (0 reads every run's inputs through the spool), "
            "or unset it"
        )
    return int(megabytes * 1024 * 1024)


def _batch_window_bytes(value: str) -> int:
    """``RAG_EVAL_BATCH_WINDOW_MB`` in bytes: a number of megabytes above 0."""
    if not value:
        return DEFAULT_BATCH_WINDOW_BYTES
    megabytes = _megabytes(value)
    if not megabytes:
        raise ConfigError(
            f"{BATCH_WINDOW_VARIABLE} is {value!r}, not a size in megabytes above 0. Set it to "
            f"a number such as {DEFAULT_BATCH_WINDOW_MEGABYTES:g}, or unset it"
        )
    return max(1, int(megabytes * 1024 * 1024))


def _offline_chunk_rows(value: str) -> int:
    """``RAG_EVAL_OFFLINE_CHUNK_ROWS``: a whole number of questions, at least 1."""
    if not value:
        return DEFAULT_OFFLINE_CHUNK_ROWS
    if not value.isascii() or not value.isdigit() or int(value) < 1:
        raise ConfigError(
            f"{OFFLINE_CHUNK_VARIABLE} is {value!r}, not a whole number of questions. Set it "
            f"to a number such as {DEFAULT_OFFLINE_CHUNK_ROWS}, or unset it"
        )
    return int(value)


def _read_env_file(env_file: Path) -> dict[str, str | None]:
    """The variables of ``.env``; an unreadable or non-UTF-8 file is the user's to fix."""
    try:
        return dotenv_values(env_file, encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{env_file} is not valid UTF-8 (byte {exc.start}). Save .env as UTF-8 text "
            "with lines NAME=value"
        ) from exc
    except OSError as exc:
        raise ConfigError(
            f"Cannot read {env_file}: {exc.strerror}. Fix its permissions or remove it"
        ) from exc


# Set by GitHub Actions on its runners: the file a step appends its Markdown summary to, and
# "true" in every workflow run.
STEP_SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"
ACTIONS_VARIABLE = "GITHUB_ACTIONS"


@dataclass(frozen=True)
class CiSettings:
    """What a CI runner's environment asks of a run's outputs."""

    step_summary: Path | None = None  # append the Markdown summary here
    annotations: bool = False  # print ::error:: workflow commands for failed gates


def load_ci_settings() -> CiSettings:
    """Read the CI runner's variables (never from ``.env``: the runner sets them)."""
    step_summary = os.environ.get(STEP_SUMMARY_VARIABLE, "").strip()
    return CiSettings(
        step_summary=Path(step_summary) if step_summary else None,
        annotations=os.environ.get(ACTIONS_VARIABLE, "").strip().lower() == "true",
    )
