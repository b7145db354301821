"""Historical weather for a place and a day, behind the web session: Open-Meteo live, a corpus file offline.

`lookup_weather(session, location, date)` answers "what was the weather at LOCATION on DATE" as a
`WeatherLookup` (the place it resolved, and that day's values) through `session.custom("weather", …)`,
so every lookup is recorded in the run's cassette and a replay answers from it without a source.
The session's `weather` source does the work:

- **live** (`OpenMeteoWeather`): the Open-Meteo geocoding API turns the name into coordinates, the
  Open-Meteo archive API (ERA5 reanalysis, 1940 to about five days ago, no key) gives the day's
  values. `OPEN_METEO_GEOCODING_URL`, `OPEN_METEO_ARCHIVE_URL` point them elsewhere (a proxy, a
  test server; configuration, not model input) and `OPEN_METEO_API_KEY` adds the commercial key;
- **offline** (`CorpusWeather`): `weather.json` in the corpus folder — places (name, aliases,
  coordinates) with recorded days in the same fields (format below, and docs/web.md).

A place that cannot be found and a day without data are answers (`status` `not_found` /
`no_data`), recorded and replayed like any other; a failed request raises `WebCallError`.

    weather.json  {"format": "toolsight-weather/1", "name"?: "…", "note"?: "…",
                   "places": [{"name": "…", "aliases"?: […], "country"?: "…", "admin1"?: "…",
                               "latitude": 0.0, "longitude": 0.0, "timezone"?: "…",
                               "days": {"2023-07-14": {"temperature_max": 24.1, …}}}]}
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any, Literal, Protocol

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolsight.web.jsonfile import read_model
from toolsight.web.policy import Limits
from toolsight.web.types import WebCallError, WebError

WEATHER_FILE = "weather.json"
FORMAT = "toolsight-weather/1"
GEOCODING_URL = "https://geocoding-api.open-meteo.com/v1/search"
ARCHIVE_URL = "https://archive-api.open-meteo.com/v1/archive"
EARLIEST = date(1940, 1, 1)  # the start of Open-Meteo's ERA5 archive
log = logging.getLogger(__name__)
_COORDS = re.compile(r"^\s*(-?\d{1,3}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*$")
#: how far (degrees) a coordinate query may be from a corpus place to match it
COORD_MATCH_DEG = 0.5

#: Open-Meteo daily variable -> DayWeather field
DAILY = {
    "weather_code": "weather_code",
    "temperature_2m_max": "temperature_max", "temperature_2m_min": "temperature_min",
    "temperature_2m_mean": "temperature_mean",
    "apparent_temperature_max": "apparent_temperature_max", "apparent_temperature_min": "apparent_temperature_min",
    "apparent_temperature_mean": "apparent_temperature_mean",
    "precipitation_sum": "precipitation_sum", "rain_sum": "rain_sum", "snowfall_sum": "snowfall_sum",
    "wind_speed_10m_max": "wind_speed_max", "wind_gusts_10m_max": "wind_gusts_max",
    "wind_direction_10m_dominant": "wind_direction_dominant",
    "sunrise": "sunrise", "sunset": "sunset",
}
#: Open-Meteo hourly variable -> DayWeather field holding its mean over the day
HOURLY_MEANS = {"relative_humidity_2m": "relative_humidity_mean", "pressure_msl": "pressure_msl_mean",
                "wind_speed_10m": "wind_speed_mean"}

#: WMO weather interpretation codes (the `weather_code` Open-Meteo returns), as short lower-case words
WMO_CODES = {
    0: "clear sky", 1: "mainly clear", 2: "partly cloudy", 3: "overcast", 45: "fog", 48: "depositing rime fog",
    51: "light drizzle", 53: "moderate drizzle", 55: "dense drizzle", 56: "light freezing drizzle",
    57: "dense freezing drizzle", 61: "slight rain", 63: "moderate rain", 65: "heavy rain",
    66: "light freezing rain", 67: "heavy freezing rain", 71: "slight snow fall", 73: "moderate snow fall",
    75: "heavy snow fall", 77: "snow grains", 80: "slight rain showers", 81: "moderate rain showers",
    82: "violent rain showers", 85: "slight snow showers", 86: "heavy snow showers", 95: "thunderstorm",
    96: "thunderstorm with slight hail", 99: "thunderstorm with heavy hail",
}


def describe_code(code: int | None) -> str | None:
    if code is None:
        return None
    return WMO_CODES.get(code, f"weather code {code}")


class Place(BaseModel):
    """Where a lookup resolved to."""

    name: str
    latitude: float
    longitude: float
    country: str | None = None
    admin1: str | None = Field(default=None, description="first-level region (state, province)")
    timezone: str | None = None

    def label(self) -> str:
        parts = [self.name] + [p for p in (self.admin1, self.country) if p and p != self.name]
        return ", ".join(parts)


class DayWeather(BaseModel):
    """One day's values (units: °C, mm, cm of snow, m/s, degrees, %, hPa; local times ISO 8601)."""

    model_config = ConfigDict(extra="forbid")

    weather_code: int | None = None
    temperature_max: float | None = None
    temperature_min: float | None = None
    temperature_mean: float | None = None
    apparent_temperature_max: float | None = None
    apparent_temperature_min: float | None = None
    apparent_temperature_mean: float | None = None
    precipitation_sum: float | None = None
    rain_sum: float | None = None
    snowfall_sum: float | None = None
    wind_speed_max: float | None = None
    wind_gusts_max: float | None = None
    wind_direction_dominant: float | None = None
    wind_speed_mean: float | None = None
    relative_humidity_mean: float | None = None
    pressure_msl_mean: float | None = None
    sunrise: str | None = None
    sunset: str | None = None

    def empty(self) -> bool:
        return all(v is None for v in self.model_dump().values())


