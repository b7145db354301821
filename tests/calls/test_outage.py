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
from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark
from toolsight.calls.breaker import CircuitBreaker, StillDown
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner
from toolsight.engine.store import iter_records
from toolsight.engine.summary import RunStopped, RunSummary
from toolsight.errors import EXIT_ABORTED
from toolsight.models.base import GenerateConfig, Message, ModelError, ModelOutput
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
        self.refused = 0  # task requests refused while down

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.calls += 1
        if self.after_calls is not None and self.calls > self.after_calls and self.down_from is None:
            self.down_from = time.monotonic()
        await asyncio.sleep(self.latency)
        if self.status is not None:
            raise ModelError(f"HTTP {self.status}: nope", status=self.status, retryable=False)
        if self._down():
            self.refused += 1
            raise ModelError("connection failed: refused", retryable=True, kind="connection")
        return _answer(messages, tools)

    async def probe(self, timeout: float = 30.0) -> None:
        """The health check (a models listing on a real endpoint): refused while the endpoint is down."""
        self.probes += 1
        await asyncio.sleep(self.latency)
        if self._down():
            raise ModelError("connection failed: refused", retryable=True, kind="connection")

    def _down(self) -> bool:
        return self.down_from is not None and time.monotonic() - self.down_from < self.down_for


def _runner(dataset: Path, out: Path, model: Endpoint, events: list[str] | None = None, **kw: Any) -> Runner:
    bench = DatasetBenchmark(dataset)
    opts = RunOptions.of(benchmark=str(dataset), model=model.name, out=str(out), backoff_base=0.05, **kw)
    return Runner(opts, bench, bench.load(None), model, on_event=None if events is None else events.append)


def _run(dataset: Path, out: Path, model: Endpoint, events: list[str] | None = None, **kw: Any) -> RunSummary:
    return asyncio.run(_runner(dataset, out, model, events, **kw).run())


def _bounded(runner: Runner, seconds: float = 60) -> RunSummary:
    """Run, but fail (not hang) if it takes longer than `seconds` — the bound a broken cap would blow."""
    return asyncio.run(asyncio.wait_for(runner.run(), seconds))


def test_an_outage_pauses_the_run_and_no_task_fails(dataset: Path, tmp_path: Path) -> None:
    model = Endpoint()
    model.after_calls, model.down_for = 2, 1.5  # down for 1.5 s after two calls were served
    events: list[str] = []
    out = tmp_path / "run"
    # a 1 s task clock: without the pause, tasks would time out during the outage
    s = _run(dataset, out, model, events, concurrency=3, retries=5, task_timeout=1.0)
    recs = list(iter_records(out))
    assert len(recs) == 6 and [r.error for r in recs] == [None] * 6 and s.exit_code == 0
    assert any("pausing the run" in e for e in events) and any("back after" in e for e in events)
    assert s.outage_s > 0 and model.probes >= 1
    waited = [c.waited_s for r in recs for c in r.trajectory.model_call_log]
    assert max(waited) > 0.5  # the calls caught by the outage waited for the endpoint
    assert s.outage_s >= 1.0 and "paused" in s.line()
    # calls wait instead of hammering the endpoint: the three in flight, not each one's 5 retries
    assert model.refused <= 6


def test_an_endpoint_that_never_comes_back_stops_the_run(dataset: Path, tmp_path: Path) -> None:
    model = Endpoint()
    model.after_calls, model.down_for = 0, 1e9
    out = tmp_path / "run"
    with pytest.raises(RunStopped) as ei:
        _bounded(_runner(dataset, out, model, outage_timeout=0.6))
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

    # an uncapped Retry-After would sleep an hour: the bound fails the test
    s = _bounded(_runner(dataset, tmp_path / "run", Limited(), concurrency=1, max_retry_after=0.05))
    assert s.exit_code == 0 and s.stats.retries == 1


def test_the_breaker_opens_on_failures_in_a_row_and_a_probe_closes_it() -> None:
    probes: list[int] = []

    async def probe() -> None:
        probes.append(1)
        if len(probes) < 2:
            raise StillDown("still refused")

    async def scenario() -> tuple[bool, bool, bool, float]:
        b = CircuitBreaker(probe, threshold=3, backoff_base=0.01, outage_timeout=30)
        b.failure("x")
        b.failure("x")
        b.success()  # someone was served: the count starts again
        early = b.failure("y") or b.failure("y")
        opened = b.failure("y")
        waited = await asyncio.wait_for(b.wait(), 10)
        return early, opened, b.is_open, waited

    early, opened, still_open, waited = asyncio.run(scenario())
    assert not early and opened and not still_open and len(probes) == 2 and waited > 0


def test_a_request_the_server_keeps_failing_fails_its_task_after_its_retries(dataset: Path, tmp_path: Path) -> None:
    class Poison(Endpoint):
        async def generate(self, messages: list[Message], tools: list[ToolSpec],
                           config: GenerateConfig) -> ModelOutput:
            if "[task:t2]" in messages[-1].text:
                self.calls += 1
                raise ModelError("HTTP 500: boom", status=500, retryable=True)
            return await super().generate(messages, tools, config)

    model = Poison()
    out = tmp_path / "run"
    # concurrency 1: nothing else is served while t2 fails, so only health probes tell it apart
    s = _bounded(_runner(dataset, out, model, concurrency=1, retries=2))
    recs = {r.task_id: r for r in iter_records(out)}
    assert recs["t2"].error and "500" in recs["t2"].error and s.ran.errors["model"] == 1
    assert [recs[f"t{i}"].error for i in (0, 1, 3, 4, 5)] == [None] * 5
    assert model.probes >= 2  # the endpoint was checked before the task was given up
