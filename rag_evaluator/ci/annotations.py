"""GitHub Actions ``::error::`` workflow commands for the gates that failed.

Escaped as the Actions toolkit does: in the message ``%``, CR and LF become ``%25``, ``%0D``,
``%0A``; in a property (the title) ``:`` and ``,`` also become ``%3A`` and ``%2C``, so no
text can end the command early or start another one.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_evaluator.ci.cases import CaseOutcome, JunitSuite

_DATA_ESCAPES = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A"})
_PROPERTY_ESCAPES = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A", ":": "%3A", ",": "%2C"})


def escape_data(text: str) -> str:
    """A workflow command's message, escaped."""
    return text.translate(_DATA_ESCAPES)


def escape_property(text: str) -> str:
    """A workflow command's property value (``title=...``), escaped."""
    return text.translate(_PROPERTY_ESCAPES)


def error_command(title: str, message: str) -> str:
    """``::error title=...::message``: one line, whatever the texts hold."""
    return f"::error title={escape_property(title)}::{escape_data(message)}"


def gate_annotations(suites: Sequence[JunitSuite]) -> list[str]:
    """One ``::error`` per failed gate of the JUnit cases, titled after its option."""
    return [
        error_command(f"rag-eval {case.kind} failed", case.message)
        for suite in suites
        for case in suite.cases
        if case.outcome is CaseOutcome.FAILED
    ]
