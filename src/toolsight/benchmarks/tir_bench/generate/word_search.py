"""Word search (TIR-Bench "Word Search"): a field of near-identical characters with planted odd ones.

Two question forms, worded as in the official data: where is the single odd character ("[row, col]",
1-based, rows from the top, columns from the left), or how many times does it appear (an integer).
Difficulty 1-3: a bigger grid of smaller characters.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from toolsight.benchmarks.tir_bench.generate.common import make_task
from toolsight.tasks.schema import Task
from toolsight.tasks.synth import GenContext, font

KIND = "word_search"
DIFFICULTIES = (1, 2, 3)
# (background, planted) pairs that differ by a stroke or a turn
PAIRS = (("6", "9"), ("8", "3"), ("E", "F"), ("O", "Q"), ("P", "R"), ("C", "G"), ("1", "7"), ("M", "N"))
_LEVELS = {1: (10, 14, 24), 2: (18, 26, 18), 3: (28, 40, 14)}  # rows, cols, font size

LOCATE = (
    "In the figure, in which row and column does the {what} {ch} appear? The final answer should output "
    "two number list. The first number represents the row count from top to bottom, and the second "
    "number represents the column count from left to right. For example, [1, 2] means the first row and "
    "the second column."
)
COUNT = "How many times does the {what} {ch} appear in this image? Answer with an integer, such as 1,2,3."


def generate(ctx: GenContext) -> Task:
    rows, cols, size = _LEVELS[ctx.difficulty]
    rows += int(ctx.rng.integers(0, 3))
    cols += int(ctx.rng.integers(0, 3))
    bg, target = PAIRS[int(ctx.rng.integers(len(PAIRS)))]
    locate = bool(ctx.rng.random() < 0.5)
    count = 1 if locate else int(ctx.rng.integers(1, 9))
    cells = ctx.rng.choice(rows * cols, size=count, replace=False)
    planted = {divmod(int(c), cols) for c in cells}
    px, py = int(size * 0.95), int(size * 1.3)
    img = Image.new("RGB", (cols * px + px, rows * py + py), (255, 255, 255))
    d = ImageDraw.Draw(img)
    f = font(size)
    for r in range(rows):
        for c in range(cols):
            ch = target if (r, c) in planted else bg
            d.text((px + c * px, py + r * py), ch, fill=(0, 0, 0), font=f, anchor="mm")
    what = "number" if target.isdigit() else "letter"
    if locate:
        (r0, c0), = planted
        prompt, answer, atype = LOCATE.format(what=what, ch=target), f"[{r0 + 1}, {c0 + 1}]", "list"
    else:
        prompt, answer, atype = COUNT.format(what=what, ch=target), str(count), "integer"
    ref = ctx.save(img)
    return make_task(
        ctx,
        kind=KIND,
        task_key="word_search",
        task_name="Word Search",
        prompt=prompt,
        images=[ref],
        answer=answer,
        answer_type=atype,
        params={"image": ref.path.rsplit("/", 1)[-1], "question": "locate" if locate else "count"},
        meta={"grid": [rows, cols]},
    )
