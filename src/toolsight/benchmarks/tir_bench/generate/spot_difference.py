"""Spot the difference (TIR-Bench "Spot the Difference"): two images on an n×m patch grid.

Both images are the same procedural scene divided by thin white lines into n rows and m columns; in the
right image a few patches hold a small added shape of a contrasting colour. The answer lists the altered
patch indices, ascending, row-major from 1, as the official records write them: "7, 11, 12". Prompt =
the official task description. One task in four asks the official data's other question instead, how
many places differ (an integer; the grid size is then not stated). Difficulty 1-3: a finer grid, more and smaller alterations, sensor noise.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from toolsight.benchmarks.tir_bench.generate.common import make_task
from toolsight.benchmarks.tir_bench.generate.scenes import random_color, textured_scene
from toolsight.tasks.schema import Task
from toolsight.tasks.synth import GenContext

KIND = "spot_difference"
DIFFICULTIES = (1, 2, 3)
W, H = 480, 360
_LEVELS = {1: ((3, 4), (2, 3), (14, 20), 0.0), 2: ((4, 5), (3, 5), (9, 14), 2.0), 3: ((5, 6), (4, 7), (6, 9), 4.0)}

PROMPT = (
    "**Task Description:**\n"
    "Given two images of identical dimensions, each divided by thin white lines into n rows and m columns, "
    "resulting in n\u00d7m small patches. The numbering rules are as follows:\n\n"
    "1. Patches are numbered from 1 to n\u00d7m.\n"
    "2. Numbering follows row-major order: the first row from left to right is 1, 2, \u2026, m; the first "
    "patch of the second row is m+1, and so on.\n\n"
    "The i-th patch in the left image corresponds to the i-th patch in the right image. Your tasks are:\n\n"
    "1. Identify all objects or regions that differ between the two images.\n"
    "2. Return a list of patch indices occupied by each differing object.\n\n"
    "   * If an object spans multiple adjacent patches, include all those patch indices.\n"
    "3. Finally, output a deduplicated, ascending-sorted list of indices representing every patch that "
    "contains a difference.\n\n---\n\n**Output Format:**\n\n```json\n{{\n  \"different_patches\": "
    "[i1, i2, i3, \u2026]\n}}\n```\n\n* `different_patches`: an array of integers containing all patch "
    "indices where the two images differ, deduplicated and sorted in ascending order.\n\n---\n\n"
    "**Example:**\nSuppose n=3 and m=4, giving 12 patches total. If patches 2, 5, 6, and 10 differ "
    "between the left and right images, the output should be:\n\n```json\n{{\n  \"different_patches\": "
    "[2, 5, 6, 10]\n}}\n```\n\n---\n\n**Problem:**\nOutput the list of patch indices where the two images "
    "differ.\nNote that in this image, n is {n} and m is {m}"
)


COUNT_PROMPT = (
    "This is a spot-the-difference game. How many places differ between the left and right images?"
    "Please provide your answer as an integer, such as 1, 2, 3."
)


def edges(total: int, parts: int) -> list[int]:
    return [round(i * total / parts) for i in range(parts + 1)]


def _far_color(rng: np.random.Generator, local: np.ndarray) -> tuple[int, int, int]:
    for _ in range(50):
        c = random_color(rng)
        if float(np.abs(np.array(c, np.float32) - local).sum()) > 150:
            return c
    return (255 - int(local[0]), 255 - int(local[1]), 255 - int(local[2]))


def generate(ctx: GenContext) -> Task:
    (n, m), (kmin, kmax), (rmin, rmax), noise = _LEVELS[ctx.difficulty]
    rng = ctx.rng
    base = textured_scene(rng, W, H, shapes=10)
    ys, xs = edges(H, n), edges(W, m)
    k = int(rng.integers(kmin, kmax + 1))
    chosen = sorted(int(p) for p in rng.choice(n * m, size=k, replace=False))
    right = base.copy()
    d = ImageDraw.Draw(right)
    arr = np.asarray(base, np.float32)
    for p in chosen:
        r, c = divmod(p, m)
        rad = int(rng.integers(rmin, rmax + 1))
        margin = rad + 5
        cx = int(rng.integers(xs[c] + margin, xs[c + 1] - margin))
        cy = int(rng.integers(ys[r] + margin, ys[r + 1] - margin))
        local = arr[cy - rad : cy + rad, cx - rad : cx + rad].reshape(-1, 3).mean(axis=0)
        col = _far_color(rng, local)
        if rng.random() < 0.5:
            d.ellipse([cx - rad, cy - rad, cx + rad, cy + rad], fill=col)
        else:
            d.rectangle([cx - rad, cy - rad, cx + rad, cy + rad], fill=col)
    out = []
    for img in (base, right):
        a = np.asarray(img, np.float32)
        if noise:
            a = a + rng.normal(0, noise, a.shape).astype(np.float32)
        a = np.clip(a, 0, 255).astype(np.uint8)
        for y in ys[1:-1]:
            a[y - 1 : y + 1, :] = 255
        for x in xs[1:-1]:
            a[:, x - 1 : x + 1] = 255
        out.append(Image.fromarray(a, "RGB"))
    left_ref = ctx.save(out[0], "_left")
    right_ref = ctx.save(out[1], "_right")
    left_ref.role, right_ref.role = "left", "right"
    count_form = bool(rng.random() < 0.25)
    if count_form:  # the official data's other form: how many places differ (an integer)
        prompt, answer, atype = COUNT_PROMPT, str(len(chosen)), "integer"
    else:
        prompt, answer, atype = PROMPT.format(n=n, m=m), ", ".join(str(p + 1) for p in chosen), "set"
    return make_task(
        ctx,
        kind=KIND,
        task_key="spot_difference",
        task_name="Spot the Difference",
        prompt=prompt,
        images=[left_ref, right_ref],
        answer=answer,
        answer_type=atype,
        params={
            "left": left_ref.path.rsplit("/", 1)[-1],
            "right": right_ref.path.rsplit("/", 1)[-1],
            "n": None if count_form else n,
            "m": None if count_form else m,
            "question": "count" if count_form else "patches",
        },
    )
