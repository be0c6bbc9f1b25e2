"""The response cache: family results of earlier runs, reused instead of paid for again.

A SQLite file in the user cache folder (``platformdirs.user_cache_dir("rag-eval")``, or
``$RAG_EVAL_CACHE_DIR``), keyed by a digest of everything that decides a result: the model, the
family and its version and settings (prompts, hedge phrases, options), and the texts the family
reads. Only scored results are stored; a hedged judge question is stored with its votes, so a
cached question keeps its majority. Safe under concurrent runs (SQLite's locking, WAL journal,
a busy timeout); a damaged or unusable cache file is reported once and ignored for the run,
never fatal, and so are damaged entries (one warning for the run, each such question asked
again). Results are written in groups (a transaction per result would cost a run more than
its own bookkeeping): at most ``_GROUP_RESULTS`` results or ``_GROUP_SECONDS`` late, and
whatever is waiting when the cache is closed. The cache holds the user's texts: its files are
private (0600), its folder created 0700.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

logger = logging.getLogger(__name__)

CACHE_FILE_NAME = "responses.sqlite3"
_APP_NAME = "rag-eval"
_BUSY_TIMEOUT_MS = 10_000
_FILE_MODE = 0o600
_FOLDER_MODE = 0o700
# SQLite's files beside the database (created with the database file's mode).
_SIDE_FILE_SUFFIXES = ("-wal", "-shm", "-journal")
# A killed run's last results may be missing from the cache (its checkpoint keeps them).
_GROUP_RESULTS = 64
_GROUP_SECONDS = 1.0
# A cache of at most this many results has its keys read into memory once (about 15 MB at
# most): a run's plan then looks each question up in a set, not with a query (a resumed
# run of 100,000 questions made 100,000 queries to find the few results it had stored).
KEYS_IN_MEMORY = 100_000


def default_cache_directory() -> Path:
    return Path(user_cache_dir(_APP_NAME))


def cache_in(directory: Path | None, *, shared: bool = False) -> ResponseCache:
    """The response cache of ``directory``; ``None``: the user cache folder (as evaluate's
    default, after ``RAG_EVAL_CACHE_DIR`` and the settings, which the caller resolves)."""
    return ResponseCache((directory or default_cache_directory()) / CACHE_FILE_NAME, shared=shared)


# What json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")) writes,
# without building an encoder per call (a resume computes a key for every question).
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_json(value: object) -> str:
    """``value`` as the cache's keys serialise it: keys sorted, compact, not ASCII-escaped."""
    return _CANONICAL_JSON.encode(value)


def cache_key(material: Mapping[str, Any]) -> str:
    """The digest of a JSON-able description of a family result's inputs and settings."""
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()


