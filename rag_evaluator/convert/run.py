"""``convert``: RAG output JSON files -> matched to questions.csv -> rag_answers.csv.

Prints nothing. Every warning (a skipped file, entry or line, an unmatched entry,
a lost claim) is logged as it is found; the returned report holds the same facts
as data for the summary table.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from rag_evaluator.convert.matching import (
    DEFAULT_THRESHOLD,
    Assignment,
    Confidence,
    LostClaim,
    MatchedEntry,
    UnmatchedEntry,
    assign_entries,
    display_score,
    repeated_questions,
)
from rag_evaluator.errors import InputError, NothingConvertedError, UsageError
from rag_evaluator.inputs.fields import (
    CONTEXTS,
    GROUND_TRUTH,
    QUESTION_NUMBER,
    RAG_ANSWER,
    REFERENCE_ANSWERS,
    RELEVANT_CONTEXTS,
    RETRIEVAL_SCORES,
)
from rag_evaluator.inputs.load import load_questions
from rag_evaluator.inputs.rag_json import (
    JSON_LINES_SUFFIXES,
    JSON_SUFFIXES,
    RagJsonBatch,
    SkippedFile,
    read_rag_json_dir,
)
from rag_evaluator.inputs.records import KeyedRows, QuestionRow
from rag_evaluator.inputs.shapes import REFERENCE_FIELDS
from rag_evaluator.inputs.tables import write_csv_atomic

logger = logging.getLogger(__name__)

# Past this many warnings of one kind the terminal gets a count; the log gets them all.
WARNINGS_SHOWN = 20

MATCH_CONFIDENCE = "Match Confidence"
MATCH_SCORE = "Match Score"
SOURCE_FILE = "Source File"
OUTPUT_COLUMNS = (
    QUESTION_NUMBER,
    RAG_ANSWER,
    CONTEXTS,
    RETRIEVAL_SCORES,
    MATCH_CONFIDENCE,
    MATCH_SCORE,
    SOURCE_FILE,
)
GROUND_TRUTH_COLUMNS = (QUESTION_NUMBER, GROUND_TRUTH, RELEVANT_CONTEXTS, REFERENCE_ANSWERS)


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
    # --ground-truth-out: where it went, how many rows, and the questions without a reference.
    ground_truth_path: Path | None = None
    ground_truth_rows: int = 0
    questions_without_reference: list[int] = field(default_factory=list)
    # Lost claims whose answer had text, other than the kept one's: answers left out.
    lost_answers: int = 0

    @property
    def rows_with_scores(self) -> int:
        """Rows written with a Retrieval Scores array."""
        return sum(1 for match in self.matched if match.entry.retrieval_scores is not None)

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

        A lost claim counts when its answer had text other than the kept one's (a lost
        answer); an empty or identical answer that lost loses nothing.
        """
        parts = [
            (len(self.skipped_files), "skipped file"),
            (self.skipped_entries, "unreadable entry", "unreadable entries"),
            (len(self.unmatched), "unmatched entry", "unmatched entries"),
            (self.lost_answers, "lost answer"),
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
                _scores_cell(match.entry.retrieval_scores),
                match.confidence.value,
                "" if match.score is None else display_score(match.score),
                match.entry.source_file,
            ]
        )
    return rows


def _contexts_cell(contexts: list[str] | None) -> str:
    """A list cell (contexts, reference answers): blank when not given, else a JSON array."""
    # Blank (unknown) and [] (nothing retrieved) score differently in evaluate.
    return "" if contexts is None else json.dumps(contexts, ensure_ascii=False)


def _without_blank_last_column(rows: list[list[str]]) -> list[list[str]]:
    """The table without its last column (Reference Answers) when no row fills it."""
    if any(row[-1] for row in rows[1:]):
        return rows
    return [row[:-1] for row in rows]


def _scores_cell(scores: list[float] | None) -> str:
    """A JSON array of floats parallel to Contexts; blank when the output reports none."""
    return "" if scores is None else json.dumps([float(score) for score in scores])


def _same_text(first: str, second: str) -> bool:
    return " ".join(first.split()) == " ".join(second.split())


@dataclass(frozen=True)
class CarriedGroundTruth:
    """The references the matched entries carried: the rows of --ground-truth-out."""

    rows: list[list[str]]  # header first
    questions_without_reference: list[int]
    conflicts: list[str]


