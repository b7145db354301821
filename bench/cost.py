"""What prompt caching and batch mode save on benchmark-shaped runs, priced from the tokens the runs recorded.

Setup (issue 29): a scripted server (toolsight.models.scripted, 127.0.0.1) simulates each provider's
prompt cache (models/scripted/prompt_cache.py) and batch API (models/scripted/batches.py: a batch
completes `--batch-delay` seconds after submission) and answers every task with K−1 `crop` calls on
the newest image (`$prev`, a 0.9 × 0.9 crop each round), then `<answer>A</answer>`: K model rounds
per task, each re-sending the whole history with its images, as VisualToolBench's 20-round tasks do.
Each task is one user turn with one 1024×768 image. toolsight runs the dataset through the toolsight
loop (`--setting crop`) on the anthropic/ and openai/ providers (their SDKs, then the direct path; one
warm-up task per provider first, so the timed runs are warm):

  no cache   the server reports no cached tokens (`Script.prompt_cache = false`): every input token
             is billed at the input price — the baseline, measured in the same invocation
  cache      the server caches as the provider does; the toolsight loop sends Anthropic breakpoints
             and never rewrites an earlier message (the OpenAI cache is automatic)
  batch      (`--loop-batch`) the cache run again under `--batch rounds`: every round of every task
             goes through the provider's batch API, cache and batch discount together

All runs are priced with toolsight's built-in table (src/toolsight/metrics/prices.toml) for the model
names used (claude-sonnet-4-5, gpt-4.1, gemini-2.5-pro), which the server does not care about.
Printed per provider: input cost of each run, the cache ratio (target: ≤ 0.4× for 10-round tasks),
the share of input tokens read from the cache, and the wall-clock of the runs (median over
`--repeat`, interleaved).

Then, with `--rubrics R` (default 5): the cache run's rubric judging, one judge call per rubric,
through `toolsight score --scorer rubric` twice — on-line and with `--judge-batch` — with a judge on
its own scripted server; the ratio of the two judge costs (target ≤ 0.55×).

Then a PhysToolBench-shaped run (one call per task: the image and a question, no tools) on-line and
with `--batch` (`toolsight.api.engine.run_sync` with `batch="calls"`) for each of `--batch-wires`:
cost per task and the ratio batch / on-line (target ≤ 0.55×), input and output priced.

Last, kill and resume: `toolsight run DATA --batch` as a subprocess, SIGKILLed as soon as its
`batches.jsonl` holds the batch id (the server holds the batch `--resume-delay` s), then run again
with `--resume`; printed: how many batches the server received per tag the killed run journalled
(target 1), how many were submitted beyond those (target 0), calls that went on-line instead, and
the records written.

Usage: python bench/cost.py [--tasks 20] [--rounds 10] [--rubrics 5] [--single 50] [--concurrency 8]
       [--repeat 1] [--wires anthropic,openai] [--batch-wires anthropic,openai,google] [--batch-delay 1]
       [--loop-batch] [--resume-tasks 8] [--resume-delay 3]   (--help describes each)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

MODELS = {"anthropic": "anthropic/claude-sonnet-4-5", "openai": "openai/gpt-4.1", "google": "google/gemini-2.5-pro"}
#: the providers' on-line model endpoints (a request there not sent on a batch's behalf went on-line)
ONLINE_PATHS = ("/chat/completions", "/messages", ":generateContent")
#: the run summary's count of batches an earlier invocation submitted and this one collected
RESUMED = re.compile(r"batched in \d+ new batch\(es\)[^;]* and (\d+) resumed")
ANSWER = "<answer>A</answer>"
#: the baseline and the measured sides (`--loop-batch` adds "batch": the cache side under `--batch rounds`)
SIDES = ("no cache", "cache")
#: batch mode on the scripted server: submit after 0.3 s without a new request, poll every 0.05 s (doubling)
FAST: dict[str, Any] = {"batch_idle": 0.3, "batch_poll": 0.05}


def make_dataset(root: Path, n: int, prefix: str = "Which letter?", rubrics: int = 0) -> Path:
    """n tasks, each one user turn with the same smooth 1024×768 PNG (small on the wire, billed by size)
    and `rubrics` rubrics (judged only when a judge is given: one judge call per rubric)."""
    import numpy as np
    from PIL import Image

    root.mkdir(parents=True, exist_ok=True)
    y, x = np.mgrid[0:768, 0:1024]
    img = np.stack([x % 256, y % 256, (x + y) % 256], axis=-1).astype(np.uint8)
    Image.fromarray(img).save(root / "img.png")
    rubric = [{"id": f"r{k}", "text": f"The answer names the letter and criterion {k} holds", "weight": 3}
              for k in range(rubrics)]
    rows = [{"id": f"t{i}", "turns": [{"prompt": f"{prefix} q{i}", "images": [{"path": "img.png"}], "answer": "A",
                                       **({"rubrics": rubric} if rubric else {})}]} for i in range(n)]
    (root / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@dataclasses.dataclass
class Side:
    """One run: its input cost (USD, output left out), its list input cost, tokens and wall time."""

    input_cost: float
    cost: float  # input and output, as billed (batch calls at the batch discount)
    batch_calls: int
    list_input_cost: float
    input_tokens: int
    cache_read: int
    cache_write: int
    wall: float
    tasks: int


def run_side(wire: str, data: Path, rounds: int, cache: bool, conc: int, setting: str, batch: str | None = None,
             delay: float = 0.0, keep: Path | None = None) -> Side:
    """One run of `data` through toolsight on the scripted server; `batch`: the run's batch mode
    (`calls` | `rounds` | None: on-line), `delay`: seconds a batch takes on the server; `keep`: where
    to write the run directory (kept), else a temporary one (removed)."""
    from toolsight.api.engine import run_sync
    from toolsight.engine.options import RunOptions
    from toolsight.log.files import latest_records
    from toolsight.metrics.billing import model_tokens
    from toolsight.metrics.cost import builtin_table, cost_of, list_cost, price_for
    from toolsight.models.base import GenerateConfig
    from toolsight.models.scripted import Rule, Script, ScriptedServer
    from toolsight.models.scripted.script import BatchScript

    script = Script(rule=Rule(tool="crop", arguments={"image": "$prev", "bbox": [0, 0, 0.9, 0.9]},
                              calls=rounds - 1, answer=ANSWER), prompt_cache=cache,
                    batch=BatchScript(seconds=delay))
    out = keep or Path(tempfile.mkdtemp(prefix="toolsight-bench-cost-"))
    model = MODELS[wire]
    try:
        with ScriptedServer(script, record=False) as srv:
            url = srv.openai_base_url if wire == "openai" else srv.base_url
            opts = RunOptions.of(benchmark=str(data), model=model, base_url=url, setting=setting,
                                 out=str(out / "run"), concurrency=conc, max_connections=conc, retries=0, cache=False,
                                 generate=GenerateConfig(), batch=batch, **(FAST if batch else {}))
            t0 = time.perf_counter()
            s = run_sync(opts).summary
            wall = time.perf_counter() - t0
        assert s.done == s.total and s.ran.passed == s.total, s.line()
        billed = [t for r in latest_records(out / "run") for t in model_tokens(r.model, r.trajectory)]
        calls = [dataclasses.replace(t, output=0) for t in billed]
        price = price_for(model, builtin_table())
        assert price is not None, model
        c = cost_of(calls, builtin_table())
        whole = cost_of(billed, builtin_table())
        return Side(input_cost=c.cost_usd, cost=whole.cost_usd, batch_calls=whole.batch_calls,
                    list_input_cost=sum(list_cost(price, t) for t in calls),
                    input_tokens=sum(t.input for t in calls), cache_read=sum(t.cache_read for t in calls),
                    cache_write=sum(t.cache_write for t in calls), wall=wall, tasks=s.total)
    finally:
        if keep is None:
            shutil.rmtree(out, ignore_errors=True)


def base_url(wire: str, srv: Any) -> str:
    return str(srv.openai_base_url if wire == "openai" else srv.base_url)


def cli(*args: str) -> list[str]:
    """The `toolsight` command line, run by this Python (with this process's environment)."""
    return [sys.executable, "-m", "toolsight", *args]


@dataclasses.dataclass
class Judging:
    """The judge calls of one `toolsight score` of a run: count, batched count, cost (USD) and wall time."""

    calls: int
    batched: int
    batches: int  # batches the judge's server received
    cost: float
    wall: float


def judge_run(run_dir: Path, judge: str, batch: bool, delay: float) -> Judging:
    """Scores `run_dir` with the rubric scorer, `judge` on its own scripted server answering "Met",
    on-line or with `--judge-batch`, through the command line; prices its judge calls."""
    from toolsight.log.score import Score
    from toolsight.metrics.billing import judge_tokens
    from toolsight.metrics.cost import builtin_table, cost_of
    from toolsight.models.scripted import Script, ScriptedServer
    from toolsight.models.scripted.script import BatchScript, Step

    met = json.dumps({"explanation": "the answer meets it", "judge_result": "Met"})
    name = "batched" if batch else "online"
    with ScriptedServer(Script(steps=[Step(text=met)], batch=BatchScript(seconds=delay)), record=False) as srv:
        args = ["score", str(run_dir), "--scorer", "rubric", "--mode", "corrected", "--judge", judge,
                "--judge-base-url", base_url(judge.split("/")[0], srv), "--name", name, "--no-cache"]
        if batch:
            args += ["--judge-batch", "--batch-idle", str(FAST["batch_idle"]), "--batch-poll", str(FAST["batch_poll"])]
        t0 = time.perf_counter()
        r = subprocess.run(cli(*args), capture_output=True, text=True, timeout=600)
        wall = time.perf_counter() - t0
        batches = len(srv.batches.batches)
    if r.returncode != 0:
        raise SystemExit(f"toolsight score failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    rows = [json.loads(x) for x in (run_dir / f"scores-{name}.jsonl").read_text().splitlines() if x.strip()]
    calls = [t for row in rows for t in judge_tokens(Score.model_validate(row["score"]))]
    c = cost_of(calls, builtin_table())
    return Judging(calls=len(calls), batched=c.batch_calls, batches=batches, cost=c.cost_usd, wall=wall)


@dataclasses.dataclass
class Resume:
    """A batch run killed after submitting and resumed: what the scripted server saw."""

    tasks: int
    records: int
    submissions: dict[str, int]  # per tag the killed run journalled: how many batches the server got with it
    batches: int  # batches the server got in all (both invocations)
    online: int  # model calls that reached the on-line endpoint, not through a batch
    resumed: int  # batches of the killed run the resumed run collected (its summary's "and N resumed")
    wall_resume: float

    @property
    def resubmitted(self) -> int:
        """Batches submitted beyond those the killed run had submitted."""
        return self.batches - len(self.submissions)


def kill_and_resume(wire: str, data: Path, tasks: int, delay: float, out: Path) -> Resume:
    """`toolsight run DATA --batch` as a subprocess; SIGKILLed once `batches.jsonl` holds the batch id
    (the scripted server holds the batch for `delay` s), then run again with `--resume`."""
    from toolsight.calls.batch_journal import read_journal
    from toolsight.models.scripted import Rule, Script, ScriptedServer
    from toolsight.models.scripted.script import BatchScript

    script = Script(rule=Rule(tool="crop", calls=0, answer=ANSWER), batch=BatchScript(seconds=delay))
    with ScriptedServer(script) as srv:
        args = cli("run", str(data), "--setting", "direct", "-m", MODELS[wire], "--base-url", base_url(wire, srv),
                   "--out", str(out), "--no-report", "--batch", "--batch-idle", str(FAST["batch_idle"]),
                   "--batch-poll", str(FAST["batch_poll"]))
        with (out.parent / f"{wire}-killed.log").open("w") as log:
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
            try:
                deadline = time.monotonic() + 120
                while not any(e["kind"] == "batch" for e in read_journal(out)):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(f"{wire}: the batch run ended or stalled before its journal held a batch "
                                         f"id; see {log.name}")
                    time.sleep(0.05)
                if any(e["kind"] == "result" for e in read_journal(out)):
                    raise SystemExit(f"{wire}: the batch was collected before the kill; raise --batch-delay")
                proc.send_signal(signal.SIGKILL)
                proc.wait(30)
                tags = [e["tag"] for e in read_journal(out) if e["kind"] == "submit"]
            finally:
                if proc.poll() is None:
                    proc.kill()
        t0 = time.perf_counter()
        r = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=600)
        wall = time.perf_counter() - t0
        if r.returncode not in (0, 3):
            raise SystemExit(f"{wire}: the resumed run failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
        online = sum(1 for q in srv.requests if q.batch is None and q.path.endswith(ONLINE_PATHS))
        return Resume(tasks=tasks, records=len((out / "records.jsonl").read_text().splitlines()),
                      submissions={t: srv.batches.submissions(t) for t in tags}, batches=len(srv.batches.batches),
                      online=online, resumed=int(m.group(1)) if (m := RESUMED.search(r.stdout + r.stderr)) else 0,
                      wall_resume=wall)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--tasks", type=int, default=20, help="tasks of the VisualToolBench-shaped run")
    ap.add_argument("--rounds", type=int, default=10, help="model rounds per task (K)")
    ap.add_argument("--rubrics", type=int, default=5,
                    help="rubrics per VisualToolBench-shaped task, each one judge call (0: no judging part)")
    ap.add_argument("--judge", default="openai/gpt-4.1", choices=sorted(MODELS.values()),
                    help="the judge model the judge calls are priced as")
    ap.add_argument("--single", type=int, default=50, help="tasks of the one-call (PhysToolBench-shaped) run")
    ap.add_argument("--concurrency", type=int, default=8, help="tasks in flight in each on-line run")
    ap.add_argument("--repeat", type=int, default=1, help="runs per side (interleaved; the median wall time)")
    ap.add_argument("--wires", default="anthropic,openai", help="providers of the VisualToolBench-shaped run")
    ap.add_argument("--batch-wires", default="anthropic,openai,google",
                    help="providers of the one-call run's batch column and of the kill-and-resume run")
    ap.add_argument("--batch-delay", type=float, default=1.0,
                    help="seconds the scripted server takes to complete a batch")
    ap.add_argument("--loop-batch", action="store_true",
                    help="add a `--batch rounds` side to the VisualToolBench-shaped run (each round one batch: "
                         "about rounds × (0.3 s + --batch-delay) per run)")
    ap.add_argument("--resume-tasks", type=int, default=8, help="tasks of the kill-and-resume run")
    ap.add_argument("--resume-delay", type=float, default=3.0,
                    help="seconds the kill-and-resume run's batch takes (the kill comes within them)")
    a = ap.parse_args()
    for flag in ("tasks", "rounds", "single", "concurrency", "repeat", "resume_tasks"):
        if getattr(a, flag) < 1:
            ap.error(f"--{flag.replace('_', '-')} must be at least 1")
    if a.rubrics < 0 or a.batch_delay < 0 or a.resume_delay <= 0:
        ap.error("--rubrics and --batch-delay must be at least 0, --resume-delay more than 0")
    for flag in ("wires", "batch_wires"):
        if bad := [w for w in getattr(a, flag).split(",") if w not in MODELS]:
            ap.error(f"--{flag.replace('_', '-')}: unknown provider(s) {', '.join(bad)}; choose from {', '.join(MODELS)}")
    sides = (*SIDES, "batch") if a.loop_batch else SIDES
    tmp = Path(tempfile.mkdtemp(prefix="toolsight-bench-cost-data-"))
    try:
        data = make_dataset(tmp / "vtb", a.tasks, rubrics=a.rubrics)
        print(f"## VisualToolBench-shaped: {a.tasks} tasks × {a.rounds} rounds, one 1024×768 image + one crop per "
              "round, toolsight loop\n")
        batch_head = " | input $ batch rounds (cache) | batch / no cache | wall s batch" if a.loop_batch else ""
        print("| provider (priced as) | input $ no cache | input $ cache | ratio (target ≤ 0.4×) | cached input "
              f"| wall s no cache | wall s cache | wall ratio{batch_head} |")
        print("|---|---|---|---|---|---|---|---" + "|---" * (3 if a.loop_batch else 0) + "|")
        results: dict[str, Any] = {}
        judged: Path | None = None
        for wire in a.wires.split(","):
            run_side(wire, make_dataset(tmp / "warm", 1), a.rounds, True, 1, "crop")  # SDK imported, route learned
            runs: dict[str, list[Side]] = {side: [] for side in sides}
            for _ in range(a.repeat):  # interleaved: a burst of load elsewhere hits one round, not one side
                for side in sides:
                    keep = tmp / "judged" if side == "cache" and judged is None and a.rubrics else None
                    runs[side].append(run_side(wire, data, a.rounds, side != "no cache", a.concurrency, "crop",
                                               batch="rounds" if side == "batch" else None, delay=a.batch_delay,
                                               keep=keep))
                    judged = judged or (keep / "run" if keep else None)
            base, cached = runs["no cache"][0], runs["cache"][0]  # costs are the same every repeat
            assert base.input_tokens == cached.input_tokens, "the cache must not change what is sent"
            wall = {side: statistics.median(r.wall for r in runs[side]) for side in sides}
            ratio = cached.input_cost / base.input_cost
            share = cached.cache_read / cached.input_tokens
            row = (f"| {wire} ({MODELS[wire]}) | {base.input_cost:.4f} | {cached.input_cost:.4f} | **{ratio:.2f}×** "
                   f"| {share:.0%} | {wall['no cache']:.2f} | {wall['cache']:.2f} | "
                   f"{wall['cache'] / wall['no cache']:.2f}× |")
            results[wire] = {"ratio": ratio, "cached_share": share, **{f"wall {k}": v for k, v in wall.items()},
                             "input_cost": {"no cache": base.input_cost, "cache": cached.input_cost},
                             "list_input_cost": cached.list_input_cost, "input_tokens": cached.input_tokens}
            if a.loop_batch:
                b = runs["batch"][0]
                assert b.batch_calls == a.tasks * a.rounds, f"{wire}: {b.batch_calls} of the loop's calls were batched"
                row += f" {b.input_cost:.4f} | **{b.input_cost / base.input_cost:.2f}×** | {wall['batch']:.2f} |"
                results[wire]["input_cost"]["batch"] = b.input_cost
            print(row)
        if judged is not None:
            print(f"\n### Its rubric judging: {a.tasks} tasks × {a.rubrics} rubrics, one judge call each "
                  f"(`toolsight score --scorer rubric`, judge priced as {a.judge})\n")
            online, batched = judge_run(judged, a.judge, False, a.batch_delay), judge_run(judged, a.judge, True,
                                                                                           a.batch_delay)
            assert online.calls == batched.calls == a.tasks * a.rubrics and batched.batched == batched.calls, \
                (online, batched)
            print("| judge calls | $ on-line | $ `--judge-batch` | ratio (target ≤ 0.55×) | batches "
                  "| wall s on-line | wall s batch |")
            print("|---|---|---|---|---|---|---|")
            print(f"| {online.calls} | {online.cost:.4f} | {batched.cost:.4f} | **{batched.cost / online.cost:.2f}×** "
                  f"| {batched.batches} | {online.wall:.2f} | {batched.wall:.2f} |")
            results["judging"] = {"on-line": dataclasses.asdict(online), "batch": dataclasses.asdict(batched)}
        single = make_dataset(tmp / "ptb", a.single, "Which tool fits the task? Answer A or B.")
        print(f"\n## PhysToolBench-shaped: {a.single} tasks × 1 call (image + question, no tools), on-line and "
              f"`--batch` (the server completes a batch in {a.batch_delay:g} s)\n")
        print("| provider (priced as) | input tokens/task | input $/task on-line | cached input | $/task on-line "
              "| $/task batch | ratio (target ≤ 0.55×) | wall s on-line | wall s batch |")
        print("|---|---|---|---|---|---|---|---|---|")
        for wire in dict.fromkeys([*a.wires.split(","), *a.batch_wires.split(",")]):
            one = run_side(wire, single, 1, True, a.concurrency, "direct")
            row = (f"| {wire} ({MODELS[wire]}) | {one.input_tokens / one.tasks:.0f} | "
                   f"{one.input_cost / one.tasks:.6f} | {one.cache_read / one.input_tokens:.0%} | "
                   f"{one.cost / one.tasks:.6f} |")
            results[f"single {wire}"] = {"on-line": dataclasses.asdict(one)}
            if wire in a.batch_wires.split(","):
                b = run_side(wire, single, 1, True, a.concurrency, "direct", batch="calls", delay=a.batch_delay)
                assert b.batch_calls == b.tasks == a.single, f"{wire}: {b.batch_calls} call(s) batched"
                row += (f" {b.cost / b.tasks:.6f} | **{b.cost / one.cost:.2f}×** | {one.wall:.2f} | {b.wall:.2f} |")
                results[f"single {wire}"]["batch"] = dataclasses.asdict(b)
            else:
                row += " | | | |"
            print(row)
        print(f"\n## Kill and resume: `toolsight run … --batch` ({a.resume_tasks} one-call tasks), SIGKILLed once "
              f"batches.jsonl holds the batch id, then `--resume` (the batch takes {a.resume_delay:g} s)\n")
        print("| provider | submissions per journalled tag | re-submitted | on-line calls | records "
              "| batches collected by the resumed run | wall s resume |")
        print("|---|---|---|---|---|---|---|")
        for wire in a.batch_wires.split(","):
            (tmp / f"resume-{wire}").mkdir()
            r = kill_and_resume(wire, make_dataset(tmp / f"resume-{wire}" / "data", a.resume_tasks), a.resume_tasks,
                                a.resume_delay, tmp / f"resume-{wire}" / "run")
            print(f"| {wire} | {', '.join(map(str, r.submissions.values()))} | **{r.resubmitted}** | {r.online} "
                  f"| {r.records}/{r.tasks} | {r.resumed} | {r.wall_resume:.2f} |")
            results[f"resume {wire}"] = {**dataclasses.asdict(r), "resubmitted": r.resubmitted}
        print("\n" + json.dumps(results, indent=1, default=float))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0

if __name__ == "__main__":
    sys.exit(main())
