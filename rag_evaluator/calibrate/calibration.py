"""How far the judge agrees with people, and the judge's rates corrected by human labels.

Per metric labelled by people on some of a run's questions: agreement, Cohen's kappa and
the confusion matrix (binary metrics), the judge's bias on the labelled questions, and the
prediction-powered estimate (Angelopoulos et al. 2023) of the rate people would give over
the whole run, beside the judge's raw rate.

A jury's run (``evaluate --jury``) holds each juror's values beside the jury's, in columns
``<metric>@<juror>``: each juror is measured against the same labels as the jury's metric,
right after it. Label columns name the jury's metric; juror columns are never labelled apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from rag_evaluator.errors import InputError
from rag_evaluator.families.jury.results import split_juror_column
from rag_evaluator.inputs.fields import QUESTION_NUMBER, column_key
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.results.run_scores import (
    NON_METRIC_COLUMNS,
    MetricKind,
    MetricScores,
    RunScores,
    TableRow,
    is_number,
)
from rag_evaluator.stats.statistics import (
    CONFIDENCE_LEVEL,
    ConfusionMatrix,
    PredictionPoweredEstimate,
    cohen_kappa,
    confusion_matrix,
    prediction_powered_mean,
)

# Below this many labels the normal approximation behind the interval is rough.
FEW_LABELS = 30
_SHOWN_NUMBERS = 15


@dataclass(frozen=True)
class HumanLabels:
    """The labels of one file, by results metric: question number -> label."""

    source: str
    by_metric: Mapping[str, Mapping[int, float]]
    unmatched_columns: tuple[str, ...]  # columns naming no metric of the run
    unknown_questions: tuple[int, ...]  # labelled numbers that are not in the run


def collect_labels(
    results: RunScores,
    source: str,
    headers: Sequence[str],
    rows: Sequence[TableRow],
    line_numbers: Mapping[int, int],
) -> HumanLabels:
    """Match the label file's columns to the run's metrics (any case, ``_``/spaces ignored)
    and check every label: 0 or 1 for a binary metric, a number for a continuous one, within
    the metric's declared range. Every other column (the question texts and the tool's own
    text columns aside) is named in ``unmatched_columns``, whatever it holds."""
    metrics_by_key = {
        column_key(name): name for name in results.metrics if _juror_of(results, name) is None
    }
    matched: dict[str, str] = {}  # label header -> metric
    unmatched: list[str] = []
    for header in headers:
        if header in NON_METRIC_COLUMNS or header == QUESTION_NUMBER or not header:
            continue
        metric = metrics_by_key.get(column_key(header))
        if metric is not None and metric not in matched.values():
            matched[header] = metric
        elif header not in unmatched:
            unmatched.append(header)
    if not matched:
        raise InputError(
            f"{source} has no column named like a metric of {results.label} (its metrics: "
            f"{', '.join(results.metrics) or 'none'}). Name each label column like the metric "
            "it labels, e.g. Precision"
        )
    by_metric: dict[str, dict[int, float]] = {metric: {} for metric in matched.values()}
    for row in rows:
        for header, metric in matched.items():
            cell = row.cells.get(header, "").strip()
            if not cell:
                continue
            line = line_numbers.get(row.question_number, 0)
            _check_label(source, line, header, results.metrics[metric], cell)
            by_metric[metric][row.question_number] = float(cell)
    for header, metric in matched.items():
        _check_range(source, header, results.metrics[metric], by_metric[metric], line_numbers)
    if not any(by_metric.values()):
        raise InputError(
            f"{source} holds no label: every {', '.join(matched)} cell is empty. Fill in the "
            "labels people gave"
        )
    known = set(results.question_numbers)
    return HumanLabels(
        source=source,
        by_metric=by_metric,
        unmatched_columns=tuple(unmatched),
        unknown_questions=tuple(sorted({row.question_number for row in rows} - known)),
    )


def _check_label(source: str, line: int, header: str, scores: MetricScores, cell: str) -> None:
    if scores.kind is MetricKind.BINARY and not (is_number(cell) and float(cell) in (0.0, 1.0)):
        raise InputError(
            f"{source} line {line}: the {header} label {cell[:40]!r} is not 0 or 1. "
            f"Label {scores.name}, a 0/1 metric, with 0 or 1 (or leave the cell empty)"
        )
    if not is_number(cell):
        raise InputError(
            f"{source} line {line}: the {header} label {cell[:40]!r} is not a number. "
            f"Label {scores.name} with a score such as 0.75 (or leave the cell empty)"
        )


def _check_range(
    source: str,
    header: str,
    scores: MetricScores,
    labels: Mapping[int, float],
    line_numbers: Mapping[int, int],
) -> None:
    """Labels on another scale than the metric's (1-4 ratings of a 0-1 score) are refused:
    the corrected estimate would mix the two scales."""
    scale = scores.scale
    if scale is None or scale.binary or scale.range_text() is None:
        return
    outside = [number for number, label in sorted(labels.items()) if not scale.holds(label)]
    if not outside:
        return
    first = outside[0]
    raise InputError(
        f"{source}: {len(outside)} of {len(labels)} {header} labels lie outside the range of "
        f"{scores.name}, {scale.range_text()} (line {line_numbers.get(first, 0)}: "
        f"'{labels[first]:g}'). Put the labels on the metric's scale (ratings from 1 to 4 "
        "become (rating - 1) / 3), or rename the column so that it labels no metric"
    )


@dataclass(frozen=True)
class MetricCalibration:
    """One labelled metric: agreement, bias and the corrected rate."""

    metric: str
    kind: MetricKind
    labelled: int  # labelled by people and scored by the judge
    labelled_unscored: tuple[int, ...]  # labelled, but the judge left them unscored
    judge_labelled_mean: float | None
    human_labelled_mean: float | None
    bias: float | None  # judge - human on the labelled questions
    judge_mean: float | None  # over every scored question of the run
    judged_count: int
    agreement: float | None = None  # binary: share of equal labels
    kappa: float | None = None
    confusion: ConfusionMatrix | None = None
    mean_absolute_difference: float | None = None  # continuous metrics
    corrected: PredictionPoweredEstimate | None = None
    notes: tuple[str, ...] = ()
    # A jury's juror: its label and the jury's metric it is measured on (``metric`` is then
    # the juror's column, ``Precision@haiku``); ``None`` for the metric itself.
    juror: str | None = None
    jury_metric: str | None = None


@dataclass(frozen=True)
class CalibrationReport:
    """Every labelled metric of a run."""

    results: str
    labels: str
    metrics: tuple[MetricCalibration, ...]
    not_labelled: tuple[str, ...]
    unmatched_columns: tuple[str, ...]
    unknown_questions: tuple[int, ...]


def calibrate(results: RunScores, labels: HumanLabels) -> CalibrationReport:
    """Measure the judge against the human labels, metric by metric; a jury's jurors each
    right after the jury's metric."""
    calibrated = []
    for metric, scores in results.metrics.items():
        human = labels.by_metric.get(metric)
        if human is None:
            continue
        calibrated.append(_calibrate_metric(results, scores, human))
        for juror, juror_scores in _jurors_of(results, scores):
            found = _calibrate_metric(results, juror_scores, human)
            calibrated.append(replace(found, juror=juror, jury_metric=metric))
    return CalibrationReport(
        results=results.label,
        labels=labels.source,
        metrics=tuple(calibrated),
        not_labelled=tuple(
            name
            for name in results.metrics
            if name not in labels.by_metric and _juror_of(results, name) is None
        ),
        unmatched_columns=labels.unmatched_columns,
        unknown_questions=labels.unknown_questions,
    )


