"""`metrics.stats.quantile` equals `np.quantile` (linear method) to the last bit, so the report's
intervals did not move when it stopped calling `np.quantile` (which imports `numpy.ma`)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from toolsight.metrics.stats import quantile


def test_quantile_is_numpys_to_the_last_bit() -> None:
    rng = np.random.default_rng(7)
    for i in range(3000):
        n = int(rng.integers(1, 300))
        vals = rng.random(n) if i % 3 else rng.integers(0, 5, n) / 5.0  # ties, as scores have
        for q in (0.025, 0.975, 0.05, 0.95, 0.5, 0.0, 1.0, float(rng.random())):
            assert quantile(np.sort(vals), q) == float(np.quantile(vals, q)), (n, q)


def test_a_bootstrap_imports_no_numpy_ma() -> None:
    code = ("import sys\nfrom toolsight.metrics.stats import bootstrap\n"
            "est = bootstrap([0, 1, 1, 0, 1])\nassert est.lo < est.hi\nprint('numpy.ma' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
