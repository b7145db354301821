"""An offline VisualToolBench-style set: generated images, rubrics with checks, reference solutions.

`generate_vtb(n, seed, out)` writes the **official converted layout** (`data/{single,multi}_turn/dataset.json`
+ `images/sample_k/…`, every HF field, rubrics and trajectories as JSON strings) so the real loader reads
it. Six kinds, cycled: region-switch counting (two panels, a difference by calculator), hybrid chart
reading (bar heights measured in code, a share computed by the interpreter), progressive multi-turn
(count, then a fraction of all), temporal multi-turn (a later photo, the change since the first), a web
lookup (medals counted in the photo, the club's total found by `google_search` + `browser_get_page_text`,
the difference by calculator) and a weather follow-up (boats counted, then that day's high and low from
`historical_weather`). The web kinds write an offline corpus (`out/corpus/`: pages, `weather.json`)
that `toolsight run visualtoolbench --data out` serves on 127.0.0.1 by default.

Each turn carries, beside the official fields, what makes it solvable and checkable offline:
`toolsight_reference[t]` = `{"reference_calls": [...], "answer_template": "..."}` — the calls
`--model reference` makes (`python_image_processing`, `python_interpreter`, `calculator`, the web tools;
a call's `capture` regexes read values out of its result) and the answer it writes from their outputs — and each rubric's `toolsight_check` (see `toolsight.scoring.rubric_check`),
so runs score without a judge. The reference code runs under the reference's restricted `exec`
namespace too (no `sum`, `round`, comprehensions over locals, or the broken preloaded `Image`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from toolsight.benchmarks.visualtoolbench.data import convert_rows

# BGR colours for drawing; the reference code masks the same colours in RGB
COLORS = {"red": (40, 40, 220), "blue": (220, 60, 40), "green": (50, 190, 60), "yellow": (40, 210, 230)}
RGB_RANGES = {  # inclusive RGB bounds that select each drawn colour (and nothing else drawn here)
    "red": ([180, 0, 0], [255, 90, 90]), "blue": ([0, 20, 170], [90, 110, 255]),
    "green": ([20, 150, 20], [100, 230, 100]), "yellow": ([190, 170, 0], [255, 255, 90]),
}
DOMAINS = ("generalist", "sports", "finance", "physics", "medical", "maths")


def _png(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", img)
    if not ok:
        raise RuntimeError("could not encode a generated image")
    return bytes(buf.tobytes())


def _canvas(w: int, h: int, rng: random.Random) -> np.ndarray:
    img = np.full((h, w, 3), 235, np.uint8)
    noise = np.random.default_rng(rng.randrange(1 << 30)).integers(0, 12, (h, w, 1), dtype=np.uint8)
    return np.asarray(img - noise, dtype=np.uint8)


def _shapes(img: np.ndarray, box: tuple[int, int, int, int], counts: dict[tuple[str, str], int],
            rng: random.Random) -> None:
    """Draw `counts[(colour, shape)]` non-overlapping shapes in box (x0, y0, x1, y1), one per grid cell."""
    x0, y0, x1, y1 = box
    cell = 34
    cells = [(x, y) for x in range(x0 + 4, x1 - cell, cell) for y in range(y0 + 4, y1 - cell, cell)]
    rng.shuffle(cells)
    items = [k for k, n in counts.items() for _ in range(n)]
    if len(items) > len(cells):
        raise ValueError("too many shapes for the panel")
    for (color, shape), (x, y) in zip(items, cells, strict=False):
        c = COLORS[color]
        if shape == "circle":
            cv2.circle(img, (x + cell // 2, y + cell // 2), 11, c, -1)
        else:
            cv2.rectangle(img, (x + 6, y + 6), (x + cell - 8, y + cell - 8), c, -1)


def _count_code(name: str, box: str, colors: list[str], out: str, key: str) -> str:
    """Reference code: crop `box` (fractions x0,y0,x1,y1), save it, count blobs of `colors`, print INFO."""
    lines = [
        "from PIL import Image",
        "import numpy as np, cv2, json",
        f"img = np.array(Image.open({name!r}).convert('RGB'))",
        "h = img.shape[0]",
        "w = img.shape[1]",
        f"x0, y0, x1, y1 = {box}",
        "crop = img[int(y0 * h):int(y1 * h), int(x0 * w):int(x1 * w)]",
        f"Image.fromarray(crop).save(str(PROCESSED_IMAGE_SAVE_PATH) + '/{out}')",
        "mask = np.zeros(crop.shape[:2], np.uint8)",
    ]
    for c in colors:
        lo, hi = RGB_RANGES[c]
        lines.append(f"mask = cv2.bitwise_or(mask, cv2.inRange(crop, np.array({lo}), np.array({hi})))")
    lines += [
        "n = cv2.connectedComponents(mask)[0] - 1",
        f"print('INFO: ' + json.dumps({{{key!r}: int(n)}}))",
    ]
    return "\n".join(lines)


def _rubric(desc: str, weight: int, check: dict[str, Any], critical: bool, categories: list[str],
            final: bool = True, explicit: bool = True) -> dict[str, Any]:
    return {
        "description": desc, "weight": weight, "objective/subjective": "objective",
        "explicit/implicit": "explicit" if explicit else "implicit", "category": categories,
        "critical": "yes" if critical else "no", "final_answer": "yes" if final else "no", "toolsight_check": check,
    }


def _trajectory(steps: list[tuple[str, str]]) -> str:
    return json.dumps("\n".join(f"{i}. `{tool}`: {note}" for i, (tool, note) in enumerate(steps, start=1)))


Sample = dict[str, Any]


def _region_switch(k: int, rng: random.Random) -> Sample:
    a, b = rng.randint(3, 7), rng.randint(1, 5)
    img = _canvas(640, 480, rng)
    cv2.line(img, (320, 0), (320, 480), (90, 90, 90), 2)
    cv2.line(img, (0, 240), (640, 240), (90, 90, 90), 2)
    _shapes(img, (0, 0, 318, 238), {("red", "circle"): a, ("yellow", "square"): rng.randint(1, 3)}, rng)
    _shapes(img, (322, 0, 640, 238), {("red", "circle"): rng.randint(1, 4)}, rng)
    _shapes(img, (0, 242, 318, 480), {("blue", "square"): rng.randint(1, 4)}, rng)
    _shapes(img, (322, 242, 640, 480), {("blue", "square"): b, ("green", "circle"): rng.randint(1, 3)}, rng)
    diff = a - b
    name = "image_0.png"
    calls = [
        {"tool": "python_image_processing", "arguments": {"code": _count_code(
            name, "0.0, 0.0, 0.5, 0.5", ["red"], "transformed_image_0.png", "red")}},
        {"tool": "python_image_processing", "arguments": {"code": _count_code(
            name, "0.5, 0.5, 1.0, 1.0", ["blue"], "transformed_image_1.png", "blue")}},
        {"tool": "calculator", "arguments": {"expression": "{INFO.red} - {INFO.blue}"}},
    ]
    prompt = ("The picture has four panels. How many more red circles are in the top-left panel than blue "
              "squares in the bottom-right panel? Give the two counts too.")
    gold = f"The top-left panel has {a} red circles and the bottom-right panel has {b} blue squares, so there are {diff} more."
    rubrics = {
        "rubric_1": _rubric(f"States that the difference is {diff}.", 5, {"number": diff}, True,
                            ["Truthfulness", "Reasoning"]),
        "rubric_2": _rubric(f"Counts {a} red circles in the top-left panel.", 4, {"number": a}, True,
                            ["Visual Understanding"], final=False),
        "rubric_3": _rubric(f"Counts {b} blue squares in the bottom-right panel.", 3, {"number": b}, False,
                            ["Visual Understanding"], final=False),
    }
    return {
        "eval_focus": "region_switch_qa", "prompts": [prompt], "golds": [gold], "rubrics": [rubrics],
        "images": [[_png(img)]],
        "trajectories": [_trajectory([("python_image_processing", "Crop the top-left panel and count the red circles."),
                                      ("python_image_processing", "Crop the bottom-right panel and count the blue squares."),
                                      ("calculator", "Subtract the two counts.")])],
        "reference": [{"reference_calls": calls, "answer_template": (
            "The top-left panel has {INFO.red} red circles and the bottom-right panel has {INFO.blue} blue "
            "squares, so there are {RESULT} more red circles.")}],
    }


def _bar_code(name: str) -> str:
    lines = [
        "from PIL import Image",
        "import numpy as np, cv2, json",
        f"img = np.array(Image.open({name!r}).convert('RGB'))",
        "h = img.shape[0]",
        "crop = img[int(0.1 * h):int(0.9 * h), :]",
        "Image.fromarray(crop).save(str(PROCESSED_IMAGE_SAVE_PATH) + '/transformed_image_0.png')",
        "out = {}",
    ]
    for c in ("red", "green", "blue"):
        lo, hi = RGB_RANGES[c]
        lines += [
            f"m = cv2.inRange(img, np.array({lo}), np.array({hi}))",
            "rows = np.nonzero(m.max(axis=1))[0]",
            f"out[{c!r}] = int(rows.max() - rows.min() + 1)",
        ]
    lines.append("print('INFO: ' + json.dumps(out))")
    return "\n".join(lines)


def _hybrid_chart(k: int, rng: random.Random) -> Sample:
    heights = {c: rng.randint(6, 30) * 10 for c in ("red", "green", "blue")}
    img = _canvas(480, 400, rng)
    base = 360
    cv2.line(img, (30, base), (460, base), (60, 60, 60), 2)
    for i, c in enumerate(("red", "green", "blue")):
        x = 70 + i * 130
        cv2.rectangle(img, (x, base - heights[c]), (x + 80, base - 1), COLORS[c], -1)
    total = sum(heights.values())
    pct = 100.0 * heights["green"] / total
    pct_txt = f"{pct:.1f}"
    calls = [
        {"tool": "python_image_processing", "arguments": {"code": _bar_code("image_0.png")}},
        {"tool": "python_interpreter", "arguments": {"code": (
            "import json\n"
            "g = {INFO.green}\nt = {INFO.red} + {INFO.green} + {INFO.blue}\n"
            "print('INFO: ' + json.dumps({'pct': '%.1f' % (100.0 * g / t)}))")}},
    ]
    prompt = ("This bar chart shows a team's budget in three categories (red, green, blue bars). What percentage "
              "of the total budget is the green bar? Answer with one decimal.")
    gold = f"The green bar is {pct_txt}% of the total."
    rubrics = {
        "rubric_1": _rubric(f"States that the green bar is about {pct_txt}% of the total.", 5,
                            {"number": round(pct, 1), "tol": 0.6}, True, ["Truthfulness", "Visual Understanding"]),
        "rubric_2": _rubric("Reports the share as a percentage.", 2, {"contains": ["%"]}, False,
                            ["Instruction Following"], final=False, explicit=False),
    }
    return {
        "eval_focus": "hybrid_tool_reasoning", "prompts": [prompt], "golds": [gold], "rubrics": [rubrics],
        "images": [[_png(img)]],
        "trajectories": [_trajectory([("python_image_processing", "Crop the chart and measure the three bars."),
                                      ("python_interpreter", "Compute the green bar's share of the total.")])],
        "reference": [{"reference_calls": calls, "answer_template": "The green bar is {INFO.pct}% of the total."}],
    }


def _progressive(k: int, rng: random.Random) -> Sample:
    g, r = rng.randint(2, 8), rng.randint(2, 8)
    img = _canvas(520, 400, rng)
    _shapes(img, (0, 0, 520, 400), {("green", "circle"): g, ("red", "circle"): r, ("blue", "square"): rng.randint(1, 4)},
            rng)
    png = _png(img)
    frac = g / (g + r)
    frac_txt = f"{frac:.4g}"
    t1 = [{"tool": "python_image_processing", "arguments": {"code": _count_code(
        "turn_0_image_0.png", "0.0, 0.0, 1.0, 1.0", ["green"], "transformed_image_0.png", "green")}}]
    t2 = [
        {"tool": "python_image_processing", "arguments": {"code": _count_code(
            "turn_1_image_0.png", "0.0, 0.0, 1.0, 1.0", ["green", "red"], "transformed_image_10.png", "circles")}},
        {"tool": "calculator", "arguments": {"expression": "{PREV_NUMBER} / {INFO.circles}"}},
    ]
    return {
        "eval_focus": "progressive_visual_reasoning",
        "prompts": ["How many green circles are in this image?",
                    "What fraction of all the circles (green and red) are green? Give a decimal."],
        "golds": [f"There are {g} green circles.", f"{g} of the {g + r} circles are green, a fraction of {frac_txt}."],
        "rubrics": [
            {"rubric_1": _rubric(f"States that there are {g} green circles.", 5, {"number": g}, True,
                                 ["Visual Understanding", "Truthfulness"])},
            {"rubric_1": _rubric(f"States the fraction as about {frac_txt}.", 5, {"number": frac, "tol": 0.005}, True,
                                 ["Truthfulness", "Reasoning"]),
             "rubric_2": _rubric(f"Counts {g + r} circles in total.", 3, {"number": g + r}, False,
                                 ["Visual Understanding"], final=False)},
        ],
        "images": [[png], [png]],
        "trajectories": [_trajectory([("python_image_processing", "Mask the green circles and count them.")]),
                         _trajectory([("python_image_processing", "Count all green and red circles."),
                                      ("calculator", "Divide the green count by the total.")])],
        "reference": [
            {"reference_calls": t1, "answer_template": "There are {INFO.green} green circles."},
            {"reference_calls": t2, "answer_template": "{PREV_NUMBER} of the {INFO.circles} circles are green, a "
                                                      "fraction of {RESULT}."},
        ],
    }


def _temporal(k: int, rng: random.Random) -> Sample:
    before = rng.randint(5, 10)
    left = rng.randint(1, before - 2)
    after = before - left
    imgs: list[bytes] = []
    for n in (before, after):
        img = _canvas(520, 360, rng)
        _shapes(img, (0, 0, 520, 360), {("yellow", "square"): n, ("green", "circle"): rng.randint(1, 3)}, rng)
        imgs.append(_png(img))
    t1 = [{"tool": "python_image_processing", "arguments": {"code": _count_code(
        "turn_0_image_0.png", "0.0, 0.0, 1.0, 1.0", ["yellow"], "transformed_image_0.png", "cars")}}]
    t2 = [
        {"tool": "python_image_processing", "arguments": {"code": _count_code(
            "turn_1_image_0.png", "0.0, 0.0, 1.0, 1.0", ["yellow"], "transformed_image_10.png", "cars")}},
        {"tool": "calculator", "arguments": {"expression": "{PREV_NUMBER} - {INFO.cars}"}},
    ]
    return {
        "eval_focus": "temporal_visual_reasoning",
        "prompts": ["This is a parking lot seen from above; yellow squares are cars. How many cars are parked?",
                    "Here is the same lot an hour later. How many cars have left since the first photo?"],
        "golds": [f"There are {before} cars parked.", f"Now {after} cars are parked, so {left} cars have left."],
        "rubrics": [
            {"rubric_1": _rubric(f"States that {before} cars are parked.", 5, {"number": before}, True,
                                 ["Visual Understanding"])},
            {"rubric_1": _rubric(f"States that {left} cars have left.", 5, {"number": left}, True,
                                 ["Truthfulness", "Reasoning"]),
             "rubric_2": _rubric(f"Counts {after} cars in the later photo.", 4, {"number": after}, False,
                                 ["Visual Understanding"], final=False)},
        ],
        "images": [[imgs[0]], [imgs[1]]],
        "trajectories": [_trajectory([("python_image_processing", "Mask the yellow cars and count them.")]),
                         _trajectory([("python_image_processing", "Count the cars in the later photo."),
                                      ("calculator", "Subtract from the first count.")])],
        "reference": [
            {"reference_calls": t1, "answer_template": "There are {INFO.cars} cars parked."},
            {"reference_calls": t2, "answer_template": "Now {INFO.cars} cars are parked, so {RESULT} cars have left."},
        ],
    }


# ---------------------------------------------------------------------------------------- web kinds
# Tasks that need the offline web corpus: pages found by `google_search` and read by
# `browser_get_page_text`, and recorded weather for `historical_weather`. Places and clubs are fictional,
# URLs use `.test` domains, the weather is generated (not real observations).

CLUB_HOST = "www.rowing-clubs.test"
CLUB_TOWNS = ["Kestrel Bay", "Vell Harbor", "Port Alder", "Marrow Falls", "Lindenau", "Corvin Hill", "Thornwick",
              "Bramblegate"]
RIVERS = ["Alder", "Vell", "Marrow", "Linden", "Corvin", "Thorn", "Bramble", "Kestrel"]
WEATHER_TOWNS = [("Saltmere", "Westmark"), ("Gullhaven", "Northshire"), ("Port Wren", "Estmoor"),
                 ("Eastby Reach", "Westmark"), ("Cobalt Springs", "Highfold")]
WEATHER_COUNTRY = "Corvania"
#: the regexes the reference solution captures with (they read both the official dicts and toolsight's texts)
FIRST_URL = r"(https?://[^\s'\"]+)"
MAX_TEMP = r"\bmax\W{0,4}(-?\d+(?:\.\d+)?)"
MIN_TEMP = r"\bmin\W{0,4}(-?\d+(?:\.\d+)?)"

CLUB_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{club} - club history</title></head>
<body>
<header><nav><a href="https://{host}/">Rowing clubs directory</a> | <a href="https://{host}/regattas">Regattas</a> |
<a href="https://{host}/contact">Contact</a></nav></header>
<main><article>
<h1>{club}</h1>
<p>The {club} was founded in {year} on the river {river} at {town}. Its boathouse holds {boats} racing shells and
the club trains juniors and masters crews all year round.</p>
<p>Members meet on weekday evenings and on Saturday mornings; visitors are welcome to watch from the bank, and
the clubhouse terrace is open to the public on regatta days.</p>
<p>Since its first national regatta the club has won {total} gold medals at the national championships, and its
crews have raced abroad in most seasons since {abroad}.</p>
<p>The club's colours are worn on every blade, and its annual head race closes the autumn season.</p>
</article></main>
<footer>Rowing clubs directory - every club, every regatta.</footer>
</body></html>
"""


