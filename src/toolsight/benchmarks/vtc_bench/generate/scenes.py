"""Scene drawing and degradations for the VTC-style generated tasks (pure NumPy/OpenCV/PIL, seeded).

Images are BGR uint8 arrays. Each degradation is invertible (or harmless) with one or two of the
interface operations, which is what the tasks' reference solutions do.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

Img = np.ndarray[Any, np.dtype[np.uint8]]

BG = 235  # light background grey
SINGLE_PIECE_LETTERS = "CEFHKLMNSTUVWXZ"  # capitals drawn as one connected piece (no dots)
COLORS_BGR: dict[str, tuple[int, int, int]] = {
    "blue": (220, 40, 30),
    "red": (30, 30, 220),
    "green": (40, 190, 40),
    "yellow": (30, 220, 230),
}


def canvas(w: int, h: int, value: int = BG) -> Img:
    return np.full((h, w, 3), value, np.uint8)


def grid_positions(rng: np.random.Generator, n: int, w: int, h: int, cell: int) -> list[tuple[int, int]]:
    """n distinct cell centres (with jitter) on a grid of `cell`-pixel cells: objects never touch."""
    cols, rows = w // cell, h // cell
    if n > cols * rows:
        raise ValueError(f"{n} objects do not fit a {cols}x{rows} grid")
    picks = rng.choice(cols * rows, size=n, replace=False)
    out = []
    jit = max(1, cell // 8)
    for p in sorted(int(v) for v in picks):
        cx = (p % cols) * cell + cell // 2 + int(rng.integers(-jit, jit + 1))
        cy = (p // cols) * cell + cell // 2 + int(rng.integers(-jit, jit + 1))
        out.append((cx, cy))
    return out


def draw_text_word(word: str, w: int, h: int, size: int = 56, gap: int = 16) -> Img:
    """A dark word on a light sign, letters drawn one by one with a gap so none touch."""
    font = ImageFont.load_default(size=size)
    im = Image.new("RGB", (w, h), (BG, BG, BG))
    d = ImageDraw.Draw(im)
    widths = [int(d.textlength(ch, font=font)) + 4 for ch in word]
    total = sum(widths) + gap * (len(word) - 1)
    x = (w - total) // 2
    y = (h - size) // 2
    for ch, cw in zip(word, widths, strict=True):
        d.text((x, y), ch, fill=(25, 25, 25), font=font, stroke_width=2, stroke_fill=(25, 25, 25))
        x += cw + gap
    return _u8(cv2.cvtColor(np.asarray(im), cv2.COLOR_RGB2BGR))


def _u8(a: Any) -> Img:
    return np.ascontiguousarray(a, dtype=np.uint8)


# --------------------------------------------------------------------------- degradations


def add_noise(img: Img, rng: np.random.Generator, sigma: float = 22.0) -> Img:
    noise = rng.normal(0.0, sigma, img.shape)
    return np.clip(img.astype(np.float64) + noise, 0, 255).astype(np.uint8)


def low_light(img: Img, factor: float = 0.3) -> Img:
    return np.clip(img.astype(np.float64) * factor, 0, 255).astype(np.uint8)


def haze(img: Img, amount: float = 0.5) -> Img:
    out = img.astype(np.float64) * (1.0 - amount) + 255.0 * amount
    return np.clip(out, 0, 255).astype(np.uint8)


def blur(img: Img, ksize: int = 9) -> Img:
    return _u8(cv2.GaussianBlur(img, (ksize, ksize), 0))


def rotate_cw(img: Img, quarter_turns: int) -> Img:
    """Rotate clockwise by 90° steps (exact, no interpolation)."""
    out = img
    for _ in range(quarter_turns % 4):
        out = _u8(cv2.rotate(out, cv2.ROTATE_90_CLOCKWISE))
    return out


def flip(img: Img, direction: str) -> Img:
    return _u8(cv2.flip(img, 1 if direction == "horizontal" else 0))
