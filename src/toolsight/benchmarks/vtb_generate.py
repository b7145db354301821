"""An offline VisualToolBench-style set: generated images, rubrics with checks, reference solutions.

`generate_vtb(n, seed, out)` writes the **official converted layout** (`data/{single,multi}_turn/dataset.json`
+ `images/sample_k/…`, every HF field, rubrics and trajectories as JSON strings) so the real loader reads
it. Four kinds, cycled: region-switch counting (two panels, a difference by calculator), hybrid chart
reading (bar heights measured in code, a share computed by the interpreter), progressive multi-turn
(count, then a fraction of all) and temporal multi-turn (a later photo, the change since the first).

Each turn carries, beside the official fields, what makes it solvable and checkable offline:
`toolsight_reference[t]` = `{"reference_calls": [...], "answer_template": "..."}` — the calls
`--model reference` makes (`python_image_processing`, `python_interpreter`, `calculator`) and the answer it
writes from their outputs — and each rubric's `toolsight_check` (see `toolsight.scoring.rubric_check`),
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

from toolsight.benchmarks.vtb_data import convert_rows

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


KINDS: list[Callable[[int, random.Random], Sample]] = [_region_switch, _hybrid_chart, _progressive, _temporal]


def generate_rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """`n` tasks as Hugging Face rows (images as `{"bytes", "path"}` structs, JSON-string fields)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for k in range(n):
        s = KINDS[k % len(KINDS)](k, rng)
        turns = len(s["prompts"])
        by_turn = [[{"bytes": b, "path": None} for b in imgs] for imgs in s["images"]]
        flat = [img for imgs in by_turn for img in imgs]
        rows.append({
            "id": f"vtb-gen-{seed}-{k:03d}",
            "turncase": "single-turn" if turns == 1 else "multi-turn",
            "num_turns": turns,
            "prompt_category": DOMAINS[k % len(DOMAINS)],
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
    return rows


def generate_vtb(n: int, seed: int, out: Path | str) -> Path:
    """Write `n` generated tasks in the official converted layout under `out` (see the module docstring)."""
    return convert_rows(generate_rows(n, seed), Path(out))