def _club_page(rng: random.Random, town: str, river: str, total: int) -> tuple[str, str, str]:
    club = f"{town} Rowing Club"
    slug = club.lower().replace(" ", "-")
    year = rng.randint(1860, 1960)
    page = CLUB_PAGE.format(club=club, host=CLUB_HOST, year=year, river=river, town=town,
                            boats=rng.randint(8, 40), total=total, abroad=year + rng.randint(20, 50))
    return f"https://{CLUB_HOST}/clubs/{slug}", f"pages/vtb/clubs/{slug}.html", page


def _web_lookup(k: int, rng: random.Random) -> Sample:
    """Count the medals in the photo, look the club's total up on the web, subtract."""
    towns = rng.sample(CLUB_TOWNS, 4)
    shown = rng.randint(3, 8)
    rest = rng.randint(2, 15)
    while rest == shown:
        rest = rng.randint(2, 15)
    total = shown + rest
    pages: list[dict[str, str]] = []
    for i, town in enumerate(towns):
        n = total if i == 0 else rng.randint(5, 40)
        url, file, html = _club_page(rng, town, RIVERS[CLUB_TOWNS.index(town)], n)
        pages.append({"url": url, "file": file, "html": html})
    club = f"{towns[0]} Rowing Club"
    img = _canvas(560, 380, rng)
    cv2.rectangle(img, (10, 300), (550, 312), (70, 90, 120), -1)  # the shelf
    _shapes(img, (0, 0, 560, 296), {("yellow", "circle"): shown, ("blue", "square"): rng.randint(1, 4),
                                    ("green", "circle"): rng.randint(1, 3)}, rng)
    calls = [
        {"tool": "python_image_processing", "arguments": {"code": _count_code(
            "image_0.png", "0.0, 0.0, 1.0, 0.78", ["yellow"], "transformed_image_0.png", "shown")}},
        {"tool": "google_search", "arguments": {"query": club}, "capture": {"url": FIRST_URL}},
        {"tool": "browser_get_page_text", "arguments": {"url": "{INFO.url}"},
         "capture": {"total": r"won (\d+) gold medals"}},
        {"tool": "calculator", "arguments": {"expression": "{INFO.total} - {INFO.shown}"}},
    ]
    prompt = (f"This photo shows the gold medals (the yellow discs) that the {club} keeps on display. How many "
              "gold medals has the club won in total, according to its page on the web, and how many of them are "
              "not on display?")
    gold = f"The club has won {total} gold medals; {shown} are on display, so {rest} are not."
    rubrics = {
        "rubric_1": _rubric(f"States that {rest} gold medals are not on display.", 5, {"number": rest}, True,
                            ["Truthfulness", "Reasoning"]),
        "rubric_2": _rubric(f"States that the club has won {total} gold medals in total.", 4, {"number": total}, True,
                            ["Truthfulness"], final=False),
        "rubric_3": _rubric(f"Counts {shown} gold medals on display.", 3, {"number": shown}, False,
                            ["Visual Understanding"], final=False),
    }
    return {
        "eval_focus": "hybrid_tool_reasoning", "prompts": [prompt], "golds": [gold], "rubrics": [rubrics],
        "images": [[_png(img)]], "domain": "sports",
        "trajectories": [_trajectory([("python_image_processing", "Mask the yellow discs and count them."),
                                      ("web_search", f"Search for the {club}'s gold medals."),
                                      ("browser_get_page_text", "Read the club's page for its medal total."),
                                      ("calculator", "Subtract the medals on display from the total.")])],
        "reference": [{"reference_calls": calls, "answer_template": (
            "The club has won {INFO.total} gold medals in total; {INFO.shown} are on display, so {RESULT} are not.")}],
        "web": {"pages": pages, "places": []},
    }


