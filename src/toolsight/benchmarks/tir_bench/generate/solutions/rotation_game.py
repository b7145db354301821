# mypy: ignore-errors
"""Reference solution: find the horizon (sky/ground boundary), fit its line, and turn its normal into the clockwise angle that makes the sky point up; pick the nearest option.

Importable: `solve(PARAMS)` prints its working and an `ANSWER: …` line. In a task the file runs
as a script: `synth.common.solution_source` puts `PARAMS`/`FILES` and the input locator before it
and a call `solve(PARAMS)` after it (the code a model would write, shown whole)."""

import re

import cv2
import numpy as np
from PIL import Image


def solve(PARAMS):
    img = np.asarray(Image.open(PARAMS["image"]).convert("RGB")).astype(int)
    options = PARAMS["options"]
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    sky = (b > r + 40) & (b > g + 10)
    ground = (g > r + 30) & (g > b + 30)
    k = np.ones((5, 5), np.uint8)
    near_sky = cv2.dilate(sky.astype(np.uint8), k) > 0
    near_ground = cv2.dilate(ground.astype(np.uint8), k) > 0
    ys, xs = np.nonzero(near_sky & near_ground)
    pts = np.stack([xs, ys], axis=1).astype(float)
    centre = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - centre, full_matrices=False)
    normal = vt[1]  # perpendicular to the horizon
    sky_c = np.stack(np.nonzero(sky)[::-1], axis=1).mean(axis=0)
    if np.dot(sky_c - centre, normal) < 0:
        normal = -normal
    ux, uy = normal  # "up" of the scene in image coordinates (y grows downwards)
    ccw = np.degrees(np.arctan2(-ux, -uy)) % 360  # how far the scene was turned counter-clockwise
    print(f"horizon points: {len(pts)}, scene turned {ccw:.1f} degrees counter-clockwise")

    def dist(a, b):
        d = abs(a - b) % 360
        return min(d, 360 - d)

    vals = {k: float(re.findall(r"-?\d+(?:\.\d+)?", v)[0]) for k, v in options.items()}
    print("ANSWER: " + min(vals, key=lambda k: dist(vals[k], ccw)))
