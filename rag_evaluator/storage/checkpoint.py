"""The checkpoint of an evaluate run: an append-only JSON Lines file, private to the user.

Line 1 is a header (format version, fingerprint of inputs/model/prompt, seed, the shuffled
order); every further line is one finished question. Each line is appended, flushed and
fsynced before the next question is sent, so a crash loses at most the question in flight.
A torn last line (the process died mid-write) is ignored; a damaged line before it is not.
The API key is never written: nothing here receives it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from platformdirs import user_state_dir

from rag_evaluator.core.fingerprint import RunFingerprint
from rag_evaluator.core.question_results import QuestionResult, Scores, Vote
from rag_evaluator.core.records import TokenUsage
from rag_evaluator.errors import CheckpointError
from rag_evaluator.storage.atomic import write_bytes_atomic

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

CHECKPOINT_FORMAT = 1
_APP_NAME = "rag-eval"
_DIRECTORY_MODE = 0o700
_FILE_MODE = 0o600


@dataclass(frozen=True)
class CheckpointHeader:
    """What a resumed run needs to carry on exactly where the first one stopped."""

    fingerprint: RunFingerprint
    seed: int
    order: list[int]
    prompt_origin: str
    input_paths: list[str]
    created_at: str


@dataclass(frozen=True)
class LoadedCheckpoint:
    """A checkpoint read back: its header and the finished questions by number."""

    path: Path
    header: CheckpointHeader
    results: dict[int, QuestionResult] = field(default_factory=dict)
    torn_line_ignored: bool = False


def default_checkpoint_directory() -> Path:
    """``<user state dir>/rag-eval/checkpoints`` (e.g. ~/.local/state/rag-eval/checkpoints)."""
    return Path(user_state_dir(_APP_NAME)) / "checkpoints"


def resolve_checkpoint_directory(option: Path | None, environment: Path | None) -> Path:
    """``--checkpoint-dir`` wins over ``RAG_EVAL_CHECKPOINT_DIR``, which wins over the default."""
    chosen = option or environment or default_checkpoint_directory()
    return Path(chosen).expanduser().absolute()


def checkpoint_path(directory: Path, key: str) -> Path:
    return directory / f"run-{key}.jsonl"


def _not_a_folder(directory: Path) -> CheckpointError:
    return CheckpointError(
        f"The checkpoint folder {directory} cannot be used: part of that path is a file, "
        "not a folder. Choose another folder with --checkpoint-dir or RAG_EVAL_CHECKPOINT_DIR"
    )


def ensure_private_directory(directory: Path) -> None:
    """Create the checkpoint directory readable by its owner only (0700).

    An existing directory is left as it is: it may be one the user shares on purpose;
    the files inside are 0600 either way.
    """
    if directory.is_dir():
        return
    try:
        directory.mkdir(mode=_DIRECTORY_MODE, parents=True, exist_ok=True)
        os.chmod(directory, _DIRECTORY_MODE)
    except (NotADirectoryError, FileExistsError) as exc:
        raise _not_a_folder(directory) from exc
    except OSError as exc:
        raise CheckpointError(
            f"Cannot create the checkpoint folder {directory}: {exc.strerror}. "
            "Choose another one with --checkpoint-dir or RAG_EVAL_CHECKPOINT_DIR"
        ) from exc


# --- serialisation -------------------------------------------------------------------------


def _scores_to_json(scores: Scores | None) -> dict[str, int] | None:
    if scores is None:
        return None
    return {"precision": scores.precision, "recall": scores.recall, "accuracy": scores.accuracy}


def _scores_from_json(data: Any) -> Scores | None:
    if data is None:
        return None
    values = [data["precision"], data["recall"], data["accuracy"]]
    if not all(value in (0, 1) and isinstance(value, int) for value in values):
        raise ValueError("scores must be 0 or 1")
    return Scores(*values)


def _usage_to_json(usage: TokenUsage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
    }


def _count(value: Any) -> int:
    # Strict: int() would truncate 1.5 and raise OverflowError on 1e999 or Infinity.
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("counts must be whole numbers of at least 0")
    return value


def _usage_from_json(data: Any) -> TokenUsage:
    return TokenUsage(
        _count(data["input_tokens"]),
        _count(data["output_tokens"]),
        _count(data.get("cache_creation_input_tokens", 0)),
        _count(data.get("cache_read_input_tokens", 0)),
    )


def _optional_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError("expected text or null")


def result_to_json(result: QuestionResult) -> dict[str, Any]:
    """The checkpoint line of one finished question (the full reasoning is not kept)."""
    return {
        "type": "question",
        "question_number": result.question_number,
        "scores": _scores_to_json(result.scores),
        "summary": result.summary,
        "error": result.error,
        "consensus": result.consensus,
        "initial_scores": _scores_to_json(result.initial_scores),
        "votes": [
            {"scores": _scores_to_json(vote.scores), "error": vote.error} for vote in result.votes
        ],
        "hedge_phrases": list(result.hedge_phrases),
        "note": result.note,
        "usage": _usage_to_json(result.usage),
        "calls": result.calls,
    }


def result_from_json(data: Any) -> QuestionResult:
    """Read a checkpoint line back; raises KeyError/TypeError/ValueError when malformed."""
    if not isinstance(data, dict) or data.get("type") != "question":
        raise ValueError("not a question line")
    number = data["question_number"]
    if not isinstance(number, int):
        raise ValueError("question_number must be an integer")
    return QuestionResult(
        question_number=number,
        scores=_scores_from_json(data["scores"]),
        summary=str(data["summary"]),
        error=_optional_text(data["error"]),
        consensus=bool(data["consensus"]),
        initial_scores=_scores_from_json(data["initial_scores"]),
        votes=tuple(
            Vote(_scores_from_json(vote["scores"]), _optional_text(vote["error"]))
            for vote in data["votes"]
        ),
        hedge_phrases=tuple(str(phrase) for phrase in data["hedge_phrases"]),
        note=_optional_text(data["note"]),
        usage=_usage_from_json(data["usage"]),
        calls=_count(data["calls"]),
    )


def _header_to_json(header: CheckpointHeader) -> dict[str, Any]:
    return {
        "type": "header",
        "format": CHECKPOINT_FORMAT,
        "created_at": header.created_at,
        "fingerprint": header.fingerprint.to_dict(),
        "seed": header.seed,
        "order": header.order,
        "prompt_origin": header.prompt_origin,
        "input_paths": header.input_paths,
    }


def _header_from_json(data: Any) -> CheckpointHeader:
    if not isinstance(data, dict) or data.get("type") != "header":
        raise ValueError("not a header line")
    order = data["order"]
    if not isinstance(order, list) or not all(isinstance(number, int) for number in order):
        raise ValueError("order must be a list of question numbers")
    seed = data["seed"]
    if not isinstance(seed, int):
        raise ValueError("seed must be an integer")
    return CheckpointHeader(
        fingerprint=RunFingerprint.from_dict(data["fingerprint"]),
        seed=seed,
        order=order,
        prompt_origin=str(data["prompt_origin"]),
        input_paths=[str(path) for path in data["input_paths"]],
        created_at=str(data["created_at"]),
    )


def _line(data: dict[str, Any]) -> bytes:
    # One physical line per record: json.dumps escapes newlines inside strings.
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


# --- reading -------------------------------------------------------------------------------


def _damaged(path: Path, where: str) -> CheckpointError:
    return CheckpointError(
        f"The checkpoint {path} is damaged ({where}) and cannot be resumed. "
        f"Delete {path} to start the run over"
    )


def load_checkpoint(path: Path) -> LoadedCheckpoint | None:
    """Read a checkpoint, or return ``None`` when there is none.

    A last line that does not parse is a write cut short by a crash: it is ignored with a
    warning. Any other line that does not parse raises CheckpointError naming the file.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except NotADirectoryError as exc:
        raise _not_a_folder(path.parent) from exc
    except OSError as exc:
        raise CheckpointError(
            f"Cannot read the checkpoint {path}: {exc.strerror}. "
            f"Fix its permissions or delete {path} to start over"
        ) from exc
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise _damaged(path, "it is empty")
    try:
        header_data = json.loads(lines[0])
    except ValueError as exc:
        raise _damaged(path, "line 1 is not a checkpoint header") from exc
    if (
        isinstance(header_data, dict)
        and header_data.get("type") == "header"
        and header_data.get("format") != CHECKPOINT_FORMAT
    ):
        raise CheckpointError(
            f"The checkpoint {path} was written by another version of rag-eval "
            f"(format {header_data.get('format')}). Delete {path} to start the run over"
        )
    try:
        header = _header_from_json(header_data)
    except (ValueError, KeyError, TypeError) as exc:
        raise _damaged(path, "line 1 is not a checkpoint header") from exc
    results: dict[int, QuestionResult] = {}
    torn = False
    for index, raw_line in enumerate(lines[1:], start=2):
        try:
            result = result_from_json(json.loads(raw_line))
        except (ValueError, KeyError, TypeError) as exc:
            if index == len(lines):
                logger.warning(
                    "The last line of checkpoint %s was cut short (a crash mid-write); "
                    "that question will be evaluated again",
                    path,
                )
                torn = True
                break
            raise _damaged(path, f"line {index} is not a finished question") from exc
        # Never re-judged, so a repeat cannot happen; should one appear, the first wins.
        results.setdefault(result.question_number, result)
    return LoadedCheckpoint(path, header, results, torn)