def _weather_values(rng: random.Random) -> dict[str, Any]:
    tmax = round(rng.uniform(14.0, 31.0), 1)
    tmin = round(tmax - rng.uniform(4.0, 12.0), 1)
    rain = round(max(0.0, rng.uniform(-4.0, 9.0)), 1)
    return {
        "weather_code": rng.choice([0, 1, 2, 3, 61, 80] if rain else [0, 1, 2, 3]),
        "temperature_max": tmax, "temperature_min": tmin, "temperature_mean": round((tmax + tmin) / 2 + 0.4, 1),
        "apparent_temperature_max": round(tmax + rng.uniform(-2, 1.5), 1),
        "apparent_temperature_min": round(tmin + rng.uniform(-2.5, 0.5), 1),
        "apparent_temperature_mean": round((tmax + tmin) / 2 - 0.6, 1),
        "precipitation_sum": rain, "rain_sum": rain, "snowfall_sum": 0.0,
        "wind_speed_max": round(rng.uniform(3.0, 12.0), 1), "wind_gusts_max": round(rng.uniform(9.0, 20.0), 1),
        "wind_direction_dominant": rng.randrange(0, 360, 5), "wind_speed_mean": round(rng.uniform(1.5, 6.0), 1),
        "relative_humidity_mean": round(rng.uniform(55, 90)), "pressure_msl_mean": round(rng.uniform(1002, 1026), 1),
    }


