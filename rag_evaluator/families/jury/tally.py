"""A jury's summary: the inner family's lines over the jury's verdicts, then each juror's
rates or means, how far the jurors agree, and where they split.

Per metric column of the family, each juror's value of each question is kept as it is
added, compactly (a million questions hold no Python object per question and juror): rates
as one byte per juror and question (-1 no value, 0, 1), scores as 8 bytes (NaN for no
value). Agreement is computed on 0/1 codes, a score passing at ``PASS_THRESHOLD``; a question
*splits* on a metric when the jurors with a value do not all give the same code.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from rag_evaluator.families.base import JudgedFamily, SummaryTally
from rag_evaluator.families.jury.agreement import cohen_kappa, fleiss_kappa, passes
from rag_evaluator.families.jury.results import JuryResult
from rag_evaluator.results.summary import SummaryLine, fraction_line, mean_line, whole_percent

NO_VALUE = -1
# How many split questions the summary line names.
SHOWN_SPLITS = 10


@dataclass(frozen=True)
class PairAgreement:
    """Two jurors on one metric over the questions both rated: how many they rated alike,
    and Cohen's kappa (``None`` when undefined)."""

    first: str
    second: str
    agreed: int
    compared: int
    kappa: float | None

    @property
    def share(self) -> float | None:
        return self.agreed / self.compared if self.compared else None


@dataclass(frozen=True)
class MetricAgreement:
    """The jury on one metric: each juror's rate or mean (its summary line, in jury order),
    each pair's agreement, Fleiss' kappa over the questions every juror rated, and the
    questions where the jurors with a value disagreed (the first ``SHOWN_SPLITS`` named)."""

    metric: str
    rate: bool
    jurors: tuple[SummaryLine, ...]
    pairs: tuple[PairAgreement, ...]
    fleiss_kappa: float | None
    rated_by_all: int
    comparable: int  # questions at least two jurors rated
    split_count: int
    split_questions: tuple[int, ...]


@dataclass(frozen=True)
class JuryAgreement:
    """Every metric's jury figures, for the terminal's table."""

    jurors: tuple[str, ...]
    metrics: tuple[MetricAgreement, ...]


class _MetricCodes:
    """One metric's per-juror values and its split questions."""

    def __init__(self, jurors: int, rate: bool) -> None:
        self.rate = rate
        self.codes = [array("b") for _ in range(jurors)]
        self.scores = [array("d") for _ in range(jurors)] if not rate else []
        self.comparable = 0
        self.split_count = 0
        self.split_questions: list[int] = []

    def add(self, question_number: int, values: Sequence[float | None]) -> None:
        codes = [NO_VALUE if value is None else passes(value) for value in values]
        for position, (code, value) in enumerate(zip(codes, values, strict=True)):
            self.codes[position].append(code)
            if not self.rate:
                self.scores[position].append(math.nan if value is None else float(value))
        given = [code for code in codes if code != NO_VALUE]
        if len(given) < 2:
            return
        self.comparable += 1
        if len(set(given)) > 1:
            self.split_count += 1
            if len(self.split_questions) < SHOWN_SPLITS:
                self.split_questions.append(question_number)

    def code_table(self) -> np.ndarray:
        """Codes as a table: a row per juror, a column per question."""
        return np.array([np.frombuffer(codes, dtype=np.int8) for codes in self.codes])


class JuryTally(SummaryTally[JuryResult]):
    """The inner family's tally over the jury's verdicts, and the jurors' figures."""

    def __init__(self, family: JudgedFamily[Any], jurors: Sequence[str]) -> None:
        self.family = family
        self.jurors = tuple(jurors)
        self.inner = family.tally()
        self.metrics = {
            column: _MetricCodes(len(self.jurors), column in family.rate_columns)
            for column in family.metric_columns
        }
        self.added = 0
        # The last agreement() and how many questions it covered: each juror's mean line
        # bootstraps its values, so lines() and the terminal's table share one computation.
        self._agreement: tuple[int, JuryAgreement] | None = None

    def add(self, result: JuryResult) -> None:
        """Count a question numbered by its place among those added (1, 2, ...)."""
        self.add_question(self.added + 1, result)

    def add_question(self, question_number: int, result: JuryResult) -> None:
        if result.jurors and len(result.jurors) != len(self.jurors):
            raise ValueError(
                f"a jury result holds {len(result.jurors)} jurors' results, the jury has "
                f"{len(self.jurors)}"
            )
        self.added += 1
        verdict = result.verdict
        if verdict is None:
            verdict = self.family.unscored(
                result.error or "the jury gave no verdict", result.failure or "question"
            )
        self.inner.add(verdict)
        juror_values: list[Mapping[str, float | None]] = [
            self.family.metric_values(juror) for juror in result.jurors
        ] or [{} for _ in self.jurors]
        for column, codes in self.metrics.items():
            codes.add(question_number, [values.get(column) for values in juror_values])

    def agreement(self) -> JuryAgreement:
        """Each metric's juror rates or means, pairwise agreement, Fleiss' kappa and splits."""
        if self._agreement is not None and self._agreement[0] == self.added:
            return self._agreement[1]
        found = JuryAgreement(
            self.jurors,
            tuple(self._metric_agreement(column, codes) for column, codes in self.metrics.items()),
        )
        self._agreement = (self.added, found)
        return found

    def _metric_agreement(self, column: str, codes: _MetricCodes) -> MetricAgreement:
        table = codes.code_table()
        rated = table != NO_VALUE
        pairs = []
        for (first, a), (second, b) in combinations(enumerate(self.jurors), 2):
            both = rated[first] & rated[second]
            ratings_a, ratings_b = table[first][both], table[second][both]
            pairs.append(
                PairAgreement(
                    a,
                    b,
                    int(np.count_nonzero(ratings_a == ratings_b)),
                    int(np.count_nonzero(both)),
                    cohen_kappa(ratings_a, ratings_b),
                )
            )
        by_all = rated.all(axis=0) if len(self.jurors) else np.zeros(0, dtype=bool)
        return MetricAgreement(
            metric=column,
            rate=codes.rate,
            jurors=tuple(
                self._juror_line(label, column, codes, position)
                for position, label in enumerate(self.jurors)
            ),
            pairs=tuple(pairs),
            fleiss_kappa=fleiss_kappa(table[:, by_all].T) if table.size else None,
            rated_by_all=int(np.count_nonzero(by_all)),
            comparable=codes.comparable,
            split_count=codes.split_count,
            split_questions=tuple(codes.split_questions),
        )

    def _juror_line(
        self, label: str, column: str, codes: _MetricCodes, position: int
    ) -> SummaryLine:
        name = f"Juror {label} {column}"
        if codes.rate:
            given = np.frombuffer(codes.codes[position], dtype=np.int8)
            ones = int(np.count_nonzero(given == 1))
            return fraction_line(name, ones, int(np.count_nonzero(given != NO_VALUE)))
        scores = np.frombuffer(codes.scores[position], dtype=np.float64)
        return mean_line(name, scores[~np.isnan(scores)].tolist())

    def lines(self) -> list[SummaryLine]:
        """The inner family's lines, then per metric: each juror's rate or mean, each pair's
        agreement, Fleiss' kappa and the split questions (no comma in any value)."""
        lines = list(self.inner.lines())
        for metric in self.agreement().metrics:
            lines += metric.jurors
            lines += [_pair_line(metric.metric, pair) for pair in metric.pairs]
            lines.append(_fleiss_line(metric))
            lines.append(_split_line(metric))
        return lines


