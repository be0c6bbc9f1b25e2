"""Inputs too large to hold: the three files' rows spooled to an on-disk SQLite file as they
are read, and the run's items read back from it one at a time.

A run over a spool holds the question numbers, never the texts: each item is built again
from its rows whenever it is needed (to plan its calls, to send them, to write its row).
"""

from __future__ import annotations

import logging
import marshal
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, overload

from rag_evaluator.errors import ConfigError
from rag_evaluator.inputs.records import (
    NO_METADATA,
    AnswerRow,
    EvaluationItem,
    GroundTruthRow,
    QuestionRow,
)
from rag_evaluator.inputs.selection import join_rows

try:  # POSIX only: where it is missing, abandoned spools are left for the system to clear
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

SPOOL_PREFIX = "rag-eval-spool-"
_LOCK_FILE = "in-use.lock"
QUESTIONS_TABLE = "questions"
GROUND_TRUTH_TABLE = "ground_truth"
ANSWERS_TABLE = "answers"
_TABLES = (QUESTIONS_TABLE, GROUND_TRUTH_TABLE, ANSWERS_TABLE)
# Rows written per transaction statement: large enough that SQLite's per-statement cost
# vanishes, small enough that a batch of long answers is a few megabytes.
_BATCH_ROWS = 500
# Rows read per fetch while walking the items in number order.
_FETCH_ROWS = 256
# A selection of fewer than one in this many of the spool's questions is read by lookups
# (a lookup costs a few times what a row of a walk does).
_LOOKUPS_BELOW = 8
_JOIN = (
    f"SELECT q.number, q.row, g.row, a.row FROM {QUESTIONS_TABLE} q "
    f"LEFT JOIN {GROUND_TRUTH_TABLE} g ON g.number = q.number "
    f"LEFT JOIN {ANSWERS_TABLE} a ON a.number = q.number"
)
_NO_TRUTH = GroundTruthRow(0, "")


def _question_blob(row: QuestionRow) -> bytes:
    return marshal.dumps((row.question, dict(row.metadata) if row.metadata else None))


def _truth_blob(row: GroundTruthRow) -> bytes:
    return marshal.dumps(
        (row.ground_truth, row.relevant_contexts, row.required_facts, row.reference_answers)
    )


def _answer_blob(row: AnswerRow) -> bytes:
    return marshal.dumps((row.rag_answer, row.contexts, row.retrieval_scores))


def _question_row(number: int, blob: bytes) -> QuestionRow:
    question, metadata = marshal.loads(blob)
    return QuestionRow(number, question, metadata if metadata else NO_METADATA)


def _truth_row(number: int, blob: bytes | None) -> GroundTruthRow:
    if blob is None:
        return _NO_TRUTH
    return GroundTruthRow(number, *marshal.loads(blob))


def _answer_row(number: int, blob: bytes | None) -> AnswerRow | None:
    if blob is None:
        return None
    return AnswerRow(number, *marshal.loads(blob))


_BLOBS = {
    QUESTIONS_TABLE: _question_blob,
    GROUND_TRUTH_TABLE: _truth_blob,
    ANSWERS_TABLE: _answer_blob,
}


class InputSpool:
    """The spool of one run, in a temporary folder removed on ``close``.

    The folder is made under the system's temporary directory (``TMPDIR``), which must have
    room for about the size of the input files.
    """

    def __init__(self, directory: Path | None = None) -> None:
        where = Path(directory or tempfile.gettempdir())
        remove_abandoned_spools(where)
        try:
            self._folder = tempfile.TemporaryDirectory(prefix=SPOOL_PREFIX, dir=where)
            self._owner = _hold_folder(Path(self._folder.name))
        except OSError as exc:
            raise ConfigError(
                f"Cannot make the inputs' spool in {where}: {exc.strerror or exc}. Point "
                "TMPDIR at a folder you may write to, with room for about the size of the "
                "input files"
            ) from exc
        path = Path(self._folder.name) / "inputs.sqlite"
        # Read from the engine's threads as well as the main one, one statement at a time.
        self._connection = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        self._question_count: int | None = None
        self._connection.execute("PRAGMA journal_mode = OFF")
        self._connection.execute("PRAGMA synchronous = OFF")
        for table in _TABLES:
            self._connection.execute(
                f"CREATE TABLE {table} (number INTEGER PRIMARY KEY, row BLOB NOT NULL)"
            )

    def add_rows(self, table: str, rows: Iterable[tuple[int, object]]) -> None:
        """Write ``rows`` (question number, row) to ``table``; each number comes once."""
        blob = _BLOBS[table]
        statement = f"INSERT INTO {table} (number, row) VALUES (?, ?)"
        batch: list[tuple[int, bytes]] = []
        with self._failing("write"), self._lock, self._connection:
            for number, row in rows:
                batch.append((number, blob(row)))  # type: ignore[arg-type]
                if len(batch) >= _BATCH_ROWS:
                    self._connection.executemany(statement, batch)
                    batch.clear()
            self._connection.executemany(statement, batch)
        self._question_count = None

    @contextmanager
    def _failing(self, action: str) -> Iterator[None]:
        """A spool that cannot be written or read (a full disk, a folder removed under the
        run) as the tool's error, with the fix."""
        try:
            yield
        except sqlite3.Error as exc:
            raise ConfigError(
                f"Cannot {action} the inputs' spool in {self._folder.name}: {exc}. Free space "
                "there (it takes about the size of the input files) or point TMPDIR at a "
                "folder with room, and run again"
            ) from exc

    def item(self, number: int) -> EvaluationItem:
        """The item of ``number`` (a number of the questions file)."""
        with self._failing("read"), self._lock:
            found = self._connection.execute(f"{_JOIN} WHERE q.number = ?", (number,)).fetchone()
        if found is None:
            raise KeyError(number)
        return _joined(*found)

    def question_count(self) -> int:
        """The rows of the questions file in the spool."""
        if self._question_count is None:
            with self._failing("read"), self._lock:
                (count,) = self._connection.execute(
                    f"SELECT COUNT(*) FROM {QUESTIONS_TABLE}"
                ).fetchone()
            self._question_count = int(count)
        return self._question_count

    def walk(self) -> Iterator[EvaluationItem]:
        """Every question's item, in question-number order."""
        with self._failing("read"), self._lock:
            cursor = self._connection.execute(f"{_JOIN} ORDER BY q.number")
        while True:
            with self._failing("read"), self._lock:
                found = cursor.fetchmany(_FETCH_ROWS)
            if not found:
                return
            for joined in found:
                yield _joined(*joined)

    def close(self) -> None:
        with self._lock:
            self._connection.close()
        self._folder.cleanup()
        if self._owner is not None:
            self._owner.close()


