"""`historical_weather` live: toolsight's Open-Meteo client against an Open-Meteo-compatible server on 127.0.0.1.

The geocoding and archive base URLs come from the environment (`OPEN_METEO_GEOCODING_URL`,
`OPEN_METEO_ARCHIVE_URL`), as a user would point them at a proxy. Checked: what is asked (name, then the
name before the comma with the region matched; the archive's coordinates, one-day range, variables,
time zone and m/s wind), how replies become the tool's text and the reference's dict, the API's errors
and rate limits, and that a recorded session replays without a single request.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from webfakes import FakeApis

from toolsight.benchmarks.visualtoolbench.tools import OfficialTools, start_turn
from toolsight.tools.base import ArtifactStore, Toolbox, ToolResult
from toolsight.tools.registry import build_tools
from toolsight.web import ReplayMiss, WebSession, open_session, use_session
from toolsight.web.weather import lookup_weather

T = TypeVar("T")


def _session(spec: str, run: Path, fake: FakeApis, fn: Callable[[WebSession, Toolbox], Awaitable[T]]) -> T:
    async def go() -> T:
        session = open_session(spec, run, env=fake.env())
        async with session:
            with use_session(session):
                tb = Toolbox(build_tools(["historical_weather", "web_search"]), ArtifactStore(run / "ws"), "t")
                return await fn(session, tb)

    return asyncio.run(go())


async def _weather(tb: Toolbox, location: str, date: str) -> ToolResult:
    return await tb.call("historical_weather", json.dumps({"location": location, "date": date}))


def test_open_meteo_requests_and_replies(tmp_path: Path) -> None:
    with FakeApis() as fake:
        async def go(session: WebSession, tb: Toolbox) -> None:
            look = await lookup_weather(session, "New York, NY", "2021-07-04")
            # "New York, NY" is not a name the geocoder knows: the name alone, then the hit in region NY
            assert [(s.path, s.params.get("name")) for s in fake.seen] == [
                ("/v1/search", "New York, NY"), ("/v1/search", "New York"), ("/v1/archive", None)]
            geo = fake.seen[0].params
            assert geo["count"] == "10" and geo["language"] == "en" and geo["format"] == "json"
            arch = fake.seen[2].params
            assert (arch["latitude"], arch["longitude"]) == ("40.71", "-74.01")  # the US hit, not England's
            assert arch["start_date"] == arch["end_date"] == "2021-07-04"
            assert arch["timezone"] == "America/New_York" and arch["wind_speed_unit"] == "ms"
            assert {"temperature_2m_max", "temperature_2m_min", "weather_code", "precipitation_sum"} <= set(
                arch["daily"].split(","))
            assert look.status == "ok" and look.place is not None and look.day is not None
            assert look.place.label() == "New York, United States" and look.source == "open-meteo"
            d = look.day
            assert (d.temperature_max, d.temperature_min, d.weather_code) == (27.9, 20.4, 61)
            # hourly series become day means, missing hours left out
            assert (d.relative_humidity_mean, d.pressure_msl_mean, d.wind_speed_mean) == (80.0, 1013.0, 3.5)

            r = await _weather(tb, "New York, NY", "2021-07-04")
            assert r.ok and r.text.splitlines() == [
                "Weather on 2021-07-04 at New York, United States (40.71, -74.01; America/New_York), daily values "
                "from the Open-Meteo historical archive:",
                "Temperature (°C): max 27.9, min 20.4, mean 23.8",
                "Feels like (°C): max 30.1, min 21.0, mean 25.5",
                "Conditions: slight rain (WMO code 61)",
                "Precipitation: 3.6 mm, rain 3.6 mm, snowfall 0.0 cm",
                "Wind (m/s): mean 3.5, max 5.2, gusts up to 11.4, mostly from 198°",
                "Relative humidity: mean 80%",
                "Pressure at sea level: mean 1013.0 hPa",
                "Sun (local time): rise 05:29, set 20:31",
            ]
            turn = start_turn(tb, 0, None, None)
            o = (await OfficialTools(tb).call("historical_weather", {"location": "Lyon", "date": "2019-06-27"}, "c",
                                              turn)).observation
            assert o["coordinates"] == "45.75, 4.85" and o["temperature"]["max"] == "37.1°C"
            assert o["conditions"] == "clear sky" and o["humidity"] == "n/a" and o["status"] == "success"
            assert o["note"] == "Historical daily weather for 2019-06-27 (Open-Meteo archive); 'current' is the day's mean"

            n = len(fake.seen)
            assert (await _weather(tb, "45.75,4.85", "2019-06-27")).ok
            assert [s.path for s in fake.seen[n:]] == ["/v1/archive"]  # coordinates need no geocoding
            n = len(fake.seen)
            nowhere = await _weather(tb, "Nowhere", "2019-06-27")
            assert not nowhere.ok and "no place named 'Nowhere'" in nowhere.text
            assert [s.path for s in fake.seen[n:]] == ["/v1/search"]
            empty = await _weather(tb, "Lyon", "2019-06-28")
            assert not empty.ok and "the archive has no data for 2019-06-28" in empty.text
            future = await _weather(tb, "Lyon", "2031-01-01")
            assert not future.ok and "HTTP 400: Parameter 'start_date' is out of allowed range" in future.text
            assert session.describe()["weather"] == {
                "name": "open-meteo", "geocoding_url": fake.base + "/v1/search",
                "archive_url": fake.base + "/v1/archive", "api_key": False}

        _session("live", tmp_path / "run", fake, go)


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_throttled_archive_is_retried(tmp_path: Path) -> None:
    # the handler goes on the module's logger itself (not caplog's on the root): a CLI run earlier in the
    # process may have stopped the `toolsight` logger propagating (diagnostics.configure_logging)
    logger = logging.getLogger("toolsight.web.weather")
    kept = _Kept()
    logger.addHandler(kept)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        with FakeApis(throttle_first=1) as fake:
            async def go(session: WebSession, tb: Toolbox) -> None:
                r = await _weather(tb, "Lyon", "2019-06-27")
                assert r.ok and "max 37.1" in r.text
                assert fake.paths() == ["/v1/search", "/v1/archive", "/v1/archive"]

            _session("live", tmp_path / "run", fake, go)
    finally:
        logger.removeHandler(kept)
        logger.setLevel(level)
    # the retry is a diagnostic in the log, not a print
    assert kept.messages == [
        "weather archive API: HTTP 429, retrying in 0.0 s (attempt 1)"]


def test_recorded_lookups_replay_without_a_request(tmp_path: Path) -> None:
    asks = [("New York, NY", "2021-07-04"), ("Nowhere", "2021-07-04"), ("Lyon", "2031-01-01")]
    with FakeApis() as fake:
        async def record(session: WebSession, tb: Toolbox) -> list[tuple[bool, str]]:
            return [((r := await _weather(tb, loc, day)).ok, r.text) for loc, day in asks]

        first = _session("live", tmp_path / "r1", fake, record)
        n = len(fake.seen)
        assert n == 6 and [ok for ok, _ in first] == [True, False, False]

        async def replay(session: WebSession, tb: Toolbox) -> list[tuple[bool, str]]:
            assert session.weather is None and session.describe()["weather"] is None
            got = [((r := await _weather(tb, loc, day)).ok, r.text) for loc, day in asks]
            with pytest.raises(ReplayMiss, match="no recorded custom:weather call"):
                await _weather(tb, "Lyon", "2019-06-27")  # never asked in the recording: the task ends
            return got

        assert _session(f"replay={tmp_path / 'r1'}", tmp_path / "r2", fake, replay) == first
        assert len(fake.seen) == n  # not one request on replay


def test_a_live_session_without_overrides_points_at_open_meteo(tmp_path: Path) -> None:
    from toolsight.web.weather import ARCHIVE_URL, GEOCODING_URL, OpenMeteoWeather

    src = OpenMeteoWeather(env={})
    assert (src.geocoding_url, src.archive_url) == (GEOCODING_URL, ARCHIVE_URL)
    assert GEOCODING_URL == "https://geocoding-api.open-meteo.com/v1/search"
    assert ARCHIVE_URL == "https://archive-api.open-meteo.com/v1/archive"
    keyed: dict[str, Any] = OpenMeteoWeather(env={"OPEN_METEO_API_KEY": "k"}).describe()
    assert keyed["api_key"] is True
