"""The statistics, checked against values computed independently.

Independent means: worked by hand from the textbook formula (the arithmetic is in the
comments), brute-force enumeration, scipy's own functions called directly, or another
library's implementation (statsmodels for McNemar and Holm, scikit-learn for kappa).
"""

from __future__ import annotations

import gc
import math
import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from rag_evaluator.results.summary import format_fraction, mean_line
from rag_evaluator.stats.statistics import (
    RESAMPLES,
    RESAMPLING_SEED,
    ConfusionMatrix,
    Interval,
    PairedBootstrap,
    PairedCounts,
    bootstrap_mean_interval,
    cohen_kappa,
    confusion_matrix,
    holm_adjust,
    mcnemar_exact_p_value,
    paired_bootstrap,
    paired_difference_interval,
    prediction_powered_mean,
    wilson_interval,
)

Z = 1.959963984540054  # the 97.5% normal quantile


def _mean_text(values: list[float]) -> str:
    return mean_line("", values).value


def bounds(interval: Interval | None) -> tuple[float, float]:
    assert interval is not None
    return interval.low, interval.high


def hand_wilson(successes: int, total: int) -> tuple[float, float]:
    """Wilson's closed form: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = successes / total
    centre = p + Z**2 / (2 * total)
    spread = Z * math.sqrt(p * (1 - p) / total + Z**2 / (4 * total**2))
    scale = 1 + Z**2 / total
    return (centre - spread) / scale, (centre + spread) / scale


# --- Wilson --------------------------------------------------------------------------------


def test_wilson_17_of_19_is_69_to_97_percent() -> None:
    # p = 0.8947, z²/n = 0.2022: centre 0.8283, half-width 0.1423.
    interval = wilson_interval(17, 19)
    assert bounds(interval) == pytest.approx((0.68606, 0.97064), abs=1e-5)
    assert format_fraction(17, 19) == "17/19 (89%) [95% CI 69–97%]"


@pytest.mark.parametrize(
    ("successes", "total", "expected"),
    [
        (0, 10, (0.0, 0.27753)),  # all failures: high = z²/(n + z²)
        (10, 10, (0.72247, 1.0)),  # all successes: low = n/(n + z²)
        (1, 1, (0.20654, 1.0)),  # n = 1
        (0, 1, (0.0, 0.79346)),
    ],
)
def test_wilson_edge_cases_worked_by_hand(
    successes: int, total: int, expected: tuple[float, float]
) -> None:
    interval = wilson_interval(successes, total)
    assert interval is not None
    assert (interval.low, interval.high) == pytest.approx(expected, abs=1e-5)


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_matches_the_closed_form(case: tuple[int, int]) -> None:
    successes, total = case
    interval = wilson_interval(successes, total)
    assert interval is not None
    assert (interval.low, interval.high) == pytest.approx(hand_wilson(successes, total), abs=1e-9)


def test_no_question_scored_has_no_interval() -> None:
    assert wilson_interval(0, 0) is None
    assert format_fraction(0, 0) == "0/0 (n/a)"


# --- McNemar -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("baseline_only", "run_only", "expected"),
    [
        (1, 5, 14 / 64),  # 2 * (C(6,0) + C(6,1)) / 2^6
        (5, 1, 14 / 64),  # symmetric
        (0, 6, 2 / 64),  # all discordant pairs one way: 2 * 1/2^6
        (10, 0, 2 / 1024),  # all disagree, the same way
        (1, 0, 1.0),  # a single discordant pair proves nothing
        (0, 0, 1.0),  # all agree: no discordant pair, no evidence of a change
        (3, 3, 1.0),
    ],
)
def test_mcnemar_exact_worked_by_hand(baseline_only: int, run_only: int, expected: float) -> None:
    assert mcnemar_exact_p_value(baseline_only, run_only) == pytest.approx(expected, abs=1e-12)


@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_matches_statsmodels(both: int, worse: int, better: int, neither: int) -> None:
    if worse + better == 0:
        return
    expected = mcnemar([[both, worse], [better, neither]], exact=True).pvalue
    assert mcnemar_exact_p_value(worse, better) == pytest.approx(expected, rel=1e-9)


# --- Newcombe's interval for a paired difference ----------------------------------------------


def hand_newcombe(counts: PairedCounts) -> tuple[float, float]:
    """Newcombe (1998) method 10, from the closed-form Wilson limits."""
    n = counts.total
    p1 = counts.run_successes / n
    p2 = counts.baseline_successes / n
    l1, u1 = hand_wilson(counts.run_successes, n)
    l2, u2 = hand_wilson(counts.baseline_successes, n)
    a = counts.both + counts.run_only
    b = counts.baseline_only + counts.neither
    c = counts.both + counts.baseline_only
    d = counts.run_only + counts.neither
    cross = counts.both * counts.neither - counts.run_only * counts.baseline_only
    corrected = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0)
    phi = corrected / math.sqrt(a * b * c * d) if a * b * c * d else 0
    low = p1 - p2 - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = p1 - p2 + math.sqrt((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    return low, high


def test_newcombe_on_a_textbook_table() -> None:
    # 41 pairs: 14 positive in both, 5 only in the run, none only in the baseline, 22 in
    # neither (the paired table of Altman et al., Statistics with Confidence, table 6.2).
    # D = 5/41 = 0.1220; Wilson 19/41 = 0.3215-0.6107, 14/41 = 0.2140-0.4963;
    # A = 19*22*14*27, B = 14*22 - 0 = 308 > 20.5, phi = 287.5/sqrt(A) = 0.7246.
    counts = PairedCounts(both=14, run_only=5, baseline_only=0, neither=22)
    interval = paired_difference_interval(counts)
    assert bounds(interval) == pytest.approx((0.01148, 0.22649), abs=1e-5)
    assert (interval.low, interval.high) == pytest.approx(hand_newcombe(counts), abs=1e-9)


def test_newcombe_when_every_pair_agrees() -> None:
    # 20 pairs all 1/1: D = 0, phi = 0 (a margin is empty), limits ±(1 - 20/(20 + z²)).
    interval = paired_difference_interval(PairedCounts(20, 0, 0, 0))
    assert bounds(interval) == pytest.approx((-0.16113, 0.16113), abs=1e-5)


def test_newcombe_when_every_pair_disagrees_one_way() -> None:
    # 10 pairs, all 1 in the baseline and 0 in the run: D = -1; the interval stays in [-1, 1].
    counts = PairedCounts(both=0, run_only=0, baseline_only=10, neither=0)
    interval = paired_difference_interval(counts)
    assert interval is not None
    assert interval.high < 0 and interval.low == -1.0
    assert interval.high == pytest.approx(hand_newcombe(counts)[1], abs=1e-9)


@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
def test_newcombe_matches_the_formula_and_holds_the_estimate(
    both: int, run_only: int, baseline_only: int, neither: int
) -> None:
    counts = PairedCounts(both, run_only, baseline_only, neither)
    if counts.total == 0:
        assert paired_difference_interval(counts) is None
        return
    interval = paired_difference_interval(counts)
    assert interval is not None
    low, high = hand_newcombe(counts)
    assert interval.low == pytest.approx(max(low, -1.0), abs=1e-9)
    assert interval.high == pytest.approx(min(high, 1.0), abs=1e-9)
    difference = (run_only - baseline_only) / counts.total
    assert interval.low - 1e-12 <= difference <= interval.high + 1e-12


# --- Holm -----------------------------------------------------------------------------------


def test_holm_worked_by_hand() -> None:
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> raised to 0.06.
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjust([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm_adjust([0.2]) == [0.2]
    assert holm_adjust([]) == []


def statsmodels_holm(p_values: list[float]) -> list[float]:
    """Holm's adjusted p-values by statsmodels.

    Its multipletests runs a full garbage collection on every Holm call, which over the whole
    suite's heap took about half a second each (a minute for the test). Objects frozen by
    ``gc.freeze`` are not scanned, so everything alive is frozen during the call.
    """
    gc.freeze()
    try:
        return list(multipletests(p_values, method="holm")[1])
    finally:
        gc.unfreeze()


# The cases that matter most always run: ties, 0 and 1, a raise carried down, one value.
@example([0.01, 0.01, 0.01, 0.01])
@example([0.0, 1.0, 0.0])
@example([0.04, 0.03, 0.02, 0.01, 0.005])
@example([0.3])
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_matches_statsmodels(p_values: list[float]) -> None:
    expected = statsmodels_holm(p_values)
    assert holm_adjust(p_values) == pytest.approx(expected, abs=1e-12)


# --- Cohen's kappa ----------------------------------------------------------------------------


def test_kappa_worked_by_hand() -> None:
    # 50 questions: p_o = 35/50 = 0.7; judge 1s 25/50, human 1s 30/50;
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7 - 0.5)/(1 - 0.5) = 0.4.
    matrix = ConfusionMatrix(
        both_one=20, judge_one_human_zero=5, judge_zero_human_one=10, both_zero=15
    )
    assert cohen_kappa(matrix) == pytest.approx(0.4)
    assert matrix.agreement == pytest.approx(0.7)


def test_kappa_edge_cases() -> None:
    all_agree = confusion_matrix([(1, 1), (0, 0), (1, 1)])
    assert cohen_kappa(all_agree) == pytest.approx(1.0)
    all_disagree = confusion_matrix([(1, 0), (0, 1)])  # p_o = 0, p_e = 0.5
    assert cohen_kappa(all_disagree) == pytest.approx(-1.0)
    same_label_everywhere = confusion_matrix([(1, 1)] * 5)  # p_e = 1: 0/0
    assert cohen_kappa(same_label_everywhere) is None
    assert cohen_kappa(confusion_matrix([])) is None
    assert cohen_kappa(confusion_matrix([(1, 1)])) is None  # n = 1


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=2, max_size=200))
def test_kappa_matches_scikit_learn(pairs: list[tuple[int, int]]) -> None:
    judge = [judge for judge, _ in pairs]
    human = [human for _, human in pairs]
    kappa = cohen_kappa(confusion_matrix(pairs))
    if len(set(judge)) == 1 and set(judge) == set(human):
        assert kappa is None  # scikit-learn gives nan (with a warning) here
        return
    assert kappa == pytest.approx(cohen_kappa_score(judge, human), abs=1e-12)


# --- Prediction-powered estimate --------------------------------------------------------------


def test_ppi_worked_by_hand() -> None:
    # N = 8 judged, mean 0.75, sample variance 1.5/7; n = 4 labelled, judge - human =
    # [0, 1, 0, 0]: mean 0.25, sample variance 0.75/3 = 0.25. Estimate 0.75 - 0.25 = 0.5;
    # SE = sqrt(0.2142857/8 + 0.25/4) = 0.298807; half-width 1.96 SE = 0.585651.
    found = prediction_powered_mean(
        [1, 1, 1, 0, 1, 1, 0, 1], judge_labelled=[1, 1, 0, 1], human_labelled=[1, 0, 0, 1]
    )
    assert found is not None
    assert found.estimate == pytest.approx(0.5)
    assert found.judge_mean == pytest.approx(0.75)
    assert found.rectifier_mean == pytest.approx(0.25)
    assert found.judge_variance == pytest.approx(1.5 / 7)
    assert found.rectifier_variance == pytest.approx(0.25)
    assert bounds(found.interval) == pytest.approx((0.5 - 0.585651, 0.5 + 0.585651), abs=1e-6)


def test_ppi_when_judge_and_people_always_agree() -> None:
    # No difference on the labels: the estimate is the judge's mean and the interval holds
    # only the judge's own spread: 0.75 ± 1.96 sqrt((1.5/7)/8) = 0.75 ± 0.320774.
    judge_all = [1, 1, 1, 0, 1, 1, 0, 1]
    found = prediction_powered_mean(judge_all, [1, 0, 1], [1, 0, 1])
    assert found is not None
    assert found.estimate == pytest.approx(0.75)
    assert found.rectifier_variance == 0
    assert bounds(found.interval) == pytest.approx((0.75 - 0.320774, 0.75 + 0.320774), abs=1e-6)


def test_ppi_when_judge_and_people_always_disagree() -> None:
    # The judge says 1 where people say 0, on all 3 labels: the estimate drops by 1.
    found = prediction_powered_mean([1, 1, 1, 1], [1, 1, 1], [0, 0, 0])
    assert found is not None
    assert found.estimate == pytest.approx(0.0)
    assert found.rectifier_variance == 0
    assert found.judge_variance == 0
    assert found.interval == Interval(0.0, 0.0)


def test_ppi_with_a_single_label_has_no_interval() -> None:
    found = prediction_powered_mean([1, 0, 1, 1], [1], [0])
    assert found is not None
    assert found.estimate == pytest.approx(0.75 - 1)
    assert found.interval is None
    assert prediction_powered_mean([1, 0], [], []) is None


def test_ppi_interval_covers_the_truth_as_often_as_it_claims() -> None:
    # A biased judge (says 1 for 40% of the true 0s, misses 5% of the true 1s) on runs with
    # a true rate of 0.7: 400 simulated runs of 2,000 questions with 100 random labels.
    rng = random.Random(7)
    covered = 0
    for _ in range(400):
        truth = [1 if rng.random() < 0.7 else 0 for _ in range(2000)]
        judge = [
            (1 if rng.random() < 0.95 else 0) if t else (1 if rng.random() < 0.4 else 0)
            for t in truth
        ]
        labelled = rng.sample(range(2000), 100)
        found = prediction_powered_mean(
            judge, [judge[i] for i in labelled], [truth[i] for i in labelled]
        )
        assert found is not None and found.interval is not None
        covered += found.interval.low <= sum(truth) / len(truth) <= found.interval.high
    assert 0.92 <= covered / 400 <= 0.98


# --- Bootstrap intervals ----------------------------------------------------------------------


def test_bootstrap_interval_is_scipys_percentile_bootstrap() -> None:
    values = [0.12, 0.5, 0.77, 0.31, 0.9, 0.05, 0.66, 0.42, 0.58, 0.23]
    expected = stats.bootstrap(
        (np.array(values),),
        np.mean,
        n_resamples=RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(RESAMPLING_SEED),
    ).confidence_interval
    found = bootstrap_mean_interval(values)
    assert bounds(found) == pytest.approx((expected.low, expected.high), abs=1e-12)
    assert bootstrap_mean_interval(values) == found  # seeded: the same every time


def test_bootstrap_interval_agrees_with_the_normal_interval_on_a_large_sample() -> None:
    rng = random.Random(3)
    values = [rng.random() for _ in range(2000)]
    mean = sum(values) / len(values)
    half = Z * float(np.std(values, ddof=1)) / math.sqrt(len(values))
    found = bootstrap_mean_interval(values)
    assert bounds(found) == pytest.approx((mean - half, mean + half), abs=0.002)


def test_bootstrap_needs_spread() -> None:
    assert bootstrap_mean_interval([]) is None
    assert bootstrap_mean_interval([0.4]) is None  # n = 1
    assert bootstrap_mean_interval([0.0] * 12) is None  # all equal
    assert _mean_text([0.4]) == "mean 0.4000 (n=1) [95% CI n/a]"
    assert _mean_text([]) == "mean n/a (n=0)"


def test_too_few_values_get_no_interval_rather_than_a_falsely_narrow_one() -> None:
    # With 2 values the percentile bootstrap can only return points between them: it covered
    # the true mean half the time in simulation. Below 10 values no interval is given.
    assert bootstrap_mean_interval([0.11, 0.18]) is None
    assert bootstrap_mean_interval([0.1, 0.9, 0.4, 0.7, 0.2, 0.5, 0.3, 0.8, 0.6]) is None  # 9
    assert bootstrap_mean_interval([0.1, 0.9, 0.4, 0.7, 0.2, 0.5, 0.3, 0.8, 0.6, 0.0]) is not None
    assert _mean_text([0.11, 0.18]) == "mean 0.1450 (n=2) [95% CI n/a]"


def test_paired_bootstrap_is_scipys_paired_bootstrap() -> None:
    baseline = [0.2, 0.4, 0.9, 0.5, 0.3, 0.8]
    run = [0.3, 0.6, 0.7, 0.9, 0.3, 0.85]
    expected = stats.bootstrap(
        (np.array(run), np.array(baseline)),
        lambda after, before, axis=-1: np.mean(after - before, axis=axis),
        paired=True,
        n_resamples=RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(RESAMPLING_SEED),
    )
    found = paired_bootstrap(baseline, run)
    interval = expected.confidence_interval
    assert bounds(found.interval) == pytest.approx((interval.low, interval.high), abs=1e-12)
    resampled = expected.bootstrap_distribution
    below, above = int((resampled <= 0).sum()), int((resampled >= 0).sum())
    assert found.p_value == pytest.approx(2 * (min(below, above) + 1) / (RESAMPLES + 1))


def test_paired_bootstrap_without_spread_worked_by_hand() -> None:
    assert paired_bootstrap([0.5, 0.5], [0.5, 0.5]) == PairedBootstrap(None, 1.0)  # all agree
    assert paired_bootstrap([0.5], [0.7]) == PairedBootstrap(None, 1.0)  # n = 1
    # 5 pairs, each up by 0.2 (all disagree the same way): of the 2^5 sign flips only
    # all-plus and all-minus are as extreme: p = 2/32.
    assert paired_bootstrap([0.1] * 5, [0.3] * 5) == PairedBootstrap(None, 2 / 32)
    # 0.3 - 0.1 and 0.4 - 0.2 differ in the last bit only: still the same difference.
    assert paired_bootstrap([0.1, 0.2], [0.3, 0.4]) == PairedBootstrap(None, 0.5)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1, allow_nan=False), st.floats(0, 1, allow_nan=False)),
        min_size=3,
        max_size=60,
    )
)
def test_paired_bootstrap_test_agrees_with_its_interval(pairs: list[tuple[float, float]]) -> None:
    baseline = [before for before, _ in pairs]
    run = [after for _, after in pairs]
    found = paired_bootstrap(baseline, run)
    if found.interval is None:
        return
    # Significant at 5% exactly when the 95% interval leaves 0 out (up to the +1 smoothing
    # and the percentile's interpolation at the boundary).
    if found.p_value < 0.04:
        assert not found.interval.low <= 0 <= found.interval.high
    if found.p_value > 0.06:
        assert found.interval.low <= 0 <= found.interval.high


def test_paired_bootstrap_p_value_agrees_with_the_t_test_on_large_samples() -> None:
    rng = random.Random(5)
    baseline = [rng.random() for _ in range(3000)]
    run = [min(1.0, value + rng.gauss(0.006, 0.1)) for value in baseline]
    found = paired_bootstrap(baseline, run)
    expected = stats.ttest_rel(run, baseline).pvalue
    assert found.p_value == pytest.approx(expected, abs=0.02)
