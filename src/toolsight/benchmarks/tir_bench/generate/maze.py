"""Maze (TIR-Bench "Maze"): a rendered block maze and five move strings; which one leads out?

The maze is a k×k grid of square cells, black = wall, white = open, no outer wall; a red ball marks the
start (top-left cell) and a green ball the goal (bottom-right cell). One move = one cell. Options A-E
are move strings; F is "No answer" (correct when none of A-E works), as in the official prompt.
Difficulty = k (odd, 5 and up; the paper goes from 5×5 to 62×62).
"""

from __future__ import annotations

from collections import deque

import numpy as np
from PIL import Image, ImageDraw

from toolsight.benchmarks.tir_bench.generate.common import LETTERS, make_task
from toolsight.tasks.schema import Task
from toolsight.tasks.synth import GenContext

KIND = "maze"
DIFFICULTIES = (5, 9, 15, 25, 41, 61)
MOVES = {"R": (0, 1), "L": (0, -1), "U": (-1, 0), "D": (1, 0)}

PROMPT = (
    "Please complete a maze game shown in the figure. Starting from the red ball in the top-left corner, "
    "navigate the maze to reach the green ball in the bottom-right corner. 'R' means move one step to the "
    "right, 'L' means move one step to the left, 'U' means move one step up, and 'D' means move one step "
    "down. Which of the following options can successfully lead out of the maze?\n{options}"
)


def carve(rng: np.random.Generator, k: int) -> np.ndarray:
    """A perfect maze on a k×k block grid (True = open); nodes at even coordinates."""
    m = (k + 1) // 2
    open_ = np.zeros((k, k), bool)
    seen = np.zeros((m, m), bool)
    stack = [(0, 0)]
    seen[0, 0] = True
    open_[0, 0] = True
    while stack:
        r, c = stack[-1]
        nbrs = [(r + dr, c + dc) for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0))
                if 0 <= r + dr < m and 0 <= c + dc < m and not seen[r + dr, c + dc]]
        if not nbrs:
            stack.pop()
            continue
        nr, nc = nbrs[int(rng.integers(len(nbrs)))]
        seen[nr, nc] = True
        open_[2 * nr, 2 * nc] = True
        open_[r + nr, c + nc] = True
        stack.append((nr, nc))
    return open_


def shortest_path(open_: np.ndarray) -> str:
    k = open_.shape[0]
    prev: dict[tuple[int, int], tuple[tuple[int, int], str]] = {}
    q = deque([(0, 0)])
    seen = {(0, 0)}
    while q:
        cur = q.popleft()
        if cur == (k - 1, k - 1):
            break
        for mv, (dr, dc) in MOVES.items():
            nxt = (cur[0] + dr, cur[1] + dc)
            if 0 <= nxt[0] < k and 0 <= nxt[1] < k and open_[nxt] and nxt not in seen:
                seen.add(nxt)
                prev[nxt] = (cur, mv)
                q.append(nxt)
    path: list[str] = []
    cur = (k - 1, k - 1)
    while cur != (0, 0):
        cur, mv = prev[cur]
        path.append(mv)
    return "".join(reversed(path))


def walks_out(open_: np.ndarray, moves: str) -> bool:
    k = open_.shape[0]
    r = c = 0
    for mv in moves:
        dr, dc = MOVES[mv]
        r, c = r + dr, c + dc
        if not (0 <= r < k and 0 <= c < k and open_[r, c]):
            return False
    return (r, c) == (k - 1, k - 1)


def _distractor(rng: np.random.Generator, open_: np.ndarray, path: str) -> str:
    for _ in range(100):
        if rng.random() < 0.5:  # near miss: the right path with a few moves changed
            s = list(path)
            for _ in range(int(rng.integers(1, 4))):
                s[int(rng.integers(len(s)))] = "RLUD"[int(rng.integers(4))]
            cand = "".join(s)
        else:
            length = max(2, len(path) + int(rng.integers(-len(path) // 3 - 1, len(path) // 3 + 2)))
            cand = "".join("RLUD"[int(i)] for i in rng.integers(0, 4, size=length))
        if not walks_out(open_, cand):
            return cand
    raise RuntimeError("could not make an invalid maze option")  # pragma: no cover


def render(open_: np.ndarray, cell: int) -> Image.Image:
    k = open_.shape[0]
    arr = np.where(open_, 255, 0).astype(np.uint8)
    big = np.kron(arr, np.ones((cell, cell), np.uint8))
    img = Image.fromarray(big, "L").convert("RGB")
    d = ImageDraw.Draw(img)
    pad = max(1, cell // 6)
    d.ellipse([pad, pad, cell - 1 - pad, cell - 1 - pad], fill=(230, 20, 20))
    o = (k - 1) * cell
    d.ellipse([o + pad, o + pad, o + cell - 1 - pad, o + cell - 1 - pad], fill=(20, 190, 40))
    return img


def generate(ctx: GenContext) -> Task:
    k = ctx.difficulty
    open_ = carve(ctx.rng, k)
    path = shortest_path(open_)
    none_correct = ctx.rng.random() < 1 / 6
    opts = [_distractor(ctx.rng, open_, path) for _ in range(5)]
    correct_letter = "F"
    if not none_correct:
        i = int(ctx.rng.integers(5))
        opts[i] = path
        correct_letter = LETTERS[i]
    options = {LETTERS[i]: o for i, o in enumerate(opts)}
    options["F"] = "No answer"
    cell = max(6, min(24, 480 // k))
    ref = ctx.save(render(open_, cell))
    text = "\n".join(f"{key}. {val}" for key, val in options.items())
    return make_task(
        ctx,
        kind=KIND,
        task_key="maze",
        task_name="Maze",
        prompt=PROMPT.format(options=text),
        images=[ref],
        answer=correct_letter,
        answer_type="choice",
        options=options,
        params={"image": ref.path.rsplit("/", 1)[-1], "options": options},
    )
