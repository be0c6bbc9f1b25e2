"""The bootstrap draws its resamples a bounded number of values at a time, so that a large
run's summary does not hold 200 resamples of every question at once (issue 26). The draws
come from one seeded stream in order, so the intervals must be those of the code before,
which drew 200 resamples at a time whatever the run's size: the figures below are its."""

from __future__ import annotations

import random

from rag_evaluator.stats.statistics import Interval, bootstrap_mean_interval, paired_bootstrap


def _values() -> tuple[list[float], list[float]]:
    rng = random.Random(26)
    values = [rng.random() ** 2 for _ in range(12000)]
    other = [min(1.0, value + rng.gauss(0.01, 0.1)) for value in values]
    return values, other


def test_a_large_run_s_mean_interval_is_that_of_200_resamples_at_a_time() -> None:
    values, _ = _values()
    assert bootstrap_mean_interval(values) == Interval(0.3278815988505862, 0.33863815707282335)


def test_a_large_paired_bootstrap_is_that_of_200_resamples_at_a_time() -> None:
    values, other = _values()
    found = paired_bootstrap(values, other)
    assert found.interval == Interval(0.00702542336272656, 0.010528499061973234)
    assert found.p_value == 0.0002
