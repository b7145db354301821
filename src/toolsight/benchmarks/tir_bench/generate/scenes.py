"""Procedural source images (no downloads): smooth colour fields with shapes, landscapes, shape scenes."""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image, ImageDraw


def smooth_field(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """A smooth multi-scale colour field (float32 HxWx3 in 0..255), never flat, never periodic."""
    out = np.zeros((h, w, 3), np.float32)
    for scale, amp in ((4, 1.0), (8, 0.5), (16, 0.25)):
        small = rng.random((scale, scale, 3)).astype(np.float32)
        out += amp * cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    out -= out.min(axis=(0, 1), keepdims=True)
    out /= np.maximum(out.max(axis=(0, 1), keepdims=True), 1e-6)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ramp = (xx / max(w - 1, 1) * rng.uniform(-0.3, 0.3) + yy / max(h - 1, 1) * rng.uniform(-0.3, 0.3))[..., None]
    result: np.ndarray = np.clip((out * 0.75 + 0.12 + ramp) * 255.0, 0, 255)
    return result


def random_color(rng: np.random.Generator) -> tuple[int, int, int]:
    c = rng.integers(20, 236, size=3)
    return int(c[0]), int(c[1]), int(c[2])


def translucent(rng: np.random.Generator) -> tuple[int, int, int, int]:
    r, g, b = random_color(rng)
    return r, g, b, int(rng.integers(130, 200))


def textured_scene(rng: np.random.Generator, w: int, h: int, shapes: int = 12) -> Image.Image:
    """A smooth field with random ellipses, rectangles and lines: distinctive content everywhere."""
    base = Image.fromarray(smooth_field(rng, w, h).astype(np.uint8), "RGB").convert("RGBA")
    overlay = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    d = ImageDraw.Draw(overlay)
    for _ in range(shapes):
        x0, y0 = int(rng.integers(-w // 8, w)), int(rng.integers(-h // 8, h))
        sw, sh = int(rng.integers(w // 10, w // 3)), int(rng.integers(h // 10, h // 3))
        kind = int(rng.integers(0, 3))
        col = translucent(rng)
        if kind == 0:
            d.ellipse([x0, y0, x0 + sw, y0 + sh], fill=col)
        elif kind == 1:
            d.rectangle([x0, y0, x0 + sw, y0 + sh], fill=col)
        else:
            d.line([x0, y0, x0 + sw * 2, y0 + sh * 2], fill=col, width=int(rng.integers(3, 10)))
    # translucent shapes: sharp edges, but the smooth field still shows through (no flat, ambiguous areas)
    return Image.alpha_composite(base, overlay).convert("RGB")


SKY = (110, 160, 235)
GROUND = (80, 165, 60)


def landscape(rng: np.random.Generator, w: int, h: int) -> Image.Image:
    """An upright outdoor scene: blue sky over green ground along a straight horizon, sun, clouds, house."""
    arr = np.zeros((h, w, 3), np.float32)
    horizon = int(h * rng.uniform(0.45, 0.6))
    yy = np.arange(h, dtype=np.float32)[:, None]
    sky = np.array(SKY, np.float32)
    ground = np.array(GROUND, np.float32)
    arr[:horizon] = sky + (yy[:horizon, :, None] / h) * np.array([40, 40, 15], np.float32)
    arr[horizon:] = ground - ((yy[horizon:, :, None] - horizon) / h) * np.array([30, 50, 20], np.float32)
    noise = rng.normal(0, 3, (h, w, 1)).astype(np.float32)
    img = Image.fromarray(np.clip(arr + noise, 0, 255).astype(np.uint8), "RGB")
    d = ImageDraw.Draw(img)
    sx, sy, r = int(rng.uniform(0.1, 0.9) * w), int(horizon * rng.uniform(0.2, 0.5)), int(h * 0.06)
    d.ellipse([sx - r, sy - r, sx + r, sy + r], fill=(250, 220, 60))
    for _ in range(int(rng.integers(1, 4))):
        cx, cy = int(rng.uniform(0, w)), int(horizon * rng.uniform(0.1, 0.6))
        for dx in (-r, 0, r):
            d.ellipse([cx + dx - r, cy - r // 2, cx + dx + r, cy + r // 2], fill=(245, 245, 250))
    hx, hw = int(rng.uniform(0.15, 0.7) * w), int(w * 0.15)
    top = horizon + int((h - horizon) * 0.3)
    d.rectangle([hx, top, hx + hw, top + hw * 2 // 3], fill=(170, 60, 50))
    d.polygon([(hx - 5, top), (hx + hw + 5, top), (hx + hw // 2, top - hw // 2)], fill=(90, 50, 40))
    d.rectangle([hx + hw // 3, top + hw // 3, hx + 2 * hw // 3, top + hw * 2 // 3], fill=(60, 40, 30))
    return img
