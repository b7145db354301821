"""VisualToolBench's web tools as its official loop shows them: the reference's result dicts, on the web layer.

The reference (`scripts/tools.py` @ d4f200a0) has `google_search` (SerpAPI), `browser_get_page_text`
(requests + BeautifulSoup) and `historical_weather` (OpenWeatherMap). The official loop (`vtb_tools`)
runs these stand-ins instead of toolsight's tool texts: the same calls through the run's web session
(live, offline corpus or replay — recorded like every web call), returned as the reference's dicts:

- `google_search(query, num_results=5)` → `{results: [{title, snippet, url, display_link}], query,
  status, total_results}`; `num = min(num_results, 10)` (a string `num_results` fails as it does
  there); `display_link` is built from the URL in Google's "host › path" form and `total_results` is
  the number of hits (no search engine estimate is available);
- `browser_get_page_text(url)` → `{url, title, text, status, content_length}`: the page bytes parsed by
  BeautifulSoup (`html.parser`) with script/style/nav/header/footer/aside removed, the reference's
  whitespace clean-up, `title` = `<title>`'s string (None when it has markup), else the first
  `<h1>`; text cut to 8,000 characters, `content_length` the full length; an HTTP error status reads
  as requests' `raise_for_status` message;
- `historical_weather(location, date)` → the reference's keys (`location, date, coordinates,
  temperature{current, feels_like, min, max}, conditions, humidity, wind_speed, pressure, status,
  note`) filled with **that day's** values (the reference returned today's weather whatever the date;
  `current` is the day's mean) — the one intended deviation (docs/fidelity.md);
- failures → the reference's error dicts (`status: "error"`, `error: …`), with the web layer's message.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from toolsight.errors import TaskAbort
from toolsight.web import current_session
from toolsight.web.types import Fetched, WebCallError
from toolsight.web.weather import WeatherLookup, describe_code, lookup_weather

PAGE_TEXT_CAP = 8000
MAX_RESULTS = 10
LOCATION_NOT_FOUND = "Location not found"  # the reference's text
WEATHER_NOTE = "Historical daily weather for {date} ({source}); 'current' is the day's mean"
SOURCES = {"open-meteo": "Open-Meteo archive", "corpus": "offline corpus"}


def display_link(url: str) -> str:
    """Google's displayed link for a URL: `https://host › path › parts`."""
    p = urlsplit(url)
    segs = [s for s in p.path.split("/") if s]
    return f"{p.scheme}://{p.netloc}" + "".join(f" › {s}" for s in segs)


# ---------------------------------------------------------------------------------------- google_search


async def google_search(query: Any, num_results: Any = 5) -> dict[str, Any]:
    try:
        n = min(num_results, MAX_RESULTS)  # the reference's expression: a str raises TypeError here
        hits = await current_session().text_search(str(query), max(1, int(n)))
        results = [{"title": h.title, "snippet": h.snippet or "", "url": h.link, "display_link": display_link(h.link)}
                   for h in hits]
        return {"results": results, "query": query, "status": "success", "total_results": len(results)}
    except TaskAbort:
        raise
    except Exception as e:
        return {"results": [], "query": query, "status": "error", "error": str(e)}


# ---------------------------------------------------------------------------------------- browser_get_page_text


def http_error(got: Fetched) -> str | None:
    """requests' `raise_for_status()` message for an error status, else None."""
    if got.status < 400:
        return None
    try:
        reason = HTTPStatus(got.status).phrase
    except ValueError:
        reason = ""
    kind = "Client" if got.status < 500 else "Server"
    return f"{got.status} {kind} Error: {reason} for url: {got.final_url}"


