"""Atomic file replacement: a reader sees the old file or the whole new one, never a torn one.

The temporary file (``.<name>.<random>.rag-eval.tmp`` beside the target) is locked
(``flock``) while it is written. A run killed with ``kill -9`` leaves it behind, unlocked: the
next atomic write in that folder removes such leftovers, never one still locked (another run
writing it) nor one younger than ``STALE_AFTER_SECONDS`` (a file between its creation and its
lock).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # Windows: no flock; a file being written cannot be removed there anyway
    fcntl = None  # type: ignore[assignment]

TEMPORARY_SUFFIX = ".rag-eval.tmp"
STALE_AFTER_SECONDS = 60.0


def write_text_atomic(
    path: Path,
    text: str,
    *,
    encoding: str = "utf-8",
    mode: int | None = None,
    overwrite: bool = True,
) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    write_bytes_atomic(path, text.encode(encoding), mode=mode, overwrite=overwrite)


def write_bytes_atomic(
    path: Path, data: bytes, *, mode: int | None = None, overwrite: bool = True
) -> None:
    """Write ``data`` to ``path`` through a temporary file, fsync, and ``os.replace``.

    ``mode`` defaults to what a plain ``open()`` would give (0666 less the umask);
    private files pass 0o600 so they are never readable by others, not even briefly.
    With ``overwrite=False`` an existing ``path`` is left alone and ``FileExistsError``
    raised: the file is published with a hard link, which fails rather than replaces.
    """
    with open_atomic(path, mode=mode, overwrite=overwrite) as handle:
        handle.write(data)


@contextlib.contextmanager
def open_atomic(
    path: Path, *, mode: int | None = None, overwrite: bool = True
) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` piece by piece, published whole when the block ends.

    Same guarantees as ``write_bytes_atomic``; a large file never has to be held in memory.
    An exception inside the block leaves ``path`` untouched and removes the temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporary_files(path.parent)
    handle, temp_name = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=TEMPORARY_SUFFIX, dir=path.parent
    )
    # A second descriptor holds the lock until the file is published: closing the written
    # one must not leave the temporary file unlocked under its name for a moment.
    lock = _lock(handle)
    try:
        os.chmod(temp_name, _default_file_mode() if mode is None else mode)
        with os.fdopen(handle, "wb") as temp_file:
            yield temp_file
            temp_file.flush()
            os.fsync(temp_file.fileno())
        if overwrite:
            os.replace(temp_name, path)
        else:
            os.link(temp_name, path)
            os.unlink(temp_name)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    finally:
        if lock is not None:
            os.close(lock)
    _fsync_directory(path.parent)


@contextlib.contextmanager
def scratch_file(folder: Path, name: str) -> Iterator[BinaryIO]:
    """A temporary file in ``folder`` to write and read back, removed when the block ends,
    however it ends. Named and locked as an atomic write's temporary file is, so that one
    left by a killed run is removed by the next atomic write in that folder."""
    folder.mkdir(parents=True, exist_ok=True)  # as an atomic write does
    handle, temp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=TEMPORARY_SUFFIX, dir=folder)
    lock = _lock(handle)
    try:
        with os.fdopen(handle, "w+b") as temp_file:
            yield temp_file
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        if lock is not None:
            os.close(lock)


def _lock(handle: int) -> int | None:
    """Lock the open temporary file (released when the process ends, even by ``kill -9``);
    the descriptor that holds the lock, ``None`` where there is no ``flock``."""
    if fcntl is None:
        return None
    lock = os.dup(handle)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
    except OSError:
        # A file system without locks: the file is written unlocked, and no sweep can lock
        # it to take it for a dead one either.
        os.close(lock)
        return None
    return lock


def remove_stale_temporary_files(folder: Path) -> None:
    """Remove the temporary files of atomic writes that died in ``folder`` (see the module
    docstring); best effort: a file that cannot be examined or removed is left."""
    if fcntl is None:
        return
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") and entry.name.endswith(TEMPORARY_SUFFIX):
            _remove_if_stale(Path(entry.path))


def _remove_if_stale(path: Path) -> None:
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return  # gone already, or a link: not a file of ours
    try:
        if time.time() - os.fstat(handle).st_mtime < STALE_AFTER_SECONDS:
            return
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # Locked by us now: its writer is dead. Still the same file under that name?
        if os.path.samestat(os.fstat(handle), os.stat(path, follow_symlinks=False)):
            os.unlink(path)
    except OSError:
        return  # locked by a live writer, or already replaced
    finally:
        os.close(handle)


def _default_file_mode() -> int:
    # mkstemp creates 0600 files; results and rag_answers.csv are meant to be shared
    # like any file the user saves, so follow the umask as open() would.
    return 0o666 & ~_current_umask()


def _current_umask() -> int:
    # Linux reports the umask without changing it; elsewhere it can only be read by
    # setting it, which is briefly process-wide (harmless for a single-threaded CLI).
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _fsync_directory(directory: Path) -> None:
    # The rename is only durable once the directory entry is on disk; not all
    # platforms allow opening a directory, so this is best effort.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
