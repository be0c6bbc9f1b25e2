"""Confidence intervals, significance tests and agreement statistics, on plain numbers.

scipy.stats does the work wherever it has the method (Wilson intervals, the exact binomial
test behind McNemar's, the bootstrap, normal quantiles). What
scipy lacks is written out here in a few lines each, with the formula in the docstring:
Newcombe's interval for a difference of paired proportions, Holm's step-down correction,
Cohen's kappa and the prediction-powered estimate of a mean.

Randomness is always seeded (``RESAMPLING_SEED``), so the same data always give the same
interval and p-value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

# numpy is imported where it is used, like scipy below: the results and families modules
# import this one, and the command line should start without numpy.
if TYPE_CHECKING:
    import numpy as np

CONFIDENCE_LEVEL = 0.95
SIGNIFICANCE_LEVEL = 0.05  # 1 - CONFIDENCE_LEVEL, written out to keep it exact
RESAMPLES = 9999
RESAMPLING_SEED = 0
# Resamples drawn at a time: at most 200, and at most about a million resampled values (16 MB
# with their indices) however many questions, so a summary's memory does not grow with the
# run. The draws come from one seeded stream in order: the batch never changes an interval.
_RESAMPLING_BATCH = 200
_RESAMPLED_VALUES_PER_BATCH = 1_000_000


def _resampling_batch(values: int) -> int:
    return max(1, min(_RESAMPLING_BATCH, _RESAMPLED_VALUES_PER_BATCH // max(values, 1)))


def _stats() -> ModuleType:
    # Imported on first use: scipy.stats takes over a second to import, which commands
    # that never compute an interval (convert, --help) should not pay.
    from scipy import stats

    return stats


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval ``[low, high]``."""

    low: float
    high: float

    def clipped(self, lowest: float, highest: float) -> Interval:
        """The interval cut to the range the quantity can take."""
        return Interval(min(max(self.low, lowest), highest), max(min(self.high, highest), lowest))


def _normal_quantile() -> float:
    """z for the two-sided ``CONFIDENCE_LEVEL`` (1.959964 for 95%)."""
    return float(_stats().norm.ppf(1 - SIGNIFICANCE_LEVEL / 2))


def wilson_interval(successes: int, total: int) -> Interval | None:
    """Wilson score interval of ``successes / total``; ``None`` when ``total`` is 0."""
    if total == 0:
        return None
    found = (
        _stats()
        .binomtest(successes, total)
        .proportion_ci(confidence_level=CONFIDENCE_LEVEL, method="wilson")
    )
    return Interval(float(found.low), float(found.high))


# Below this the percentile bootstrap's "95%" interval is far too narrow: from a uniform
# population it covers the true mean 50% of the time with 2 values, 77% with 3, 86% with 5,
# 92% with 10 (400 simulated samples each). No interval beats a falsely confident one.
MIN_BOOTSTRAP_VALUES = 10


def _has_spread(values: Sequence[float]) -> bool:
    # Tolerant: 0.3 - 0.1 and 0.4 - 0.2 differ in the last bit, but are the same difference.
    return len(values) >= 2 and not math.isclose(
        min(values), max(values), rel_tol=1e-9, abs_tol=1e-12
    )


def bootstrap_mean_interval(values: Sequence[float]) -> Interval | None:
    """Percentile bootstrap interval of the mean (``RESAMPLES`` resamples, seeded).

    ``None`` when it would mislead: fewer than ``MIN_BOOTSTRAP_VALUES`` values, or all values
    equal (every resample would have the same mean, which says nothing about uncertainty).
    """
    import numpy as np

    if len(values) < MIN_BOOTSTRAP_VALUES or not _has_spread(values):
        return None
    found = _stats().bootstrap(
        (np.asarray(values, dtype=float),),
        np.mean,
        n_resamples=RESAMPLES,
        batch=_resampling_batch(len(values)),
        confidence_level=CONFIDENCE_LEVEL,
        method="percentile",
        rng=np.random.default_rng(RESAMPLING_SEED),
    )
    return Interval(float(found.confidence_interval.low), float(found.confidence_interval.high))


def _mean_difference(run: np.ndarray, baseline: np.ndarray, axis: int = -1) -> np.ndarray:
    import numpy as np

    return np.mean(run - baseline, axis=axis)


@dataclass(frozen=True)
class PairedBootstrap:
    """The paired bootstrap of mean(run - baseline): its interval and its p-value."""

    interval: Interval | None
    p_value: float


