"""Rotated OCR (TIR-Bench "Rotated OCR"): a line of text rotated by 90, 180 or 270 degrees.

Rotations follow the paper's mix (25 % 90°, 50 % 180°, 25 % 270°). The text is a random string of
capital letters drawn with Pillow's bundled scalable font, with letter spacing so glyphs never touch.
The alphabet leaves out letters that look like another letter (or themselves) when turned 180°
(H I N O S X Z M W), so the orientation is decidable from the pixels. Difficulty 1-3: longer strings,
smaller type, a noisier background.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from toolsight.benchmarks.tir_bench.generate.common import make_task
from toolsight.tasks.schema import Task
from toolsight.tasks.synth import GenContext, font

KIND = "ocr"
DIFFICULTIES = (1, 2, 3)
ALPHABET = "ABCDEFGJKLPQRTUVY"
PROMPT = "what is written in the image?"
_LEVELS = {1: (4, 5, 44, 0.0), 2: (5, 7, 34, 6.0), 3: (7, 9, 26, 12.0)}  # len lo/hi, size, noise std


def render_text(text: str, size: int) -> Image.Image:
    """Draw `text` one glyph at a time with a gap of size/4 px between glyph boxes (grey-level image)."""
    f = font(size)
    gap = max(3, size // 4)
    boxes = [f.getbbox(ch) for ch in text]
    width = sum(int(b[2] - b[0]) for b in boxes) + gap * (len(text) + 3)
    height = int(size * 1.8)
    img = Image.new("L", (width, height), 255)
    d = ImageDraw.Draw(img)
    x = 2 * gap
    for ch, bb in zip(text, boxes, strict=True):
        d.text((x - bb[0], size // 3), ch, fill=0, font=f)
        x += int(bb[2] - bb[0]) + gap
    return img


def generate(ctx: GenContext) -> Task:
    lo, hi, size, noise = _LEVELS[ctx.difficulty]
    n = int(ctx.rng.integers(lo, hi + 1))
    text = "".join(ALPHABET[int(i)] for i in ctx.rng.integers(0, len(ALPHABET), size=n))
    angle = int(ctx.rng.choice([90, 180, 180, 270]))
    img = render_text(text, size).rotate(angle, expand=True, fillcolor=255)
    arr = np.asarray(img, np.float32)
    if noise:
        arr = arr + ctx.rng.normal(0, noise, arr.shape).astype(np.float32)
    tint = np.array([int(v) for v in ctx.rng.integers(215, 256, size=3)], np.float32) / 255.0
    rgb = np.clip(arr[..., None] * tint, 0, 255).astype(np.uint8)
    ref = ctx.save(Image.fromarray(rgb, "RGB"))
    return make_task(
        ctx,
        kind=KIND,
        task_key="ocr",
        task_name="Rotated OCR",
        prompt=PROMPT,
        images=[ref],
        answer=text,
        answer_type="text",
        params={"image": ref.path.rsplit("/", 1)[-1], "alphabet": ALPHABET},
        meta={"rotation": angle},
    )
