"""PhysToolBench-style generated scenes: numbered procedural "tools" in a toy workshop.

Each scene is a plain background with 3-6 objects of clear shapes — round disks (rollers), triangles
(wedges), squares (weights; bigger is heavier) and long bars (levers) — each carrying a numbered
marker, as PhysToolBench images carry numbered labels. Grey objects are broken. The question names a
job; the answer is the set of object numbers that do it, or "None" (the M3 trap: only broken tools).
The prompt is the job, the toy world's rules, and PhysToolBench's own CoT suffix, so the official
parser and scorer apply unchanged. Levels mirror the paper's: Easy (one fitting tool), Medium-M1
(an attribute decides: the heaviest weight), Medium-M2 (two tools combined), Medium-M3 (the fitting
tools are broken: "None").

The reference agent solves a scene from the pixels with the real tools: `detect_and_crop_objects`
(the classical fallback's shape hints tell disk, triangle, square and bar apart, and grey from
colour), then `ocr` on each fitting crop to read its number. `turn.meta['reference_plan']` holds the
shapes a job needs (the toy world's rules, never the answer).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from toolsight.benchmarks.phystoolbench.prompts import COT_SUFFIX, NO_COT_SUFFIX
from toolsight.tasks.dataset import validate_dataset, write_dataset
from toolsight.tasks.schema import Task, Turn
from toolsight.tasks.synth import GenContext, font

KIND = "phystool"
BENCHMARK = "phystoolbench-synth"
SIZE = 768
BACKGROUND = (236, 229, 214)
GREY = (128, 128, 128)
COLOURS = [(214, 48, 49), (9, 132, 227), (0, 160, 110), (230, 126, 34), (142, 68, 173), (190, 40, 130)]
SHAPES = ("disk", "triangle", "square", "bar")
LEVELS = ("Easy", "Medium-M1", "Medium-M2", "Medium-M3")
RULES = ("In this toy workshop, round disks are rollers, triangles are wedges, squares are weights (a bigger "
         "square is heavier) and long bars are levers. Grey objects are broken and cannot be used.")
JOBS: dict[str, tuple[str, tuple[str, ...]]] = {
    "roll": ("I need to roll a heavy crate across the floor. Which object should I use?", ("disk",)),
    "split": ("I need to split a log. Which object should I use?", ("triangle",)),
    "hold": ("I need something to hold down a stack of papers. Which object should I use?", ("square",)),
    "pry": ("I need to pry open a stuck lid. Which object should I use?", ("bar",)),
    "lift-roll": ("I need to lift the edge of a crate and then roll it away. Which objects should I use?",
                  ("bar", "disk")),
    "split-hold": ("I need to split a log while something heavy keeps my plans from blowing away. Which "
                   "objects should I use?", ("triangle", "square")),
}
HEAVIEST = "I need the heaviest weight to press a glued joint. Which object should I use?"


def _polygon(shape: str, cx: float, cy: float, size: float, angle: float) -> list[tuple[float, float]]:
    if shape == "triangle":
        r = size / math.sqrt(3)
        pts = [(r * math.cos(a), r * math.sin(a)) for a in (angle + k * 2 * math.pi / 3 for k in range(3))]
    elif shape == "square":
        h = size / 2
        pts = [(-h, -h), (h, -h), (h, h), (-h, h)]
        pts = [(x * math.cos(angle) - y * math.sin(angle), x * math.sin(angle) + y * math.cos(angle)) for x, y in pts]
    else:  # bar
        hw, hh = size / 2, 26.0
        pts = [(-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh)]
        pts = [(x * math.cos(angle) - y * math.sin(angle), x * math.sin(angle) + y * math.cos(angle)) for x, y in pts]
    return [(cx + x, cy + y) for x, y in pts]


def _radius(shape: str, size: float) -> float:
    """A bounding radius, for keeping objects apart."""
    return {"disk": size / 2, "triangle": size / math.sqrt(3), "square": size / math.sqrt(2), "bar": size / 2 + 8}[shape]


def _place(rng: np.random.Generator, objs: list[dict[str, Any]]) -> bool:
    margin = 24
    for o in objs:
        r = _radius(o["shape"], o["size"])
        for _ in range(300):
            cx = float(rng.uniform(r + margin, SIZE - r - margin))
            cy = float(rng.uniform(r + margin, SIZE - r - margin))
            if all(math.hypot(cx - p["cx"], cy - p["cy"]) > r + _radius(p["shape"], p["size"]) + 30
                   for p in objs if "cx" in p):
                o["cx"], o["cy"] = cx, cy
                break
        else:
            return False
    return True


def _draw(objs: list[dict[str, Any]]) -> Image.Image:
    img = Image.new("RGB", (SIZE, SIZE), BACKGROUND)
    d = ImageDraw.Draw(img)
    for o in objs:
        fill = GREY if o["broken"] else o["colour"]
        if o["shape"] == "disk":
            r = o["size"] / 2
            d.ellipse((o["cx"] - r, o["cy"] - r, o["cx"] + r, o["cy"] + r), fill=fill)
        else:
            d.polygon(_polygon(o["shape"], o["cx"], o["cy"], o["size"], o["angle"]), fill=fill)
    f = font(30)
    for o in objs:  # numbered markers, drawn last, inside each object
        x, y = o["cx"], o["cy"]
        d.ellipse((x - 21, y - 21, x + 21, y + 21), fill=(255, 255, 255), outline=(20, 20, 20), width=2)
        d.text((x, y), str(o["number"]), fill=(0, 0, 0), font=f, anchor="mm")
    return img


def _objects(rng: np.random.Generator, level: str) -> tuple[str, tuple[str, ...], list[dict[str, Any]], str]:
    """(question, needed shapes, objects, pick rule) for one scene."""
    pick = "all"
    if level == "Medium-M1":
        need: tuple[str, ...] = ("square",)
        question = HEAVIEST
        pick = "largest"
        specs = [("square", False, 96.0), ("square", False, 150.0)]
        if rng.random() < 0.5:
            specs.append(("square", False, 118.0))
    else:
        singles = [k for k, (_, n) in JOBS.items() if len(n) == 1]
        pairs = [k for k, (_, n) in JOBS.items() if len(n) == 2]
        job = str(rng.choice(pairs if level == "Medium-M2" else singles))
        question, need = JOBS[job]
        broken = level == "Medium-M3"
        specs = [(s, broken, 0.0) for s in need]
        if broken and rng.random() < 0.5:
            specs.append((need[0], True, 0.0))
    others = [s for s in SHAPES if s not in need]
    n_extra = int(rng.integers(2, 4))
    for _ in range(n_extra):
        specs.append((str(rng.choice(others)), bool(rng.random() < 0.3), 0.0))
    objs: list[dict[str, Any]] = []
    palette = [COLOURS[int(i)] for i in rng.permutation(len(COLOURS))]
    default_size = {"disk": 120.0, "triangle": 150.0, "square": 118.0, "bar": 230.0}
    for i, (shape, broken, size) in enumerate(specs):
        objs.append({"shape": shape, "broken": broken, "size": size or default_size[shape],
                     "angle": float(rng.uniform(0, math.pi)), "colour": palette[i % len(palette)]})
    order = rng.permutation(len(objs))
    objs = [objs[int(i)] for i in order]
    for n, o in enumerate(objs, start=1):
        o["number"] = n
    return question, need, objs, pick


def answer_of(objs: list[dict[str, Any]], need: tuple[str, ...], pick: str) -> str:
    """The gold answer: numbers of the working objects that do the job (sorted), or "None"."""
    chosen: list[int] = []
    for shape in need:
        fits = [o for o in objs if o["shape"] == shape and not o["broken"]]
        if not fits:
            return "None"
        if pick == "largest":
            fits = [max(fits, key=lambda o: o["size"])]
        chosen.extend(o["number"] for o in fits)
    return ", ".join(str(n) for n in sorted(chosen))


def make_task(ctx: GenContext, level: str) -> Task:
    for _ in range(50):
        question, need, objs, pick = _objects(ctx.rng, level)
        if _place(ctx.rng, objs):
            break
    else:  # pragma: no cover - the canvas always has room for six objects
        raise RuntimeError("could not place the objects")
    ref = ctx.save(_draw(objs))
    text = f"{question} {RULES}"
    gold = answer_of(objs, need, pick)
    turn = Turn(
        prompt=text + COT_SUFFIX, images=[ref], answer=gold, answer_type="set",
        meta={
            "question": text, "cot_prompt": text + COT_SUFFIX, "no_cot_prompt": text + NO_COT_SUFFIX,
            "reference_plan": {"kind": "detect_then_ocr", "need": list(need), "pick": pick},
            "objects": [{"number": o["number"], "shape": o["shape"], "broken": o["broken"]} for o in objs],
        },
    )
    return Task(id=ctx.task_id, benchmark=BENCHMARK, turns=[turn],
                tags={"difficulty": level, "scene": "Industrial", "category": "Toy workshop (generated)"})


def generate_phystool(n: int, seed: int, out_dir: Path | str, level: str | None = None, start: int = 0,
                      write: bool = True, progress: Callable[[int], None] | None = None) -> list[Task]:
    """`n` scenes cycling through the levels (or all of one `level`) into a dataset folder."""
    if level is not None and level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")
    root = Path(out_dir)
    tasks: list[Task] = []
    for i in range(start, start + n):
        lv = level or LEVELS[i % len(LEVELS)]
        rng = np.random.default_rng([seed, 16, i, LEVELS.index(lv)])
        ctx = GenContext(root=root, task_id=f"{KIND}-{lv}-s{seed}-{i:04d}", rng=rng, difficulty=LEVELS.index(lv))
        tasks.append(make_task(ctx, lv))
        if progress is not None:
            progress(len(tasks))
    if write:
        write_dataset(root, tasks)
        problems = validate_dataset(root)
        if problems:  # a generator bug, not a user error
            raise RuntimeError("generated dataset does not validate: " + "; ".join(map(str, problems[:5])))
    return tasks