def paired_bootstrap(baseline: Sequence[float], run: Sequence[float]) -> PairedBootstrap:
    """Paired percentile bootstrap of mean(run - baseline): interval and two-sided p-value.

    Questions are resampled as pairs (``RESAMPLES`` times, seeded). The p-value comes from
    the same resamples (the paired bootstrap test, Koehn 2004): with B resamples of which
    ``below`` have a mean difference at or under 0 and ``above`` at or over 0,
    p = min(1, 2 min(below + 1, above + 1) / (B + 1)); so p < 0.05 goes with a 95%
    interval that leaves 0 out.

    Without spread there is nothing to resample, and no interval: every difference 0 gives
    p = 1; n identical non-zero differences give the exact sign-flip value 2 / 2^n (only the
    all-plus and all-minus patterns are that extreme), which is 1 for a single question.
    """
    import numpy as np

    differences = [after - before for before, after in zip(baseline, run, strict=True)]
    if not _has_spread(differences):
        if not differences or all(difference == 0 for difference in differences):
            return PairedBootstrap(None, 1.0)
        return PairedBootstrap(None, min(1.0, 2.0 ** (1 - len(differences))))
    found = _stats().bootstrap(
        (np.asarray(run, dtype=float), np.asarray(baseline, dtype=float)),
        _mean_difference,
        paired=True,
        vectorized=True,
        n_resamples=RESAMPLES,
        # Two arrays resampled: half the values' batch each.
        batch=_resampling_batch(2 * len(differences)),
        confidence_level=CONFIDENCE_LEVEL,
        method="percentile",
        rng=np.random.default_rng(RESAMPLING_SEED),
    )
    resampled = found.bootstrap_distribution
    below = int(np.count_nonzero(resampled <= 0))
    above = int(np.count_nonzero(resampled >= 0))
    p_value = min(1.0, 2 * min(below + 1, above + 1) / (len(resampled) + 1))
    interval = Interval(float(found.confidence_interval.low), float(found.confidence_interval.high))
    return PairedBootstrap(interval, p_value)


def mcnemar_exact_p_value(baseline_only: int, run_only: int) -> float:
    """McNemar's exact test: two-sided binomial test of the discordant pairs at 1/2.

    ``baseline_only`` pairs scored 1 in the baseline and 0 in the run, ``run_only`` the
    reverse. With no discordant pair there is no evidence of a change: 1.0.
    """
    discordant = baseline_only + run_only
    if discordant == 0:
        return 1.0
    return float(_stats().binomtest(run_only, discordant, 0.5, alternative="two-sided").pvalue)


@dataclass(frozen=True)
class PairedCounts:
    """A paired 2x2 table of a binary metric over the questions scored in both runs."""

    both: int  # 1 in both runs
    run_only: int  # 1 in the run, 0 in the baseline: got better
    baseline_only: int  # 1 in the baseline, 0 in the run: got worse
    neither: int  # 0 in both

    @property
    def total(self) -> int:
        return self.both + self.run_only + self.baseline_only + self.neither

    @property
    def baseline_successes(self) -> int:
        return self.both + self.baseline_only

    @property
    def run_successes(self) -> int:
        return self.both + self.run_only


