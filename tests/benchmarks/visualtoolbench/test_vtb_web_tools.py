"""VisualToolBench's web tools against the offline backend: a corpus served by toolsight's server on 127.0.0.1.

Each tool in both forms — toolsight's texts (the toolbox tools of `tools/web_research.py`, the toolsight
loop) and the reference's result dicts (`benchmarks/vtb_web.py` through `OfficialTools`, the official
loop) — on real HTTP from the local server, with the corpus's recorded weather.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from webfakes import LIGHT_URL, LONG_URL, write_corpus

from toolsight.benchmarks.visualtoolbench.benchmark import WEB_TOOLSETS
from toolsight.benchmarks.visualtoolbench.tools import (
    OfficialTools,
    TurnFiles,
    UnknownOfficialTool,
    start_turn,
)
from toolsight.tools.base import ArtifactStore, Toolbox, ToolResult
from toolsight.tools.registry import build_tools
from toolsight.web import Limits, WebError, WebSession, open_session, use_session
from toolsight.web.cassette import CASSETTE, Cassette

T = TypeVar("T")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")


class Env:
    """An offline session with the VisualToolBench web tools, as toolbox and as the official tool layer."""

    def __init__(self, session: WebSession, tmp: Path) -> None:
        self.session = session
        self.toolbox = Toolbox(build_tools(["calculator", *WEB_TOOLSETS]), ArtifactStore(tmp / "ws"), "t")
        self.official = OfficialTools(self.toolbox)
        self.turn: TurnFiles = start_turn(self.toolbox, 0, None, None)

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        return await self.toolbox.call(name, json.dumps(args))

    async def obs(self, name: str, args: Any) -> dict[str, Any]:
        return (await self.official.call(name, args, "c1", self.turn)).observation


def _run(corpus: Path, tmp: Path, fn: Callable[[Env], Awaitable[T]], limits: Limits | None = None) -> T:
    async def go() -> T:
        session = open_session(f"offline={corpus}", tmp / "run", limits=limits)
        async with session:
            with use_session(session):
                return await fn(Env(session, tmp))

    return asyncio.run(go())


def test_web_search_in_both_forms(corpus: Path, tmp_path: Path) -> None:
    async def go(e: Env) -> None:
        r = await e.call("web_search", {"query": "Gull Rock lighthouse first lit", "num_results": 2})
        assert r.ok and r.text.startswith('Results for "Gull Rock lighthouse first lit" (2):\n1. Gull Rock Lighthouse\n')
        assert f"   URL: {LIGHT_URL}\n" in r.text and "\n2. " in r.text and "\n3. " not in r.text
        alias = await e.call("google_search", {"query": "Gull Rock lighthouse first lit", "num_results": 2})
        assert alias.text == r.text  # the code's name is accepted
        bad = await e.call("web_search", {"query": "gull", "num_results": 11})
        assert not bad.ok and "between 1 and 10" in bad.text
        assert not (await e.call("web_search", {"query": "  "})).ok
        none = await e.call("web_search", {"query": "zeppelin"})
        assert none.ok and none.text == 'No results for "zeppelin". Try other or fewer words.'

        o = await e.obs("google_search", {"query": "Gull Rock lighthouse first lit", "num_results": 2})
        assert set(o) == {"results", "query", "status", "total_results"} and o["status"] == "success"
        assert o["results"][0]["url"] == LIGHT_URL and o["results"][0]["title"] == "Gull Rock Lighthouse"
        assert o["results"][0]["display_link"] == "https://www.lights.test › gull-rock"
        assert "1871" in o["results"][0]["snippet"] and o["total_results"] == len(o["results"]) == 2
        assert len((await e.obs("google_search", {"query": "rock light"}))["results"]) == 3  # default 5; 3 match
        # the reference's `min(num_results, 10)` on a string, and its **kwargs binding
        try:
            min("3", 10)  # type: ignore[type-var]
        except TypeError as exc:
            expected = str(exc)
        o = await e.obs("google_search", {"query": "gull", "num_results": "3"})
        assert o == {"results": [], "query": "gull", "status": "error", "error": expected}
        o = await e.obs("google_search", {"q": "gull"})
        assert o == {"error": "VisionTools.google_search() got an unexpected keyword argument 'q'"}
        with pytest.raises(UnknownOfficialTool):  # the reference has no tool named web_search
            await e.official.call("web_search", {"query": "gull"}, "c2", e.turn)

    _run(corpus, tmp_path, go)


def test_page_text_in_both_forms(corpus: Path, tmp_path: Path) -> None:
    async def go(e: Env) -> None:
        served = e.session.server.requests
        o = await e.obs("browser_get_page_text", {"url": LIGHT_URL})
        # the reference's BeautifulSoup recipe: <title> text kept, script/style/nav/header/footer/aside gone,
        # whitespace runs joined by single spaces
        text = ("Gull Rock Lighthouse Gull Rock Lighthouse The Gull Rock Lighthouse was first lit in 1871. Its lamp "
                "is 42 metres above the sea and can be seen 19 nautical miles away.")
        assert o == {"url": LIGHT_URL, "title": "Gull Rock Lighthouse", "text": text, "status": "success",
                     "content_length": len(text)}
        assert e.session.server.requests == served + 1  # fetched over HTTP from the local server
        long = await e.obs("browser_get_page_text", {"url": LONG_URL})
        assert len(long["text"]) == 8000 and long["content_length"] > 20_000 and "THE-END-MARKER" not in long["text"]
        missing = await e.obs("browser_get_page_text", {"url": "https://www.lights.test/missing"})
        assert missing == {"url": "https://www.lights.test/missing", "title": "", "text": "", "status": "error",
                           "error": "404 Client Error: Not Found for url: https://www.lights.test/missing"}
        bad = await e.obs("browser_get_page_text", {"url": "file:///etc/passwd"})
        assert bad["status"] == "error" and "only http and https" in bad["error"]

        r = await e.call("browser_get_page_text", {"url": LIGHT_URL})
        assert r.ok and r.text.startswith(f"Title: Gull Rock Lighthouse\nURL: {LIGHT_URL}\n(the whole page, ")
        assert "first lit in 1871" in r.text
        assert not any(junk in r.text for junk in ("NAV-HOME", "FOOTER-TEXT", "SCRIPT-TEXT", "ASIDE-TEXT"))
        # a long page is read in windows of 8,000 characters, each saying where to go on
        first = await e.call("browser_get_page_text", {"url": LONG_URL})
        total = first.extra["chars"]
        assert total > 16_000 and f"(characters 0-8,000 of {total:,}; call again with start=8000 to read on)" in first.text
        windows, start, seen = 0, 0, ""
        while True:
            w = await e.call("browser_get_page_text", {"url": LONG_URL, "start": start})
            windows += 1
            seen += w.text.split("\n\n", 1)[1]
            if "to read on" not in w.text:
                break
            start += 8000
        assert "THE-END-MARKER" in seen and windows == -(-total // 8000) and len(seen) == total
        past = await e.call("browser_get_page_text", {"url": LONG_URL, "start": total + 5})
        assert "is past its end" in past.text
        refused = await e.call("browser_get_page_text", {"url": "file:///etc/passwd"})
        assert not refused.ok and "only http and https" in refused.text
        gone = await e.call("browser_get_page_text", {"url": "https://www.lights.test/missing"})
        assert not gone.ok and "HTTP 404" in gone.text

    _run(corpus, tmp_path, go)


def test_weather_from_the_corpus_in_both_forms(corpus: Path, tmp_path: Path) -> None:
    async def go(e: Env) -> None:
        r = await e.call("historical_weather", {"location": "Saltmere", "date": "2020-08-14"})
        assert r.ok, r.text
        assert r.text.splitlines() == [
            "Weather on 2020-08-14 at Saltmere, Westmark, Corvania (54.50, 2.25; Europe/Corvania), daily values from "
            "the offline corpus:",
            "Temperature (°C): max 22.6, min 14.7, mean 19.0",
            "Feels like (°C): mean 18.0",
            "Conditions: partly cloudy (WMO code 2)",
            "Precipitation: 1.5 mm, rain 1.5 mm, snowfall 0.0 cm",
            "Wind (m/s): mean 5.7, max 7.3",
            "Relative humidity: mean 71%",
            "Pressure at sea level: mean 1016.4 hPa",
            "Sun (local time): rise 05:41",
        ]
        for name in ("Saltmere Harbour", "saltmere,  westmark", "Saltmere, Corvania", "54.4, 2.3"):
            got = await e.call("historical_weather", {"location": name, "date": "2020-08-14"})
            assert got.ok and "Temperature (°C): max 22.6" in got.text, name
        nowhere = await e.call("historical_weather", {"location": "Atlantis", "date": "2020-08-14"})
        assert not nowhere.ok and "no place named 'Atlantis' was found" in nowhere.text
        other_day = await e.call("historical_weather", {"location": "Saltmere", "date": "2020-08-15"})
        assert not other_day.ok and "no weather is recorded for Saltmere, Westmark, Corvania on 2020-08-15" in other_day.text
        for bad, why in (("14/08/2020", "YYYY-MM-DD"), ("2020-02-30", "not a real calendar date"),
                         ("1939-12-31", "before 1940-01-01")):
            got = await e.call("historical_weather", {"location": "Saltmere", "date": bad})
            assert not got.ok and why in got.text, bad

        o = await e.obs("historical_weather", {"location": "Saltmere", "date": "2020-08-14"})
        assert o == {
            "location": "Saltmere", "date": "2020-08-14", "coordinates": "54.5, 2.25",
            "temperature": {"current": "19.0°C", "feels_like": "18.0°C", "min": "14.7°C", "max": "22.6°C"},
            "conditions": "partly cloudy", "humidity": "71%", "wind_speed": "5.7 m/s", "pressure": "1016 hPa",
            "status": "success", "note": "Historical daily weather for 2020-08-14 (offline corpus); 'current' is the "
                                         "day's mean"}
        assert await e.obs("historical_weather", {"location": "Atlantis", "date": "2020-08-14"}) == {
            "location": "Atlantis", "date": "2020-08-14", "status": "error", "error": "Location not found"}
        wrong = await e.obs("historical_weather", {"location": "Saltmere", "date": "yesterday"})
        assert wrong["status"] == "error" and "YYYY-MM-DD" in wrong["error"]
        assert (await e.obs("historical_weather", {"location": "Saltmere"}))["error"].startswith(
            "VisionTools.historical_weather() missing 1 required positional argument: 'date'")
        assert e.session.describe()["weather"]["name"] == "corpus"

    _run(corpus, tmp_path, go)
    ops = Cassette(tmp_path / "run" / CASSETTE, readonly=True).ops()
    assert set(ops) == {"custom:weather"} and ops["custom:weather"] >= 5


def test_the_run_budget_covers_every_web_tool(corpus: Path, tmp_path: Path) -> None:
    async def go(e: Env) -> None:
        assert (await e.call("web_search", {"query": "gull"})).ok
        spent = await e.call("historical_weather", {"location": "Saltmere", "date": "2020-08-14"})
        assert not spent.ok and "budget of this run (1 requests) is used up" in spent.text
        o = await e.obs("browser_get_page_text", {"url": LIGHT_URL})
        assert o["status"] == "error" and "budget" in o["error"]

    _run(corpus, tmp_path, go, limits=Limits(max_requests=1))


def test_a_bad_weather_file_is_one_clear_error(corpus: Path, tmp_path: Path) -> None:
    data = json.loads((corpus / "weather.json").read_text())
    data["places"][0]["days"]["2020-08-14"]["temperature_max"] = "hot"
    (corpus / "weather.json").write_text(json.dumps(data))
    with pytest.raises(WebError) as exc:
        open_session(f"offline={corpus}", tmp_path / "run")
    msg = str(exc.value)
    assert str(corpus / "weather.json") in msg and "places.0.days.2020-08-14.temperature_max" in msg
    data["places"][0]["days"] = {"2020-14-01": {}}
    (corpus / "weather.json").write_text(json.dumps(data))
    with pytest.raises(WebError, match="'2020-14-01' is not a YYYY-MM-DD date"):
        open_session(f"offline={corpus}", tmp_path / "run")


def test_a_corpus_without_weather_says_so_to_the_model(corpus: Path, tmp_path: Path) -> None:
    (corpus / "weather.json").unlink()

    async def go(e: Env) -> None:
        r = await e.call("historical_weather", {"location": "Saltmere", "date": "2020-08-14"})
        assert not r.ok and "the offline corpus has no recorded weather" in r.text
        assert (await e.call("web_search", {"query": "gull"})).ok  # the rest of the corpus still works

    _run(corpus, tmp_path, go)