def _weather_day(k: int, rng: random.Random) -> Sample:
    """Turn 1: count the boats in a harbour photo; turn 2: that day's temperatures from the weather records."""
    town, region = rng.choice(WEATHER_TOWNS)
    y, m, d = rng.randint(2015, 2023), rng.randint(4, 9), rng.randint(2, 27)
    day = f"{y}-{m:02d}-{d:02d}"
    days = {f"{y}-{m:02d}-{d + o:02d}": _weather_values(rng) for o in (-1, 0, 1)}
    values = days[day]
    tmax, tmin = values["temperature_max"], values["temperature_min"]
    diff = round(tmax - tmin, 1)
    place = {"name": town, "country": WEATHER_COUNTRY, "admin1": region,
             "latitude": round(rng.uniform(50.0, 58.0), 4), "longitude": round(rng.uniform(-6.0, 9.0), 4),
             "timezone": "Europe/Corvania", "days": days}
    boats = rng.randint(3, 9)
    img = _canvas(560, 380, rng)
    img[260:, :] = (150, 110, 60)  # water
    _shapes(img, (0, 0, 560, 256), {("red", "circle"): boats, ("yellow", "square"): rng.randint(1, 3)}, rng)
    png = _png(img)
    t1 = [{"tool": "python_image_processing", "arguments": {"code": _count_code(
        "turn_0_image_0.png", "0.0, 0.0, 1.0, 0.68", ["red"], "transformed_image_0.png", "boats")}}]
    t2 = [
        {"tool": "historical_weather", "arguments": {"location": town, "date": day},
         "capture": {"tmax": MAX_TEMP, "tmin": MIN_TEMP}},
        {"tool": "calculator", "arguments": {"expression": "{INFO.tmax} - {INFO.tmin}"}},
    ]
    return {
        "eval_focus": "follow_up_test", "domain": "generalist",
        "prompts": [f"This photo was taken at the harbour of {town} on {day}. The red discs are moored boats. How "
                    "many boats are moored?",
                    f"What were the highest and the lowest temperature in {town} on the day the photo was taken, "
                    "and how many degrees apart were they?"],
        "golds": [f"{boats} boats are moored.",
                  f"On {day} the high was {tmax} °C and the low {tmin} °C, {diff} °C apart."],
        "rubrics": [
            {"rubric_1": _rubric(f"States that {boats} boats are moored.", 5, {"number": boats}, True,
                                 ["Visual Understanding"])},
            {"rubric_1": _rubric(f"States that the temperatures were {diff} °C apart.", 5,
                                 {"number": diff, "tol": 0.05}, True, ["Truthfulness", "Reasoning"]),
             "rubric_2": _rubric(f"States the high of {tmax} °C.", 4, {"number": tmax, "tol": 0.05}, True,
                                 ["Truthfulness"], final=False),
             "rubric_3": _rubric(f"States the low of {tmin} °C.", 3, {"number": tmin, "tol": 0.05}, False,
                                 ["Truthfulness"], final=False)},
        ],
        "images": [[png], [png]],
        "trajectories": [_trajectory([("python_image_processing", "Mask the red boats and count them.")]),
                         _trajectory([("historical_weather", f"Look up the weather in {town} on {day}."),
                                      ("calculator", "Subtract the low from the high.")])],
        "reference": [
            {"reference_calls": t1, "answer_template": "{INFO.boats} boats are moored."},
            {"reference_calls": t2, "answer_template": (
                f"On {day} the high in {town} was {{INFO.tmax}} °C and the low {{INFO.tmin}} °C, so they were "
                "{RESULT} °C apart.")},
        ],
        "web": {"pages": [], "places": [place]},
    }