class ResponseCache:
    """Stored family results by key; a disabled cache finds nothing and stores nothing."""

    def __init__(self, path: Path | None, *, shared: bool = False) -> None:
        self.path = path
        # Shared: used from several threads, each use under the caller's lock (the library's).
        self._shared = shared
        self._connection: sqlite3.Connection | None = None
        self.hits = 0
        self._damage_reported = False
        self._families_held: dict[str, bool] = {}
        # Results stored but not yet written: key -> (family, JSON text, when).
        self._waiting: dict[str, tuple[str, str, float]] = {}
        self._written_at = time.monotonic()
        # Every stored key, once read (``might_hold``); None: too many to hold, or not read.
        self._keys: set[str] | None = None
        self._keys_read = False
        if path is not None:
            self._open(path)

    @property
    def enabled(self) -> bool:
        return self._connection is not None

    def _open(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=_FOLDER_MODE)
            _make_private(path)
            connection = sqlite3.connect(
                path, timeout=_BUSY_TIMEOUT_MS / 1000, check_same_thread=not self._shared
            )
            connection.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            # A cache may lose its last entries in a power cut; not worth an fsync per entry.
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS results ("
                "key TEXT PRIMARY KEY, family TEXT NOT NULL, value TEXT NOT NULL, "
                "created REAL NOT NULL)"
            )
            connection.commit()
        except (sqlite3.Error, OSError) as exc:
            self._disable(exc)
            return
        self._connection = connection

    def _disable(self, exc: BaseException) -> None:
        logger.warning(
            "The response cache %s cannot be used (%s); this run calls the model for every "
            "question. Delete that file to start a fresh cache",
            self.path,
            exc,
        )
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
        self._connection = None

    def holds_family(self, family: str) -> bool:
        """Whether the cache has any entry of ``family`` (asked once per run): with none, a
        run need not compute the key of every question to look each one up (a fresh cache,
        as in CI, costs nothing at start-up)."""
        if self._connection is None:
            return False
        held = self._families_held.get(family)
        if held is None:
            rows = self._rows("SELECT 1 FROM results WHERE family = ? LIMIT 1", (family,))
            if rows is None:
                return False
            held = self._families_held[family] = bool(rows)
        return held

    def _rows(self, query: str, parameters: tuple[object, ...]) -> list[tuple[Any, ...]] | None:
        """The rows ``query`` finds; ``None`` when the cache cannot be read (it is then
        disabled, with one warning)."""
        if self._connection is None:
            return None
        try:
            return self._connection.execute(query, parameters).fetchall()
        except sqlite3.Error as exc:
            self._disable(exc)
            return None

    def might_hold(self, key: str) -> bool:
        """False when the cache surely holds no result for ``key``: the keys of a cache of
        at most ``KEYS_IN_MEMORY`` results are read once and looked up in memory; a larger
        cache may hold any key (``get`` looks it up)."""
        if self._connection is None:
            return False
        if not self._keys_read:
            self._keys_read = True
            self._keys = self._read_keys()
        return self._keys is None or key in self._keys or key in self._waiting

    def _read_keys(self) -> set[str] | None:
        rows = self._rows("SELECT key FROM results LIMIT ?", (KEYS_IN_MEMORY + 1,))
        if rows is None or len(rows) > KEYS_IN_MEMORY:
            return None
        return {key for (key,) in rows}

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored result for ``key``, or ``None``."""
        text = self._stored_text(key)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except RecursionError:
            # Nesting deeper than the parser goes: no entry of ours has that.
            self.report_damaged_entry(key, "nested too deeply to read")
            return None
        except (ValueError, TypeError):
            self.report_damaged_entry(key, "not valid JSON")
            return None
        if not isinstance(value, dict):
            self.report_damaged_entry(key, "not a JSON object")
            return None
        self.hits += 1
        return value

    def _stored_text(self, key: str) -> str | None:
        """The JSON text stored for ``key``: waiting to be written, or in the file."""
        if self._connection is None:
            return None
        waiting = self._waiting.get(key)
        if waiting is not None:
            return waiting[1]
        rows = self._rows("SELECT value FROM results WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def report_damaged_entry(self, key: str, reason: str) -> None:
        """One warning for the run's first damaged entry; the others go to the log. Also for
        a caller that finds a stored result it cannot read back."""
        if self._damage_reported:
            logger.info("Response cache entry %s is damaged (%s); ignored", key[:12], reason)
            return
        self._damage_reported = True
        logger.warning(
            "The response cache %s has a damaged entry (%s); such entries are ignored and "
            "their questions asked again. Delete that file to start a fresh cache",
            self.path,
            reason,
        )

    def put(self, key: str, family: str, value: Mapping[str, Any]) -> None:
        """Store a result (an existing entry for the same key is replaced)."""
        if self._connection is None:
            return
        self._waiting[key] = (family, json.dumps(value, ensure_ascii=False), time.time())
        self._families_held[family] = True
        if self._keys is not None:
            self._keys.add(key)
        if (
            len(self._waiting) >= _GROUP_RESULTS
            or time.monotonic() - self._written_at >= _GROUP_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        """Write the results stored since the last write, in one transaction."""
        self._written_at = time.monotonic()
        if self._connection is None or not self._waiting:
            return
        rows = [(key, *entry) for key, entry in self._waiting.items()]
        self._waiting.clear()
        try:
            self._connection.executemany(
                "INSERT OR REPLACE INTO results (key, family, value, created) VALUES (?, ?, ?, ?)",
                rows,
            )
            self._connection.commit()
        except sqlite3.Error as exc:
            self._disable(exc)

    def close(self) -> None:
        if self._connection is not None:
            self.flush()
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _make_private(path: Path) -> None:
    """Create the database file 0600 before SQLite opens it (SQLite gives its side files the
    same mode), and take an older cache's wider mode away."""
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, _FILE_MODE))
    for file in (path, *(path.with_name(path.name + suffix) for suffix in _SIDE_FILE_SUFFIXES)):
        # Another user's file (a shared cache folder) keeps its mode: not ours to change.
        with contextlib.suppress(FileNotFoundError, PermissionError):
            if stat.S_IMODE(file.stat().st_mode) != _FILE_MODE:
                file.chmod(_FILE_MODE)
