"""Helpers for the ``rag-eval generate`` and ``review`` tests: documents, the golden set."""

from __future__ import annotations

import csv
import io
import json
import shutil
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Four short documents of a made-up company, written for these tests.
DOCS = Path(__file__).parent / "generate_docs"


def copy_docs(destination: Path) -> Path:
    """A copy of the shipped documents (tests that change them work on the copy)."""
    shutil.copytree(DOCS, destination)
    return destination


def generate_arguments(docs: Path, *extra: str, count: int = 12, seed: int = 1) -> list[str]:
    """``generate`` as the tests run it: fast (no delay), keyword pairing, small chunks."""
    return [
        "generate",
        "--docs",
        str(docs),
        "--count",
        str(count),
        "--seed",
        str(seed),
        "--delay",
        "0",
        "--timeout",
        "5",
        "--pairing",
        "keywords",
        "--chunk-chars",
        "300",
        *extra,
    ]


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@dataclass(frozen=True)
class GoldenSet:
    questions: list[dict[str, str]]
    ground_truth: list[dict[str, str]]

    def by_type(self, question_type: str) -> list[tuple[dict[str, str], dict[str, str]]]:
        return [
            (question, truth)
            for question, truth in zip(self.questions, self.ground_truth, strict=True)
            if question["Question Type"] == question_type
        ]


def read_golden_set(directory: Path) -> GoldenSet:
    return GoldenSet(
        read_rows(directory / "questions.csv"), read_rows(directory / "ground_truth.csv")
    )


def document_text(docs: Path, name: str) -> str:
    """A document's text as generate reads it (the shared decoding; PDFs extracted)."""
    from rag_evaluator.generate.reading import pdf_text
    from rag_evaluator.inputs.files import decode_text

    path = docs / name
    data = path.read_bytes()
    if path.suffix.lower() == ".pdf":
        return pdf_text(data, path)
    return decode_text(data, path)[0]


def assert_spans_slice_back(docs: Path, truth: dict[str, str]) -> None:
    """Every Source Span of a ground-truth row slices its document's text into its chunk."""
    contexts = json.loads(truth["Relevant Contexts"])
    spans = json.loads(truth["Source Spans"])
    assert len(spans) == len(contexts)
    for span, context in zip(spans, contexts, strict=True):
        text = document_text(docs, span["file"])
        assert text[span["start"] : span["end"]] == context


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """A small valid PDF whose pages hold the given lines of text (Helvetica)."""
    objects: list[bytes] = []
    page_ids = [3 + 2 * index for index in range(len(pages))]
    font_id = 3 + 2 * len(pages)
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{page_id} 0 R" for page_id in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for index, lines in enumerate(pages):
        content_id = page_ids[index] + 1
        objects.append(
            (
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {content_id} 0 R >>"
            ).encode()
        )
        commands = ["BT", "/F1 11 Tf", "14 TL", "72 720 Td"]
        for line in lines:
            commands.append(f"({_pdf_string(line)}) Tj T*")
        commands.append("ET")
        stream = zlib.compress("\n".join(commands).encode("latin-1"))
        objects.append(
            f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode()
            + stream
            + b"\nendstream"
        )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    output = io.BytesIO()
    output.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(output.tell())
        output.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = output.tell()
    output.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        output.write(f"{offset:010d} 00000 n \n".encode())
    output.write(
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return output.getvalue()