KIND_FUNCS: dict[str, Callable[[int, random.Random], Sample]] = {
    "region_switch": _region_switch, "hybrid_chart": _hybrid_chart, "progressive": _progressive,
    "temporal": _temporal, "web_lookup": _web_lookup, "weather": _weather_day,
}
KINDS: list[Callable[[int, random.Random], Sample]] = list(KIND_FUNCS.values())
#: kinds whose tasks need the offline web corpus
WEB_KINDS = ("web_lookup", "weather")


def _generate(n: int, seed: int, kinds: list[str] | None = None, progress: Callable[[int], None] | None = None
              ) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """(`n` HF rows, the web material their tasks need: corpus pages and weather places); `progress(done)`
    is called after each task is made."""
    names = kinds or list(KIND_FUNCS)
    unknown = [k for k in names if k not in KIND_FUNCS]
    if unknown:
        raise ValueError(f"unknown VisualToolBench demo kind(s) {unknown}; known: {', '.join(KIND_FUNCS)}")
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    web: dict[str, list[Any]] = {"pages": [], "places": []}
    for k in range(n):
        s = KIND_FUNCS[names[k % len(names)]](k, rng)
        turns = len(s["prompts"])
        by_turn = [[{"bytes": b, "path": None} for b in imgs] for imgs in s["images"]]
        flat = [img for imgs in by_turn for img in imgs]
        for key in ("pages", "places"):
            web[key] += s.get("web", {}).get(key, [])
        rows.append({
            "id": f"vtb-gen-{seed}-{k:03d}",
            "turncase": "single-turn" if turns == 1 else "multi-turn",
            "num_turns": turns,
            "prompt_category": s.get("domain") or DOMAINS[k % len(DOMAINS)],
            "eval_focus": s["eval_focus"],
            "turn_prompts": s["prompts"],
            "turn_golden_answers": s["golds"],
            "turn_tool_trajectories": s["trajectories"],
            "rubrics_by_turn": [json.dumps(r) for r in s["rubrics"]],
            "images": flat,
            "images_by_turn": by_turn,
            "num_images": len(flat),
            "toolsight_reference": s["reference"],
        })
        if progress is not None:
            progress(len(rows))
    return rows, web