def _pair_line(metric: str, pair: PairAgreement) -> SummaryLine:
    share = pair.share
    kappa = "n/a" if pair.kappa is None else f"{pair.kappa:.2f}"
    shown = "n/a" if share is None else f"{share:.1%}"
    return SummaryLine(
        f"Agreement {pair.first} / {pair.second} {metric}",
        f"{shown} ({pair.agreed}/{pair.compared}) kappa {kappa}",
        {"agreement": share, "agreed": pair.agreed, "compared": pair.compared, "kappa": pair.kappa},
    )


def _questions(count: int) -> str:
    return f"{count} question" if count == 1 else f"{count} questions"


def _fleiss_line(metric: MetricAgreement) -> SummaryLine:
    kappa = "n/a" if metric.fleiss_kappa is None else f"{metric.fleiss_kappa:.2f}"
    return SummaryLine(
        f"Fleiss Kappa {metric.metric}",
        f"{kappa} over {_questions(metric.rated_by_all)}",
        {"kappa": metric.fleiss_kappa, "questions": metric.rated_by_all},
    )


def _split_line(metric: MetricAgreement) -> SummaryLine:
    text = f"{metric.split_count} of {_questions(metric.comparable)}"
    if metric.split_questions:
        text += ": " + " / ".join(str(number) for number in metric.split_questions)
        if metric.split_count > len(metric.split_questions):
            text += " / …"
    return SummaryLine(
        f"Jury Split {metric.metric}",
        text,
        {"split": metric.split_count, "questions": metric.comparable},
    )


# The summary lines a jury adds: kept in the results file, drawn as a table on the terminal.
JURY_LINE_PREFIXES = ("Juror ", "Agreement ", "Fleiss Kappa ", "Jury Split ")


def is_jury_line(label: str) -> bool:
    return label.startswith(JURY_LINE_PREFIXES)


def _juror_cell(line: SummaryLine) -> str:
    """A juror's rate or mean as a table cell (``80%``, ``0.8123``), from its numbers."""
    numbers = line.numbers or {}
    if "mean" in numbers:
        mean = numbers["mean"]
        return "n/a" if mean is None else f"{mean:.4f}"
    count, total = numbers.get("count"), numbers.get("total")
    if not isinstance(count, int) or not isinstance(total, int) or total == 0:
        return "n/a"
    return f"{whole_percent(count, total)}%"


def _pair_cell(pair: PairAgreement) -> str:
    shown = "n/a" if pair.share is None else f"{pair.share:.0%}"
    return shown if pair.kappa is None else f"{shown} κ {pair.kappa:.2f}"


def jury_table(agreement: JuryAgreement) -> tuple[list[str], list[list[str]]]:
    """The terminal's jury table, a column per metric: each juror's rate or mean (jurors
    numbered in ``--jury`` order), each pair's agreement with Cohen's kappa, Fleiss' kappa,
    and how many questions split the jury."""
    metrics = agreement.metrics
    header = ["", *(metric.metric for metric in metrics)]
    rows = [
        [f"{number} {label}", *(_juror_cell(metric.jurors[number - 1]) for metric in metrics)]
        for number, label in enumerate(agreement.jurors, start=1)
    ]
    numbers = list(combinations(range(1, len(agreement.jurors) + 1), 2))
    for index, (first, second) in enumerate(numbers):
        cells = [_pair_cell(metric.pairs[index]) for metric in metrics]
        rows.append([f"Agreement {first}–{second}", *cells])
    rows.append(
        [
            "Fleiss κ",
            *("n/a" if m.fleiss_kappa is None else f"{m.fleiss_kappa:.2f}" for m in metrics),
        ]
    )
    rows.append(["Split", *(f"{m.split_count} of {m.comparable}" for m in metrics)])
    return header, rows
