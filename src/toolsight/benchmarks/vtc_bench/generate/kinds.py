"""The VTC-style task kinds: a scene, a degradation, the question, and the reference interface calls.

Every kind is a counting question in disguise, so the answer is read from one INFO field
(`total_components` of `opencv_connected_components_with_stats`): objects, coloured squares, bars
taller than a height (counted in a thin strip cropped just above that height), letters of a word.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from toolsight.benchmarks.vtc_bench.generate import scenes as S
from toolsight.benchmarks.vtc_bench.generate.scenes import Img

# interface tool -> the reference vocabulary's tool group (VTC-Bench `model_tools_gt`)
TOOL_GROUPS: dict[str, str] = {
    "opencv_blur": "Blur",
    "opencv_denoise": "Denoise",
    "opencv_threshold": "Binarize",
    "opencv_morphology": "Morphology",
    "opencv_connected_components_with_stats": "Connected Components",
    "opencv_convertscaleabs": "Adjust Brightness",
    "opencv_histogram": "Histogram Eq",
    "opencv_inrange_color": "Color Filter",
    "opencv_colorspace_gray": "Convert Color",
    "opencv_colorspace_hsv": "Convert Color",
    "opencv_flip": "Flip",
    "opencv_rotate": "Rotate",
    "opencv_crop": "Crop",
}

Call = dict[str, Any]


def call(tool: str, image: str = "$prev", **param: Any) -> Call:
    return {"tool": tool, "arguments": {"image": image, "param": param}}


@dataclass
class Drawn:
    """One generated item before it becomes a Task."""

    image: Img
    question: str
    count: int
    calls: list[Call]
    category: str  # VTC-Bench category it imitates
    degradation: str
    distractors: list[int] = field(default_factory=list)


def _count_options(rng: np.random.Generator, truth: int, low: int = 1) -> list[int]:
    """Four distinct counts including the truth, near it, none below `low`."""
    cands = [truth + d for d in (-3, -2, -1, 1, 2, 3) if truth + d >= low]
    picks = rng.choice(len(cands), size=3, replace=False)
    return [truth, *(cands[int(i)] for i in picks)]


def _restore(img: Img, rng: np.random.Generator, options: tuple[str, ...]) -> tuple[Img, str, list[Call]]:
    """Apply one photometric degradation; return it with the calls that undo or tolerate it."""
    kind = options[int(rng.integers(len(options)))]
    if kind == "noise":
        return S.add_noise(img, rng), kind, [call("opencv_blur", "$input", method="median", ksize=5)]
    if kind == "blur":
        return S.blur(img), kind, []
    if kind == "low_light":
        return S.low_light(img), kind, [call("opencv_convertscaleabs", "$input", alpha=3.0, beta=0)]
    if kind == "haze":
        return S.haze(img), kind, [call("opencv_convertscaleabs", "$input", alpha=2.0, beta=-255)]
    raise ValueError(f"unknown degradation {kind!r}")


def _first_input(calls: list[Call]) -> list[Call]:
    """The first call reads the task image; later calls read the previous output."""
    out = [dict(c, arguments=dict(c["arguments"])) for c in calls]
    for i, c in enumerate(out):
        c["arguments"]["image"] = "$input" if i == 0 else "$prev"
    return out


def count_objects(rng: np.random.Generator) -> Drawn:
    w, h, cell = 480, 360, 80
    n = int(rng.integers(4, 13))
    img = S.canvas(w, h)
    shapes = []
    for cx, cy in S.grid_positions(rng, n, w, h, cell):
        r = int(rng.integers(16, 27))
        shade = tuple(int(v) for v in rng.integers(20, 90, size=3))
        if rng.random() < 0.5:
            cv2.circle(img, (cx, cy), r, shade, -1)
            shapes.append("disc")
        else:
            cv2.rectangle(img, (cx - r, cy - r), (cx + r, cy + r), shade, -1)
            shapes.append("square")
    img, deg, pre = _restore(img, rng, ("noise", "blur", "low_light", "haze"))
    calls = [
        *pre,
        call("opencv_threshold", mode="otsu", invert=True),
        call("opencv_morphology", op="open", kernel_size=5, iterations=1),
        call("opencv_connected_components_with_stats", threshold_mode="none", connectivity=8, max_components=5),
    ]
    q = "How many dark objects (discs and squares) are there in the image?"
    return Drawn(_arr(img), q, n, _first_input(calls), "counting", deg)


def color_regions(rng: np.random.Generator) -> Drawn:
    w, h, cell = 480, 360, 80
    n_target = int(rng.integers(3, 9))
    n_other = int(rng.integers(3, 8))
    img = S.canvas(w, h)
    pos = S.grid_positions(rng, n_target + n_other, w, h, cell)
    order = rng.permutation(len(pos))
    others = ("red", "green", "yellow")
    for k, idx in enumerate(order):
        cx, cy = pos[int(idx)]
        r = int(rng.integers(18, 28))
        name = "blue" if k < n_target else others[int(rng.integers(len(others)))]
        cv2.rectangle(img, (cx - r, cy - r), (cx + r, cy + r), S.COLORS_BGR[name], -1)
    img, deg, pre = _restore(img, rng, ("noise", "low_light", "haze"))
    calls = [
        *pre,
        call("opencv_inrange_color", colorspace="hsv", lower=[100, 90, 60], upper=[140, 255, 255],
             output_format="mask"),
        call("opencv_morphology", op="open", kernel_size=5, iterations=1),
        call("opencv_connected_components_with_stats", threshold_mode="otsu", connectivity=8, max_components=5),
    ]
    q = "How many blue squares are there in the image?"
    return Drawn(_arr(img), q, n_target, _first_input(calls), "color", deg)


def bars(rng: np.random.Generator) -> Drawn:
    n = int(rng.integers(4, 8))
    bw, gap, margin, base_y, h, top = 36, 28, 40, 340, 380, 40
    w = margin * 2 + n * bw + (n - 1) * gap
    thr = int(rng.integers(12, 21)) * 10  # the height asked about: 120..200 px
    heights: list[int] = []
    while len(heights) < n:
        v = int(rng.integers(40, base_y - top))
        if abs(v - thr) >= 14:
            heights.append(v)
    if not any(v > thr for v in heights):
        heights[int(rng.integers(n))] = min(base_y - top, thr + 60)
    img = S.canvas(w, h, 250)
    cv2.line(img, (margin // 2, base_y), (w - margin // 2, base_y), (0, 0, 0), 2)
    for i, v in enumerate(heights):
        x = margin + i * (bw + gap)
        color = tuple(int(c) for c in rng.integers(30, 120, size=3))
        cv2.rectangle(img, (x, base_y - v), (x + bw - 1, base_y - 1), color, -1)
    count = sum(1 for v in heights if v > thr)
    geo = ("rotate90", "rotate180", "rotate270", "flip_vertical")[int(rng.integers(4))]
    if geo == "flip_vertical":
        img = S.flip(img, "vertical")
        undo = call("opencv_flip", direction="vertical")
    else:
        turns = {"rotate90": 1, "rotate180": 2, "rotate270": 3}[geo]
        img = S.rotate_cw(img, turns)
        undo = call("opencv_rotate", angle=-90 * turns)
    # a 6-px strip just above the asked height: only taller bars cross it (4 px off the sides: the
    # reference rotate leaves a 1-px black border for some angles)
    strip = call("opencv_crop", x=4, y=base_y - thr - 9, width=w - 8, height=6)
    calls = [
        undo,
        strip,
        call("opencv_threshold", mode="binary", threshold_value=180, invert=True),
        call("opencv_connected_components_with_stats", threshold_mode="none", connectivity=8, max_components=5),
    ]
    word = {"rotate90": "rotated", "rotate180": "rotated", "rotate270": "rotated", "flip_vertical": "upside down"}[geo]
    q = (
        f"This bar chart is {word}. In the upright chart the bars stand on a baseline at y = {base_y} px. "
        f"How many bars are taller than {thr} pixels?"
    )
    return Drawn(_arr(img), q, count, _first_input(calls), "measure", geo)


def text_letters(rng: np.random.Generator) -> Drawn:
    k = int(rng.integers(3, 9))
    letters = S.SINGLE_PIECE_LETTERS
    word = "".join(letters[int(i)] for i in rng.integers(len(letters), size=k))
    img = S.draw_text_word(word, 80 + 56 * k, 150)
    img = S.flip(img, "horizontal")
    img, deg, pre = _restore(img, rng, ("noise", "blur", "low_light"))
    calls = [
        call("opencv_flip", direction="horizontal"),
        *pre,
        call("opencv_threshold", mode="otsu", invert=True),
        call("opencv_connected_components_with_stats", threshold_mode="none", connectivity=8, max_components=5),
    ]
    q = "The sign in this image is mirrored. How many letters does the word on the sign have?"
    return Drawn(_arr(img), q, k, _first_input(calls), "ocr", f"flip+{deg}")


def _arr(img: Img) -> Img:
    return np.ascontiguousarray(img, dtype=np.uint8)


KINDS: dict[str, Callable[[np.random.Generator], Drawn]] = {
    "count_objects": count_objects,
    "color_regions": color_regions,
    "bars": bars,
    "text_letters": text_letters,
}


def options_for(rng: np.random.Generator, truth: int) -> tuple[dict[str, str], str]:
    """Options A-D (shuffled counts) and the letter of the truth."""
    vals = _count_options(rng, truth, low=0 if truth <= 1 else 1)
    order = [vals[int(i)] for i in rng.permutation(4)]
    opts = {letter: str(v) for letter, v in zip("ABCD", order, strict=True)}
    return opts, "ABCD"[order.index(truth)]
