"""Adaptive concurrency end to end: the real runner, the openai SDK and the scripted server on
127.0.0.1 configured with a hidden capacity.

- 429 above the capacity: the limiter settles near it and no task fails;
- a queueing server (latency rises with load): the limit comes down from its start;
- two runs on one endpoint share one limiter and never exceed its limit together (and, as a
  control, two runs with their own limiters do).
"""

from __future__ import annotations

import asyncio
import statistics
from pathlib import Path
from typing import Any

import pytest
from scalekit import dataset, jsonl

from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark
from toolsight.calls.limiter import LimiterPool
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import LIMITS, Runner
from toolsight.engine.summary import RunSummary
from toolsight.models.registry import get_model
from toolsight.models.scripted import Script, ScriptedServer


def _script(**capacity: Any) -> Script:
    return Script.model_validate({"steps": [{"text": "<answer>A</answer>"}], "capacity": capacity})


def _runner(data: Path, out: Path, srv: ScriptedServer, pool: LimiterPool | None = None, **kw: Any) -> Runner:
    bench = DatasetBenchmark(data)
    opts = RunOptions.of(benchmark=str(data), model="openai/demo", base_url=srv.openai_base_url, out=str(out),
                      backoff_base=0.05, cache=False, **kw)
    return Runner(opts, bench, bench.load(None), get_model("openai/demo", base_url=srv.openai_base_url), limiters=pool)


def _limits(run_dir: Path) -> list[dict[str, Any]]:
    return jsonl(run_dir / LIMITS)


def test_the_limit_settles_near_a_hidden_capacity_and_no_task_fails(tmp_path: Path) -> None:
    capacity = 5
    data = dataset(tmp_path / "ds", 160)
    with ScriptedServer(_script(concurrency=capacity, seconds=0.05, over="reject")) as srv:
        runner = _runner(data, tmp_path / "run", srv, concurrency=20, max_connections=20)
        s = asyncio.run(asyncio.wait_for(runner.run(), 120))
        rejected, peak = srv.rejected, srv.peak_inflight
    assert s.done == 160 and not s.ran.errors, s.line()
    assert peak == capacity  # the server was used up to its capacity ...
    assert rejected > 0  # ... and said so above it
    changes = _limits(tmp_path / "run")
    assert changes[0]["reason"] == "run-start" and changes[0]["limit"] == 20
    cuts = [c for c in changes if c["reason"] == "overload"]
    assert cuts, "429s must cut the limit"
    late = [c["limit"] for c in changes[len(changes) // 2:]]
    print(f"\nhidden capacity {capacity}: {len(cuts)} cuts, {rejected} answers 429 for 160 tasks; "
          f"limits in the second half of the run: {late}")
    assert capacity * 0.6 <= statistics.median(late) <= capacity * 1.6, late
    # each 429 was retried and is in the trajectories; none was spent in vain on a failed task
    assert s.stats.retries == rejected
    assert "connection limit" in s.line()


def test_rising_latency_brings_the_limit_down(tmp_path: Path) -> None:
    data = dataset(tmp_path / "ds", 64)
    # 4 requests at a time, 0.3 s each; more wait in line, so latency grows with the load (16 in
    # flight: about 1.2 s). The server runs in its own process so that its work does not slow the
    # client down and blur the unloaded latency.
    with ScriptedServer(_script(concurrency=4, seconds=0.3, over="queue"), subprocess=True) as srv:
        runner = _runner(data, tmp_path / "run", srv, concurrency=16, max_connections=16)
        s = asyncio.run(asyncio.wait_for(runner.run(), 120))
    assert s.done == 64 and not s.ran.errors, s.line()
    changes = _limits(tmp_path / "run")
    latency_cuts = [c for c in changes if c["reason"] == "latency"]
    print(f"\nqueueing server (capacity 4): {[(c['reason'], c['limit']) for c in changes]}")
    assert latency_cuts, "a queue that doubles the latency must cut the limit"
    assert min(c["limit"] for c in changes) < 16
    assert all(c["latency_s"] > 2 * c["baseline_s"] for c in latency_cuts)


def test_runs_on_one_endpoint_share_its_limit(tmp_path: Path) -> None:
    data = dataset(tmp_path / "ds", 24)

    async def two_runs(pool_a: LimiterPool, pool_b: LimiterPool, srv: ScriptedServer, tag: str) -> list[RunSummary]:
        a = _runner(data, tmp_path / f"{tag}-a", srv, pool_a, concurrency=6, max_connections=3, adaptive=False)
        b = _runner(data, tmp_path / f"{tag}-b", srv, pool_b, concurrency=6, max_connections=3, adaptive=False)
        return list(await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 120))

    # a server with room for everything, slow enough that both runs overlap
    with ScriptedServer(_script(concurrency=100, seconds=0.1, over="queue")) as srv:
        shared = LimiterPool()
        got = asyncio.run(two_runs(shared, shared, srv, "shared"))
        shared_peak = srv.peak_inflight
        srv.peak_inflight = 0
        apart = asyncio.run(two_runs(LimiterPool(), LimiterPool(), srv, "apart"))
        apart_peak = srv.peak_inflight
    assert all(s.done == 24 and not s.ran.errors for s in got + apart)
    assert shared_peak == 3, f"two runs through one limiter of 3 reached {shared_peak} requests at once"
    assert apart_peak > 3, "control: without the shared limiter the two runs together exceed 3"
    assert got[0].limiters[0] is got[1].limiters[0]


@pytest.mark.parametrize("adaptive", [True, False])
def test_a_fixed_limit_is_kept_even_when_the_server_says_429(tmp_path: Path, adaptive: bool) -> None:
    data = dataset(tmp_path / "ds", 30)
    with ScriptedServer(_script(concurrency=2, seconds=0.05, over="reject")) as srv:
        runner = _runner(data, tmp_path / "run", srv, concurrency=8, max_connections=8, adaptive=adaptive,
                         retries=20)
        s = asyncio.run(asyncio.wait_for(runner.run(), 120))
    assert s.done == 30 and not s.ran.errors
    cut = any(c["reason"] == "overload" for c in _limits(tmp_path / "run"))
    assert cut is adaptive
