"""Small statistics helpers: means and seeded percentile-bootstrap confidence intervals."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
_CHUNK_ELEMENTS = 500_000  # resample indices drawn at once (~2 MB as int32): memory stays flat in n


def _chunk(n: int) -> int:
    return max(1, min(200, _CHUNK_ELEMENTS // max(1, n)))


class Estimate(BaseModel):
    """A mean with its 95% bootstrap interval; `value` is None when there is no data."""

    value: float | None = None
    lo: float | None = None
    hi: float | None = None
    n: int = 0


def bootstrap(
    values: Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Estimate:
    """The mean of `values` and a percentile bootstrap CI (deterministic for a given seed)."""
    return bootstrap_multi({"mean": values}, resamples=resamples, seed=seed, level=level)["mean"]


def mean_or_none(values: Sequence[float]) -> float | None:
    return float(sum(values) / len(values)) if values else None


def bootstrap_ratio(
    num: Sequence[float],
    den: Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Estimate:
    """Σnum / Σden with a bootstrap CI that resamples tasks (pairs), e.g. ok calls / calls."""
    return bootstrap_multi({}, {"ratio": (num, den)}, resamples=resamples, seed=seed, level=level)["ratio"]


def bootstrap_multi(
    means: Mapping[str, Sequence[float]],
    ratios: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> dict[str, Estimate]:
    """Several statistics of the same tasks from one shared set of resamples (one RNG draw).

    `means` maps a name to per-task values (their mean); `ratios` maps a name to per-task
    (numerator, denominator) pairs (Σnum / Σden). All sequences must have the same length.
    The one bootstrap implementation: `bootstrap` and `bootstrap_ratio` are single-statistic calls
    of it. Percentile intervals, checked against `scipy.stats.bootstrap` in the tests.
    """
    ratios = ratios or {}
    lengths = {len(v) for v in means.values()} | {len(a) for a, _ in ratios.values()}
    lengths |= {len(b) for _, b in ratios.values()}
    if len(lengths) > 1:
        raise ValueError(f"bootstrap_multi needs equal lengths, got {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    out: dict[str, Estimate] = {}
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in means.items()}
    pairs = {k: (np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)) for k, (a, b) in ratios.items()}
    live_means: dict[str, np.ndarray] = {}
    live_ratios: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for k, arr in arrays.items():
        if n == 0:
            out[k] = Estimate()
            continue
        mean = float(arr.mean())
        if n == 1 or resamples <= 0 or bool(np.all(arr == arr[0])):
            out[k] = Estimate(value=mean, lo=mean, hi=mean, n=n)
        else:
            out[k] = Estimate(value=mean, n=n)
            live_means[k] = arr
    for k, (a, b) in pairs.items():
        total = float(b.sum()) if n else 0.0
        if n == 0 or total == 0:
            out[k] = Estimate(n=n)
            continue
        value = float(a.sum()) / total
        if n == 1 or resamples <= 0:
            out[k] = Estimate(value=value, lo=value, hi=value, n=n)
        else:
            out[k] = Estimate(value=value, n=n)
            live_ratios[k] = (a, b)
    if not live_means and not live_ratios:
        return out
    rng = np.random.default_rng(seed)
    stats = {k: np.empty(resamples, dtype=np.float64) for k in [*live_means, *live_ratios]}
    done = 0
    while done < resamples:
        size = min(_chunk(n), resamples - done)
        idx = rng.integers(0, n, size=(size, n), dtype=np.int32)
        for name, arr in live_means.items():
            stats[name][done : done + size] = arr[idx].mean(axis=1)
        for name, (a, b) in live_ratios.items():
            dsum = b[idx].sum(axis=1)
            safe = np.where(dsum > 0, dsum, 1)
            stats[name][done : done + size] = np.where(dsum > 0, a[idx].sum(axis=1) / safe, np.nan)
        done += size
    alpha = (1.0 - level) / 2.0
    for name, vals in stats.items():
        vals = vals[~np.isnan(vals)]
        est = out[name]
        if vals.size == 0:
            out[name] = Estimate(value=est.value, lo=est.value, hi=est.value, n=n)
            continue
        ordered = np.sort(vals)
        out[name] = Estimate(value=est.value, lo=quantile(ordered, alpha), hi=quantile(ordered, 1.0 - alpha), n=n)
    return out


def quantile(ordered: np.ndarray, q: float) -> float:
    """`np.quantile(values, q)` (its default, linear method) of sorted values, to the last bit —
    without what `np.quantile` imports on its first call (`numpy.ma`, ~2 MB at the end of every
    `toolsight run`, whose report computes these intervals; docs/speed.md)."""
    n = len(ordered)
    v = (n - 1) * q
    lo = math.floor(v)
    a, b = float(ordered[lo]), float(ordered[min(lo + 1, n - 1)])
    t, d = v - lo, b - a
    return b - d * (1 - t) if t >= 0.5 else a + d * t
