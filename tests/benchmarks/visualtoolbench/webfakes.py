"""Loopback stand-ins for the live web APIs the VisualToolBench web tools call, and a tiny offline corpus.

`FakeApis` serves on 127.0.0.1: an Open-Meteo-compatible geocoding API (`/v1/search`) and archive API
(`/v1/archive`, daily + hourly, `{"error": true, "reason": …}` with HTTP 400 for a date outside the
archive, a 429 on demand) and a Serper-compatible `/search`. It answers from tables (`places`, `days`)
and keeps every request, so a test can check what was asked and that a replay asked nothing.
`write_corpus(root)` writes a corpus folder (pages with navigation, scripts and a footer; a long page;
`weather.json`) for the offline backend.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from loopback import LoopbackServer

#: (name, admin1, country, country_code, lat, lon, timezone)
PLACES = [
    ("New York", "England", "United Kingdom", "GB", 53.08, -0.14, "Europe/London"),
    ("New York", "New York", "United States", "US", 40.71, -74.01, "America/New_York"),
    ("Lyon", "Auvergne-Rhone-Alpes", "France", "FR", 45.75, 4.85, "Europe/Paris"),
]
#: (lat, lon, date) -> daily values (Open-Meteo names) and hourly humidity / pressure / wind series
DAYS: dict[tuple[float, float, str], dict[str, Any]] = {
    (40.71, -74.01, "2021-07-04"): {
        "daily": {"weather_code": 61, "temperature_2m_max": 27.9, "temperature_2m_min": 20.4,
                  "temperature_2m_mean": 23.8, "apparent_temperature_max": 30.1, "apparent_temperature_min": 21.0,
                  "apparent_temperature_mean": 25.5, "precipitation_sum": 3.6, "rain_sum": 3.6, "snowfall_sum": 0.0,
                  "wind_speed_10m_max": 5.2, "wind_gusts_10m_max": 11.4, "wind_direction_10m_dominant": 198,
                  "sunrise": "2021-07-04T05:29", "sunset": "2021-07-04T20:31"},
        "hourly": {"relative_humidity_2m": [70, 80, None, 90], "pressure_msl": [1012.0, 1014.0, 1013.0, None],
                   "wind_speed_10m": [2.0, 3.0, 4.0, 5.0]},
    },
    (45.75, 4.85, "2019-06-27"): {
        "daily": {"weather_code": 0, "temperature_2m_max": 37.1, "temperature_2m_min": 21.6,
                  "temperature_2m_mean": 29.4},
        "hourly": {},
    },
}
SERPER_ORGANIC = [
    {"title": "Gull Rock Lighthouse - history", "link": "https://www.lights.test/gull-rock",
     "snippet": "The light was first lit in 1871.", "date": "2020-05-01"},
    {"title": "Lighthouses of the coast", "link": "https://www.lights.test/index", "snippet": "Every light."},
]


@dataclass
class Seen:
    path: str
    params: dict[str, str]
    body: Any = None


@dataclass
class FakeApis:
    throttle_first: int = 0  # answer this many archive requests with 429 first
    seen: list[Seen] = field(default_factory=list)
    port: int = 0

    def __post_init__(self) -> None:
        self._server = LoopbackServer(self._app)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {"OPEN_METEO_GEOCODING_URL": self.base + "/v1/search",
                "OPEN_METEO_ARCHIVE_URL": self.base + "/v1/archive",
                "SERPER_API_KEY": "test-key", "SERPER_BASE_URL": self.base}

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]

    async def _geocode(self, request: web.Request) -> web.Response:
        q = dict(request.query)
        self.seen.append(Seen(request.path, q))
        name = q.get("name", "").casefold()
        hits = [{"id": i, "name": n, "admin1": a, "country": c, "country_code": cc, "latitude": lat,
                 "longitude": lon, "timezone": tz}
                for i, (n, a, c, cc, lat, lon, tz) in enumerate(PLACES) if n.casefold() == name]
        return web.json_response({"results": hits, "generationtime_ms": 0.4} if hits else {"generationtime_ms": 0.2})

    async def _archive(self, request: web.Request) -> web.Response:
        q = dict(request.query)
        self.seen.append(Seen(request.path, q))
        if self.throttle_first > 0:
            self.throttle_first -= 1
            return web.Response(status=429, headers={"Retry-After": "0"}, text="slow down")
        day = q.get("start_date", "")
        if day > "2030-01-01" or day < "1940-01-01":
            return web.json_response({"error": True, "reason": "Parameter 'start_date' is out of allowed range "
                                      "from 1940-01-01 to 2030-01-01"}, status=400)
        key = (round(float(q["latitude"]), 2), round(float(q["longitude"]), 2), day)
        rec = DAYS.get(key)
        daily_vars = q.get("daily", "").split(",")
        hourly_vars = [v for v in q.get("hourly", "").split(",") if v]
        daily = {"time": [day], **{v: [rec["daily"].get(v) if rec else None] for v in daily_vars}}
        hourly = {v: list((rec or {}).get("hourly", {}).get(v) or [None] * 4) for v in hourly_vars}
        return web.json_response({"latitude": float(q["latitude"]), "longitude": float(q["longitude"]),
                                  "timezone": q.get("timezone", "GMT"), "daily": daily,
                                  "hourly": {"time": [f"{day}T{h:02d}:00" for h in range(4)], **hourly}})

    async def _serper(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.seen.append(Seen(request.path, {}, body))
        if request.headers.get("X-API-KEY") != "test-key":
            return web.Response(status=403, text="bad key")
        return web.json_response({"organic": SERPER_ORGANIC[: int(body.get("num", 10))]})

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/search", self._geocode)
        app.router.add_get("/v1/archive", self._archive)
        app.router.add_post("/search", self._serper)
        return app

    def __enter__(self) -> FakeApis:
        self.port = self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()


# ---------------------------------------------------------------------------------------- offline corpus

PAGE = """<!doctype html><html><head><title>{title}</title><script>var tracking = "SCRIPT-TEXT";</script>
<style>body {{ color: red }}</style></head><body>
<header><nav><a href="/">NAV-HOME</a> | <a href="/about">NAV-ABOUT</a></nav></header>
<main><article><h1>{title}</h1>
{body}
</article></main>
<aside>ASIDE-TEXT</aside>
<footer>FOOTER-TEXT</footer></body></html>
"""
LIGHT_URL = "https://www.lights.test/gull-rock"
LONG_URL = "https://www.lights.test/long-history"
LONG_SENTENCE = "Keepers logged every ship that passed the rock in the long winter nights. "


def write_corpus(root: Path) -> Path:
    (root / "pages").mkdir(parents=True, exist_ok=True)
    pages = {
        "gull-rock.html": (LIGHT_URL, PAGE.format(title="Gull Rock Lighthouse", body=(
            "<p>The Gull Rock Lighthouse was first lit in 1871.</p>\n"
            "<p>Its lamp is 42 metres above the sea and can be seen 19 nautical miles away.</p>"))),
        "long.html": (LONG_URL, PAGE.format(title="A long history of Gull Rock", body="\n".join(
            f"<p>{i}: {LONG_SENTENCE * 3}</p>" for i in range(120)) + "<p>THE-END-MARKER</p>")),
        "other.html": ("https://www.lights.test/cape-wren", PAGE.format(title="Cape Wren Light", body=(
            "<p>Cape Wren light stands on a granite headland; it was automated in 1990.</p>"))),
    }
    manifest: dict[str, Any] = {"format": "toolsight-corpus/1", "name": "vtb-web-test", "pages": [], "images": []}
    for file, (url, html) in pages.items():
        (root / "pages" / file).write_text(html, encoding="utf-8")
        manifest["pages"].append({"url": url, "file": f"pages/{file}"})
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    weather = {"format": "toolsight-weather/1", "name": "test", "places": [{
        "name": "Saltmere", "aliases": ["Saltmere Harbour"], "country": "Corvania", "admin1": "Westmark",
        "latitude": 54.5, "longitude": 2.25, "timezone": "Europe/Corvania",
        "days": {"2020-08-14": {"weather_code": 2, "temperature_max": 22.6, "temperature_min": 14.7,
                                "temperature_mean": 19.0, "apparent_temperature_mean": 18.0,
                                "precipitation_sum": 1.5, "rain_sum": 1.5, "snowfall_sum": 0.0,
                                "wind_speed_mean": 5.7, "wind_speed_max": 7.3, "relative_humidity_mean": 71.0,
                                "pressure_msl_mean": 1016.4, "sunrise": "2020-08-14T05:41"}}}]}
    (root / "weather.json").write_text(json.dumps(weather), encoding="utf-8")
    return root
