# mypy: ignore-errors
"""Reference solution: jigsaw by edge matching. Reads only the puzzle image and n (from the prompt).

Importable: `solve(PARAMS)` prints its working and an `ANSWER: …` line. In a task the file runs
as a script: `synth.common.solution_source` puts `PARAMS`/`FILES` and the input locator before it
and a call `solve(PARAMS)` after it (the code a model would write, shown whole)."""

import numpy as np
from PIL import Image


def solve(PARAMS):
    n = PARAMS["n"]
    img = np.asarray(Image.open(PARAMS["image"]).convert("RGB"), dtype=np.float64)
    ph, pw = img.shape[0] // n, img.shape[1] // n
    pieces = [img[r * ph:(r + 1) * ph, c * pw:(c + 1) * pw] for r in range(n) for c in range(n)]
    N = len(pieces)

    def dissim(first_edge, first_inner, second_edge, second_inner):
        # prediction-based: extrapolate each side's gradient across the seam and compare
        a, a2 = first_edge[:, None], first_inner[:, None]
        b, b2 = second_edge[None, :], second_inner[None, :]
        return np.abs(2 * a - a2 - b).sum(axis=(2, 3)) + np.abs(2 * b - b2 - a).sum(axis=(2, 3))

    right = dissim(np.stack([p[:, -1] for p in pieces]), np.stack([p[:, -2] for p in pieces]),
                   np.stack([p[:, 0] for p in pieces]), np.stack([p[:, 1] for p in pieces]))
    down = dissim(np.stack([p[-1] for p in pieces]), np.stack([p[-2] for p in pieces]),
                  np.stack([p[0] for p in pieces]), np.stack([p[1] for p in pieces]))
    np.fill_diagonal(right, np.inf)
    np.fill_diagonal(down, np.inf)

    # beam search over row-major placements (each state: pieces placed so far, seam cost so far)
    BEAM = 200
    beam = [(0.0, [start]) for start in range(N)]
    for pos in range(1, N):
        r, c = divmod(pos, n)
        cands = []
        for cost, grid in beam:
            cand_cost = np.zeros(N)
            if c > 0:
                cand_cost += right[grid[pos - 1]]
            if r > 0:
                cand_cost += down[grid[pos - n]]
            cand_cost[grid] = np.inf
            for k in np.argsort(cand_cost)[:8]:
                if np.isfinite(cand_cost[k]):
                    cands.append((cost + float(cand_cost[k]), [*grid, int(k)]))
        cands.sort(key=lambda t: t[0])
        beam = cands[:BEAM]
    best = beam[0]

    # refine: swap any two pieces, or roll whole rows/columns, while the total seam cost goes down
    finite_r = np.where(np.isinf(right), 1e12, right)
    finite_d = np.where(np.isinf(down), 1e12, down)

    def total(g):
        return finite_r[g[:, :-1], g[:, 1:]].sum() + finite_d[g[:-1], g[1:]].sum()

    grid = np.array(best[1]).reshape(n, n)
    cur = total(grid)
    improved = True
    while improved:
        improved = False
        moves = [np.roll(grid, s, axis=a) for a in (0, 1) for s in range(1, n)]
        for i in range(N):
            for j in range(i + 1, N):
                g = grid.copy().ravel()
                g[i], g[j] = g[j], g[i]
                moves.append(g.reshape(n, n))
        for g in moves:
            c = total(g)
            if c < cur - 1e-9:
                grid, cur, improved = g, c, True
                break
    print(f"seam cost {cur:.0f}")
    order = [int(k) + 1 for k in grid.ravel()]
    print("ANSWER: [" + ", ".join(str(k) for k in order) + "]")
