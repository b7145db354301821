# mypy: ignore-errors
"""Reference solution: classify every pixel by hue (saturated pixels only; the background is grey), measure the share of the asked colour, and pick the nearest option.

Importable: `solve(PARAMS)` prints its working and an `ANSWER: …` line. In a task the file runs
as a script: `synth.common.solution_source` puts `PARAMS`/`FILES` and the input locator before it
and a call `solve(PARAMS)` after it (the code a model would write, shown whole)."""

import re

import cv2
import numpy as np
from PIL import Image


def solve(PARAMS):
    rgb = np.asarray(Image.open(PARAMS["image"]).convert("RGB"))
    options = PARAMS["options"]
    hsv = cv2.cvtColor(cv2.medianBlur(rgb, 3), cv2.COLOR_RGB2HSV_FULL).astype(np.float32)
    hue = hsv[..., 0] * 360.0 / 256.0
    sat, val = hsv[..., 1] / 255.0, hsv[..., 2] / 255.0
    HUES = {"red": 0, "orange": 30, "yellow": 55, "green": 130, "blue": 228, "purple": 280}
    name = PARAMS.get("color") or PARAMS["object"].split()[0]
    dist = {k: np.minimum(np.abs(hue - h), 360 - np.abs(hue - h)) for k, h in HUES.items()}
    nearest = np.argmin(np.stack(list(dist.values())), axis=0)
    mask = (sat > 0.45) & (val > 0.25) & (nearest == list(HUES).index(name))
    # the asked object has a colour no other shape has, so its visible area is that colour's area
    share = 100.0 * float(mask.mean())
    print(f"{name}: {share:.2f}% of the image")
    vals = {k: float(re.findall(r"\d+(?:\.\d+)?", v)[0]) for k, v in options.items()}
    print("ANSWER: " + min(vals, key=lambda k: abs(vals[k] - share)))
