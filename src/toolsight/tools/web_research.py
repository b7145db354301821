"""Research tools on the web layer: `web_search`, `browser_get_page_text`, `historical_weather`.

General-purpose tools (VisualToolBench's set offers them; any setting can): a web search, a page's main
text, and real historical weather for a place and a day. Every call goes through the run's
`WebSession`, so they run on the live web, on an offline corpus served on 127.0.0.1, or from a
recording, and each call is recorded. Their texts are toolsight's: numbered results, the page's main
text (trafilatura; Jina Reader when `JINA_API_KEY` is set) 8,000 characters at a time with a note saying
where the page goes on, and one labelled line per weather quantity. A benchmark that must show a
reference's own result format builds it from the same session calls (VisualToolBench's official
loop: `benchmarks/visualtoolbench/web.py`). `google_search` (the VisualToolBench code's name) is an alias of
`web_search`.
"""

from __future__ import annotations

from typing import Any

from toolsight.tools.base import Tool, ToolContext, ToolResult
from toolsight.web import current_session
from toolsight.web.types import WebCallError
from toolsight.web.weather import WeatherLookup, describe_code, lookup_weather

PAGE_CHARS = 8_000  # the page-text tool's window (VisualToolBench's cap)
MAX_RESULTS = 10
DEFAULT_RESULTS = 5

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to search for."},
        "num_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": DEFAULT_RESULTS,
                        "description": f"How many results to return (1-{MAX_RESULTS})."},
    },
    "required": ["query"],
}
PAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The http(s) URL of the page, e.g. one from web_search."},
        "start": {"type": "integer", "minimum": 0, "default": 0,
                  "description": "Character offset to read from, to continue a long page."},
    },
    "required": ["url"],
}
WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "A place name, optionally with its region or country "
                     "('Lyon', 'Portland, OR', 'Paris, France'), or coordinates 'lat,lon' ('40.71,-74.01')."},
        "date": {"type": "string", "description": "The day, YYYY-MM-DD (1940-01-01 to about five days ago)."},
    },
    "required": ["location", "date"],
}


def _int_arg(args: dict[str, Any], name: str, default: int, lo: int, hi: int | None) -> int | str:
    """The integer argument, or the message for a bad one."""
    raw = args.get(name, default)
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        return f"'{name}' must be an integer, got {raw!r}"
    try:
        val = int(float(raw))
    except ValueError:
        return f"'{name}' must be an integer, got {raw!r}"
    if val < lo or (hi is not None and val > hi):
        return f"'{name}' must be between {lo} and {hi}, got {val}" if hi is not None else \
            f"'{name}' must be {lo} or more, got {val}"
    return val


class WebSearch(Tool):
    aliases = ("google_search",)

    def __init__(self) -> None:
        super().__init__("web_search", "Search the web. Returns numbered results with title, URL and snippet "
                         "(and date when known); read a result's page with browser_get_page_text.", SEARCH_SCHEMA)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult.fail("web_search needs a non-empty 'query' string.")
        n = _int_arg(args, "num_results", DEFAULT_RESULTS, 1, MAX_RESULTS)
        if isinstance(n, str):
            return ToolResult.fail(f"web_search: {n}.")
        try:
            hits = await current_session().text_search(query, n)
        except WebCallError as exc:
            return ToolResult.fail(f"web_search failed: {exc}")
        if not hits:
            return ToolResult(text=f'No results for "{query}". Try other or fewer words.', extra={"hits": 0})
        lines = [f'Results for "{query}" ({len(hits)}):']
        for i, h in enumerate(hits, 1):
            lines.append(f"{i}. {h.title}\n   URL: {h.link}")
            if h.date:
                lines.append(f"   Date: {h.date}")
            if h.snippet:
                lines.append(f"   {' '.join(h.snippet.split())}")
        return ToolResult(text="\n".join(lines), extra={"hits": len(hits)})


def page_window(title: str, url: str, text: str, start: int, size: int = PAGE_CHARS) -> str:
    """The page text from `start`, at most `size` characters, with a header saying where it is."""
    total = len(text)
    if start >= total and total:
        return f"Title: {title}\nURL: {url}\nThe page has {total:,} characters; start={start} is past its end."
    chunk = text[start:start + size]
    end = start + len(chunk)
    if start == 0 and end == total:
        where = f"the whole page, {total:,} characters"
    else:
        where = f"characters {start:,}-{end:,} of {total:,}"
        if end < total:
            where += f"; call again with start={end} to read on"
    return f"Title: {title}\nURL: {url}\n({where})\n\n{chunk}"


def split_reader_text(reader_text: str) -> tuple[str, str]:
    """(title, main text) of the reader's Jina-style layout (`Title: …`, `URL Source: …`, `Markdown Content:`)."""
    head, sep, body = reader_text.partition("Markdown Content:\n")
    if not (sep and head.startswith("Title:")):
        return "", reader_text.strip()
    return head.splitlines()[0].removeprefix("Title:").strip(), body.strip()


