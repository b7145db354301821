"""Colour proportion (TIR-Bench "Proportion VQA" and the proportion questions of "Color VQA").

A grey procedural background with coloured shapes. Two question forms, chosen per task: the share of
the image a named object covers (worded like the official `refcoco` records, six options "A: 23%"), or
the share of one colour (worded like the ColorBench questions of the `color` task, four options
"(A) 9%"). Options are spaced 8 percentage points apart around the true value, as the paper describes.
Difficulty 1-3: more shapes that overlap each other, smaller targets, pixel noise.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from toolsight.benchmarks.tir_bench.generate.common import LETTERS, make_task, spaced_options
from toolsight.tasks.schema import Task
from toolsight.tasks.synth import GenContext

KIND = "color_proportion"
DIFFICULTIES = (1, 2, 3)
W, H = 400, 300
PALETTE = {
    "red": (220, 40, 40),
    "orange": (245, 140, 30),
    "yellow": (235, 215, 40),
    "green": (40, 170, 60),
    "blue": (40, 80, 220),
    "purple": (140, 60, 190),
}
SHAPES = ("circle", "rectangle", "triangle")
_LEVELS = {1: (3, (0.12, 0.3), 0.0), 2: (5, (0.08, 0.22), 4.0), 3: (7, (0.05, 0.16), 8.0)}

REFCOCO = "Which of the following values is the closest to the proportion of the image occupied by {obj}?\n{options}"
COLOR = "What is closest to the proportion of the color {color} in the image? Select from the following choices. {options}"


def _background(rng: np.random.Generator) -> np.ndarray:
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    g = 150 + 60 * (xx / W) * rng.uniform(-1, 1) + 50 * (yy / H) * rng.uniform(-1, 1)
    return np.repeat(g[..., None], 3, axis=2) + rng.uniform(-6, 6, size=3).astype(np.float32)


def generate(ctx: GenContext) -> Task:
    rng = ctx.rng
    count, (smin, smax), noise = _LEVELS[ctx.difficulty]
    refcoco = bool(rng.random() < 0.5)
    names = list(PALETTE)
    colors = [names[int(i)] for i in rng.choice(len(names), size=min(count, len(names)), replace=False)]
    while len(colors) < count:  # colour form may repeat colours; object form keeps the target unique
        colors.append(names[int(rng.integers(len(names)))] if not refcoco else colors[int(rng.integers(1, len(colors)))])
    for _ in range(100):
        label = np.full((H, W), -1, np.int32)
        lab_img = Image.new("I", (W, H), -1)
        d = ImageDraw.Draw(lab_img)
        kinds: list[str] = []
        for i in range(count):
            s = rng.uniform(smin, smax) * min(W, H) * 1.4
            cx, cy = rng.uniform(0.1, 0.9) * W, rng.uniform(0.1, 0.9) * H
            kind = SHAPES[int(rng.integers(len(SHAPES)))]
            kinds.append(kind)
            box = [cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2]
            if kind == "circle":
                d.ellipse(box, fill=i)
            elif kind == "rectangle":
                d.rectangle([box[0], box[1] + s / 5, box[2], box[3] - s / 5], fill=i)
            else:
                d.polygon([(cx, box[1]), (box[2], box[3]), (box[0], box[3])], fill=i)
        label = np.asarray(lab_img, np.int32)
        target = 0
        mask = label == target if refcoco else np.isin(label, [i for i, c in enumerate(colors) if c == colors[0]])
        share = 100.0 * float(mask.mean())
        if 3.0 <= share <= 60.0 and abs(share - round(share)) < 0.4:
            break
    arr = _background(rng)
    for i, c in enumerate(colors):
        arr[label == i] = PALETTE[c]
    if noise:
        arr = arr + rng.normal(0, noise, arr.shape).astype(np.float32)
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB")
    true_pct = round(share)
    n_opts = 6 if refcoco else 4
    values = spaced_options(rng, true_pct, 8, n_opts, 0, 100)
    options = {LETTERS[i]: f"{v}%" for i, v in enumerate(values)}
    answer = LETTERS[values.index(true_pct)]
    if refcoco:
        obj = f"{colors[0]} {kinds[0]}"
        prompt = REFCOCO.format(obj=obj, options="\n".join(f"{k}: {v}" for k, v in options.items()))
        key, name, question = "refcoco", "Proportion VQA", {"object": obj}
    else:
        prompt = COLOR.format(color=colors[0], options=" ".join(f"({k}) {v}" for k, v in options.items()))
        key, name, question = "color", "Color VQA", {"color": colors[0]}
    ref = ctx.save(img)
    return make_task(
        ctx,
        kind=KIND,
        task_key=key,
        task_name=name,
        prompt=prompt,
        images=[ref],
        answer=answer,
        answer_type="choice",
        options=options,
        params={"image": ref.path.rsplit("/", 1)[-1], "options": options, **question},
        meta={"true_percent": round(share, 2)},
    )
