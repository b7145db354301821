"""Jigsaw (TIR-Bench "Jigsaw"): an n×n scrambled grid of numbered pieces; answer = the piece order.

Pieces are numbered 1..n² in reading order of the scrambled image. The answer lists, for each position
of the restored image (left to right, top to bottom), the number of the piece that goes there, written
like the official records: "[4, 1, 8, 9, 3, 6, 2, 7, 5]". Difficulty = n (3..6), as in `meta_data`.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from toolsight.benchmarks.tir_bench.generate.common import make_task
from toolsight.benchmarks.tir_bench.generate.scenes import textured_scene
from toolsight.tasks.schema import Task
from toolsight.tasks.synth import GenContext, font

KIND = "jigsaw"
DIFFICULTIES = (3, 4, 5, 6)
PIECE = 64

PROMPT = (
    "Instructions: Please complete the jigsaw puzzle shown in the image. The original image has been "
    "divided into {n}\u00d7{n} pieces and scrambled. In the image, each piece is numbered from 1 to "
    "{nn}. Your task is to determine the correct arrangement to restore the original image.\n\n"
    "Question: In what order should the numbered pieces be arranged to reconstruct the original image?\n\n"
    "Please provide your answer as a sequence indicating where each numbered piece should be placed in "
    "the final arrangement (reading from left to right, top to bottom).\n"
    "For example, 1, 16, 15, 2, 14, 8, 13, 5, 6, 7, 3, 9, 10, 11, 4, 12."
)


def generate(ctx: GenContext) -> Task:
    n = ctx.difficulty
    size = n * PIECE
    src = textured_scene(ctx.rng, size, size, shapes=4 + 2 * n)
    perm = ctx.rng.permutation(n * n)  # scrambled slot s shows original piece perm[s]
    while n > 1 and np.all(perm == np.arange(n * n)):
        perm = ctx.rng.permutation(n * n)
    out = Image.new("RGB", (size, size))
    f = font(14)
    for slot, orig in enumerate(perm):
        oy, ox = divmod(int(orig), n)
        piece = src.crop((ox * PIECE, oy * PIECE, (ox + 1) * PIECE, (oy + 1) * PIECE))
        d = ImageDraw.Draw(piece)
        label = str(slot + 1)
        c = PIECE // 2
        d.rectangle([c - 12, c - 9, c + 12, c + 9], fill=(255, 255, 255))
        d.text((c, c), label, fill=(0, 0, 0), font=f, anchor="mm")
        sy, sx = divmod(slot, n)
        out.paste(piece, (sx * PIECE, sy * PIECE))
    # position p of the restored image holds original piece p, shown in slot inv[p] (number inv[p]+1)
    inv = np.argsort(perm)
    answer = "[" + ", ".join(str(int(inv[p]) + 1) for p in range(n * n)) + "]"
    ref = ctx.save(out)
    return make_task(
        ctx,
        kind=KIND,
        task_key="jigsaw",
        task_name="Jigsaw",
        prompt=PROMPT.format(n=n, nn=n * n),
        images=[ref],
        answer=answer,
        answer_type="list",
        params={"image": ref.path.rsplit("/", 1)[-1], "n": n},
        meta={"meta_data": {"difficulty": n}},
    )