class PageText(Tool):
    def __init__(self) -> None:
        super().__init__("browser_get_page_text", "Fetch a web page and return its main text (navigation, menus "
                         f"and scripts removed), {PAGE_CHARS:,} characters at a time.", PAGE_SCHEMA)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        url = args.get("url")
        if not isinstance(url, str) or not url.strip():
            return ToolResult.fail("browser_get_page_text needs a 'url' string (an http:// or https:// URL).")
        start = _int_arg(args, "start", 0, 0, None)
        if isinstance(start, str):
            return ToolResult.fail(f"browser_get_page_text: {start}.")
        try:
            page = await current_session().read_page(url.strip())
        except WebCallError as exc:
            return ToolResult.fail(f"browser_get_page_text could not read {url}: {exc}")
        title, text = split_reader_text(page.text)
        if not text:
            return ToolResult.fail(f"browser_get_page_text: {url} has no readable text.")
        return ToolResult(text=page_window(page.title or title, page.url, text, start),
                          extra={"chars": len(text), "start": start, "reader": page.reader})


def _num(v: float | None, unit: str, digits: int = 1) -> str | None:
    return None if v is None else f"{v:.{digits}f}{unit}"


def _joined(label: str, parts: list[tuple[str, str | None]]) -> str | None:
    got = [f"{k} {v}" if k else v for k, v in parts if v is not None]
    return f"{label}: {', '.join(got)}" if got else None


SOURCES = {"open-meteo": "Open-Meteo historical archive", "corpus": "offline corpus"}


def weather_text(look: WeatherLookup) -> str:
    """toolsight's text for a found day: one labelled line per quantity, missing ones left out."""
    p, d = look.place, look.day
    assert p is not None and d is not None
    where = f"{p.label()} ({p.latitude:.2f}, {p.longitude:.2f}" + (f"; {p.timezone})" if p.timezone else ")")
    source = SOURCES.get(look.source, look.source or "recorded")
    lines = [f"Weather on {look.date} at {where}, daily values from the {source}:"]
    code = describe_code(d.weather_code)
    precip = _joined("Precipitation", [("", _num(d.precipitation_sum, " mm")), ("rain", _num(d.rain_sum, " mm")),
                                       ("snowfall", _num(d.snowfall_sum, " cm"))])
    wind = _joined("Wind (m/s)", [("mean", _num(d.wind_speed_mean, "")), ("max", _num(d.wind_speed_max, "")),
                                  ("gusts up to", _num(d.wind_gusts_max, "")),
                                  ("mostly from", _num(d.wind_direction_dominant, "°", 0))])
    sun = _joined("Sun (local time)", [("rise", d.sunrise.split("T")[-1] if d.sunrise else None),
                                       ("set", d.sunset.split("T")[-1] if d.sunset else None)])
    for line in (
        _joined("Temperature (°C)", [("max", _num(d.temperature_max, "")), ("min", _num(d.temperature_min, "")),
                                     ("mean", _num(d.temperature_mean, ""))]),
        _joined("Feels like (°C)", [("max", _num(d.apparent_temperature_max, "")),
                                    ("min", _num(d.apparent_temperature_min, "")),
                                    ("mean", _num(d.apparent_temperature_mean, ""))]),
        f"Conditions: {code} (WMO code {d.weather_code})" if code else None,
        precip, wind,
        _joined("Relative humidity", [("mean", _num(d.relative_humidity_mean, "%", 0))]),
        _joined("Pressure at sea level", [("mean", _num(d.pressure_msl_mean, " hPa"))]),
        sun,
    ):
        if line:
            lines.append(line)
    return "\n".join(lines)


class HistoricalWeather(Tool):
    def __init__(self) -> None:
        super().__init__("historical_weather", "Historical weather for a place on a past day (daily values: "
                         "temperatures, conditions, precipitation, wind, humidity, pressure, sunrise and sunset).",
                         WEATHER_SCHEMA)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        location, day = args.get("location"), args.get("date")
        try:
            look = await lookup_weather(current_session(), location, day)  # type: ignore[arg-type]
        except ValueError as exc:
            return ToolResult.fail(f"historical_weather: {exc}.")
        except WebCallError as exc:
            return ToolResult.fail(f"historical_weather failed: {exc}")
        if look.status == "not_found":
            return ToolResult.fail(f"historical_weather: no place named {look.location!r} was found. Try the "
                                   "place name alone, 'City, Country', or coordinates 'lat,lon'.",
                                   status=look.status)
        if look.status == "no_data":
            return ToolResult.fail(f"historical_weather: {look.message}.", status=look.status)
        assert look.place is not None
        return ToolResult(text=weather_text(look), extra={"place": look.place.label(), "source": look.source})


def web_search_tools() -> list[Tool]:
    return [WebSearch()]


def page_text_tools() -> list[Tool]:
    return [PageText()]


def weather_tools() -> list[Tool]:
    return [HistoricalWeather()]