def soup_text(body: bytes) -> tuple[str | None, str]:
    """(title, text) exactly as the reference's BeautifulSoup recipe gives them."""
    from bs4 import BeautifulSoup

    with warnings.catch_warnings():  # bs4 warns about markup that looks like a URL or a file name
        warnings.simplefilter("ignore")
        soup = BeautifulSoup(body, "html.parser")
    for element in soup(["script", "style", "nav", "header", "footer", "aside"]):
        element.decompose()
    text = soup.get_text()
    lines = (line.strip() for line in text.splitlines())
    chunks = (phrase.strip() for line in lines for phrase in line.split("  "))
    text = " ".join(chunk for chunk in chunks if chunk)
    title: str | None = ""
    if soup.title:
        s = soup.title.string
        title = str(s) if s is not None else None
    else:
        h1 = soup.find("h1")
        if h1:
            title = h1.get_text()
    return title, text


async def browser_get_page_text(url: Any) -> dict[str, Any]:
    try:
        got = await current_session().fetch(url, kind="page")
        err = http_error(got)
        if err is not None:
            raise WebCallError(err)
        title, text = await asyncio.to_thread(soup_text, got.body)  # a 5 MB page takes a while to parse
        return {"url": url, "title": title, "text": text[:PAGE_TEXT_CAP], "status": "success",
                "content_length": len(text)}
    except TaskAbort:
        raise
    except Exception as e:
        return {"url": url, "title": "", "text": "", "status": "error", "error": str(e)}


# ---------------------------------------------------------------------------------------- historical_weather


def _c(v: float | None) -> str:
    return f"{v:.1f}°C" if v is not None else "n/a"


def weather_dict(look: WeatherLookup, location: Any, date: Any) -> dict[str, Any]:
    """A found day in the reference's `historical_weather` layout."""
    p, d = look.place, look.day
    assert p is not None and d is not None
    return {
        "location": location,
        "date": date,
        "coordinates": f"{p.latitude}, {p.longitude}",
        "temperature": {"current": _c(d.temperature_mean), "feels_like": _c(d.apparent_temperature_mean),
                        "min": _c(d.temperature_min), "max": _c(d.temperature_max)},
        "conditions": describe_code(d.weather_code) or "n/a",
        "humidity": f"{round(d.relative_humidity_mean)}%" if d.relative_humidity_mean is not None else "n/a",
        "wind_speed": f"{d.wind_speed_mean} m/s" if d.wind_speed_mean is not None else "n/a",
        "pressure": f"{round(d.pressure_msl_mean)} hPa" if d.pressure_msl_mean is not None else "n/a",
        "status": "success",
        "note": WEATHER_NOTE.format(date=look.date, source=SOURCES.get(look.source, look.source or "recorded")),
    }


async def historical_weather(location: Any, date: Any) -> dict[str, Any]:
    try:
        look = await lookup_weather(current_session(), location, date)
        if look.status == "not_found":
            raise LookupError(LOCATION_NOT_FOUND)
        if look.status == "no_data":
            raise LookupError(look.message or f"no weather data for {date}")
        return weather_dict(look, location, date)
    except TaskAbort:
        raise
    except Exception as e:
        return {"location": location, "date": date, "status": "error", "error": str(e)}


# ---------------------------------------------------------------------------------------- the loop's table
# The reference calls `function_to_call(**json.loads(arguments))`: a wrong argument raises a TypeError that
# becomes `{"error": str(e)}`. These stand-ins carry the reference's qualnames so the message is the same.

def _search_sig(query: Any, num_results: Any = 5) -> dict[str, Any]:
    return {"query": query, "num_results": num_results}


def _page_sig(url: Any) -> dict[str, Any]:
    return {"url": url}


def _weather_sig(location: Any, date: Any) -> dict[str, Any]:
    return {"location": location, "date": date}


_search_sig.__qualname__ = "VisionTools.google_search"
_page_sig.__qualname__ = "VisionTools.browser_get_page_text"
_weather_sig.__qualname__ = "VisionTools.historical_weather"

#: official name -> (argument binder, implementation)
OFFICIAL_WEB: dict[str, tuple[Callable[..., dict[str, Any]], Callable[..., Awaitable[dict[str, Any]]]]] = {
    "google_search": (_search_sig, google_search),
    "browser_get_page_text": (_page_sig, browser_get_page_text),
    "historical_weather": (_weather_sig, historical_weather),
}