# --- writing -------------------------------------------------------------------------------


class CheckpointWriter:
    """Appends finished questions to a checkpoint, each durable before the next call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise CheckpointError(
                f"Cannot open the checkpoint {path} for writing: {exc.strerror}. "
                "Check the folder's permissions or choose another with --checkpoint-dir"
            ) from exc

    @classmethod
    def create(cls, path: Path, header: CheckpointHeader) -> CheckpointWriter:
        """Start a new checkpoint holding only the header (replacing any older one)."""
        return cls._write_fresh(path, _line(_header_to_json(header)))

    @classmethod
    def resume(cls, loaded: LoadedCheckpoint) -> CheckpointWriter:
        """Continue a loaded checkpoint, rewriting it first without any torn last line."""
        content = _line(_header_to_json(loaded.header)) + b"".join(
            _line(result_to_json(result)) for result in loaded.results.values()
        )
        return cls._write_fresh(loaded.path, content)

    @classmethod
    def _write_fresh(cls, path: Path, content: bytes) -> CheckpointWriter:
        ensure_private_directory(path.parent)
        try:
            # Private from its first byte: the temporary file gets 0600 before anything is written.
            write_bytes_atomic(path, content, mode=_FILE_MODE)
        except OSError as exc:
            raise CheckpointError(
                f"Cannot write the checkpoint {path}: {exc.strerror}. "
                "Free some disk space or choose another folder with --checkpoint-dir"
            ) from exc
        return cls(path)

    def append(self, result: QuestionResult) -> None:
        """Append one finished question and fsync it."""
        if self._fd is None:
            raise RuntimeError("checkpoint writer is closed")
        data = _line(result_to_json(result))
        try:
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
            os.fsync(self._fd)
        except OSError as exc:
            raise CheckpointError(
                f"Cannot write to the checkpoint {self.path}: {exc.strerror}. "
                "Free some disk space, then run the same command again to resume"
            ) from exc

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class RunLock:
    """An exclusive hold on one run's checkpoint for as long as the run lasts.

    ``flock`` locks belong to the open file, so the operating system drops them when the
    process ends in any way, ``kill -9`` included: a crash never leaves a stale lock.
    """

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def release(self) -> None:
        """Let another run use the checkpoint."""
        if self._fd is None:
            return
        # Unlinked while still held, so a later run creates a fresh lock file.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = None


def lock_run(checkpoint: Path) -> RunLock:
    """Take the lock beside ``checkpoint``, or say which run holds it."""
    lock_path = checkpoint.with_suffix(".lock")
    if fcntl is None:  # Windows: no flock; runs over the same files are not guarded.
        return RunLock(lock_path, None)
    ensure_private_directory(checkpoint.parent)
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, _FILE_MODE)
    except OSError as exc:
        raise CheckpointError(
            f"Cannot create the lock file {lock_path}: {exc.strerror}. "
            "Choose another checkpoint folder with --checkpoint-dir"
        ) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 64).decode("ascii", "replace").strip() or "another process"
        os.close(fd)
        raise CheckpointError(
            f"Another rag-eval run over these input files is in progress (process {holder}). "
            "Wait for it to finish, or stop it and run this command again to resume"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode("ascii"))
    return RunLock(lock_path, fd)


def rewrite_checkpoint(
    path: Path, header: CheckpointHeader, results: Iterable[QuestionResult]
) -> None:
    """Replace a checkpoint, atomically, with this header and these finished questions only."""
    loaded = LoadedCheckpoint(path, header, {result.question_number: result for result in results})
    CheckpointWriter.resume(loaded).close()


def remove_checkpoint(path: Path) -> None:
    """Delete a checkpoint once its run has written its results."""
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        logger.warning("Could not delete the checkpoint %s (%s); delete it by hand", path, exc)