class WeatherLookup(BaseModel):
    """The answer to one lookup (what the cassette stores)."""

    status: Literal["ok", "not_found", "no_data"]
    location: str = Field(description="the location as asked")
    date: str
    place: Place | None = None
    day: DayWeather | None = None
    source: str = ""
    message: str | None = None


def parse_day(text: Any) -> date:
    """A YYYY-MM-DD date the archive can have; ValueError with a message the model can act on."""
    if not isinstance(text, str) or not re.fullmatch(r"\s*\d{4}-\d{2}-\d{2}\s*", text):
        raise ValueError(f"date {text!r} is not in YYYY-MM-DD format (e.g. 2021-03-04)")
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"date {text!r} is not a real calendar date") from None
    if day < EARLIEST:
        raise ValueError(f"date {text!r} is before {EARLIEST.isoformat()}, where the weather archive starts")
    return day


def parse_coordinates(text: str) -> tuple[float, float] | None:
    """`"40.7128,-74.0060"` -> (lat, lon); None for a place name (or out-of-range numbers)."""
    m = _COORDS.match(text)
    if m is None:
        return None
    lat, lon = float(m.group(1)), float(m.group(2))
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        return None
    return lat, lon


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def qualifier_matches(qualifier: str, country: str | None, country_code: str | None, admin1: str | None) -> bool:
    """Does the part after the comma ("NY", "France", "Bavaria") name this result's region or country?"""
    q = _norm(qualifier)
    if not q:
        return True
    for value in (country, country_code, admin1):
        if not value:
            continue
        v = _norm(value)
        initials = "".join(w[0] for w in v.split())
        if q == v or v.startswith(q) or (len(q) >= 2 and q.replace(" ", "") == initials):
            return True
    return False