def generate_rows(n: int, seed: int = 0, kinds: list[str] | None = None,
                  progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """`n` tasks as Hugging Face rows (images as `{"bytes", "path"}` structs, JSON-string fields)."""
    return _generate(n, seed, kinds, progress)[0]


def write_web(corpus: Path, pages: list[dict[str, str]], places: list[dict[str, Any]], name: str) -> None:
    """Add pages (to `manifest.json`) and weather places (to `weather.json`) of an offline corpus folder,
    keeping what is already there (the starter suite shares the browsing mini-web's corpus)."""
    from toolsight.web.corpus import FORMAT as CORPUS_FORMAT
    from toolsight.web.corpus import MANIFEST
    from toolsight.web.weather import FORMAT as WEATHER_FORMAT
    from toolsight.web.weather import WEATHER_FILE

    corpus.mkdir(parents=True, exist_ok=True)
    man_path = corpus / MANIFEST
    manifest: dict[str, Any] = (json.loads(man_path.read_text(encoding="utf-8")) if man_path.is_file()
                                else {"format": CORPUS_FORMAT, "name": name, "pages": [], "images": []})
    for p in pages:
        (corpus / p["file"]).parent.mkdir(parents=True, exist_ok=True)
        (corpus / p["file"]).write_text(p["html"], encoding="utf-8")
        manifest["pages"].append({"url": p["url"], "file": p["file"]})
    if pages or not man_path.is_file():
        man_path.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    if places:
        w_path = corpus / WEATHER_FILE
        weather: dict[str, Any] = (
            json.loads(w_path.read_text(encoding="utf-8")) if w_path.is_file()
            else {"format": WEATHER_FORMAT, "name": name, "places": [],
                  "note": "generated weather of fictional places for toolsight's offline demo, not observations"})
        weather["places"] += places
        w_path.write_text(json.dumps(weather, indent=1), encoding="utf-8")


def generate_vtb(n: int, seed: int, out: Path | str, kinds: list[str] | None = None,
                 corpus: Path | None = None, progress: Callable[[int], None] | None = None) -> Path:
    """Write `n` generated tasks in the official converted layout under `out` (see the module docstring);
    web tasks' pages and weather go to `corpus` (default `out/corpus`, the benchmark's default `--web`);
    `progress(done)` is called after each task is made."""
    rows, web = _generate(n, seed, kinds, progress)
    root = convert_rows(rows, Path(out))
    # always a corpus, if empty: a generated set is offline (a web tool finds nothing, never the live web)
    write_web(corpus or root / "corpus", web["pages"], web["places"], name=f"vtb-demo-{seed}")
    return root
