"""The endpoint limiter's rules (toolsight.calls.limiter), driven by real asyncio requests: the limit is
never exceeded, AIMD increases only when the limit is in use, one overload cuts once, rising
latency cuts and a cut that did not help re-baselines, a fixed limiter never moves, cancelled
waiters give their room back, and endpoints are named by base URL or model."""

from __future__ import annotations

import asyncio

import pytest

from toolsight.calls.limiter import EndpointLimiter, LimiterPool, endpoint_key


async def _request(lim: EndpointLimiter, seconds: float = 0.0, overload: bool = False,
                   seen: list[int] | None = None) -> None:
    async with lim.slot() as slot:
        if seen is not None:
            seen.append(lim.inflight)
        await asyncio.sleep(seconds)
        if overload:
            slot.overloaded()
        else:
            slot.ok()


def test_requests_in_flight_never_exceed_the_limit() -> None:
    lim = EndpointLimiter("e", 3, adaptive=False)
    seen: list[int] = []

    async def main() -> None:
        await asyncio.gather(*(_request(lim, 0.01, seen=seen) for _ in range(30)))

    asyncio.run(main())
    assert max(seen) == 3 and len(seen) == 30
    assert lim.inflight == 0 and lim.peak_inflight == 3


def test_a_fixed_limiter_never_changes() -> None:
    lim = EndpointLimiter("e", 4, adaptive=False)

    async def main() -> None:
        await asyncio.gather(*(_request(lim, 0.001, overload=i % 2 == 0) for i in range(40)))

    asyncio.run(main())
    assert lim.current == 4 and lim.cuts == 0 and [c.reason for c in lim.history] == ["start"]


def test_the_limit_grows_only_while_it_is_in_use() -> None:
    # latency is not this test's subject: a tolerance no delay reaches keeps it out
    lim = EndpointLimiter("e", 4, max_limit=16, latency_tolerance=1e9)

    async def one_at_a_time() -> None:
        for _ in range(50):
            await _request(lim)

    asyncio.run(one_at_a_time())
    assert lim.current == 4, "a limit nobody fills must not grow"

    async def saturate() -> None:
        await asyncio.gather(*(_request(lim, 0.002) for _ in range(200)))

    asyncio.run(saturate())
    assert 8 <= lim.current <= 16
    assert all(c.reason == "increase" and c.limit == c.previous + 1 for c in lim.history[1:])


def test_the_limit_never_exceeds_its_cap() -> None:
    lim = EndpointLimiter("e", 2, max_limit=3, latency_tolerance=1e9)

    async def main() -> None:
        await asyncio.gather(*(_request(lim, 0.001) for _ in range(300)))

    asyncio.run(main())
    assert lim.current == 3 and lim.peak_inflight == 3


def test_a_burst_of_overload_answers_cuts_once() -> None:
    lim = EndpointLimiter("e", 10, backoff=0.5)

    async def main() -> None:
        # ten requests sent under the same limit, all answered 429: one overload, one cut
        await asyncio.gather(*(_request(lim, 0.01, overload=True) for _ in range(10)))

    asyncio.run(main())
    assert lim.overloads == 10
    assert lim.cuts == 1 and lim.current == 5
    assert [c.reason for c in lim.history] == ["start", "overload"]


def test_overloads_after_a_cut_cut_again_down_to_the_floor() -> None:
    lim = EndpointLimiter("e", 8, backoff=0.5, min_limit=1)

    async def main() -> None:
        for _ in range(6):  # each wave starts after the previous cut
            await asyncio.gather(*(_request(lim, 0.001, overload=True) for _ in range(3)))

    asyncio.run(main())
    assert [c.limit for c in lim.history] == [8, 4, 2, 1]  # halved each time, never below the floor
    assert lim.current == 1


def test_rising_latency_cuts_and_a_cut_that_does_not_help_rebaselines() -> None:
    # the absolute floor of a rise is lowered so that waves of tens of milliseconds show the rule
    lim = EndpointLimiter("e", 4, max_limit=4, latency_tolerance=2.0, min_window=4, min_latency_rise_s=0.05)

    async def wave(seconds: float) -> None:
        await asyncio.gather(*(_request(lim, seconds) for _ in range(4)))

    async def main() -> None:
        for _ in range(2):
            await wave(0.01)  # the unloaded latency
        assert lim.cuts == 0
        await wave(0.08)  # 8x slower: the window median is far above 2x the baseline
        assert lim.cuts == 1 and lim.history[-1].reason == "latency"
        for _ in range(3):
            await wave(0.08)  # the cut did not bring latency down: not our load
        assert lim.cuts == 1, "a cut that did not help must not be followed by another"
        assert any(c.reason == "rebaseline" for c in lim.history)

    asyncio.run(main())


def test_a_rise_of_milliseconds_is_no_load() -> None:
    """An idle local server answers in a millisecond or two; ten times that is jitter, not a queue."""
    lim = EndpointLimiter("e", 4, max_limit=4, latency_tolerance=2.0, min_window=4)

    async def main() -> None:
        for seconds in (0.002, 0.002, 0.02, 0.02, 0.02):
            await asyncio.gather(*(_request(lim, seconds) for _ in range(4)))

    asyncio.run(main())
    assert lim.cuts == 0 and lim.current == 4, lim.history


def test_a_cancelled_waiter_gives_its_room_back() -> None:
    lim = EndpointLimiter("e", 1, adaptive=False)

    async def main() -> None:
        hold = asyncio.create_task(_request(lim, 0.05))
        await asyncio.sleep(0)
        waiter = asyncio.create_task(_request(lim, 0.0))
        await asyncio.sleep(0.01)
        waiter.cancel()
        await asyncio.gather(hold, waiter, return_exceptions=True)
        await asyncio.wait_for(_request(lim), 1.0)  # would hang if the cancelled waiter kept its slot

    asyncio.run(main())
    assert lim.inflight == 0


def test_subscribers_see_every_change_until_they_unsubscribe() -> None:
    lim = EndpointLimiter("e", 8, backoff=0.5)
    got: list[str] = []
    stop = lim.subscribe(lambda c: got.append(f"{c.reason}:{c.limit}"))

    async def main() -> None:
        await _request(lim, overload=True)
        stop()
        await _request(lim, overload=True)

    asyncio.run(main())
    assert got == ["overload:4"] and lim.current == 2


@pytest.mark.parametrize(("spec", "url", "explicit", "key"), [
    ("openai/gpt-4o", None, None, "openai/gpt-4o"),
    ("openai/a", "http://GPU-1:8000/v1/", None, "http://gpu-1:8000/v1"),
    ("openai/b", "http://gpu-1:8000/v1", None, "http://gpu-1:8000/v1"),  # one server, two model names
    ("openai/a", "http://gpu-1:8000/v1", "cluster-a", "cluster-a"),
])
def test_endpoint_keys(spec: str, url: str | None, explicit: str | None, key: str) -> None:
    assert endpoint_key(spec, url, explicit) == key


def test_the_pool_hands_out_one_limiter_per_endpoint() -> None:
    pool = LimiterPool()
    a = pool.get("http://x/v1", 4)
    assert pool.get("http://x/v1", 99) is a and a.max_limit == 4
    assert pool.get("openai/gpt-4o", 8) is not a
    assert len(pool.all()) == 2
