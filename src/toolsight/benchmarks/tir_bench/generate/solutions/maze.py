# mypy: ignore-errors
"""Reference solution: maze by reading the cell grid from the pixels, then walking each option.

Importable: `solve(PARAMS)` prints its working and an `ANSWER: …` line. In a task the file runs
as a script: `synth.common.solution_source` puts `PARAMS`/`FILES` and the input locator before it
and a call `solve(PARAMS)` after it (the code a model would write, shown whole)."""

import numpy as np
from PIL import Image


def solve(PARAMS):
    img = np.asarray(Image.open(PARAMS["image"]).convert("RGB")).astype(int)
    options = PARAMS["options"]
    h, w, _ = img.shape
    dark = img.sum(axis=2) < 150

    def runs(line):
        out, cur, length = [], line[0], 0
        for v in line:
            if v == cur:
                length += 1
            else:
                out.append(length)
                cur, length = v, 1
        return out  # the last run may be cut by the border, so it is left out

    # the cell size is the shortest wall/open run along any row or column (single-cell walls exist)
    lengths = [x for y in range(0, h, 3) for x in runs(dark[y])] + [x for x in range(0, w, 3) for x in runs(dark[:, x])]
    cell = min(v for v in lengths if v > 2)
    k = round(w / cell)
    cell_f = w / k
    centres = [int((i + 0.5) * cell_f) for i in range(k)]
    grid = np.array([[not dark[y, x] for x in centres] for y in centres])
    red = [(r, c) for r, y in enumerate(centres) for c, x in enumerate(centres)
           if img[y, x, 0] > 150 and img[y, x, 1] < 100]
    green = [(r, c) for r, y in enumerate(centres) for c, x in enumerate(centres)
             if img[y, x, 1] > 150 and img[y, x, 0] < 100]
    start, goal = red[0], green[0]
    MOVES = {"R": (0, 1), "L": (0, -1), "U": (-1, 0), "D": (1, 0)}

    print(f"maze {k}x{k}, cell {cell}px, start {start}, goal {goal}")

    def walks_out(moves):
        r, c = start
        for mv in moves:
            dr, dc = MOVES.get(mv, (99, 99))
            r, c = r + dr, c + dc
            if not (0 <= r < k and 0 <= c < k and grid[r, c]):
                return False
        return (r, c) == goal

    good = [letter for letter, moves in options.items() if set(moves) <= set("RLUD") and walks_out(moves)]
    fallback = [letter for letter, text in options.items() if text.strip().lower() == "no answer"]
    print("ANSWER: " + (good[0] if good else fallback[0]))
