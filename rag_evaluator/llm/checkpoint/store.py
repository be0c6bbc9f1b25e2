"""The checkpoint of an evaluate run: an append-only JSON Lines file, private to the user.

Line 1 is a header (format version, fingerprint of inputs/model/prompt/families, seed, the
shuffled order). Then, in the order things happen:

- ``question``: one finished question, every judged family's result in it. Appended as soon
  as the question's last call is done (a killed process loses nothing: the system holds the
  line) and fsynced within ``SYNC_INTERVAL_SECONDS`` (at once when the last fsync is older):
  a power cut loses at most the last second's questions, which a resume asks again.
- ``stage``: the outcomes of one stage of a question that is not finished yet (the judge's
  first verdict before its consensus votes, claims before their verification, a family done
  while another family of the question is not, the answered calls of a stage cut short, with
  ``null`` for the calls still to answer), so that a stop in between never pays for those
  calls again. Its ``digest`` lists each request's digest, so a resume replays it request by
  request (a whole-stage digest of earlier versions is still matched). The latest line of a
  stage wins. Not fsynced on its own: the next fsync (of any line) makes it durable.
- ``batch_intent``: the requests of a Message Batch about to be created (fsynced before the
  create request goes out), so a stop before its id is known can find the batch again.
- ``batch`` / ``batch_done``: a Message Batch the moment it is created (fsynced), and once
  its results are consumed (each result kept in a ``stage`` line first), so a rerun after a
  crash polls the same batch.

An outcome in a ``stage`` line is final (an answer, or a failure tied to the request), or
``pending``: the request is asked again on resume, and the calls it already paid for (usage,
cost) are carried into its next outcome, so what a run spent is always in the file.

A torn last line (the process died mid-write) is ignored; a damaged line before it is not.
Format 1 checkpoints (judge only) are still read. The API key is never written: nothing here
receives it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from platformdirs import user_state_dir

from rag_evaluator.atomic import write_bytes_atomic
from rag_evaluator.collector import building_long_lived
from rag_evaluator.errors import CheckpointError
from rag_evaluator.families.base import FamilyResult, JudgedFamily, QuestionRecord
from rag_evaluator.families.grading.factual_accuracy import RENAMED_FAMILIES
from rag_evaluator.families.judge.family import JUDGE_FAMILY
from rag_evaluator.families.result_json import count as _count
from rag_evaluator.families.result_json import dollars as _dollars
from rag_evaluator.families.result_json import family_result_from_json as family_result_from_json
from rag_evaluator.families.result_json import family_result_to_json as family_result_to_json
from rag_evaluator.families.result_json import optional_text as _optional_text
from rag_evaluator.families.result_json import usage_from_json as _usage_from_json
from rag_evaluator.families.result_json import usage_to_json as _usage_to_json
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.checkpoint.records import StoredRecords
from rag_evaluator.llm.fingerprint import RunFingerprint
from rag_evaluator.llm.generation_fingerprint import GENERATION_KIND, GenerationFingerprint

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

CHECKPOINT_FORMAT = 2
READABLE_FORMATS = (1, 2)
_APP_NAME = "rag-eval"
_DIRECTORY_MODE = 0o700
_FILE_MODE = 0o600
# Lock files are taken again when another run replaced them between open and flock.
_LOCK_ATTEMPTS = 20
# The longest a finished question's line waits for its fsync. An fsync per question cost a
# fast run about 70 µs of CPU each, and a slow disk milliseconds on the run's own thread.
SYNC_INTERVAL_SECONDS = 1.0

Families = Mapping[str, JudgedFamily[Any]]


@dataclass(frozen=True)
class CheckpointHeader:
    """What a resumed run needs to carry on exactly where the first one stopped."""

    fingerprint: RunFingerprint | GenerationFingerprint
    seed: int
    order: list[int]
    prompt_origin: str
    input_paths: list[str]
    created_at: str
    format: int = CHECKPOINT_FORMAT


@dataclass(frozen=True)
class RecordedOutcome:
    """One call's outcome as the checkpoint keeps it (the answer's raw JSON, not its parse)."""

    payload: dict[str, Any] | None
    error: str | None
    failure: str | None
    usage: TokenUsage
    calls: int
    cost_usd: float
    retries: int = 0

    @property
    def pending(self) -> bool:
        """Not a final outcome: the request is asked again, carrying what it paid."""
        return self.failure == PENDING


# The failure of a recorded outcome that is not final (see ``RecordedOutcome.pending``).
PENDING = "pending"


@dataclass(frozen=True)
class BatchIntent:
    """A Message Batch about to be created: its requests and when (this machine's clock)."""

    custom_ids: tuple[str, ...]
    created_at: datetime


@dataclass(frozen=True)
class RecordedStage:
    """The outcomes of one stage of an unfinished question's family; ``None`` for a request
    not answered yet (the stage was cut short), which a resume sends again."""

    digest: str
    outcomes: tuple[RecordedOutcome | None, ...]
    # The Message Batches whose results the outcomes already hold (never applied twice).
    batches: tuple[str, ...] = ()


StageKey = tuple[int, str, int]  # question number, family, stage index


@dataclass(frozen=True)
class LoadedCheckpoint:
    """A checkpoint read back: header, finished questions (left on disk, see
    ``StoredRecords``), finished stages, open batches. ``valid_length`` is where a torn last
    line starts (the file's length otherwise)."""

    path: Path
    header: CheckpointHeader
    results: StoredRecords
    stages: dict[StageKey, RecordedStage] = field(default_factory=dict)
    open_batches: dict[str, tuple[str, ...]] = field(default_factory=dict)
    torn_line_ignored: bool = False
    valid_length: int = 0
    # Batch intents with no batch recorded: the create request may or may not have arrived.
    unconfirmed_intents: dict[str, BatchIntent] = field(default_factory=dict)
    # What the run has paid for so far: every question line and every unfinished stage.
    spent_usd: float = 0.0
    # The last line lacks its newline (the process died right after writing it).
    missing_newline: bool = False
    # Every batch the checkpoint names (open or done): never taken for another intent's.
    recorded_batches: frozenset[str] = frozenset()


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


def record_to_json(record: QuestionRecord, families: Families) -> dict[str, Any]:
    """The checkpoint line of one finished question (no full reasoning, no secrets)."""
    return {
        "type": "question",
        "question_number": record.question_number,
        "families": {
            name: family_result_to_json(families[name], result)
            for name, result in record.results.items()
        },
    }


def record_from_json(data: Any, families: Families) -> QuestionRecord:
    """Read a question line back; raises KeyError/TypeError/ValueError when malformed."""
    if not isinstance(data, dict) or data.get("type") != "question":
        raise ValueError("not a question line")
    number = data["question_number"]
    if isinstance(number, bool) or not isinstance(number, int):
        raise ValueError("question_number must be an integer")
    if "families" not in data:
        return _record_from_format_1(number, data, families)
    saved = data["families"]
    if not isinstance(saved, dict):
        raise ValueError("families must be an object")
    results: dict[str, FamilyResult] = {}
    for saved_name, result in saved.items():
        # A family renamed since is read under today's name, so that the run's fingerprint,
        # not a parse error, says why the checkpoint cannot be resumed.
        name = RENAMED_FAMILIES.get(saved_name, saved_name)
        if name not in families:
            raise ValueError(f"unknown family {name!r}")
        results[name] = family_result_from_json(families[name], result)
    return QuestionRecord(number, results)


def stored_records(path: Path, families: Families) -> StoredRecords:
    """An empty ``StoredRecords`` of the checkpoint at ``path``."""

    def read(line: bytes) -> QuestionRecord:
        return record_from_json(json.loads(line.decode("utf-8")), families)

    return StoredRecords(path, families, read)


def _record_from_format_1(number: int, data: dict[str, Any], families: Families) -> QuestionRecord:
    """A format 1 question line (the judge alone) as a format 2 record."""
    error = _optional_text(data["error"])
    result = families[JUDGE_FAMILY].from_json(
        data,
        usage=_usage_from_json(data["usage"]),
        calls=_count(data["calls"]),
        error=error,
        # Format 1 did not say why a row was unscored; it kept only rows it meant to keep.
        failure="question" if error is not None else None,
    )
    return QuestionRecord(number, {JUDGE_FAMILY: result})


def _outcome_to_json(outcome: RecordedOutcome | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    data = {
        "payload": outcome.payload,
        "error": outcome.error,
        "failure": outcome.failure,
        "usage": _usage_to_json(outcome.usage),
        "calls": outcome.calls,
        "cost_usd": outcome.cost_usd,
    }
    if outcome.retries:
        data["retries"] = outcome.retries
    return data


def _outcome_from_json(data: Any) -> RecordedOutcome | None:
    if data is None:
        return None
    payload = data["payload"]
    if payload is not None and not isinstance(payload, dict):
        raise ValueError("payload must be an object or null")
    return RecordedOutcome(
        payload=payload,
        error=_optional_text(data["error"]),
        failure=_optional_text(data["failure"]),
        usage=_usage_from_json(data["usage"]),
        calls=_count(data["calls"]),
        cost_usd=_dollars(data["cost_usd"]),
        retries=_count(data.get("retries", 0)),
    )


def _stage_json(
    key: StageKey,
    digest: str,
    outcomes: Sequence[RecordedOutcome | None],
    batches: Sequence[str],
) -> dict[str, Any]:
    question_number, family, stage = key
    line: dict[str, Any] = {
        "type": "stage",
        "question_number": question_number,
        "family": family,
        "stage": stage,
        "digest": digest,
        "outcomes": [_outcome_to_json(outcome) for outcome in outcomes],
    }
    if batches:
        line["batches"] = list(batches)
    return line


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


def _fingerprint_from_json(data: Any) -> RunFingerprint | GenerationFingerprint:
    # A generate run's checkpoint says so; evaluate's (formats 1 and 2) have no kind.
    if isinstance(data, dict) and data.get("kind") == GENERATION_KIND:
        return GenerationFingerprint.from_dict(data)
    return RunFingerprint.from_dict(data)


def _header_from_json(data: Any) -> CheckpointHeader:
    if not isinstance(data, dict) or data.get("type") != "header":
        raise ValueError("not a header line")
    order = data["order"]
    if not isinstance(order, list) or not all(
        isinstance(number, int) and not isinstance(number, bool) for number in order
    ):
        raise ValueError("order must be a list of question numbers")
    seed = data["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError("seed must be an integer")
    return CheckpointHeader(
        fingerprint=_fingerprint_from_json(data["fingerprint"]),
        seed=seed,
        order=order,
        prompt_origin=str(data["prompt_origin"]),
        input_paths=[str(path) for path in data["input_paths"]],
        created_at=str(data["created_at"]),
        format=data["format"],
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


class _Reader:
    """Collects the lines of a checkpoint into a ``LoadedCheckpoint``."""

    def __init__(self, path: Path, families: Families) -> None:
        self.families = families
        self.results = stored_records(path, families)
        self.stages: dict[StageKey, RecordedStage] = {}
        self.open_batches: dict[str, tuple[str, ...]] = {}
        self.intents: dict[str, BatchIntent] = {}
        self.confirmed_intents: set[str] = set()
        self.recorded_batches: set[str] = set()

    def add(self, data: Any, offset: int) -> None:
        if not isinstance(data, dict):
            raise ValueError("not an object")
        kind = data.get("type")
        if kind == "question":
            # Read whole to check it, then let go: only where it starts is kept. Never
            # judged twice; should a repeat appear, the first wins.
            self.results.add(record_from_json(data, self.families), offset)
        elif kind == "stage":
            family = str(data["family"])
            family = RENAMED_FAMILIES.get(family, family)
            key = (_count(data["question_number"]), family, _count(data["stage"]))
            outcomes = tuple(_outcome_from_json(outcome) for outcome in data["outcomes"])
            batches = _texts(data.get("batches", []))
            self.stages[key] = RecordedStage(str(data["digest"]), outcomes, batches)
        elif kind == "batch_intent":
            created_at = datetime.fromisoformat(str(data["created_at"]))
            self.intents[str(data["intent"])] = BatchIntent(_texts(data["custom_ids"]), created_at)
        elif kind == "batch":
            self._add_batch(data)
        elif kind == "batch_done":
            self.open_batches.pop(str(data["id"]), None)
        elif kind == "batch_intent_void":
            self.confirmed_intents.add(str(data["intent"]))
        else:
            raise ValueError(f"unknown line type {kind!r}")

    def _add_batch(self, data: dict[str, Any]) -> None:
        self.recorded_batches.add(str(data["id"]))
        intent = data.get("intent")
        if intent is not None:
            # The ids are those of its intent, written just before.
            self.open_batches[str(data["id"])] = self.intents[str(intent)].custom_ids
            self.confirmed_intents.add(str(intent))
        else:
            self.open_batches[str(data["id"])] = _texts(data["custom_ids"])

    def unconfirmed_intents(self) -> dict[str, BatchIntent]:
        return {
            name: intent
            for name, intent in self.intents.items()
            if name not in self.confirmed_intents
        }


def _texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError("custom_ids must be a list")
    return tuple(str(item) for item in value)


def _stage_cost(stage: RecordedStage) -> float:
    return sum(outcome.cost_usd for outcome in stage.outcomes if outcome is not None)


def _open_for_reading(path: Path) -> BinaryIO | None:
    try:
        return path.open("rb")
    except FileNotFoundError:
        return None
    except NotADirectoryError as exc:
        raise _not_a_folder(path.parent) from exc
    except OSError as exc:
        raise _unreadable(path, exc) from exc


def load_checkpoint(path: Path, families: Families) -> LoadedCheckpoint | None:
    """Read a checkpoint, or return ``None`` when there is none.

    A last line that does not parse is a write cut short by a crash: it is ignored with a
    warning. Any other line that does not parse raises CheckpointError naming the file.
    """
    handle = _open_for_reading(path)
    if handle is None:
        return None
    with handle:
        try:
            return _read_checkpoint(path, handle, families)
        except OSError as exc:
            raise _unreadable(path, exc) from exc


def read_header(path: Path) -> CheckpointHeader | None:
    """A checkpoint's header alone (``None`` when there is no checkpoint): what a run is
    compared with before any of its records, read with the run's families, is parsed."""
    handle = _open_for_reading(path)
    if handle is None:
        return None
    with handle:
        try:
            return _parse_header(path, handle.readline())
        except OSError as exc:
            raise _unreadable(path, exc) from exc


def count_finished(path: Path) -> int:
    """How many finished questions a checkpoint holds, counted without reading their
    results (whatever families wrote them); damaged lines are not counted."""
    handle = _open_for_reading(path)
    if handle is None:
        return 0
    finished = 0
    with handle:
        handle.readline()
        for raw_line in handle:
            if b'"type":"question"' not in raw_line:
                continue
            try:
                data = json.loads(raw_line.decode("utf-8"))
            except (ValueError, RecursionError):
                continue
            finished += isinstance(data, dict) and data.get("type") == "question"
    return finished


def _unreadable(path: Path, exc: OSError) -> CheckpointError:
    return CheckpointError(
        f"Cannot read the checkpoint {path}: {exc.strerror}. "
        f"Fix its permissions or delete {path} to start over"
    )


def _parse_header(path: Path, first: bytes) -> CheckpointHeader:
    if not first:
        raise _damaged(path, "it is empty")
    try:
        header_data = json.loads(first)
    except (ValueError, RecursionError) as exc:
        raise _damaged(path, "line 1 is not a checkpoint header") from exc
    if (
        isinstance(header_data, dict)
        and header_data.get("type") == "header"
        and header_data.get("format") not in READABLE_FORMATS
    ):
        raise CheckpointError(
            f"The checkpoint {path} was written by another version of rag-eval "
            f"(format {header_data.get('format')}). Delete {path} to start the run over"
        )
    try:
        return _header_from_json(header_data)
    except (ValueError, KeyError, TypeError) as exc:
        raise _damaged(path, "line 1 is not a checkpoint header") from exc


def _read_checkpoint(path: Path, handle: BinaryIO, families: Families) -> LoadedCheckpoint:
    # Line by line from the stream: a million-question checkpoint is never held whole.
    first = handle.readline()
    header = _parse_header(path, first)
    reader = _Reader(path, families)
    offset = len(first)
    raw_line_end = first[-1:]
    # A line that does not parse is a torn write only if it is the last one: the verdict
    # waits for the next line.
    unparsed: tuple[int, int, Exception] | None = None
    # Reading a million lines builds millions of objects and none is garbage: the cyclic
    # collector would only slow the load down.
    with building_long_lived():
        for index, raw_line in enumerate(handle, start=2):
            if unparsed is not None:
                where = f"line {unparsed[0]} is not a checkpoint record"
                raise _damaged(path, where) from unparsed[2]
            try:
                # Decoded here (a torn line may end inside a character): json.loads on
                # text skips its per-line encoding detection.
                reader.add(json.loads(raw_line.decode("utf-8")), offset)
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                unparsed = (index, offset, exc)
            offset += len(raw_line)
            raw_line_end = raw_line[-1:]
    valid_length = offset
    missing_newline = unparsed is None and bool(raw_line_end) and raw_line_end != b"\n"
    if unparsed is not None:
        logger.warning(
            "The last line of checkpoint %s was cut short (a crash mid-write); "
            "what it held will be evaluated again",
            path,
        )
        valid_length = unparsed[1]
    stages = {key: stage for key, stage in reader.stages.items() if key[0] not in reader.results}
    return LoadedCheckpoint(
        path,
        header,
        reader.results,
        stages,
        reader.open_batches,
        torn_line_ignored=unparsed is not None,
        valid_length=valid_length,
        unconfirmed_intents=reader.unconfirmed_intents(),
        spent_usd=reader.results.cost_usd + sum(_stage_cost(stage) for stage in stages.values()),
        missing_newline=missing_newline,
        recorded_batches=frozenset(reader.recorded_batches),
    )


# --- writing -------------------------------------------------------------------------------


class CheckpointWriter:
    """Appends to a checkpoint. A finished question's line is written at once and fsynced
    within ``sync_interval`` seconds; the lines of a Message Batch are fsynced at once."""

    def __init__(
        self, path: Path, families: Families, *, sync_interval: float = SYNC_INTERVAL_SECONDS
    ) -> None:
        self.path = path
        self.families = families
        self._sync = _GroupedSync(sync_interval)
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND)
            # Where the next line starts: the run holds the lock, so nothing else appends.
            self._size = os.fstat(self._fd).st_size
        except OSError as exc:
            raise CheckpointError(
                f"Cannot open the checkpoint {path} for writing: {exc.strerror}. "
                "Check the folder's permissions or choose another with --checkpoint-dir"
            ) from exc

    def __enter__(self) -> CheckpointWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @classmethod
    def create(
        cls,
        path: Path,
        header: CheckpointHeader,
        families: Families,
        *,
        sync_interval: float = SYNC_INTERVAL_SECONDS,
    ) -> CheckpointWriter:
        """Start a new checkpoint holding only the header (replacing any older one)."""
        _write_fresh(path, _line(_header_to_json(header)))
        return cls(path, families, sync_interval=sync_interval)

    @classmethod
    def resume(
        cls,
        loaded: LoadedCheckpoint,
        families: Families,
        *,
        sync_interval: float = SYNC_INTERVAL_SECONDS,
    ) -> CheckpointWriter:
        """Continue a loaded checkpoint: an older format is rewritten first, a torn last line
        cut off (the lines before it stay where they are)."""
        if loaded.header.format != CHECKPOINT_FORMAT:
            rewrite_checkpoint(loaded, families)
        elif loaded.torn_line_ignored:
            _cut_torn_line(loaded)
        writer = cls(loaded.path, families, sync_interval=sync_interval)
        if loaded.missing_newline and not loaded.torn_line_ignored:
            # A whole last line without its newline: end it, or the next line would join it.
            writer._write(b"\n", durable=True)
        return writer

    def _write(self, data: bytes, *, durable: bool | None) -> None:
        """Append ``data``, fsynced at once (``True``), within the sync interval (``None``)
        or by whichever fsync comes next (``False``)."""
        if self._fd is None:
            raise RuntimeError("checkpoint writer is closed")
        try:
            self._sync.raise_failure()
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
            self._size += written
            if durable:
                self._sync.now(self._fd)
            elif durable is None:
                self._sync.soon(self._fd)
        except OSError as exc:
            raise self._write_error(exc) from exc

    def _write_error(self, exc: OSError) -> CheckpointError:
        return CheckpointError(
            f"Cannot write to the checkpoint {self.path}: {exc.strerror}. "
            "Free some disk space, then run the same command again to resume"
        )

    def append(self, record: QuestionRecord) -> int:
        """Append one finished question (fsynced within the sync interval); the offset its
        line starts at."""
        offset = self._size
        self._write(_line(record_to_json(record, self.families)), durable=None)
        return offset

    def append_stage(
        self,
        key: StageKey,
        digest: str,
        outcomes: Sequence[RecordedOutcome | None],
        batches: Sequence[str] = (),
    ) -> None:
        """Record a stage of an unfinished question, finished or in part (``None`` for a call
        not answered yet), with the Message Batches whose results it holds; the latest line of
        a stage wins. Made durable by the next fsync."""
        self._write(_line(_stage_json(key, digest, outcomes, batches)), durable=False)

    def append_batch_intent(self, intent: str, custom_ids: Sequence[str], when: datetime) -> None:
        """Record, durably, the requests of a Message Batch about to be created."""
        line = {
            "type": "batch_intent",
            "intent": intent,
            "custom_ids": list(custom_ids),
            "created_at": when.isoformat(),
        }
        self._write(_line(line), durable=True)

    def append_batch(self, batch_id: str, intent: str) -> None:
        """Record a Message Batch the moment it exists (its requests are its intent's)."""
        line = {"type": "batch", "id": batch_id, "intent": intent}
        self._write(_line(line), durable=True)

    def append_batch_intent_void(self, intent: str) -> None:
        """Record that no batch was created for an intent (looked for, not found)."""
        self._write(_line({"type": "batch_intent_void", "intent": intent}), durable=True)

    def append_batch_done(self, batch_id: str) -> None:
        self._write(_line({"type": "batch_done", "id": batch_id}), durable=True)

    def close(self) -> None:
        """Fsync what was written and close the file. Every line is written by then, so a
        failed fsync is logged, not raised: the run's results do not depend on it."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            self._sync.now(fd)
        except OSError:
            logger.info("Could not fsync the checkpoint %s on close", self.path)
        finally:
            os.close(fd)


class _GroupedSync:
    """Fsyncs a file at most once per interval, and no later than one interval after a line
    asked for it: a timer thread makes the fsync that has to wait. A failure on that thread
    is kept and raised by the writer's next write or close."""

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._lock = threading.Lock()
        self._last = -float("inf")  # when the last fsync started (monotonic clock)
        self._timer: threading.Timer | None = None
        self._failure: OSError | None = None

    def now(self, fd: int) -> None:
        with self._lock:
            self._cancel_timer()
            self._fsync(fd)
        self.raise_failure()

    def soon(self, fd: int) -> None:
        with self._lock:
            if self._timer is not None:
                return  # the fsync already waiting covers this line too
            wait = self._last + self._interval - time.monotonic()
            if wait <= 0:
                self._fsync(fd)
            else:
                self._timer = threading.Timer(wait, self._fsync_later, args=(fd,))
                self._timer.daemon = True
                self._timer.start()
        self.raise_failure()

    def raise_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def _fsync_later(self, fd: int) -> None:
        with self._lock:
            if self._timer is None:
                return  # cancelled: the writer fsynced or closed meanwhile
            self._timer = None
            self._fsync(fd)

    def _fsync(self, fd: int) -> None:
        self._last = time.monotonic()
        try:
            os.fsync(fd)
        except OSError as exc:
            self._failure = exc

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _write_fresh(path: Path, content: bytes) -> None:
    ensure_private_directory(path.parent)
    try:
        # Private from its first byte: the temporary file gets 0600 before anything is written.
        write_bytes_atomic(path, content, mode=_FILE_MODE)
    except OSError as exc:
        raise CheckpointError(
            f"Cannot write the checkpoint {path}: {exc.strerror}. "
            "Free some disk space or choose another folder with --checkpoint-dir"
        ) from exc


def _cut_torn_line(loaded: LoadedCheckpoint) -> None:
    try:
        with loaded.path.open("r+b") as handle:
            handle.truncate(loaded.valid_length)
            os.fsync(handle.fileno())
    except OSError as exc:
        raise CheckpointError(
            f"Cannot repair the checkpoint {loaded.path}: {exc.strerror}. "
            "Check the folder's permissions or choose another with --checkpoint-dir"
        ) from exc


def rewrite_checkpoint(loaded: LoadedCheckpoint, families: Families) -> None:
    """Replace a checkpoint, atomically, with its header, records, stages and open batches
    in the current format; the stored records then point into the new file."""
    header = replace(loaded.header, format=CHECKPOINT_FORMAT)
    parts = [_line(_header_to_json(header))]
    numbers: array[int] = array("q")
    offsets: array[int] = array("q")
    position = len(parts[0])
    for number, _ in list(loaded.results.entries()):
        line = _line(record_to_json(loaded.results[number], families))
        numbers.append(number)
        offsets.append(position)
        position += len(line)
        parts.append(line)
    for key, recorded in loaded.stages.items():
        stage_line = _stage_json(key, recorded.digest, recorded.outcomes, recorded.batches)
        parts.append(_line(stage_line))
    for batch_id, custom_ids in loaded.open_batches.items():
        parts.append(_line({"type": "batch", "id": batch_id, "custom_ids": list(custom_ids)}))
    _write_fresh(loaded.path, b"".join(parts))
    loaded.results.relocate(numbers, offsets)


def keep_declined_checkpoint(path: Path, created_at: str) -> Path | None:
    """Move aside a checkpoint whose run the user chose not to resume; its new path.

    Named after the old run's start (``run-<key>.20261123-014652.jsonl``), so paid-for
    verdicts are never deleted silently.
    """
    stamp = created_at.replace("-", "").replace(":", "").replace("T", "-")
    stamp = "".join(character for character in stamp if character.isalnum() or character == "-")
    target = path.with_name(f"{path.stem}.{stamp or 'old'}{path.suffix}")
    counter = 2
    while target.exists():
        target = path.with_name(f"{path.stem}.{stamp or 'old'}-{counter}{path.suffix}")
        counter += 1
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CheckpointError(
            f"Cannot keep the old checkpoint {path} aside as {target}: {exc.strerror}. "
            "Move it yourself, then run the same command again"
        ) from exc
    return target


def remove_checkpoint(path: Path) -> None:
    """Delete a checkpoint once its run has written its results."""
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        logger.warning("Could not delete the checkpoint %s (%s); delete it by hand", path, exc)


# --- one run at a time ---------------------------------------------------------------------


class RunLock:
    """An exclusive hold on one run's checkpoint for as long as the run lasts.

    ``flock`` locks belong to the open file, so the operating system drops them when the
    process ends in any way, ``kill -9`` included: a crash never leaves a stale lock. The
    lock file itself stays (deleting it while held would let a second run lock a new file
    of the same name while a third still holds the old one).
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
        os.close(self._fd)
        self._fd = None


def _holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 64).decode("ascii", "replace").strip() or "another process"
    except OSError:
        return "another process"


def lock_run(checkpoint: Path) -> RunLock:
    """Take the lock beside ``checkpoint``, or say which run holds it."""
    lock_path = checkpoint.with_suffix(".lock")
    if fcntl is None:  # Windows: no flock; runs over the same files are not guarded.
        return RunLock(lock_path, None)
    ensure_private_directory(checkpoint.parent)
    for _ in range(_LOCK_ATTEMPTS):
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, _FILE_MODE)
        except OSError as exc:
            raise CheckpointError(
                f"Cannot create the lock file {lock_path}: {exc.strerror}. "
                "Choose another checkpoint folder with --checkpoint-dir"
            ) from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                raise CheckpointError(
                    f"Another rag-eval run over these input files is in progress (process "
                    f"{holder}). Wait for it to finish, or stop it and run this command again "
                    "to resume"
                ) from None
            # The file locked must still be the one at the path (an older rag-eval unlinked
            # its lock file on release); otherwise try again with the current file.
            try:
                same_file = os.path.samestat(os.fstat(fd), os.stat(lock_path))
            except FileNotFoundError:
                same_file = False
            if not same_file:
                os.close(fd)
                continue
            try:
                os.ftruncate(fd, 0)
                os.write(fd, str(os.getpid()).encode("ascii"))
            except OSError as exc:
                raise CheckpointError(
                    f"Cannot take the lock file {lock_path}: {exc.strerror}. Delete it if it is "
                    "not a regular file, or choose another checkpoint folder with --checkpoint-dir"
                ) from exc
        except BaseException:
            os.close(fd)
            raise
        return RunLock(lock_path, fd)
    raise CheckpointError(
        f"Could not take the lock file {lock_path}: it kept being replaced. Make sure no "
        "other program writes in the checkpoint folder, then run this command again"
    )
