"""The one bootstrap implementation (`metrics.stats.bootstrap_multi`) against `scipy.stats.bootstrap`.

Both are percentile bootstraps of the same statistic; they draw different random resamples, so
the intervals agree up to Monte Carlo error. With 20,000 resamples that error is about 0.002 on
these data (values in [0, 1]); the tolerance, 0.01, is far below what a wrong confidence level
(90 % instead of 95 % moves the ends by ~0.03), a one-sided interval, resampling without
replacement (a zero-width interval) or resampling numerators and denominators separately would
give.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from toolsight.metrics.stats import bootstrap, bootstrap_multi, bootstrap_ratio

N = 20_000
TOL = 0.01


def _data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(42)
    return {
        "pass": (rng.random(40) < 0.35).astype(float),             # binary, like pass rates
        "score": np.clip(rng.beta(0.7, 1.6, 25), 0.0, 1.0),       # skewed partial scores
        "small": np.array([0.0, 0.2, 0.9, 1.0, 0.4, 0.6, 0.0]),   # few tasks
    }


@pytest.mark.parametrize("name", ["pass", "score", "small"])
def test_mean_interval_matches_scipy(name: str) -> None:
    vals = _data()[name]
    ref = sps.bootstrap((vals,), np.mean, n_resamples=N, confidence_level=0.95, method="percentile",
                        random_state=np.random.default_rng(7)).confidence_interval
    ours = bootstrap(list(vals), resamples=N, seed=7)
    assert ours.value == pytest.approx(float(vals.mean()))
    assert ours.lo == pytest.approx(ref.low, abs=TOL)
    assert ours.hi == pytest.approx(ref.high, abs=TOL)
    assert ours.n == len(vals)


def test_ratio_interval_matches_scipy_paired() -> None:
    rng = np.random.default_rng(3)
    den = rng.integers(0, 6, 60).astype(float)        # calls per task (some tasks make none)
    num = np.array([rng.binomial(int(d), 0.7) for d in den], dtype=float)  # ok calls per task

    def ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(a.sum(axis=axis) / b.sum(axis=axis))

    ref = sps.bootstrap((num, den), ratio, paired=True, vectorized=True, n_resamples=N, confidence_level=0.95,
                        method="percentile", random_state=np.random.default_rng(11)).confidence_interval
    ours = bootstrap_ratio(list(num), list(den), resamples=N, seed=11)
    assert ours.value == pytest.approx(num.sum() / den.sum())
    assert ours.lo == pytest.approx(ref.low, abs=TOL)
    assert ours.hi == pytest.approx(ref.high, abs=TOL)


def test_other_levels_match_scipy() -> None:
    vals = _data()["score"]
    for level in (0.8, 0.99):
        ref = sps.bootstrap((vals,), np.mean, n_resamples=N, confidence_level=level, method="percentile",
                            random_state=np.random.default_rng(5)).confidence_interval
        ours = bootstrap(list(vals), resamples=N, seed=5, level=level)
        assert ours.lo == pytest.approx(ref.low, abs=TOL)
        assert ours.hi == pytest.approx(ref.high, abs=TOL)


def test_the_wrappers_are_single_statistic_calls_of_the_one_implementation() -> None:
    d = _data()
    multi = bootstrap_multi({"m": list(d["score"])}, {"r": (list(d["pass"][:25]), [1.0] * 25)}, resamples=500, seed=9)
    assert bootstrap(list(d["score"]), resamples=500, seed=9) == multi["m"]
    # a ratio drawn alone uses the same draws as a mean drawn alone (same n, same seed)
    assert bootstrap_ratio(list(d["pass"][:25]), [1.0] * 25, resamples=500, seed=9) == \
        bootstrap(list(d["pass"][:25]), resamples=500, seed=9)
