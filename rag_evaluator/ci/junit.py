"""Writes ``--junit FILE``: the JUnit XML that GitHub, GitLab and Jenkins read (the common
``testsuites``/``testsuite``/``testcase`` schema), from the cases of ``ci.cases``."""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from rag_evaluator.atomic import write_bytes_atomic
from rag_evaluator.ci.cases import CaseOutcome, JunitCase, JunitSuite
from rag_evaluator.errors import ConfigError

JUNIT_OPTION = "--junit"
_CHILD = {
    CaseOutcome.FAILED: "failure",
    CaseOutcome.ERROR: "error",
    CaseOutcome.SKIPPED: "skipped",
}


def junit_document(suites: Sequence[JunitSuite], *, timestamp: datetime, hostname: str) -> bytes:
    """The XML document of ``suites``, UTF-8 with its declaration."""
    root = ElementTree.Element("testsuites", name="rag-eval", time="0")
    root.set("tests", str(sum(len(suite.cases) for suite in suites)))
    root.set("failures", str(sum(suite.count(CaseOutcome.FAILED) for suite in suites)))
    root.set("errors", str(sum(suite.count(CaseOutcome.ERROR) for suite in suites)))
    for suite in suites:
        element = ElementTree.SubElement(
            root,
            "testsuite",
            name=suite.name,
            tests=str(len(suite.cases)),
            failures=str(suite.count(CaseOutcome.FAILED)),
            errors=str(suite.count(CaseOutcome.ERROR)),
            skipped=str(suite.count(CaseOutcome.SKIPPED)),
            time="0",
            timestamp=timestamp.strftime("%Y-%m-%dT%H:%M:%S"),
            hostname=hostname,
        )
        for case in suite.cases:
            _add_case(element, case)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _add_case(parent: ElementTree.Element, case: JunitCase) -> None:
    element = ElementTree.SubElement(
        parent, "testcase", name=case.name, classname=case.classname, time="0"
    )
    child = _CHILD.get(case.outcome)
    if child is None:
        if case.details:
            ElementTree.SubElement(element, "system-out").text = case.details
        return
    result = ElementTree.SubElement(element, child, message=case.message)
    if case.kind and case.outcome is not CaseOutcome.SKIPPED:  # <skipped> has no type
        result.set("type", case.kind)
    if case.details:
        result.text = case.details


def write_junit(path: Path, suites: Sequence[JunitSuite]) -> None:
    """Write the JUnit file atomically; an unwritable path is the user's to fix."""
    document = junit_document(suites, timestamp=datetime.now(), hostname=socket.gethostname())
    try:
        write_bytes_atomic(path, document)
    except OSError as exc:
        raise ConfigError(
            f"Cannot write {path}: {exc.strerror or type(exc).__name__}. "
            f"Pass another file name for {JUNIT_OPTION}"
        ) from exc
