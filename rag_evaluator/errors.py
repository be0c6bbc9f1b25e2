"""The tool's exception tree.

Every error a user can cause or meet is one of these, carrying a message that
already says how to fix it. Only ``cli.py`` turns them into text and an exit code.
``InputError`` and ``UsageError`` are also ``ValueError``s: a library caller passing a bad
value can catch them as Python's usual error for one.

    RagEvalError                  base; ``exit_code`` is what the CLI returns
    ├── InputError                bad or missing input files, columns, values (exit 2; a ValueError)
    │   ├── MissingFileError      a named input file does not exist
    │   └── MissingColumnError    a required column is absent (lists those found)
    ├── UsageError                bad option or argument values: unknown model, bad metric
    │                             name, k < 1 (exit 2; a ValueError)
    ├── ConfigError               missing API key and similar set-up problems (exit 2)
    ├── CheckpointError           a checkpoint that cannot be used (exit 2)
    ├── NothingConvertedError     convert found nothing it could write (exit 1)
    ├── JudgeError                talking to the model went wrong
    │   ├── JudgeTransientError   worth retrying: rate limit, overload, 5xx, network
    │   ├── JudgeQuestionError    this question keeps failing; record it unscored
    │   └── JudgeFatalError       stop the run: bad key, no access, unknown model, billing (exit 2)
    │       └── JudgeUnavailableError  transient failures outlasted every retry, several
    │                                  questions in a row: the API looks down (exit 2)
    │   └── BatchMissingError     the API no longer knows a Message Batch: ask its requests again
    ├── BudgetExhaustedError      the next call would pass --max-cost: stop cleanly, results of
    │                             what was scored written as partial (exit 4)
    ├── MissingExtraError         an optional dependency group is not installed (exit 2)
    └── QualityGateError          a CI gate failed: --fail-under, --fail-if-worse (exit 3)

    RunStoppedError               internal: tells waiting workers that the run is stopping
                                  (Ctrl-C, a fatal error, the budget); never shown to users
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class RagEvalError(Exception):
    """Base of every error the tool raises on purpose."""

    exit_code: int = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InputError(RagEvalError, ValueError):
    """An input file or value the tool cannot use."""

    def __init__(self, message: str, path: Path | str | None = None) -> None:
        super().__init__(message)
        self.path = Path(path) if path is not None else None


class MissingFileError(InputError):
    """A required input file does not exist."""

    def __init__(self, path: Path | str, expected_columns: list[str] | None = None) -> None:
        path = Path(path)
        if expected_columns:
            message = (
                f"{path.name} not found. Create this file with columns: "
                f"{', '.join(expected_columns)}"
            )
        else:
            message = f"{path} not found. Check the path and try again"
        super().__init__(message, path)
        self.expected_columns = expected_columns or []


class MissingColumnError(InputError):
    """A required column is absent from a CSV file."""

    def __init__(self, path: Path | str, column: str, found: list[str]) -> None:
        path = Path(path)
        shown = ", ".join(repr(name) for name in found) if found else "none"
        message = (
            f"{path.name} has no '{column}' column (columns found: {shown}). "
            f"Rename the column that holds it to '{column}', or add such a column"
        )
        super().__init__(message, path)
        self.column = column
        self.found = found


class UsageError(RagEvalError, ValueError):
    """An option value, or a library function's argument, the tool cannot use."""


class ConfigError(RagEvalError):
    """The environment is not set up for the requested work."""


class CheckpointError(RagEvalError):
    """A checkpoint exists but cannot be used for this run."""


class NothingConvertedError(RagEvalError):
    """``convert`` matched no answer at all."""

    exit_code = 1


class JudgeError(RagEvalError):
    """Talking to the model failed."""

    exit_code = 1


class JudgeTransientError(JudgeError):
    """A failure that a later attempt may not meet (429, 529, 5xx, network, timeout)."""


class JudgeQuestionError(JudgeError):
    """A failure tied to one question: bad output, refusal, oversized request."""


class JudgeFatalError(JudgeError):
    """A failure that every later call would meet too: stop the run.

    ``partial`` holds what the request had already paid for (an unusable answer before the
    fatal status), so that it is kept.
    """

    exit_code = 2
    partial: Any = None


class JudgeUnavailableError(JudgeFatalError):
    """Several judgings in a row ran out of retries on transient failures: stop the run.

    ``questions_in_a_row`` is how many; the earlier ones were recorded as unscored rows
    before the pattern showed.
    """

    def __init__(self, message: str, questions_in_a_row: int) -> None:
        super().__init__(message)
        self.questions_in_a_row = questions_in_a_row


class BatchMissingError(JudgeError):
    """The API no longer knows a Message Batch (its results expired, or another workspace's
    key): its requests were never collected, so they are asked again."""

    def __init__(self, batch_id: str) -> None:
        super().__init__(f"the API no longer knows Message Batch {batch_id}")
        self.batch_id = batch_id


class BudgetExhaustedError(RagEvalError):
    """The next call could take the run's spending past ``--max-cost``.

    ``partial`` holds what the interrupted request had already paid for (calls, usage, cost),
    so that it is kept.
    """

    exit_code = 4
    partial: Any = None
    outcome: Any = None  # the run's outcome, when its partial results were written


class EvaluationInterrupted(Exception):
    """Ctrl-C or SIGTERM during a run (exit 130, not an error); ``message`` says what was
    kept and how to resume."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RunStoppedError(Exception):
    """Internal signal to the judge's workers that the run is stopping; not a user error.

    ``partial`` holds what the interrupted request had already paid for, so that it is kept.
    """

    partial: Any = None


# How to install each optional extra: the one hint every message and the README give.
# The semantic extra pulls torch; a CPU-only build first avoids gigabytes of CUDA wheels.
CPU_TORCH_INSTALL = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def install_command(extra: str) -> str:
    """The shell command that installs an optional extra (CPU torch first for semantic)."""
    command = f"pip install 'rag-eval[{extra}]'"
    if extra == "semantic":
        return f"{CPU_TORCH_INSTALL} && {command}"
    return command


class MissingExtraError(RagEvalError):
    """An optional dependency group is needed but not installed."""

    def __init__(self, extra: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs the optional '{extra}' dependencies. "
            f"Install them with: {install_command(extra)}"
        )
        self.extra = extra


class QualityGateError(RagEvalError):
    """A quality gate asked for on the command line failed; the results are written."""

    exit_code = 3
