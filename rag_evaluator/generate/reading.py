"""Reading the documents a golden set is generated from: ``.txt``, ``.md`` and ``.pdf``.

The folder is read recursively, in path order; hidden files and folders (a name starting with
``.``) are passed over, and so are files of other types (named in one warning) and symbolic
links leading out of the folder (named in another). Text files are
decoded like every input (``inputs/files.py``: UTF-8, a BOM honoured, else Windows-1252,
else latin-1, with a warning). A PDF's text is what pypdf extracts from each page, the pages
joined by a blank line (so a page break is a paragraph break): character offsets into a PDF
count characters of that text. pypdf is the optional ``pdf`` extra.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from rag_evaluator.errors import InputError, MissingExtraError
from rag_evaluator.generate.documents import DocumentText
from rag_evaluator.inputs.files import decode_text, read_input_bytes
from rag_evaluator.llm.generation_fingerprint import documents_digest

logger = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
PDF_SUFFIX = ".pdf"
PDF_EXTRA = "pdf"
PDF_PAGE_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class DocumentSet:
    """The documents read from a folder, the digest of their files, and what was passed over."""

    folder: Path
    documents: list[DocumentText]
    digest: str
    skipped: list[str] = field(default_factory=list)


def _relative_name(path: Path, folder: Path) -> str:
    return path.relative_to(folder).as_posix()


def _hidden(path: Path, folder: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(folder).parts)


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _document_files(folder: Path) -> list[Path]:
    """The files under ``folder`` in path order, hidden ones left out.

    A symbolic link is followed only when its target lies inside the folder: a link out of
    it (to a private file, a home folder) would send what it points to to the model. Such
    links are named in one warning. Links to folders inside are not descended (``rglob``),
    so no file is read twice through them.
    """
    root = folder.resolve()
    files: list[Path] = []
    outside: list[str] = []
    for path in sorted(folder.rglob("*")):
        if _hidden(path, folder):
            continue
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            outside.append(_relative_name(path, folder))
        elif path.is_file():
            files.append(path)
    if outside:
        logger.warning(
            "%d link(s) in %s lead outside it and were passed over: %s. Copy the files into "
            "the folder to use them",
            len(outside),
            folder,
            _listed(outside),
        )
    return files


def pdf_text(data: bytes, path: Path) -> str:
    """The text pypdf extracts from a PDF's pages, joined by blank lines."""
    try:
        from io import BytesIO

        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError as exc:
        raise MissingExtraError(PDF_EXTRA, f"Reading PDF documents ({path.name})") from exc
    # pypdf warns about every quirk of a file it still reads ("EOF marker not found"), on the
    # terminal when nothing else handles its logger; what matters is said below.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted:
            # An empty owner password opens most "protected" PDFs (print or copy locks).
            reader.decrypt("")
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise InputError(
            f"Cannot read the PDF {path} ({type(exc).__name__}: {str(exc)[:120]}). Save it "
            "again as PDF or as text, or move it out of the documents folder",
            path,
        ) from exc
    return PDF_PAGE_SEPARATOR.join(page.strip("\n") for page in pages)


def read_documents(folder: Path) -> DocumentSet:
    """Every readable document under ``folder``; ``InputError`` when there is none."""
    folder = Path(folder)
    if not folder.is_dir():
        if folder.exists():
            raise InputError(
                f"{folder} is a file, not a folder. Pass the folder of documents with --docs",
                folder,
            )
        raise InputError(
            f"The documents folder {folder} does not exist. Pass the folder that holds your "
            ".txt, .md and .pdf files with --docs",
            folder,
        )
    documents: list[DocumentText] = []
    files: list[tuple[str, bytes]] = []
    skipped: list[str] = []
    other_types: list[str] = []
    for path in _document_files(folder):
        name = _relative_name(path, folder)
        suffix = path.suffix.lower()
        if suffix not in TEXT_SUFFIXES and suffix != PDF_SUFFIX:
            other_types.append(name)
            continue
        data = read_input_bytes(path)
        files.append((name, data))
        text = _document_text(name, path, data)
        if text is None:
            skipped.append(name)
        else:
            documents.append(DocumentText(name, text))
    if other_types:
        logger.warning(
            "%d file(s) in %s are not .txt, .md or .pdf and were passed over: %s",
            len(other_types),
            folder,
            _listed(other_types),
        )
    if not documents:
        raise InputError(
            f"No document with text was found in {folder}. Put .txt, .md or .pdf files in it "
            "(subfolders are read too)",
            folder,
        )
    return DocumentSet(folder, documents, documents_digest(files), skipped + other_types)


def _document_text(name: str, path: Path, data: bytes) -> str | None:
    """The text of one document, or ``None`` (with a warning) when it has none to use."""
    if path.suffix.lower() == PDF_SUFFIX:
        text = pdf_text(data, path)
        if not text.strip():
            logger.warning(
                "%s has no text that can be extracted (a scanned PDF?); it was passed over. "
                "Run it through OCR to use it",
                name,
            )
            return None
        return text
    text, _encoding, warnings = decode_text(data, path)
    for message in warnings:
        logger.warning(message)
    if "\x00" in text:
        logger.warning("%s holds NUL bytes, so it is not a text file; it was passed over", name)
        return None
    if not text.strip():
        logger.warning("%s is empty; it was passed over", name)
        return None
    return text
