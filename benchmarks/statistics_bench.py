"""What the confidence intervals cost a run, and why the bootstrap is the percentile one.

For metric columns of 100, 1,000 and 10,000 values it times, interleaved:

- ``format_mean``: the summary line with its seeded percentile bootstrap (9,999 resamples),
  what every offline metric column of a run pays once;
- scipy's BCa bootstrap on the same values (scipy's default method), the alternative that
  was not taken: its jackknife step grows with the square of the number of values;
- the paired bootstrap of ``compare`` (interval and p-value from one set of resamples);
- scipy's paired permutation test on the same pairs, the test that was not taken for the
  p-value: it costs about eight times the bootstrap (14 s against 1.8 s for 10,000 pairs).

Prints min/median/max and the BCa / percentile ratio. Never asserted in tests; run by hand:

    .venv/bin/python benchmarks/statistics_bench.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import random

import numpy as np
from scipy import stats
from timing import alternate, format_ratio, format_stats, machine

from rag_evaluator.results.summary import format_mean
from rag_evaluator.stats.statistics import CONFIDENCE_LEVEL, RESAMPLES, paired_bootstrap


def _bca(values: list[float]) -> object:
    return stats.bootstrap(
        (np.asarray(values),),
        np.mean,
        n_resamples=RESAMPLES,
        batch=200,
        confidence_level=CONFIDENCE_LEVEL,
        method="BCa",
        rng=np.random.default_rng(0),
    )


def _permutation(baseline: list[float], run: list[float]) -> object:
    return stats.permutation_test(
        (np.asarray(run), np.asarray(baseline)),
        lambda after, before, axis=-1: np.mean(after - before, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        batch=200,
        rng=np.random.default_rng(0),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    print(machine())
    rng = random.Random(1)
    for size in (100, 1_000, 10_000):
        values = [rng.random() for _ in range(size)]
        shifted = [min(1.0, value + rng.uniform(-0.1, 0.12)) for value in values]
        timed = alternate(
            {
                "summary line (percentile bootstrap)": lambda values=values: format_mean(values),
                "BCa bootstrap (not used)": lambda values=values: _bca(values),
                "compare: paired bootstrap": lambda v=values, s=shifted: paired_bootstrap(v, s),
                "permutation test (not used)": lambda v=values, s=shifted: _permutation(v, s),
            },
            repeats=arguments.repeats,
        )
        print(f"\n{size:,} values per metric column")
        print(format_stats(timed, unit="s"))
        print(
            format_ratio(timed, "BCa bootstrap (not used)", "summary line (percentile bootstrap)")
        )


if __name__ == "__main__":
    main()
