# mypy: ignore-errors
"""Reference solution: try the four orientations; in each, cut the line into glyphs by column projection and match every glyph against the alphabet rendered with Pillow's bundled font. The orientation whose glyphs match best wins, and its best-matching letters are the answer.

Importable: `solve(PARAMS)` prints its working and an `ANSWER: …` line. In a task the file runs
as a script: `synth.common.solution_source` puts `PARAMS`/`FILES` and the input locator before it
and a call `solve(PARAMS)` after it (the code a model would write, shown whole)."""

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont


def solve(PARAMS):
    alphabet = PARAMS["alphabet"]
    gray = np.asarray(Image.open(PARAMS["image"]).convert("L")).astype(np.float32)
    gray = cv2.GaussianBlur(gray, (3, 3), 0)
    ink = gray < 0.5 * (float(np.median(gray)) + float(gray.min()))
    ink = cv2.morphologyEx(ink.astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8)) > 0
    S = 32

    def norm_glyph(mask):
        ys, xs = np.nonzero(mask)
        crop = mask[ys.min():ys.max() + 1, xs.min():xs.max() + 1].astype(np.float32)
        return cv2.resize(crop, (S, S), interpolation=cv2.INTER_AREA), crop.shape[1] / crop.shape[0]

    templates = {}
    f = ImageFont.load_default(size=64)
    for ch in alphabet:
        im = Image.new("L", (120, 120), 255)
        ImageDraw.Draw(im).text((20, 10), ch, fill=0, font=f)
        templates[ch] = norm_glyph(np.asarray(im) < 128)

    def glyphs(mask):
        ys, xs = np.nonzero(mask)
        if len(xs) == 0:
            return []
        mask = mask[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
        cols = mask.any(axis=0)
        out, start = [], None
        for x, on in enumerate([*list(cols), False]):
            if on and start is None:
                start = x
            elif not on and start is not None:
                out.append(mask[:, start:x])
                start = None
        return [g for g in out if g.sum() > 8]

    def read(mask):
        total, text = 0.0, ""
        gs = glyphs(mask)
        if not gs or len(gs) > 40:
            return -1e9, ""
        for g in gs:
            cell, aspect = norm_glyph(g)
            best = None
            for ch, (tcell, taspect) in templates.items():
                score = 1.0 - float(np.abs(cell - tcell).mean()) - 0.3 * abs(np.log(aspect / taspect))
                if best is None or score > best[0]:
                    best = (score, ch)
            total += best[0]
            text += best[1]
        return total / len(gs), text

    results = []
    for k in range(4):  # np.rot90 k times counter-clockwise
        score, text = read(np.rot90(ink, k))
        print(f"rotate {90 * k} ccw: score {score:.3f} text {text!r}")
        results.append((score, text))
    print("ANSWER: " + max(results)[1])
