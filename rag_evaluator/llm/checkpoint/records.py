"""A run's finished questions, kept on disk in the checkpoint rather than in memory.

A run of a million questions cannot hold a million records (issue 15: a run stays under
1 GB). Every finished question is a line of the checkpoint anyway, so ``StoredRecords``
keeps only where each line starts, 16 bytes a question, and reads a record back when it is
asked for: once to summarise the run and once per results file it writes.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Container, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from rag_evaluator.families.base import JudgedFamily, QuestionRecord

ReadRecord = Callable[[bytes], QuestionRecord]


# Recent additions wait in a dict; past this many they join the sorted arrays (one merge per
# this many questions keeps both adding and looking up cheap at a million questions).
_MERGE_EVERY = 4096
# A record line is read in pieces of this size until its newline.
_READ_SIZE = 4096


class StoredRecords(Mapping[int, QuestionRecord]):
    """Finished questions by number, each read back from its checkpoint line on access.

    The first line of a question wins, as when a checkpoint is loaded: a repeat is not
    stored. Iteration follows the order the questions finished in. Besides the offsets it
    keeps the running totals the progress line shows (calls, cost, and each binary metric's
    ones and scored questions).
    """

    def __init__(
        self, path: Path, families: Mapping[str, JudgedFamily[Any]], read: ReadRecord
    ) -> None:
        self.path = path
        self.families = families
        self._read = read
        self._reset()
        self._file: BinaryIO | None = None

    def _reset(self) -> None:
        # In the order added: what iteration follows.
        self._numbers: array[int] = array("q")
        self._offsets: array[int] = array("q")
        # The same questions for lookups: sorted arrays, plus the latest additions.
        self._sorted_numbers: array[int] = array("q")
        self._sorted_offsets: array[int] = array("q")
        self._recent: dict[int, int] = {}
        self.calls = 0
        self.cost_usd = 0.0
        self.tallies: dict[str, list[int]] = {}  # metric -> [ones, scored]

    def add(self, record: QuestionRecord, offset: int) -> None:
        """A finished question whose checkpoint line starts at byte ``offset`` (ignored when
        the question is stored already)."""
        number = record.question_number
        if number in self._recent or self._sorted_offset(number) is not None:
            return
        self._numbers.append(number)
        self._offsets.append(offset)
        self._recent[number] = offset
        if len(self._recent) >= _MERGE_EVERY:
            self._merge()
        for name, result in record.results.items():
            self.calls += result.calls
            self.cost_usd += result.cost_usd
            family = self.families.get(name)
            if family is None:
                continue
            for metric, value in family.progress_scores(result).items():
                ones_scored = self.tallies.setdefault(metric, [0, 0])
                ones_scored[0] += value
                ones_scored[1] += 1

    def _merge(self) -> None:
        # Imported here, not at the top: a fresh run merges nothing before its first call,
        # and numpy's import is a tenth of a second of the start.
        import numpy as np

        count = len(self._recent)
        numbers = np.concatenate(
            [
                np.frombuffer(self._sorted_numbers, dtype=np.int64),
                np.fromiter(self._recent, dtype=np.int64, count=count),
            ]
        )
        offsets = np.concatenate(
            [
                np.frombuffer(self._sorted_offsets, dtype=np.int64),
                np.fromiter(self._recent.values(), dtype=np.int64, count=count),
            ]
        )
        order = np.argsort(numbers, kind="stable")
        # Back into arrays: bisect on them is faster than numpy's per-call overhead.
        self._sorted_numbers = array("q", numbers[order].tobytes())
        self._sorted_offsets = array("q", offsets[order].tobytes())
        self._recent = {}

    def relocate(self, numbers: array[int], offsets: array[int]) -> None:
        """Where each question's line is now that the checkpoint was rewritten (the totals
        stay: the questions are the same)."""
        self.close()
        calls, cost_usd, tallies = self.calls, self.cost_usd, self.tallies
        self._reset()
        self._numbers, self._offsets = numbers, offsets
        self._recent = dict(zip(numbers, offsets, strict=True))
        self._merge()
        self.calls, self.cost_usd, self.tallies = calls, cost_usd, tallies

    def keep_only(self, numbers: Container[int]) -> None:
        """Forget the questions not among ``numbers`` (lines of a checkpoint for questions
        the run does not have), totals included."""
        if all(number in numbers for number in self._numbers):
            return
        kept = [(self[number], offset) for number, offset in self.entries() if number in numbers]
        self._reset()
        for record, offset in kept:
            self.add(record, offset)

    def entries(self) -> Iterator[tuple[int, int]]:
        """(question number, offset) of each question, in the order added."""
        return zip(self._numbers, self._offsets, strict=True)

    def _offset(self, number: object) -> int | None:
        if isinstance(number, bool) or not isinstance(number, int):
            return None
        found = self._recent.get(number)
        if found is not None:
            return found
        return self._sorted_offset(number)

    def _sorted_offset(self, number: int) -> int | None:
        numbers = self._sorted_numbers
        position = bisect_left(numbers, number)
        if position < len(numbers) and numbers[position] == number:
            return self._sorted_offsets[position]
        return None

    def __contains__(self, number: object) -> bool:
        return self._offset(number) is not None

    def __getitem__(self, number: int) -> QuestionRecord:
        offset = self._offset(number)
        if offset is None:
            raise KeyError(number)
        return self._read(self._line_at(offset))

    def _line_at(self, offset: int) -> bytes:
        # Unbuffered: a buffer could hold bytes a resume has since cut off (a torn line).
        if self._file is None:
            self._file = self.path.open("rb", buffering=0)
        self._file.seek(offset)
        pieces = []
        while True:
            piece = self._file.read(_READ_SIZE)
            if not piece:
                break
            end = piece.find(b"\n")
            if end >= 0:
                pieces.append(piece[: end + 1])
                break
            pieces.append(piece)
        return b"".join(pieces)

    def __iter__(self) -> Iterator[int]:
        return iter(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)

    def close(self) -> None:
        """Let go of the checkpoint file (opened again if a record is asked for)."""
        if self._file is not None:
            self._file.close()
            self._file = None
