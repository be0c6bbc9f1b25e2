"""Reading the documents folder: types, encodings, PDFs, what is passed over, and spans that
slice back into the text of each kind of file."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from evaluate_support import prepare_workspace, run_cli
from fakes.anthropic_server import FakeAnthropicServer
from generate_support import (
    assert_spans_slice_back,
    document_text,
    generate_arguments,
    make_pdf,
    read_golden_set,
)

from rag_evaluator.errors import InputError
from rag_evaluator.generate.reading import read_documents

PARAGRAPH = (
    "The harbour crane lifts up to forty tonnes and is inspected every spring by the port "
    "authority before the season opens."
)


def test_documents_are_read_recursively_in_path_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.md").write_text("# Two\n\nSecond.", encoding="utf-8")
    (tmp_path / "one.txt").write_text("First.", encoding="utf-8")
    (tmp_path / "three.MARKDOWN").write_text("Third.", encoding="utf-8")
    documents = read_documents(tmp_path)
    assert [document.name for document in documents.documents] == [
        "b/two.md",
        "one.txt",
        "three.MARKDOWN",
    ]


def test_hidden_files_are_passed_over_and_other_types_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "notes.txt").write_text("hidden", encoding="utf-8")
    (tmp_path / ".draft.md").write_text("hidden too", encoding="utf-8")
    (tmp_path / "report.docx").write_bytes(b"PK\x03\x04")
    (tmp_path / "kept.txt").write_text(PARAGRAPH, encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        documents = read_documents(tmp_path)
    assert [document.name for document in documents.documents] == ["kept.txt"]
    assert "1 file(s) in" in caplog.text and "passed over: report.docx" in caplog.text
    assert ".draft.md" not in caplog.text and "notes.txt" not in caplog.text


def test_empty_and_binary_files_are_passed_over_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "empty.md").write_text("  \n\n ", encoding="utf-8")
    (tmp_path / "binary.txt").write_bytes(b"abc\x00\x01def")
    (tmp_path / "kept.txt").write_text(PARAGRAPH, encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        documents = read_documents(tmp_path)
    assert [document.name for document in documents.documents] == ["kept.txt"]
    assert "empty.md is empty" in caplog.text
    assert "binary.txt holds NUL bytes" in caplog.text
    assert documents.skipped == ["binary.txt", "empty.md"]


def test_the_digest_changes_with_a_file_and_not_with_an_ignored_one(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(PARAGRAPH, encoding="utf-8")
    first = read_documents(tmp_path).digest
    (tmp_path / "notes.docx").write_bytes(b"PK")
    assert read_documents(tmp_path).digest == first
    (tmp_path / "a.txt").write_text(PARAGRAPH + " More.", encoding="utf-8")
    assert read_documents(tmp_path).digest != first


def test_a_folder_without_documents_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="No document with text was found"):
        read_documents(tmp_path)
    file = tmp_path / "file.txt"
    file.write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="is a file, not a folder"):
        read_documents(file)


@pytest.mark.parametrize(
    ("name", "data", "warning"),
    [
        ("bom.txt", "\ufeff".encode() + PARAGRAPH.encode("utf-8"), None),
        (
            "crlf.txt",
            f"{PARAGRAPH}\r\n\r\nThe crane's café closes at 18:00 on weekdays.".encode(),
            None,
        ),
        (
            "windows.txt",
            f"{PARAGRAPH} Fees are 12 € per lift – paid “in advance”.".encode("cp1252"),
            "cp1252",
        ),
        ("utf16.md", PARAGRAPH.encode("utf-16"), None),
    ],
)
def test_spans_slice_back_into_text_of_every_encoding(
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    data: bytes,
    warning: str | None,
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    docs = workspace.directory / "docs"
    docs.mkdir()
    (docs / name).write_bytes(data)
    result = run_cli([*generate_arguments(docs, count=1), "--yes", "--types", "factual"])
    assert result.exit_code == 0, result.output
    if warning:
        assert warning in result.stderr
    text = document_text(docs, name)
    assert "\ufeff" not in text
    for truth in read_golden_set(workspace.directory).ground_truth:
        assert_spans_slice_back(docs, truth)
        for span in json.loads(truth["Source Spans"]):
            assert span["end"] <= len(text)


@pytest.mark.needs_extra("pdf")
def test_pdf_documents_are_read_through_their_extracted_text(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    docs = workspace.directory / "docs"
    docs.mkdir()
    (docs / "crane manual.pdf").write_bytes(
        make_pdf(
            [
                [
                    "The harbour crane lifts up to forty tonnes (with the long boom).",
                    "It is inspected every spring by the port authority.",
                ],
                [
                    "Operators renew their crane licence every three years at the academy.",
                    "A lapsed licence means no lifts until the renewal exam is passed.",
                ],
            ]
        )
    )
    result = run_cli([*generate_arguments(docs, count=2), "--yes", "--types", "factual"])
    assert result.exit_code == 0, result.output
    text = document_text(docs, "crane manual.pdf")
    assert "forty tonnes (with the long boom)" in text
    assert "\n\n" in text  # the page break
    golden = read_golden_set(workspace.directory)
    for truth in golden.ground_truth:
        assert_spans_slice_back(docs, truth)
    assert {json.loads(truth["Source Spans"])[0]["file"] for truth in golden.ground_truth} == {
        "crane manual.pdf"
    }


@pytest.mark.needs_extra("pdf")
def test_a_pdf_that_cannot_be_read_is_named_with_the_fix(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    docs = workspace.directory / "docs"
    docs.mkdir()
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a PDF")
    result = run_cli([*generate_arguments(docs, count=2), "--yes"])
    assert result.exit_code == 2
    assert "Error: Cannot read the PDF" in result.stderr
    assert "broken.pdf" in result.stderr
    assert "move it out of the documents folder" in result.stderr
    scanned = docs / "broken.pdf"
    scanned.write_bytes(make_pdf([[]]))
    (docs / "text.txt").write_text(PARAGRAPH, encoding="utf-8")
    passed_over = run_cli([*generate_arguments(docs, count=1), "--yes"])
    assert passed_over.exit_code == 0, passed_over.output
    assert "broken.pdf has no text that can be extracted (a scanned PDF?)" in passed_over.stderr


def test_without_the_pdf_extra_a_pdf_asks_for_it(tmp_path: Path) -> None:
    """pypdf made unimportable in a fresh interpreter, as on a machine without the extra."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.pdf").write_bytes(b"%PDF-1.4\n")
    program = (
        "import sys; sys.modules['pypdf'] = None\n"
        "from pathlib import Path\n"
        "from rag_evaluator.errors import MissingExtraError\n"
        "from rag_evaluator.generate.reading import read_documents\n"
        "try:\n"
        f"    read_documents(Path({str(docs)!r}))\n"
        "except MissingExtraError as error:\n"
        "    print(error.message)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert completed.stdout.strip() == (
        "Reading PDF documents (manual.pdf) needs the optional 'pdf' dependencies. "
        "Install them with: pip install 'rag-eval[pdf]'"
    )
