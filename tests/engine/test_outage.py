"""Outages and fatal answers, in process: the circuit breaker pauses the whole run while the endpoint
is down (no task fails, the task clock stops), gives up after --outage-timeout with a stopped run,
and a 401/404 stops the run at once. The subprocess versions are in test_e2e_runs.py."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from enginekit import StepModel, say

from toolsight.benchmarks.generic import DatasetBenchmark
from toolsight.breaker import CircuitBreaker, StillDown
from toolsight.errors import EXIT_ABORTED
from toolsight.models.base import GenerateConfig, Message, ModelError, ModelOutput
from toolsight.runner import Runner, RunOptions, RunStopped, RunSummary
from toolsight.store import iter_records
from toolsight.tools.base import ToolSpec


def _answer(msgs: list[Message], tools: list[ToolSpec]) -> ModelOutput:
    return say("<answer>B</answer>" if int(msgs[-1].text.split("[task:t")[1].split("]")[0]) % 2 else "<answer>A</answer>")


class Endpoint(StepModel):
    """A model behind an endpoint that can be down (connection refused) or answer with an error status."""

    def __init__(self, latency: float = 0.02) -> None:
        super().__init__(_answer)
        self.latency = latency
        self.down_from: float | None = None
        self.down_for = 0.0
        self.after_calls: int | None = None
        self.status: int | None = None
        self.calls = 0
        self.probes = 0

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.calls += 1
        is_probe = "[task:" not in messages[-1].text
        self.probes += is_probe
        if self.after_calls is not None and self.calls > self.after_calls and self.down_from is None:
            self.down_from = time.monotonic()
        await asyncio.sleep(self.latency)
        if self.status is not None:
            raise ModelError(f"HTTP {self.status}: nope", status=self.status, retryable=False)
        if self.down_from is not None and time.monotonic() - self.down_from < self.down_for:
            raise ModelError("connection failed: refused", retryable=True, kind="connection")
        if is_probe:
            return say("pong")
        return _answer(messages, tools)


def _run(dataset: Path, out: Path, model: Endpoint, events: list[str] | None = None, **kw: Any) -> RunSummary:
    bench = DatasetBenchmark(dataset)
    opts = RunOptions(benchmark=str(dataset), model=model.name, out=str(out), backoff_base=0.05, **kw)
    runner = Runner(opts, bench, bench.load(None), model, on_event=None if events is None else events.append)
    return asyncio.run(runner.run())


def test_an_outage_pauses_the_run_and_no_task_fails(dataset: Path, tmp_path: Path) -> None:
    model = Endpoint()
    model.after_calls, model.down_for = 2, 1.5  # down for 1.5 s after two calls were served
    events: list[str] = []
    out = tmp_path / "run"
    # one retry and a 1 s task clock: without the pause, tasks would fail or time out during the outage
    s = _run(dataset, out, model, events, concurrency=3, retries=1, task_timeout=1.0)
    recs = list(iter_records(out))
    assert len(recs) == 6 and [r.error for r in recs] == [None] * 6 and s.exit_code == 0
    assert any("pausing the run" in e for e in events) and any("back after" in e for e in events)
    assert s.outage_s > 0 and model.probes >= 1
    waited = [c.waited_s for r in recs for c in r.trajectory.model_call_log]
    assert max(waited) > 0.5  # the calls caught by the outage waited for the endpoint
    assert s.outage_s >= 1.0 and "paused" in s.line()


def test_an_endpoint_that_never_comes_back_stops_the_run(dataset: Path, tmp_path: Path) -> None:
    model = Endpoint()
    model.after_calls, model.down_for = 0, 1e9
    out = tmp_path / "run"
    with pytest.raises(RunStopped) as ei:
        asyncio.run(asyncio.wait_for(asyncio.to_thread(_run, dataset, out, model, None, outage_timeout=0.6), 60))
    assert ei.value.exit_code == EXIT_ABORTED
    assert "unreachable" in str(ei.value) and "--outage-timeout 0.6" in str(ei.value)
    assert (out / "records.jsonl").read_text() == ""  # no task was recorded as failed
    assert ei.value.summary.done == 0


@pytest.mark.parametrize(("status", "why"), [(401, "credentials were rejected"), (404, "model or the base URL")])
def test_rejected_credentials_or_unknown_model_stop_the_run_at_once(status: int, why: str, dataset: Path,
                                                                     tmp_path: Path) -> None:
    model = Endpoint()
    model.status = status
    out = tmp_path / "run"
    with pytest.raises(RunStopped, match=why):
        _run(dataset, out, model, concurrency=2)
    assert model.calls <= 2  # the tasks already in flight, nothing more
    assert (out / "records.jsonl").read_text() == ""


def test_retry_after_is_capped(dataset: Path, tmp_path: Path) -> None:
    class Limited(Endpoint):
        async def generate(self, messages: list[Message], tools: list[ToolSpec],
                           config: GenerateConfig) -> ModelOutput:
            if "[task:t0]" in messages[-1].text and self.calls == 0:
                self.calls += 1
                raise ModelError("HTTP 429: slow down", status=429, retryable=True, retry_after=3600)
            return await super().generate(messages, tools, config)

    out = tmp_path / "run"

    async def bounded() -> RunSummary:  # an uncapped Retry-After would sleep an hour: the bound fails
        return await asyncio.wait_for(asyncio.to_thread(_run, dataset, out, Limited(), None, concurrency=1,
                                                        max_retry_after=0.05), 60)

    s = asyncio.run(bounded())
    assert s.exit_code == 0 and s.stats.retries == 1


def test_the_breaker_opens_only_on_failures_nobody_was_served_between() -> None:
    probes: list[int] = []

    async def probe() -> None:
        probes.append(1)
        if len(probes) < 2:
            raise StillDown("still refused")

    async def scenario() -> tuple[bool, bool, float]:
        b = CircuitBreaker(probe, threshold=3, backoff_base=0.01, outage_timeout=30)
        b.failure("x", 0)
        b.failure("x", 0)
        b.success()
        # a call that started before the success fails: others were served, so it is not an outage
        assert b.failure("x", 0) is False and not b.is_open
        b.failure("y", 1)
        b.failure("y", 1)
        opened = b.failure("y", 1)
        waited = await asyncio.wait_for(b.wait(), 10)
        return opened, b.is_open, waited

    opened, still_open, waited = asyncio.run(scenario())
    assert opened and not still_open and len(probes) == 2 and waited > 0
