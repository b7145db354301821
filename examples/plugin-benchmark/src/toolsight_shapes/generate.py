"""The `shape-count` generator: fresh shapes sets in the benchmark's own format, with a reference program.

Each image is a light canvas with coloured circles, squares and triangles (rotated, apart from each
other); the question asks how many of one colour and kind there are. Levels: easy (4-6 large
shapes), medium (7-10 smaller ones), hard (10-14 small ones on a noisy canvas). Every item carries
its solution: one `count_shapes` call with the colour and shape the question names — never the
answer — so the reference agent gets the count from the pixels, through the tool. Task `i` of a seed
is the same whatever `n` is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw
from toolsight.benchmarks.offline import GenerateRequest

from toolsight_shapes.data import LEVELS, Call, Item, write_set
from toolsight_shapes.tools import COLORS, SHAPES

KIND = "shape-count"
WIDTH, HEIGHT = 360, 270
BACKGROUND = (238, 236, 230)
RGB = {"red": (220, 30, 30), "yellow": (235, 200, 20), "green": (30, 160, 60), "blue": (30, 70, 220)}
#: per level: (shapes in the image, their size range in pixels, noise sigma, most targets)
LEVEL_PARAMS = {"easy": ((4, 6), (40, 56), 0.0, 3), "medium": ((7, 10), (28, 44), 0.0, 4),
                "hard": ((10, 14), (22, 36), 6.0, 5)}


def _radius(shape: str, size: float) -> float:
    return {"circle": size / 2, "square": size / math.sqrt(2), "triangle": size / math.sqrt(3)}[shape]


def _outline(shape: str, cx: float, cy: float, size: float, angle: float) -> list[tuple[float, float]]:
    corners = 4 if shape == "square" else 3
    r = _radius(shape, size)
    return [(cx + r * math.cos(angle + 2 * math.pi * k / corners), cy + r * math.sin(angle + 2 * math.pi * k / corners))
            for k in range(corners)]


def _place(rng: np.random.Generator, specs: Sequence[tuple[str, str, float]]) -> list[tuple[float, float]] | None:
    """Centres for the shapes, apart from each other and from the edges (None: no room this time)."""
    centres: list[tuple[float, float, float]] = []
    for _, shape, size in specs:
        r = _radius(shape, size)
        for _ in range(200):
            cx, cy = float(rng.uniform(r + 4, WIDTH - r - 4)), float(rng.uniform(r + 4, HEIGHT - r - 4))
            if all(math.hypot(cx - x, cy - y) > r + rr + 8 for x, y, rr in centres):
                centres.append((cx, cy, r))
                break
        else:
            return None
    return [(x, y) for x, y, _ in centres]


def make_item(seed: int, i: int, level: str, root: Path) -> Item:
    """Item `i` of `seed` at `level`, its image written under `root/images/`."""
    rng = np.random.default_rng([seed, i, LEVELS.index(level)])
    (lo, hi), (smin, smax), noise, most = LEVEL_PARAMS[level]
    color, shape = COLORS[int(rng.integers(len(COLORS)))], SHAPES[int(rng.integers(len(SHAPES)))]
    answer = int(rng.integers(1, most + 1))
    others = [(c, s) for c in COLORS for s in SHAPES if (c, s) != (color, shape)]
    total = max(int(rng.integers(lo, hi + 1)), answer + 1)
    picks = [(color, shape)] * answer + [others[int(k)] for k in rng.integers(0, len(others), total - answer)]
    for _ in range(50):
        specs = [(c, s, float(rng.uniform(smin, smax))) for c, s in picks]
        centres = _place(rng, specs)
        if centres is not None:
            break
    else:  # pragma: no cover - the canvas has room for 14 small shapes
        raise RuntimeError(f"no room for {len(picks)} shapes")
    img = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(img)
    for (c, s, size), (cx, cy) in zip(specs, centres, strict=True):
        if s == "circle":
            draw.ellipse((cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2), fill=RGB[c])
        else:
            draw.polygon(_outline(s, cx, cy, size, float(rng.uniform(0, 2 * math.pi))), fill=RGB[c])
    if noise:
        arr = np.asarray(img, dtype=np.float64) + rng.normal(0.0, noise, (HEIGHT, WIDTH, 3))
        img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    item_id = f"{KIND}-{level}-s{seed}-{i:04d}"
    image = f"images/{item_id}.png"
    img.save(root / image)
    wrong = [int(x) for x in rng.permutation([k for k in range(max(0, answer - 2), answer + 4) if k != answer])[:3]]
    solution = [Call(tool="count_shapes", arguments={"image": "$input", "color": color, "shape": shape})]
    return Item.model_validate({"id": item_id, "image": image, "color": color, "shape": shape, "answer": answer,
                                "choices": sorted([answer, *wrong]), "level": level, "solution": solution})


def write_generated(req: GenerateRequest) -> None:
    """`toolsight generate shape-count`: `req.n` items (levels cycled, or `--difficulty` 1-3) into `req.out`."""
    (req.out / "images").mkdir()
    items = []
    for i in range(req.n):
        level = LEVELS[req.difficulty - 1] if req.difficulty is not None else LEVELS[i % len(LEVELS)]
        items.append(make_item(req.seed, i, level, req.out))
        if req.progress is not None:
            req.progress(len(items))
    write_set(req.out, items)