class WeatherSource(ABC):
    name: str = ""

    @abstractmethod
    async def lookup(self, location: str, day: str) -> WeatherLookup: ...

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients."""


# ---------------------------------------------------------------------------------------- live


class OpenMeteoWeather(WeatherSource):
    """Open-Meteo's geocoding and historical archive APIs (no key needed for non-commercial use)."""

    name = "open-meteo"

    def __init__(self, limits: Limits | None = None, env: dict[str, str] | None = None) -> None:
        import os

        e = env if env is not None else dict(os.environ)
        self.limits = limits or Limits()
        self.geocoding_url = e.get("OPEN_METEO_GEOCODING_URL") or GEOCODING_URL
        self.archive_url = e.get("OPEN_METEO_ARCHIVE_URL") or ARCHIVE_URL
        self.api_key = e.get("OPEN_METEO_API_KEY") or None
        self._client: httpx.AsyncClient | None = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "geocoding_url": self.geocoding_url, "archive_url": self.archive_url,
                "api_key": bool(self.api_key)}

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            from toolsight.web.live import USER_AGENT

            self._client = httpx.AsyncClient(timeout=self.limits.timeout_s, headers={"User-Agent": USER_AGENT})
        return self._client

    async def _get(self, what: str, url: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.api_key:
            params = {**params, "apikey": self.api_key}
        # the live search backend's retry rules (statuses, Retry-After, back-off); imported here as `client()`
        # imports live.py: its page reader is heavy and offline and replay sessions never need it
        from toolsight.web.live import _RETRY_STATUS as RETRY_STATUS
        from toolsight.web.live import _retry_after as retry_after

        for attempt in range(4):
            try:
                resp = await self.client().get(url, params=params)
            except httpx.TimeoutException:
                raise WebCallError(f"the {what} API timed out after {self.limits.timeout_s:.0f} s") from None
            except httpx.HTTPError as exc:
                raise WebCallError(f"the {what} API could not be reached ({type(exc).__name__})") from None
            if resp.status_code in RETRY_STATUS and attempt < 3:
                wait = retry_after(resp, attempt)
                log.info("%s API: HTTP %d, retrying in %.1f s (attempt %d)", what, resp.status_code, wait, attempt + 1)
                await asyncio.sleep(wait)  # the API asked us to slow down
                continue
            try:
                data = resp.json()
            except ValueError:
                data = None
            if resp.status_code != 200:
                reason = data.get("reason") if isinstance(data, dict) else None
                raise WebCallError(f"the {what} API answered HTTP {resp.status_code}"
                                   + (f": {reason}" if reason else ""))
            if not isinstance(data, dict):
                raise WebCallError(f"the {what} API sent a reply that is not a JSON object")
            return data
        raise WebCallError(f"the {what} API kept asking to slow down")

    async def _search(self, name: str) -> list[dict[str, Any]]:
        data = await self._get("geocoding", self.geocoding_url,
                               {"name": name, "count": 10, "language": "en", "format": "json"})
        return [r for r in data.get("results") or [] if isinstance(r, dict) and "latitude" in r and "longitude" in r]

    async def geocode(self, location: str) -> Place | None:
        coords = parse_coordinates(location)
        if coords is not None:
            return Place(name=location.strip(), latitude=coords[0], longitude=coords[1])
        results = await self._search(location.strip())
        if not results and "," in location:
            # "New York, NY": search the name, keep the hit whose region or country the rest names
            head, _, qualifier = location.partition(",")
            hits = await self._search(head.strip())
            results = [r for r in hits if qualifier_matches(qualifier, r.get("country"), r.get("country_code"),
                                                            r.get("admin1"))] or hits
        if not results:
            return None
        r = results[0]
        return Place(name=str(r.get("name") or location), latitude=float(r["latitude"]),
                     longitude=float(r["longitude"]), country=r.get("country"), admin1=r.get("admin1"),
                     timezone=r.get("timezone"))

    async def lookup(self, location: str, day: str) -> WeatherLookup:
        place = await self.geocode(location)
        if place is None:
            return WeatherLookup(status="not_found", location=location, date=day, source=self.name,
                                 message=f"no place named {location!r} was found")
        data = await self._get("weather archive", self.archive_url, {
            "latitude": place.latitude, "longitude": place.longitude, "start_date": day, "end_date": day,
            "daily": ",".join(DAILY), "hourly": ",".join(HOURLY_MEANS), "timezone": place.timezone or "auto",
            "wind_speed_unit": "ms"})
        if place.timezone is None and isinstance(data.get("timezone"), str):
            place = place.model_copy(update={"timezone": data["timezone"]})
        values: dict[str, Any] = {}
        daily = data.get("daily") or {}
        for api, fld in DAILY.items():
            series = daily.get(api)
            if isinstance(series, list) and series:
                values[fld] = series[0]
        hourly = data.get("hourly") or {}
        for api, fld in HOURLY_MEANS.items():
            series = [v for v in hourly.get(api) or [] if isinstance(v, int | float)]
            if series:
                values[fld] = round(sum(series) / len(series), 1)
        try:
            weather = DayWeather.model_validate(values)
        except ValidationError:
            raise WebCallError("the weather archive API sent values of an unexpected type") from None
        if weather.empty():
            return WeatherLookup(status="no_data", location=location, date=day, place=place, source=self.name,
                                 message=f"the archive has no data for {day} (it ends about five days before today)")
        return WeatherLookup(status="ok", location=location, date=day, place=place, day=weather, source=self.name)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


# ---------------------------------------------------------------------------------------- offline


class CorpusPlace(Place):
    model_config = ConfigDict(extra="forbid")

    aliases: list[str] = Field(default_factory=list)
    days: dict[str, DayWeather] = Field(default_factory=dict)


class WeatherFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    name: str = "weather"
    note: str | None = None
    places: list[CorpusPlace] = Field(default_factory=list)


def read_weather_file(path: Path) -> WeatherFile:
    """A corpus weather file, checked; WebError naming the file and field otherwise."""
    wf = read_model(path, WeatherFile, "; see docs/web.md")
    if wf.format != FORMAT:
        raise WebError(f"{path}: format {wf.format!r} is not {FORMAT!r}")
    for i, p in enumerate(wf.places):
        for d in p.days:
            try:
                date.fromisoformat(d)
            except ValueError:
                raise WebError(f"{path}: places[{i}].days: {d!r} is not a YYYY-MM-DD date") from None
    return wf


class CorpusWeather(WeatherSource):
    """Recorded weather in an offline corpus folder (`weather.json`); lookups never leave the machine."""

    name = "corpus"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file: WeatherFile | None = read_weather_file(path) if path.is_file() else None

    @classmethod
    def open(cls, corpus: Path) -> CorpusWeather:
        return cls(corpus / WEATHER_FILE)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "file": str(self.path.resolve()) if self.file else None,
                "places": len(self.file.places) if self.file else 0}

    def find(self, location: str) -> CorpusPlace | None:
        assert self.file is not None
        coords = parse_coordinates(location)
        if coords is not None:
            best = min(self.file.places, default=None,
                       key=lambda p: math.hypot(p.latitude - coords[0], p.longitude - coords[1]))
            if best is not None and math.hypot(best.latitude - coords[0], best.longitude - coords[1]) <= COORD_MATCH_DEG:
                return best
            return None
        want = _norm(location)
        for p in self.file.places:
            names = {_norm(n) for n in [p.name, *p.aliases]}
            full = {f"{n} {_norm(q)}" for n in names for q in (p.admin1, p.country) if q}
            if want in names or want in full:
                return p
        if "," in location:
            head, _, qualifier = location.partition(",")
            for p in self.file.places:
                if _norm(head) in {_norm(n) for n in [p.name, *p.aliases]} and qualifier_matches(
                        qualifier, p.country, None, p.admin1):
                    return p
        return None

    async def lookup(self, location: str, day: str) -> WeatherLookup:
        if self.file is None:
            raise WebCallError(f"the offline corpus has no recorded weather ({self.path} is missing); weather "
                               "lookups need --web live, or a corpus with a weather file")
        p = self.find(location)
        if p is None:
            return WeatherLookup(status="not_found", location=location, date=day, source=self.name,
                                 message=f"no place named {location!r} was found")
        place = Place.model_validate(p.model_dump(include=set(Place.model_fields)))
        weather = p.days.get(day)
        if weather is None or weather.empty():
            return WeatherLookup(status="no_data", location=location, date=day, place=place, source=self.name,
                                 message=f"no weather is recorded for {place.label()} on {day}")
        return WeatherLookup(status="ok", location=location, date=day, place=place, day=weather, source=self.name)


# ---------------------------------------------------------------------------------------- the call


class RecordingSession(Protocol):
    """What a lookup needs of the web session: its weather source and its recorded calls."""

    weather: WeatherSource | None

    async def custom(self, op: str, request: dict[str, Any], run: Callable[[], Awaitable[Any]]) -> Any: ...


async def lookup_weather(session: RecordingSession, location: str, day: str) -> WeatherLookup:
    """The weather at `location` on `day` through the session (recorded; replayed without a source).

    ValueError for arguments no source could answer (an empty location, a malformed or too early date),
    WebCallError for a failed request.
    """
    if not isinstance(location, str) or not location.strip():
        raise ValueError("location is empty; give a city name ('Lyon', 'Portland, OR') or 'lat,lon'")
    d = parse_day(day).isoformat()
    loc = " ".join(location.split())

    async def run() -> dict[str, Any]:
        source = session.weather
        if source is None:
            raise WebCallError("no weather source is configured for this web session")
        return (await source.lookup(loc, d)).model_dump(mode="json")

    data = await session.custom("weather", {"location": loc, "date": d}, run)
    try:
        return WeatherLookup.model_validate(data)
    except ValidationError:
        raise WebCallError("the recorded weather lookup is not in the expected format") from None