def _juror_of(results: RunScores, column: str) -> tuple[str, str] | None:
    """``(metric, juror)`` when ``column`` holds a juror's values of a metric of the run."""
    found = split_juror_column(column)
    if found is None or found[0] not in results.metrics:
        return None
    return found


def _jurors_of(results: RunScores, jury: MetricScores) -> list[tuple[str, MetricScores]]:
    """Each juror of the jury's metric ``jury`` with its values, in column order (the jury's),
    measured as the jury's metric is (its kind and range); a juror column without a value
    has none."""
    jurors = []
    for column in results.columns or (*results.metrics, *results.empty_columns):
        found = _juror_of(results, column)
        if found is None or found[0] != jury.name:
            continue
        scores = results.metrics.get(column)
        values = {} if scores is None else scores.values
        unscored = tuple(number for number in results.question_numbers if number not in values)
        jurors.append((found[1], MetricScores(column, jury.kind, values, unscored, jury.scale)))
    return jurors


def _calibrate_metric(
    results: RunScores, scores: MetricScores, human: Mapping[int, float]
) -> MetricCalibration:
    metric = scores.name
    judge_all = list(scores.values.values())
    known = set(results.question_numbers)
    labelled = [number for number in sorted(human) if number in scores.values]
    unscored = tuple(
        number for number in sorted(human) if number in known and number not in scores.values
    )
    judge_labelled = [scores.values[number] for number in labelled]
    human_labelled = [human[number] for number in labelled]
    base = MetricCalibration(
        metric=metric,
        kind=scores.kind,
        labelled=len(labelled),
        labelled_unscored=unscored,
        judge_labelled_mean=_mean(judge_labelled),
        human_labelled_mean=_mean(human_labelled),
        bias=None if not labelled else (sum(judge_labelled) - sum(human_labelled)) / len(labelled),
        judge_mean=_mean(judge_all),
        judged_count=len(judge_all),
    )
    notes: list[str] = []
    if unscored:
        shown = format_numbers(unscored, _SHOWN_NUMBERS)
        notes.append(f"labelled but unscored by the judge, left out: {shown}")
    if not labelled:
        notes.append("no labelled question was scored by the judge: nothing to calibrate")
        return replace(base, notes=tuple(notes))
    if scores.kind is MetricKind.BINARY:
        matrix = confusion_matrix(
            [
                (int(judge), int(person))
                for judge, person in zip(judge_labelled, human_labelled, strict=True)
            ]
        )
        kappa = cohen_kappa(matrix)
        if kappa is None:
            notes.append(
                "kappa is undefined: the judge and the people gave one and the same label to "
                "every labelled question"
            )
        base = replace(base, agreement=matrix.agreement, kappa=kappa, confusion=matrix)
    else:
        base = replace(
            base,
            mean_absolute_difference=sum(
                abs(judge - person)
                for judge, person in zip(judge_labelled, human_labelled, strict=True)
            )
            / len(labelled),
        )
    corrected = prediction_powered_mean(judge_all, judge_labelled, human_labelled)
    if corrected is not None:
        corrected = _within_range(corrected, scores, [*judge_all, *human_labelled])
        notes += _interval_notes(corrected)
    return replace(base, corrected=corrected, notes=tuple(notes))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _within_range(
    estimate: PredictionPoweredEstimate, scores: MetricScores, values: Sequence[float]
) -> PredictionPoweredEstimate:
    """Cut the estimate and its interval to the metric's range: its declared one, else 0-1
    for rates and for scores that all lie there (the correction can step past the ends when
    the judge is near them)."""
    scale = scores.scale
    if scale is not None and scale.low is not None and scale.high is not None:
        low, high = scale.low, scale.high
    elif scores.kind is MetricKind.BINARY or all(0.0 <= value <= 1.0 for value in values):
        low, high = 0.0, 1.0
    else:
        return estimate
    return replace(
        estimate,
        estimate=min(max(estimate.estimate, low), high),
        interval=None if estimate.interval is None else estimate.interval.clipped(low, high),
    )


