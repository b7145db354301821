"""Rotation game (TIR-Bench "Rotation Game"): how many degrees CLOCKWISE restore the image?

An upright procedural landscape is rotated counter-clockwise by a multiple of the tier's step and
shown on a white canvas; six options are multiples of the same step around the answer. Difficulty = the
step in degrees (15, 10, 5 — smaller steps make neighbouring options harder to tell apart), after the
paper's three tiers.
"""

from __future__ import annotations

from PIL import Image

from toolsight.benchmarks.tir_bench.generate.common import LETTERS, make_task
from toolsight.benchmarks.tir_bench.generate.scenes import landscape
from toolsight.tasks.schema import Task
from toolsight.tasks.synth import GenContext

KIND = "rotation_game"
DIFFICULTIES = (15, 10, 5)
SIZE = 320

PROMPT = (
    "How many degrees should you rotate this image CLOCKWISE to restore it to its original orientation?"
    "\n\n{options}"
)


def generate(ctx: GenContext) -> Task:
    step = ctx.difficulty
    angle = step * int(ctx.rng.integers(1, 360 // step))  # counter-clockwise rotation applied, in (0, 360)
    src = landscape(ctx.rng, SIZE, int(SIZE * 0.75))
    rotated = src.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=(255, 255, 255))
    # distractors: other multiples of the step near the answer, never 0° (= no rotation)
    ks = [k for k in range(-7, 8) if k != 0 and (angle + k * step) % 360 != 0]
    picks = ctx.rng.choice(ks, size=5, replace=False)
    values = [angle] + [(angle + int(k) * step) % 360 for k in picks]
    order = ctx.rng.permutation(6)
    values = [values[int(i)] for i in order]
    options = {LETTERS[i]: f"{v}\u00b0" for i, v in enumerate(values)}
    answer = LETTERS[values.index(angle)]
    ref = ctx.save(rotated)
    text = "\n".join(f"{k}. {v}" for k, v in options.items())
    return make_task(
        ctx,
        kind=KIND,
        task_key="rotation_game",
        task_name="Rotation Game",
        prompt=PROMPT.format(options=text),
        images=[ref],
        answer=answer,
        answer_type="choice",
        options=options,
        params={"image": ref.path.rsplit("/", 1)[-1], "options": options},
        meta={"step": step},
    )