def carried_ground_truth(assignment: Assignment) -> CarriedGroundTruth:
    """A ground-truth row per matched question whose entries carry a reference.

    The entry kept for the answer gives the reference when it has one, else the first
    other entry of the question that has one. Entries of the question that carry a
    different reference (or different golden chunks) are named in a conflict warning.
    """
    claims: dict[int, list[MatchedEntry]] = {
        match.question_number: [match] for match in assignment.matched
    }
    for lost in assignment.lost_claims:
        claims.setdefault(lost.loser.question_number, []).append(lost.loser)
    rows: list[list[str]] = [list(GROUND_TRUTH_COLUMNS)]
    missing: list[int] = []
    conflicts: list[str] = []
    for number in sorted(claims):
        carrying = [claim for claim in claims[number] if claim.entry.reference is not None]
        carrying = [claim for claim in carrying if (claim.entry.reference or "").strip()]
        if not carrying:
            missing.append(number)
            continue
        kept = carrying[0].entry
        for other in carrying[1:]:
            entry = other.entry
            differs = []
            if not _same_text(entry.reference or "", kept.reference or ""):
                differs.append("reference")
            if (
                entry.reference_contexts is not None
                and kept.reference_contexts is not None
                and entry.reference_contexts != kept.reference_contexts
            ):
                differs.append("golden contexts")
            if differs:
                conflicts.append(
                    f"{kept.origin} and {entry.origin} carry different "
                    f"{' and '.join(differs)} for question {number}; kept {kept.origin}'s. "
                    "Check which is right"
                )
        golden = kept.reference_contexts
        if golden is None:
            golden = next(
                (
                    claim.entry.reference_contexts
                    for claim in carrying
                    if claim.entry.reference_contexts is not None
                ),
                None,
            )
        answers = None if kept.reference_answers is None else list(kept.reference_answers)
        rows.append(
            [str(number), kept.reference or "", _contexts_cell(golden), _contexts_cell(answers)]
        )
    return CarriedGroundTruth(_without_blank_last_column(rows), missing, conflicts)


def lost_answers(lost_claims: list[LostClaim]) -> list[LostClaim]:
    """The lost claims that drop an answer: text of their own, other than the kept one's."""
    return [
        lost
        for lost in lost_claims
        if lost.loser.has_answer
        and not _same_text(lost.loser.entry.answer, lost.winner.entry.answer)
    ]


def _refuse_outputs_of_two_systems(json_dir: Path, lost_claims: list[LostClaim]) -> None:
    """Refuse files that answer the same questions with different answers when only the
    read order would choose between them: the outputs of two systems (or an old and a new
    run) in one folder, which one rag_answers.csv cannot hold."""
    ties: dict[tuple[str, str], list[int]] = {}
    for lost in lost_answers(lost_claims):
        kept, other = lost.winner.entry.source_file, lost.loser.entry.source_file
        if kept != other and lost.decided_by_read_order:
            ties.setdefault((kept, other), []).append(lost.loser.question_number)
    if not ties:
        return
    (kept, other), numbers = max(ties.items(), key=lambda item: len(item[1]))
    others = len(ties) - 1
    raise InputError(
        f"{kept} and {other} both answer {_counted(len(numbers), 'question')} (such as "
        f"question {min(numbers)}) equally well with different answers"
        f"{f', and {others} more pair(s) of files do too' if others else ''}: they look like "
        f"the outputs of two systems, or an old and a new run, and rag_answers.csv holds one "
        f"answer per question; nothing was written. Put each system's files in a folder of its "
        f"own and convert each folder with --json-dir (or move the stale file out of {json_dir})"
    )


def check_new_file(path: Path, option: str, *, force: bool) -> None:
    """Refuse to replace an existing file (a golden set) unless ``--force``."""
    if path.exists() and not force:
        raise UsageError(
            f"{option} {path} already exists; it was not replaced. Pass another {option}, "
            "or --force to replace it"
        )
    if path.is_dir():
        raise UsageError(f"{option} {path} is a folder. Pass a file path such as {path}.csv")


def write_table(path: Path, rows: list[list[str]], option: str, *, force: bool) -> None:
    try:
        write_csv_atomic(path, rows, overwrite=force)
    except FileExistsError as exc:
        raise UsageError(
            f"{option} {path} already exists; it was not replaced. Pass another {option}, "
            "or --force to replace it"
        ) from exc
    except OSError as exc:
        raise InputError(
            f"Cannot write {path}: {exc.strerror or exc}. Pass another {option}", path
        ) from exc


