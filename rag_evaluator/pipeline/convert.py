"""``convert``: RAG output JSON files -> matched to questions.csv -> rag_answers.csv.

Prints nothing. Every warning (a skipped file, entry or line, an unmatched entry,
a lost claim) is logged as it is found; the returned report holds the same facts
as data for the summary table.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path

from rag_evaluator.core.fields import CONTEXTS, QUESTION_NUMBER, RAG_ANSWER
from rag_evaluator.core.matching import (
    DEFAULT_THRESHOLD,
    Confidence,
    LostClaim,
    MatchedEntry,
    UnmatchedEntry,
    assign_entries,
    display_score,
    repeated_questions,
)
from rag_evaluator.errors import InputError, NothingConvertedError, UsageError
from rag_evaluator.storage.inputs import load_questions
from rag_evaluator.storage.rag_json import (
    JSON_LINES_SUFFIXES,
    JSON_SUFFIXES,
    SkippedFile,
    read_rag_json_dir,
)
from rag_evaluator.storage.tables import write_csv_atomic

logger = logging.getLogger(__name__)

# Past this many warnings of one kind the terminal gets a count; the log gets them all.
WARNINGS_SHOWN = 20

MATCH_CONFIDENCE = "Match Confidence"
MATCH_SCORE = "Match Score"
SOURCE_FILE = "Source File"
OUTPUT_COLUMNS = (QUESTION_NUMBER, RAG_ANSWER, CONTEXTS, MATCH_CONFIDENCE, MATCH_SCORE, SOURCE_FILE)


@dataclass(frozen=True)
class ConvertReport:
    """What one conversion read, matched, skipped and wrote."""

    output_path: Path
    threshold: float
    matched: list[MatchedEntry]
    unmatched: list[UnmatchedEntry]
    lost_claims: list[LostClaim]
    files_read: list[str]
    skipped_files: list[SkippedFile]
    skipped_entries: int
    entries_found: int
    questions_without_answer: list[int]

    @property
    def rows_with_nothing_retrieved(self) -> int:
        """Rows written with ``Contexts`` ``[]``: the system reported retrieving nothing."""
        return sum(1 for match in self.matched if match.entry.contexts == [])

    @property
    def rows_without_contexts_field(self) -> int:
        """Rows written with a blank ``Contexts`` cell: the output does not say what was
        retrieved, so every context-based metric is left empty for them."""
        return sum(1 for match in self.matched if match.entry.contexts is None)

    @property
    def not_converted(self) -> list[str]:
        """What the input held that is not in the output, counted (``1 skipped file``).

        Lost claims are not in it: their question is answered, by the better entry.
        """
        parts = [
            (len(self.skipped_files), "skipped file"),
            (self.skipped_entries, "unreadable entry", "unreadable entries"),
            (len(self.unmatched), "unmatched entry", "unmatched entries"),
        ]
        return [_counted(*part) for part in parts if part[0]]

    @property
    def exit_code(self) -> int:
        """0 when every file and entry was converted, 1 when some input was left out."""
        return 1 if self.not_converted else 0

    def count(self, confidence: Confidence) -> int:
        """How many written rows carry ``confidence``."""
        return sum(1 for match in self.matched if match.confidence is confidence)


def output_rows(matched: list[MatchedEntry]) -> list[list[str]]:
    """The rows of rag_answers.csv (header first), in question-number order."""
    rows: list[list[str]] = [list(OUTPUT_COLUMNS)]
    for match in sorted(matched, key=lambda item: item.question_number):
        rows.append(
            [
                str(match.question_number),
                match.entry.answer,
                _contexts_cell(match.entry.contexts),
                match.confidence.value,
                "" if match.score is None else display_score(match.score),
                match.entry.source_file,
            ]
        )
    return rows


def _contexts_cell(contexts: list[str] | None) -> str:
    # Blank (unknown) and [] (nothing retrieved) score differently in evaluate.
    return "" if contexts is None else json.dumps(contexts, ensure_ascii=False)


def convert(
    json_dir: Path,
    questions_path: Path,
    output_path: Path,
    threshold: float = DEFAULT_THRESHOLD,
) -> ConvertReport:
    """Read ``json_dir``, match every entry to ``questions_path``, write ``output_path``.

    Raises ``NothingConvertedError`` (and writes nothing) when no entry matched.
    """
    if math.isnan(threshold) or not 0 <= threshold <= 100:
        raise UsageError(f"--threshold must be between 0 and 100, not {threshold:g}")
    json_dir, questions_path, output_path = Path(json_dir), Path(questions_path), Path(output_path)
    if output_path.resolve() == questions_path.resolve():
        raise UsageError(
            f"--output {output_path} is the questions file; writing there would destroy it. "
            "Pass another --output"
        )
    if (
        output_path.resolve().parent == json_dir.resolve()
        and output_path.suffix.lower() in JSON_SUFFIXES + JSON_LINES_SUFFIXES
    ):
        raise UsageError(
            f"--output {output_path} is a RAG output file in {json_dir}; writing there would "
            "destroy it. Pass another --output, such as rag_answers.csv"
        )
    questions = load_questions(questions_path)
    question_texts = {number: row.question for number, row in questions.rows.items()}
    if not any(text.strip() for text in question_texts.values()):
        raise InputError(
            f"{questions.source_name} has no question text to match answers against. "
            "Fill in its Question column",
            questions_path,
        )
    _warn_capped(
        [
            f"{questions.source_name} has the same question text under numbers "
            f"{', '.join(map(str, numbers))}; answers to it go to question {numbers[0]}, so "
            f"{'the others get' if len(numbers) > 2 else f'question {numbers[1]} gets'} none. "
            "Make the texts differ or remove the repeats"
            for numbers in repeated_questions(question_texts)
        ],
        f"repeated questions in {questions.source_name}",
    )

    batch = read_rag_json_dir(json_dir)
    for skipped in batch.skipped:
        logger.error("%s (file skipped)", skipped.reason)
    for file in batch.files:
        logger.info("%s: %d entries (%s)", file.name, len(file.entries), file.shape)
        _warn_capped(file.problems, f"problems in {file.name}")

    entries = batch.entries
    assignment = assign_entries(entries, question_texts, threshold)
    _warn_capped(
        [item.message(threshold, questions.source_name) for item in assignment.unmatched],
        "unmatched entries",
    )
    _warn_capped(
        [item.message() for item in assignment.lost_claims], "entries lost to a better match"
    )

    for match in assignment.matched:
        logger.debug(
            "question %d <- %s: %s", match.question_number, match.describe(), match.confidence
        )

    if not assignment.matched:
        raise NothingConvertedError(
            _nothing_converted_message(
                json_dir, questions.source_name, len(entries), len(batch.skipped), threshold
            )
        )
    try:
        write_csv_atomic(output_path, output_rows(assignment.matched))
    except OSError as exc:
        raise InputError(
            f"Cannot write {output_path}: {exc.strerror or exc}. Pass another --output",
            output_path,
        ) from exc

    answered = {match.question_number for match in assignment.matched}
    report = ConvertReport(
        output_path=output_path,
        threshold=threshold,
        matched=assignment.matched,
        unmatched=assignment.unmatched,
        lost_claims=assignment.lost_claims,
        files_read=[file.name for file in batch.files],
        skipped_files=batch.skipped,
        skipped_entries=sum(file.skipped_entries for file in batch.files),
        entries_found=len(entries),
        questions_without_answer=sorted(set(question_texts) - answered),
    )
    logger.info(
        "Wrote %d rows to %s (%d entries, %d unmatched, %d lost claims)",
        len(report.matched),
        output_path,
        report.entries_found,
        len(report.unmatched),
        len(report.lost_claims),
    )
    return report


def _counted(count: int, singular: str, plural: str = "") -> str:
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def _warn_capped(messages: list[str], what: str) -> None:
    """Warn about the first few messages; the rest go to the log file only."""
    for message in messages[:WARNINGS_SHOWN]:
        logger.warning("%s", message)
    hidden = messages[WARNINGS_SHOWN:]
    if hidden:
        logger.warning("… and %d more %s, listed in the log file", len(hidden), what)
        for message in hidden:
            logger.info("%s", message)


def _nothing_converted_message(
    json_dir: Path, questions_name: str, entries: int, files_skipped: int, threshold: float
) -> str:
    if entries == 0:
        files = "its only file was" if files_skipped == 1 else f"all {files_skipped} files were"
        return (
            f"No answers could be read from {json_dir}: {files} skipped; nothing was "
            "written. Fix the files named above"
        )
    answers = "The only answer" if entries == 1 else f"None of the {entries} answers"
    verb = "matched no question" if entries == 1 else "matched a question"
    return (
        f"{answers} in {json_dir} {verb} in {questions_name} (threshold {threshold:g}); "
        "nothing was written. Check that the answers belong to this question set, or lower "
        "--threshold"
    )