def paired_difference_interval(counts: PairedCounts) -> Interval | None:
    """Newcombe's hybrid score interval (1998, method 10) for p_run - p_baseline.

    With p1 = run rate, p2 = baseline rate and (l_i, u_i) their Wilson intervals:
    low  = D - sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2),
    high = D + sqrt((p2 - l2)^2 - 2 phi (p2 - l2)(u1 - p1) + (u1 - p1)^2),
    where D = p1 - p2 and phi corrects for the pairing: with A the product of the four
    margins and B = both * neither - run_only * baseline_only, phi = (B - n/2)/sqrt(A)
    when B > n/2, B/sqrt(A) when B < 0, else 0 (and 0 when A is 0).
    """
    n = counts.total
    run_interval = wilson_interval(counts.run_successes, n)
    baseline_interval = wilson_interval(counts.baseline_successes, n)
    if run_interval is None or baseline_interval is None:
        return None
    p1 = counts.run_successes / n
    p2 = counts.baseline_successes / n
    l1, u1 = run_interval.low, run_interval.high
    l2, u2 = baseline_interval.low, baseline_interval.high
    margins = (
        (counts.both + counts.run_only)
        * (counts.baseline_only + counts.neither)
        * (counts.both + counts.baseline_only)
        * (counts.run_only + counts.neither)
    )
    cross = counts.both * counts.neither - counts.run_only * counts.baseline_only
    if cross > n / 2:
        corrected = cross - n / 2
    elif cross < 0:
        corrected = float(cross)
    else:
        corrected = 0.0
    phi = corrected / math.sqrt(margins) if margins > 0 else 0.0
    difference = p1 - p2
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2
    return Interval(
        max(difference - math.sqrt(max(below, 0.0)), -1.0),
        min(difference + math.sqrt(max(above, 0.0)), 1.0),
    )


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order.

    Sorted ascending, the i-th smallest (i from 0) of m becomes (m - i) * p, then each is
    raised to at least the one before it (so the order is kept) and capped at 1. A test is
    significant at level alpha when its adjusted p-value is at most alpha; this controls
    the chance of any false claim among the m tests at alpha.
    """
    count = len(p_values)
    order = sorted(range(count), key=lambda index: p_values[index])
    adjusted = [0.0] * count
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (count - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class ConfusionMatrix:
    """Judge against human on a binary metric: counts of each (judge, human) pair."""

    both_one: int  # judge 1, human 1
    judge_one_human_zero: int
    judge_zero_human_one: int
    both_zero: int

    @property
    def total(self) -> int:
        return (
            self.both_one + self.judge_one_human_zero + self.judge_zero_human_one + self.both_zero
        )

    @property
    def agreement(self) -> float | None:
        """Share of questions where judge and human gave the same label."""
        if self.total == 0:
            return None
        return (self.both_one + self.both_zero) / self.total


def confusion_matrix(pairs: Sequence[tuple[int, int]]) -> ConfusionMatrix:
    """Count (judge, human) label pairs, each 0 or 1."""
    return ConfusionMatrix(
        both_one=sum(1 for judge, human in pairs if judge == 1 and human == 1),
        judge_one_human_zero=sum(1 for judge, human in pairs if judge == 1 and human == 0),
        judge_zero_human_one=sum(1 for judge, human in pairs if judge == 0 and human == 1),
        both_zero=sum(1 for judge, human in pairs if judge == 0 and human == 0),
    )


def cohen_kappa(matrix: ConfusionMatrix) -> float | None:
    """Cohen's kappa = (p_o - p_e) / (1 - p_e) for two raters and two labels.

    p_o is the observed agreement; p_e the agreement expected by chance from each rater's
    own rate of 1s: p_e = j h + (1 - j)(1 - h). ``None`` when p_e is 1 (both raters gave
    one and the same label to every question: kappa is 0/0, undefined) or nothing was rated.
    """
    total = matrix.total
    if total == 0:
        return None
    observed = (matrix.both_one + matrix.both_zero) / total
    judge_ones = (matrix.both_one + matrix.judge_one_human_zero) / total
    human_ones = (matrix.both_one + matrix.judge_zero_human_one) / total
    expected = judge_ones * human_ones + (1 - judge_ones) * (1 - human_ones)
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


@dataclass(frozen=True)
class PredictionPoweredEstimate:
    """A mean corrected with human labels: Angelopoulos et al. (2023), "PPI".

    ``interval`` is ``None`` when it cannot be computed (one labelled question);
    ``rectifier_variance`` is the sample variance of judge - human on the labelled ones.
    """

    estimate: float
    interval: Interval | None
    judge_mean: float
    rectifier_mean: float
    judge_variance: float
    rectifier_variance: float | None
    judged_count: int
    labelled_count: int


def _sample_variance(values: Sequence[float]) -> float | None:
    import numpy as np

    if len(values) < 2:
        return None
    return float(np.var(np.asarray(values, dtype=float), ddof=1))


def prediction_powered_mean(
    judge_all: Sequence[float],
    judge_labelled: Sequence[float],
    human_labelled: Sequence[float],
) -> PredictionPoweredEstimate | None:
    """The prediction-powered estimate of the mean human score over the whole run.

    estimate = mean(judge over all N) - mean(judge - human over the n labelled);
    interval = estimate -/+ z sqrt(Var(judge)/N + Var(judge - human)/n), with sample
    variances (n - 1 in the denominator) and the normal quantile z. ``None`` when nothing
    is labelled; the interval is ``None`` with a single labelled question (the variance of
    the judge's error cannot be estimated from one). The labelled questions must be a
    random sample of the run for the estimate to be unbiased.
    """
    import numpy as np

    if not judge_labelled or not judge_all:
        return None
    rectifiers = [
        judge - human for judge, human in zip(judge_labelled, human_labelled, strict=True)
    ]
    judge_mean = float(np.mean(judge_all))
    rectifier_mean = float(np.mean(rectifiers))
    estimate = judge_mean - rectifier_mean
    judge_variance = _sample_variance(judge_all) or 0.0
    rectifier_variance = _sample_variance(rectifiers)
    interval = None
    if rectifier_variance is not None:
        half_width = _normal_quantile() * math.sqrt(
            judge_variance / len(judge_all) + rectifier_variance / len(rectifiers)
        )
        interval = Interval(estimate - half_width, estimate + half_width)
    return PredictionPoweredEstimate(
        estimate=estimate,
        interval=interval,
        judge_mean=judge_mean,
        rectifier_mean=rectifier_mean,
        judge_variance=judge_variance,
        rectifier_variance=rectifier_variance,
        judged_count=len(judge_all),
        labelled_count=len(rectifiers),
    )