def convert(
    json_dir: Path,
    questions_path: Path,
    output_path: Path,
    threshold: float = DEFAULT_THRESHOLD,
    *,
    ground_truth_path: Path | None = None,
    force: bool = False,
) -> ConvertReport:
    """Read ``json_dir``, match every entry to ``questions_path``, write ``output_path``
    (and, with ``ground_truth_path``, the references the entries carry).

    Raises ``NothingConvertedError`` (and writes nothing) when no entry matched.
    """
    if math.isnan(threshold) or not 0 <= threshold <= 100:
        raise UsageError(f"--threshold must be between 0 and 100, not {threshold:g}")
    json_dir, questions_path, output_path = Path(json_dir), Path(questions_path), Path(output_path)
    _check_output(output_path, json_dir, questions_path)
    if ground_truth_path is not None:
        ground_truth_path = Path(ground_truth_path)
        _check_ground_truth_out(ground_truth_path, json_dir, questions_path, output_path)
        check_new_file(ground_truth_path, "--ground-truth-out", force=force)
    questions = load_questions(questions_path)
    question_texts = _question_texts(questions, questions_path)
    batch = _read_outputs(json_dir)
    assignment = _match(json_dir, batch, question_texts, threshold, questions.source_name)
    carried = carried_ground_truth(assignment) if ground_truth_path is not None else None
    if carried is not None and len(carried.rows) == 1:
        raise NothingConvertedError(
            f"No matched entry in {json_dir} carries a reference (a field named "
            f"{', '.join(REFERENCE_FIELDS)}); nothing was written. Leave out "
            "--ground-truth-out, or export the references with the answers"
        )
    try:
        write_csv_atomic(output_path, output_rows(assignment.matched))
    except OSError as exc:
        raise InputError(
            f"Cannot write {output_path}: {exc.strerror or exc}. Pass another --output",
            output_path,
        ) from exc
    if carried is not None and ground_truth_path is not None:
        _warn_capped(carried.conflicts, "questions whose references differ")
        write_table(ground_truth_path, carried.rows, "--ground-truth-out", force=force)
    report = _report(output_path, threshold, question_texts, batch, assignment)
    if carried is not None:
        report = replace(
            report,
            ground_truth_path=ground_truth_path,
            ground_truth_rows=len(carried.rows) - 1,
            questions_without_reference=carried.questions_without_reference,
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


def _check_output(output_path: Path, json_dir: Path, questions_path: Path) -> None:
    """Refuse an --output that would overwrite an input: the questions or a RAG output."""
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


def _question_texts(questions: KeyedRows[QuestionRow], questions_path: Path) -> dict[int, str]:
    """The text of each question to match against; repeated texts are warned about."""
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
            f"{', '.join(map(str, numbers))}; the answers to it are given to them in the order "
            "the outputs list them. Make the texts differ if that is not the order of the "
            "questions"
            for numbers in repeated_questions(question_texts)
        ],
        f"repeated questions in {questions.source_name}",
    )
    return question_texts


def _read_outputs(json_dir: Path) -> RagJsonBatch:
    """Every RAG output file of ``json_dir``, its skipped files and problems logged."""
    batch = read_rag_json_dir(json_dir)
    for skipped in batch.skipped:
        logger.error("%s (file skipped)", skipped.reason)
    for file in batch.files:
        logger.info("%s: %d entries (%s)", file.name, len(file.entries), file.shape)
        _warn_capped(file.problems, f"problems in {file.name}")
    return batch


def _match(
    json_dir: Path,
    batch: RagJsonBatch,
    question_texts: dict[int, str],
    threshold: float,
    questions_name: str,
) -> Assignment:
    """Which entry answers which question; refuses two systems' outputs in one folder and
    a folder of which nothing matched."""
    assignment = assign_entries(batch.entries, question_texts, threshold)
    _refuse_outputs_of_two_systems(json_dir, assignment.lost_claims)
    _warn_capped(
        [item.message(threshold, questions_name) for item in assignment.unmatched],
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
                json_dir, questions_name, len(batch.entries), len(batch.skipped), threshold
            )
        )
    return assignment


def _report(
    output_path: Path,
    threshold: float,
    question_texts: dict[int, str],
    batch: RagJsonBatch,
    assignment: Assignment,
) -> ConvertReport:
    answered = {match.question_number for match in assignment.matched}
    return ConvertReport(
        lost_answers=len(lost_answers(assignment.lost_claims)),
        output_path=output_path,
        threshold=threshold,
        matched=assignment.matched,
        unmatched=assignment.unmatched,
        lost_claims=assignment.lost_claims,
        files_read=[file.name for file in batch.files],
        skipped_files=batch.skipped,
        skipped_entries=sum(file.skipped_entries for file in batch.files),
        entries_found=len(batch.entries),
        questions_without_answer=sorted(set(question_texts) - answered),
    )


def _check_ground_truth_out(
    path: Path, json_dir: Path, questions_path: Path, output_path: Path
) -> None:
    resolved = path.resolve()
    for other, what in ((questions_path, "the questions file"), (output_path, "--output")):
        if resolved == other.resolve():
            raise UsageError(
                f"--ground-truth-out {path} is {what}; writing there would destroy it. Pass "
                "another path, such as ground_truth.csv"
            )
    if resolved.parent == json_dir.resolve() and path.suffix.lower() in (
        JSON_SUFFIXES + JSON_LINES_SUFFIXES
    ):
        raise UsageError(
            f"--ground-truth-out {path} is a RAG output file in {json_dir}; writing there "
            "would destroy it. Pass another path, such as ground_truth.csv"
        )


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
