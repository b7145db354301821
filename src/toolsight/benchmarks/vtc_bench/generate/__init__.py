"""VTC-style generated tasks: degraded scenes whose answers need an interface-tool chain.

`generate_vtc(kind, n, seed, out_dir)` writes a toolsight dataset folder (tasks.jsonl + images/) and
returns the tasks; `vtc_starter(out_dir, seed)` writes the 8-task starter set (two per kind). Each task is
multiple choice (A-D) like VTC-Bench and carries:
- `turn.reference_steps`: the ground-truth toolchain in VTC-Bench's tool-group vocabulary;
- `turn.meta['reference_calls']`: the reference solution, a list of `{"tool", "arguments"}` interface
  calls (`"$input"` = the task image, `"$prev"` = the previous call's output image);
- `turn.meta['answer_from']`: how to read the answer from the last call's INFO JSON
  (`{"field": "total_components", "map": {"7": "B", ...}}`).
Generation replays every reference solution through the real OpenCV tools and redraws an item whose
replay does not give its answer, so every written task is solvable by its reference calls.
"""

from __future__ import annotations

from toolsight.benchmarks.vtc_bench.generate.replay import ReplayResult, replay
from toolsight.benchmarks.vtc_bench.generate.tasks import KIND_NAMES, generate_vtc, make_task, vtc_starter
from toolsight.models.baselines import read_answer

__all__ = ["KIND_NAMES", "ReplayResult", "generate_vtc", "make_task", "read_answer", "replay", "vtc_starter"]