def _hold_folder(folder: Path) -> IO[bytes] | None:
    """The open, locked lock file that marks ``folder`` as in use for as long as this process
    lives (the system lets go of the lock when the process ends, however it ends); ``None``
    where files cannot be locked (Windows: abandoned spools are then never removed)."""
    if fcntl is None:
        return None
    # Locked under another name, then renamed: a folder whose lock file exists is locked.
    pending = folder / f"{_LOCK_FILE}.new"
    owner = pending.open("wb")
    try:
        fcntl.flock(owner.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        # A file system without locks: no lock file, so no other run ever removes it.
        owner.close()
        return None
    pending.rename(folder / _LOCK_FILE)
    return owner


def remove_abandoned_spools(directory: Path) -> None:
    """Remove the spools in ``directory`` left by runs that ended without removing theirs (a
    killed process, a power cut): those whose lock file no process holds."""
    if fcntl is None:
        return
    try:
        folders = [path for path in directory.glob(f"{SPOOL_PREFIX}*") if path.is_dir()]
    except OSError:
        return
    for folder in folders:
        try:
            with (folder / _LOCK_FILE).open("rb") as lock:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(folder, ignore_errors=True)
                logger.info("Removed the spool of an earlier run that ended abruptly: %s", folder)
        except OSError:
            continue  # in use by a running process, or not ours to remove


def _joined(
    number: int, question: bytes, truth: bytes | None, answer: bytes | None
) -> EvaluationItem:
    return join_rows(
        _question_row(number, question), _truth_row(number, truth), _answer_row(number, answer)
    )


class SpooledItems(Sequence[EvaluationItem]):
    """The items of ``numbers`` (sorted) from a spool, in question-number order: a sequence
    that holds the numbers and builds each item when it is read."""

    # Read in question-number order already: a reader that needs that order need not sort.
    in_number_order = True

    def __init__(self, spool: InputSpool, numbers: Sequence[int], *, every: bool) -> None:
        self.spool = spool
        self.numbers = list(numbers)
        # Every question of the spool: walking it needs no membership test per row.
        self._every = every
        self._chosen: frozenset[int] | None = None

    def __len__(self) -> int:
        return len(self.numbers)

    @overload
    def __getitem__(self, index: int) -> EvaluationItem: ...
    @overload
    def __getitem__(self, index: slice) -> SpooledItems: ...
    def __getitem__(self, index: int | slice) -> EvaluationItem | SpooledItems:
        if isinstance(index, slice):
            return SpooledItems(self.spool, self.numbers[index], every=False)
        return self.spool.item(self.numbers[index])

    def __iter__(self) -> Iterator[EvaluationItem]:
        if self._every:
            yield from self.spool.walk()
            return
        if len(self.numbers) * _LOOKUPS_BELOW < self.spool.question_count():
            # A few questions of many (--limit, a budget stop): looked up one by one rather
            # than the whole spool walked to find them.
            for number in self.numbers:
                yield self.spool.item(number)
            return
        if self._chosen is None:
            self._chosen = frozenset(self.numbers)
        chosen = self._chosen
        for item in self.spool.walk():
            if item.question_number in chosen:
                yield item

    def only(self, numbers: Iterable[int]) -> SpooledItems:
        """The items of those of ``numbers`` that are among these."""
        wanted = set(numbers)
        return SpooledItems(
            self.spool, [number for number in self.numbers if number in wanted], every=False
        )

    def by_number(self) -> SpooledLookup:
        return SpooledLookup(self)


class SpooledLookup(Mapping[int, EvaluationItem]):
    """Spooled items by question number: an item read from the spool on each lookup."""

    def __init__(self, items: SpooledItems) -> None:
        self._items = items
        self._numbers = frozenset(items.numbers)

    def __getitem__(self, number: int) -> EvaluationItem:
        if number not in self._numbers:
            raise KeyError(number)
        return self._items.spool.item(number)

    def __contains__(self, number: object) -> bool:
        return number in self._numbers

    def __iter__(self) -> Iterator[int]:
        return iter(self._items.numbers)

    def __len__(self) -> int:
        return len(self._numbers)


def items_among(
    items: Sequence[EvaluationItem], numbers: Iterable[int]
) -> Sequence[EvaluationItem]:
    """Those of ``items`` whose question number is among ``numbers``, in their order; a
    spool's stay on disk."""
    if isinstance(items, SpooledItems):
        return items.only(numbers)
    wanted = numbers if isinstance(numbers, (set, frozenset)) else set(numbers)
    return [item for item in items if item.question_number in wanted]


def question_numbers(items: Sequence[EvaluationItem]) -> list[int]:
    """The question numbers of ``items``, in their order (a spool's without reading it)."""
    if isinstance(items, SpooledItems):
        return list(items.numbers)
    return [item.question_number for item in items]
