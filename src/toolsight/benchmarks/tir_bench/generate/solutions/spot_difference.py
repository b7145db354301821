# mypy: ignore-errors
"""Reference solution: subtract the two images, threshold the (denoised) difference, and report every patch of the n×m grid that holds a solid blob of changed pixels (or, asked how many, count the blobs).

Importable: `solve(PARAMS)` prints its working and an `ANSWER: …` line. In a task the file runs
as a script: `synth.common.solution_source` puts `PARAMS`/`FILES` and the input locator before it
and a call `solve(PARAMS)` after it (the code a model would write, shown whole)."""

import cv2
import numpy as np
from PIL import Image


def solve(PARAMS):
    a = np.asarray(Image.open(PARAMS["left"]).convert("RGB")).astype(np.float32)
    b = np.asarray(Image.open(PARAMS["right"]).convert("RGB")).astype(np.float32)
    n, m = PARAMS["n"], PARAMS["m"]
    diff = cv2.GaussianBlur(np.abs(a - b).sum(axis=2), (5, 5), 0)
    changed = cv2.morphologyEx((diff > 45).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    if PARAMS["question"] == "count":
        # each changed place is one blob; the thin white grid lines never split one (changes avoid them)
        count, _, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
        blobs = [i for i in range(1, count) if stats[i, cv2.CC_STAT_AREA] >= 12]
        print("ANSWER: " + str(len(blobs)))
    else:
        h, w = changed.shape
        ys = [round(i * h / n) for i in range(n + 1)]
        xs = [round(i * w / m) for i in range(m + 1)]
        found = []
        for r in range(n):
            for c in range(m):
                if int(changed[ys[r]:ys[r + 1], xs[c]:xs[c + 1]].sum()) >= 12:
                    found.append(r * m + c + 1)
        print("patches with changed pixels:", found)
        print("ANSWER: " + ", ".join(str(p) for p in found))
