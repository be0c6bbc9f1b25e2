"""Logging set-up: the debug log file, warnings on the terminal, secrets redacted."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

from rag_evaluator.cli import console
from rag_evaluator.settings import API_KEY_VARIABLE

LOG_FILE_NAME = "rag_eval.log"
# Past this size the log rolls over once, to rag_eval.log.1: a run of a million questions
# keeps its last 2 x 50 MB of log rather than filling the disk.
LOG_MAX_BYTES = 50 * 1024 * 1024
_PACKAGE_LOGGER = "rag_evaluator"
# The SDK's own warnings are kept; the HTTP libraries' line per request is not (the
# transport logs one line per call itself).
_SDK_LOGGERS = {"anthropic": logging.INFO, "httpx": logging.WARNING, "httpx2": logging.WARNING}
_REDACTED = "[REDACTED]"


class SecretRedactingFilter(logging.Filter):
    """Replaces the API key, wherever it appears in a record, before anything is written."""

    def filter(self, record: logging.LogRecord) -> bool:
        secret = os.environ.get(API_KEY_VARIABLE, "").strip()
        if len(secret) >= 8:
            message = record.getMessage()
            if secret in message:
                record.msg = message.replace(secret, _REDACTED)
                record.args = None
        return True


class ConsoleWarningHandler(logging.Handler):
    """Shows the package's warnings on the terminal through ``console``."""

    def emit(self, record: logging.LogRecord) -> None:
        # The CLI prints the errors it reports itself; logging them must not print them twice.
        if not getattr(record, "terminal", True):
            return
        message = record.getMessage()
        if record.levelno >= logging.ERROR:
            console.error(message)
        else:
            console.warning(message)


class DebugLogHandler(RotatingFileHandler):
    """``rag_eval.log``. Once a write fails (a full disk, a device gone), the terminal is told
    in one warning and the log stops: the run goes on, without logging's traceback for every
    record that follows."""

    _failed = False
    # Characters written to the current file, counted rather than asked of the file for every
    # record (the library checks with two stats, a seek and a tell, and formats each record
    # twice); ``None`` until the first record.
    _written: int | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if not self._failed:
            super().emit(record)

    def shouldRollover(self, record: logging.LogRecord) -> bool:
        if self._written is None:
            path = Path(self.baseFilename)
            # Only a regular file rolls over (never a device the user pointed the log at).
            self._written = path.stat().st_size if path.is_file() else -(2**62)
        # The line's prefix (time, level, logger name) is about 40 characters.
        self._written += len(record.getMessage()) + len(record.name) + 40
        return 0 < self.maxBytes <= self._written

    def doRollover(self) -> None:
        super().doRollover()
        self._written = None

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            super().handleError(record)  # a bug in a log call: logging's own report
            return
        self._failed = True
        console.warning(
            f"Cannot write the debug log {self.baseFilename} "
            f"({error.strerror or type(error).__name__}); the run goes on without it. Free "
            "some disk space to get rag_eval.log"
        )
        stream, self.stream = self.stream, None  # type: ignore[assignment]
        # Closing flushes what the device refused once more; the file is closed regardless.
        with contextlib.suppress(OSError):
            stream.close()


def configure_logging(log_path: Path | None = None, max_bytes: int = LOG_MAX_BYTES) -> Path:
    """Send everything to ``rag_eval.log`` (overwritten) and warnings to the terminal."""
    log_path = log_path or Path.cwd() / LOG_FILE_NAME
    redactor = SecretRedactingFilter()
    file_handler: logging.Handler
    try:
        # Overwritten each run: the old log and its rolled-over part go first. Only files and
        # links are removed: a device or pipe in their place is no log of ours.
        for old in (log_path, log_path.with_name(log_path.name + ".1")):
            if old.is_symlink() or old.is_file():
                old.unlink(missing_ok=True)
        if log_path.is_fifo() or log_path.is_socket() or log_path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "not a file", str(log_path))
        file_handler = DebugLogHandler(
            log_path, maxBytes=max_bytes, backupCount=1, encoding="utf-8"
        )
    except OSError as exc:
        # A read-only working directory must not stop the run; say so once and go on.
        console.warning(
            f"Cannot write the debug log {log_path} ({exc.strerror}); continuing without it. "
            "Run from a writable folder to get rag_eval.log"
        )
        file_handler = logging.NullHandler()
    file_handler.setLevel(logging.DEBUG)
    file_handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
    )
    file_handler.addFilter(redactor)
    console_handler = ConsoleWarningHandler(level=logging.WARNING)
    console_handler.addFilter(redactor)

    package_logger = logging.getLogger(_PACKAGE_LOGGER)
    for handler in list(package_logger.handlers):
        package_logger.removeHandler(handler)
        handler.close()
    package_logger.setLevel(logging.DEBUG)
    package_logger.addHandler(file_handler)
    package_logger.addHandler(console_handler)
    package_logger.propagate = False
    for name, level in _SDK_LOGGERS.items():
        sdk_logger = logging.getLogger(name)
        for handler in list(sdk_logger.handlers):
            sdk_logger.removeHandler(handler)
        sdk_logger.setLevel(level)
        sdk_logger.addHandler(file_handler)
        sdk_logger.propagate = False
    return log_path
