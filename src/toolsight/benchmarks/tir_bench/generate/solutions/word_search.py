# mypy: ignore-errors
"""Reference solution: cut the character grid into rows and columns by ink projections, describe each cell's glyph, and report the cells whose glyph differs from the majority glyph.

Importable: `solve(PARAMS)` prints its working and an `ANSWER: …` line. In a task the file runs
as a script: `synth.common.solution_source` puts `PARAMS`/`FILES` and the input locator before it
and a call `solve(PARAMS)` after it (the code a model would write, shown whole)."""

import numpy as np
from PIL import Image


def solve(PARAMS):
    ink = np.asarray(Image.open(PARAMS["image"]).convert("L")) < 128

    def bands(profile):
        out, start = [], None
        for i, on in enumerate([*list(profile), False]):
            if on and start is None:
                start = i
            elif not on and start is not None:
                out.append((start, i))
                start = None
        return out

    rows = bands(ink.any(axis=1))
    cols = bands(ink.any(axis=0))
    print(f"grid: {len(rows)} rows x {len(cols)} columns")
    feats = {}
    for ri, (y0, y1) in enumerate(rows):
        for ci, (x0, x1) in enumerate(cols):
            cell = ink[y0:y1, x0:x1]
            ys, xs = np.nonzero(cell)
            if len(xs) == 0:
                continue
            glyph = cell[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
            feats[(ri, ci)] = (glyph.shape, glyph.tobytes())
    values = list(feats.values())
    majority = max(set(values), key=values.count)
    odd = sorted(k for k, v in feats.items() if v != majority)
    print(f"odd cells: {[(r + 1, c + 1) for r, c in odd]}")
    if PARAMS["question"] == "locate":
        r, c = odd[0]
        print(f"ANSWER: [{r + 1}, {c + 1}]")
    else:
        print(f"ANSWER: {len(odd)}")
