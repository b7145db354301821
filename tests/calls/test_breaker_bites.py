"""The outage breaker's arithmetic through the real call path: `ModelCaller` over the official
OpenAI SDK against the local scripted server, which plays the outage (HTTP 503 for a task's
requests, then the health probes' answers). The breaker's clock is a test clock (the breaker reads
time only through `CircuitBreaker.clock`), so waits and outage lengths are exact numbers, not
wall-clock measurements; the real sleeps are the short backoffs of `backoff_base`.

Issue 24 item 7: each test here fails on a one-line change that left every other test green."""

from __future__ import annotations

import asyncio
import re

import pytest

from toolsight.calls.retry import CallInfo, ModelCaller
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script, Step

DOWN = Step(fault="status", status=503)
RETRYING = re.compile(r"retrying in ([0-9.]+) s")


def _model(srv: ScriptedServer) -> Model:
    return get_model("openai/test-model", base_url=srv.openai_base_url, api_key="test-key")


class TestClock:
    """What the breaker reads as the time: moved only by the test."""

    __test__ = False

    def __init__(self, step: float = 0.0) -> None:
        self.now = 1000.0
        self.step = step  # added on every read (a clock that runs while the breaker looks at it)

    def __call__(self) -> float:
        self.now += self.step
        return self.now


async def _call(caller: ModelCaller, task: str) -> tuple[ModelOutput, CallInfo]:
    return await caller.call([Message.user(f"[task:{task}] hello")], [], GenerateConfig(timeout=10))


def test_a_probe_honours_its_own_retry_after_only_up_to_max_retry_after() -> None:
    """While the endpoint is down, a probe answered "503, Retry-After: 3600" makes the next probe
    wait `max_retry_after` (0.3 s) — not the backoff (the Retry-After ignored: the code before this
    test), and not an hour (the cap ignored: the mutant `max(wait, self.retry_after)`). A wait
    above the cap is seen in the breaker's status line the moment it is chosen, and fails the
    test at once instead of sleeping."""
    script = Script(tasks={"t0": [DOWN, DOWN, DOWN, Step(text="served")]},
                    steps=[Step(fault="status", status=503, retry_after=3600), Step(text="pong")])  # probes
    waits: list[float] = []

    async def scenario(srv: ScriptedServer) -> ModelOutput:
        overslept = asyncio.Event()

        def on_event(text: str) -> None:
            m = RETRYING.search(text)
            if m:
                waits.append(float(m.group(1)))
                if waits[-1] > 0.3:
                    overslept.set()

        caller = ModelCaller(_model(srv), backoff_base=0.05, max_retry_after=0.3, breaker_threshold=3,
                             outage_timeout=1e9, on_event=on_event)
        caller.breaker.clock = TestClock(step=10.0)  # >= 10 s between reads: every status line is emitted
        work = asyncio.ensure_future(_call(caller, "t0"))
        stuck = asyncio.ensure_future(overslept.wait())
        try:
            await asyncio.wait({work, stuck}, return_when=asyncio.FIRST_COMPLETED)
            if overslept.is_set():
                pytest.fail(f"the probe chose to wait {waits[-1]:g} s: a Retry-After above max_retry_after "
                            f"(0.3 s) was not capped (waits: {waits})")
            out, _ = work.result()
            return out
        finally:
            for t in (work, stuck):
                t.cancel()
            await asyncio.gather(work, stuck, return_exceptions=True)
            await caller.aclose()
            await caller.model.aclose()

    with ScriptedServer(script) as srv:
        out = asyncio.run(scenario(srv))
        seen = [r.task for r in srv.requests]
        paths = [r.path for r in srv.requests]
    assert out.text == "served"
    assert seen == ["t0", "t0", "t0", None, None, "t0"]  # three failures open it; two probes; the call again
    # the probes are the free models listing, never a chat completion (a billed request on a paid API)
    assert paths == ["/v1/chat/completions"] * 3 + ["/v1/models"] * 2 + ["/v1/chat/completions"]
    assert waits[0] < 0.3, waits  # the first probe: the backoff (nothing asked for more)
    assert waits[1:] == [0.3], f"after the probe's Retry-After: 3600 the next wait should be the cap, got {waits}"


def test_a_second_outage_adds_to_the_first_and_the_task_clock_skips_both() -> None:
    """Two outages (7 s and 5 s on the breaker's clock, 100 s of normal service between them):
    the run's outage seconds are 12, not the last outage's 5 (the mutant `outage_s = down`).
    `down_seconds()` is what a task's deadline subtracts (`engine/runner.py`, `_within_deadline`:
    deadline = start + task timeout + down_seconds() − down_seconds() at the start): a task running
    across both outages gets both, one that started between them gets the second only."""
    script = Script(tasks={"t1": [DOWN, DOWN, DOWN, Step(text="one")],
                           "t2": [DOWN, DOWN, DOWN, Step(text="two")]},
                    steps=[Step(text="pong")])  # every probe gets an answer: one probe per outage
    clock = TestClock()
    lengths = [7.0, 5.0]
    events: list[str] = []

    def on_event(text: str) -> None:
        events.append(text)
        if RETRYING.search(text) and lengths:  # the prober's first status line: the outage lasts this long
            clock.now += lengths.pop(0)

    async def scenario(srv: ScriptedServer) -> tuple[list[float], list[CallInfo], list[str]]:
        caller = ModelCaller(_model(srv), backoff_base=0.05, breaker_threshold=3, outage_timeout=1e9,
                             on_event=on_event)
        caller.breaker.clock = clock
        b = caller.breaker
        try:
            marks = [b.down_seconds()]
            out1, info1 = await asyncio.wait_for(_call(caller, "t1"), 60)
            marks.append(b.down_seconds())
            clock.now += 100.0  # the endpoint serves normally for a while: not a pause
            out2, info2 = await asyncio.wait_for(_call(caller, "t2"), 60)
            marks.append(b.down_seconds())
            assert (b.outages, b.outage_s, b.is_open) == (2, 12.0, False)
            return marks, [info1, info2], [out1.text, out2.text]
        finally:
            await caller.aclose()
            await caller.model.aclose()

    with ScriptedServer(script) as srv:
        marks, infos, texts = asyncio.run(scenario(srv))
        seen = [r.task for r in srv.requests]
    assert texts == ["one", "two"] and lengths == []
    assert seen == ["t1"] * 3 + [None, "t1"] + ["t2"] * 3 + [None, "t2"]
    assert [e for e in events if "back after" in e] == ["model endpoint back after 7 s; resuming",
                                                        "model endpoint back after 5 s; resuming"]
    assert [i.waited_s for i in infos] == [7.0, 5.0]  # each call paused for its own outage
    assert marks[0] == 0.0 and marks[1] == 7.0
    assert marks[2] - marks[0] == 12.0, "a task spanning both outages must have both added to its deadline"
    assert marks[2] - marks[1] == 5.0, "a task that started between the outages gets the second only"
