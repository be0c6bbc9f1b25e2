"""Reading an input file: its bytes (an error names the file and the fix) and its text."""

from __future__ import annotations

import codecs
import hashlib
import os
import stat
from pathlib import Path

from rag_evaluator.errors import InputError

_HASH_CHUNK_BYTES = 1024 * 1024


def not_a_file(path: Path) -> str | None:
    """What ``path`` is when it exists but holds no file to read (``a directory``, ``a named
    pipe (FIFO)``, ``a device``, ``a socket``), followed through links; ``None`` for a file,
    for ``/dev/null`` (read as an empty file) and for a path that does not exist.

    A pipe could block for ever and ``/dev/zero`` never ends: neither is ever read."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) and _is_dev_null(path):
        return None
    return "a device"


def _is_dev_null(path: Path) -> bool:
    try:
        return os.path.samefile(path, os.devnull)
    except OSError:
        return False


def read_input_bytes(path: Path) -> bytes:
    """The bytes of ``path``, or an ``InputError`` saying why they cannot be read."""
    kind = not_a_file(path)
    if kind is not None:
        raise InputError(f"{path} is {kind}, not a file. Pass a regular file", path)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise unreadable_file_error(path, exc) from exc


def unreadable_file_error(path: Path, exc: OSError) -> InputError:
    """The error for a file the system would not let us read (permissions, I/O error)."""
    reason = exc.strerror or type(exc).__name__
    return InputError(
        f"Cannot read {path}: {reason}. Check that it exists and that you may read it", path
    )


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of the bytes of ``path``, read a chunk at a time (never held whole),
    or an ``InputError`` saying why they cannot be read."""
    kind = not_a_file(path)
    if kind is not None:
        raise InputError(f"{path} is {kind}, not a file. Pass a regular file", path)
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(_HASH_CHUNK_BYTES):
                digest.update(chunk)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(
            f"Cannot read {path}: {reason}. Check that it exists and that you may read it", path
        ) from exc
    return digest.hexdigest()


def decode_text(data: bytes, path: Path) -> tuple[str, str, list[str]]:
    """Decode file bytes as UTF-8 (BOM tolerated), else cp1252, else latin-1, with a warning.

    A UTF-16 byte order mark is honoured too. Returns the text, the encoding used and the
    warnings to show; NUL characters are left for the caller to judge.
    """
    utf16 = _decode_utf16(data)
    if utf16 is not None:
        return utf16, "utf-16", []
    try:
        return data.decode("utf-8-sig"), "utf-8", []
    except UnicodeDecodeError as exc:
        not_utf8_at = exc.start
    # A UTF-8 byte order mark on a file that is not UTF-8 after all is no text of its own.
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError as exc:
        encoding, warning = fallback_encoding(path, not_utf8_at, exc.start)
        return data.decode(encoding), encoding, [warning]
    encoding, warning = fallback_encoding(path, not_utf8_at, None)
    return text, encoding, [warning]


def fallback_encoding(path: Path, not_utf8_at: int, not_cp1252_at: int | None) -> tuple[str, str]:
    """The encoding of bytes that are not UTF-8 (first bad byte ``not_utf8_at``, counted after
    a UTF-8 byte order mark) and the warning that says so: cp1252, or latin-1 when they are
    not cp1252 either (first byte cp1252 leaves undefined: ``not_cp1252_at``)."""
    not_utf8 = f"{path.name} is not valid UTF-8 (byte {not_utf8_at})"
    fix = "Save it as UTF-8 if characters look wrong"
    if not_cp1252_at is not None:
        # cp1252 leaves five bytes undefined; latin-1 decodes every byte.
        return "latin-1", (
            f"{not_utf8}, nor Windows-1252 (byte {not_cp1252_at}); read it as latin-1. {fix}"
        )
    # Excel on Windows saves "CSV" in the ANSI code page, cp1252 in the West: read as
    # latin-1, its euro sign, curly quotes and dashes would become control characters.
    return "cp1252", (
        f"{not_utf8}; read it as Windows-1252 (cp1252, Excel's Windows default). {fix}"
    )


def has_utf16_bom(head: bytes) -> bool:
    """Whether bytes starting with ``head`` (their first four at least) open with a UTF-16
    byte order mark (a UTF-32 one, which starts alike, is not one)."""
    return head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and not head.startswith(
        codecs.BOM_UTF32_LE
    )


def _decode_utf16(data: bytes) -> str | None:
    """Text of a file that starts with a UTF-16 byte order mark (Excel's "Unicode text",
    PowerShell 5's default), or ``None`` when it has none or does not decode."""
    if not has_utf16_bom(data):
        return None
    try:
        return data.decode("utf-16")
    except UnicodeDecodeError:
        return None