def _interval_notes(estimate: PredictionPoweredEstimate) -> list[str]:
    if estimate.labelled_count == 1:
        return [
            "one labelled question: the judge's error cannot be measured from one, so no "
            "interval; label more questions (100 or more is a good start)"
        ]
    notes = []
    if estimate.rectifier_variance == 0:
        notes.append(
            f"the judge and the people differed by the same amount on all "
            f"{estimate.labelled_count} labelled questions (for 0/1 labels: they always "
            "agreed), so the interval holds only the spread of the judge's own scores and "
            "cannot show judge errors these labels did not reveal; label more questions"
        )
    if estimate.labelled_count < FEW_LABELS:
        notes.append(
            f"fewer than {FEW_LABELS} labelled questions: the normal approximation behind "
            "the interval is rough"
        )
    return notes


def calibration_json(report: CalibrationReport) -> dict[str, object]:
    """The whole calibration as plain JSON data (numbers unrounded)."""
    return {
        "results": report.results,
        "labels": report.labels,
        "confidence_level": CONFIDENCE_LEVEL,
        "metrics": [_metric_json(metric) for metric in report.metrics],
        "not_labelled": list(report.not_labelled),
        "unmatched_label_columns": list(report.unmatched_columns),
        "labelled_questions_not_in_results": list(report.unknown_questions),
    }


def _metric_json(metric: MetricCalibration) -> dict[str, object]:
    corrected = metric.corrected
    data: dict[str, object] = {
        "metric": metric.metric,
        "juror": metric.juror,
        "jury_metric": metric.jury_metric,
        "kind": metric.kind.value,
        "labelled": metric.labelled,
        "labelled_but_unscored": list(metric.labelled_unscored),
        "judge_mean_on_labelled": metric.judge_labelled_mean,
        "human_mean_on_labelled": metric.human_labelled_mean,
        "judge_bias": metric.bias,
        "judge_mean": metric.judge_mean,
        "judged": metric.judged_count,
        "prediction_powered": None
        if corrected is None
        else {
            "estimate": corrected.estimate,
            "interval": None
            if corrected.interval is None
            else [corrected.interval.low, corrected.interval.high],
            "rectifier_mean": corrected.rectifier_mean,
            "judge_variance": corrected.judge_variance,
            "rectifier_variance": corrected.rectifier_variance,
        },
        "notes": list(metric.notes),
    }
    if metric.kind is MetricKind.BINARY:
        data["agreement"] = metric.agreement
        data["cohen_kappa"] = metric.kappa
        if metric.confusion is not None:
            data["confusion_matrix"] = {
                "judge_1_human_1": metric.confusion.both_one,
                "judge_1_human_0": metric.confusion.judge_one_human_zero,
                "judge_0_human_1": metric.confusion.judge_zero_human_one,
                "judge_0_human_0": metric.confusion.both_zero,
            }
    else:
        data["mean_absolute_difference"] = metric.mean_absolute_difference
    return data
