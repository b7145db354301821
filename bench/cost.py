"""What prompt caching saves on a VisualToolBench-shaped run, priced from the tokens the run recorded.

Setup (issue 29): a scripted server (toolsight.models.scripted, 127.0.0.1) simulates each provider's
prompt cache (models/scripted/prompt_cache.py) and answers every task with K−1 `crop` calls on the
newest image (`$prev`, a 0.9 × 0.9 crop each round), then `<answer>A</answer>`: K model rounds per
task, each re-sending the whole history with its images, as VisualToolBench's 20-round tasks do. Each
task is one user turn with one 1024×768 image. toolsight runs the dataset through the toolsight loop
(`--setting crop`) on the anthropic/ and openai/ providers (their SDKs, then the direct path; one
warm-up task per provider first, so the timed runs are warm):

  no cache   the server reports no cached tokens (`Script.prompt_cache = false`): every input token
             is billed at the input price — the baseline, measured in the same invocation
  cache      the server caches as the provider does; the toolsight loop sends Anthropic breakpoints
             and never rewrites an earlier message (the OpenAI cache is automatic)

Both are priced with toolsight's built-in table (src/toolsight/metrics/prices.toml) for the model
names used (claude-sonnet-4-5, gpt-4.1), which the server does not care about. Printed per provider:
input cost of the no-cache run and of the cache run, their ratio (target: ≤ 0.4× for 10-round tasks),
the share of input tokens read from the cache, and the wall-clock of both runs (median over
`--repeat`, interleaved; the ratio shows what the breakpoints and the cache simulation cost the
harness). Then a PhysToolBench-shaped run (one call per task: the image and a question, no tools)
priced on-line, the cost per task and its cached share.

BATCH: a "batch" column belongs beside "cache" here once `--batch` lands (another helper is building
it): run the same dataset with the batch option and price it the same way; the places to add it are
marked `# BATCH:` below. Not implemented here.

Usage: python bench/cost.py [--tasks 20] [--rounds 10] [--single 50] [--concurrency 8] [--repeat 1]
       [--wires anthropic,openai]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

MODELS = {"anthropic": "anthropic/claude-sonnet-4-5", "openai": "openai/gpt-4.1"}
ANSWER = "<answer>A</answer>"
#: the baseline and the measured sides; BATCH: add "batch" here (a run through the batch API)
SIDES = ("no cache", "cache")


def make_dataset(root: Path, n: int, prefix: str = "Which letter?") -> Path:
    """n tasks, each one user turn with the same smooth 1024×768 PNG (small on the wire, billed by size)."""
    import numpy as np
    from PIL import Image

    root.mkdir(parents=True, exist_ok=True)
    y, x = np.mgrid[0:768, 0:1024]
    img = np.stack([x % 256, y % 256, (x + y) % 256], axis=-1).astype(np.uint8)
    Image.fromarray(img).save(root / "img.png")
    line = '{"id": "t%d", "turns": [{"prompt": "%s q%d", "images": [{"path": "img.png"}], "answer": "A"}]}\n'
    (root / "tasks.jsonl").write_text("".join(line % (i, prefix, i) for i in range(n)))
    return root


@dataclasses.dataclass
class Side:
    """One run: its input cost (USD, output left out), its list input cost, tokens and wall time."""

    input_cost: float
    list_input_cost: float
    input_tokens: int
    cache_read: int
    cache_write: int
    wall: float
    tasks: int


def run_side(wire: str, data: Path, rounds: int, cache: bool, conc: int, setting: str) -> Side:
    from toolsight.api.engine import run_sync
    from toolsight.engine.options import RunOptions
    from toolsight.log.files import latest_records
    from toolsight.metrics.billing import model_tokens
    from toolsight.metrics.cost import builtin_table, cost_of, list_cost, price_for
    from toolsight.models.base import GenerateConfig
    from toolsight.models.scripted import Rule, Script, ScriptedServer

    script = Script(rule=Rule(tool="crop", arguments={"image": "$prev", "bbox": [0, 0, 0.9, 0.9]},
                              calls=rounds - 1, answer=ANSWER), prompt_cache=cache)
    out = Path(tempfile.mkdtemp(prefix="toolsight-bench-cost-"))
    model = MODELS[wire]
    try:
        with ScriptedServer(script, record=False) as srv:
            url = srv.openai_base_url if wire == "openai" else srv.base_url
            opts = RunOptions.of(benchmark=str(data), model=model, base_url=url, setting=setting,
                                 out=str(out / "run"), concurrency=conc, max_connections=conc, retries=0, cache=False,
                                 generate=GenerateConfig())
            t0 = time.perf_counter()
            s = run_sync(opts).summary
            wall = time.perf_counter() - t0
        assert s.done == s.total and s.ran.passed == s.total, s.line()
        calls = [dataclasses.replace(t, output=0) for r in latest_records(out / "run")
                 for t in model_tokens(r.model, r.trajectory)]
        price = price_for(model, builtin_table())
        assert price is not None, model
        c = cost_of(calls, builtin_table())
        return Side(input_cost=c.cost_usd, list_input_cost=sum(list_cost(price, t) for t in calls),
                    input_tokens=sum(t.input for t in calls), cache_read=sum(t.cache_read for t in calls),
                    cache_write=sum(t.cache_write for t in calls), wall=wall, tasks=s.total)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=10, help="model rounds per task (K)")
    ap.add_argument("--single", type=int, default=50, help="tasks of the one-call (PhysToolBench-shaped) run")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=1, help="runs per side (interleaved; the median wall time)")
    ap.add_argument("--wires", default="anthropic,openai")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="toolsight-bench-cost-data-"))
    try:
        data = make_dataset(tmp / "vtb", a.tasks)
        print(f"## VisualToolBench-shaped: {a.tasks} tasks × {a.rounds} rounds, one 1024×768 image + one crop per "
              "round, toolsight loop\n")
        print("| provider (priced as) | input $ no cache | input $ cache | ratio (target ≤ 0.4×) | cached input "
              "| wall s no cache | wall s cache | wall ratio |")  # BATCH: add "input $ batch" and its ratio
        print("|---|---|---|---|---|---|---|---|")
        results: dict[str, Any] = {}
        for wire in a.wires.split(","):
            run_side(wire, make_dataset(tmp / "warm", 1), a.rounds, True, 1, "crop")  # SDK imported, route learned
            runs: dict[str, list[Side]] = {side: [] for side in SIDES}
            for _ in range(a.repeat):  # interleaved: a burst of load elsewhere hits one round, not one side
                for side in SIDES:  # BATCH: the batch side runs here with the batch option
                    runs[side].append(run_side(wire, data, a.rounds, side == "cache", a.concurrency, "crop"))
            base, cached = runs["no cache"][0], runs["cache"][0]  # costs are the same every repeat
            assert base.input_tokens == cached.input_tokens, "the cache must not change what is sent"
            wall = {side: statistics.median(r.wall for r in runs[side]) for side in SIDES}
            ratio = cached.input_cost / base.input_cost
            share = cached.cache_read / cached.input_tokens
            print(f"| {wire} ({MODELS[wire]}) | {base.input_cost:.4f} | {cached.input_cost:.4f} | **{ratio:.2f}×** "
                  f"| {share:.0%} | {wall['no cache']:.2f} | {wall['cache']:.2f} | "
                  f"{wall['cache'] / wall['no cache']:.2f}× |")
            results[wire] = {"ratio": ratio, "cached_share": share, **{f"wall {k}": v for k, v in wall.items()},
                             "input_cost": {"no cache": base.input_cost, "cache": cached.input_cost},
                             "list_input_cost": cached.list_input_cost, "input_tokens": cached.input_tokens}
        single = make_dataset(tmp / "ptb", a.single, "Which tool fits the task? Answer A or B.")
        print(f"\n## PhysToolBench-shaped: {a.single} tasks × 1 call (image + question, no tools), priced on-line\n")
        print("| provider (priced as) | input tokens/task | input $/task | cached input |")
        print("|---|---|---|---|")
        for wire in a.wires.split(","):
            one = run_side(wire, single, 1, True, a.concurrency, "direct")
            print(f"| {wire} ({MODELS[wire]}) | {one.input_tokens / one.tasks:.0f} | {one.input_cost / one.tasks:.6f} "
                  f"| {one.cache_read / one.input_tokens:.0%} |")
            results[f"single {wire}"] = dataclasses.asdict(one)
        print("\n" + json.dumps(results, indent=1, default=float))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
