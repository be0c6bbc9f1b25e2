"""Atomic file replacement: a reader sees the old file or the whole new one, never a torn one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


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
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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
    _fsync_directory(path.parent)


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
