"""End to end: `toolsight run` (a real subprocess) against the scripted OpenAI-compatible server.

Faults the server injects become retries or error records, never a crashed run; a run killed
with SIGKILL at random moments (start-up included) resumes with every task exactly once and
finished records unchanged.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from enginekit import write_png
from toolsight.log.files import read_manifest
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer


def _dataset(root: Path, n: int) -> Path:
    write_png(root / "img.png", 64, 64)
    with (root / "tasks.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"t{i}", "turns": [{"prompt": f"[task:t{i}] Which colour?",
                                 "images": [{"path": "img.png"}], "answer": "A",
                                 "options": {"A": "red", "B": "blue"}}]}) + "\n")
    return root


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "toolsight", *args]


def _env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e["COLUMNS"] = "200"
    return e


def _records(run: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines() if x.strip()]


def test_faults_become_retries_or_error_records(tmp_path: Path) -> None:
    ds = _dataset(tmp_path / "ds", 9)
    crop = {"image": "img.png", "bbox": [0, 0, 0.5, 0.5]}
    script = Script.model_validate({
        "steps": [{"text": "<answer>A</answer>"}],
        "tasks": {
            "t0": [{"fault": "status", "status": 429, "retry_after": 0.05}, {"text": "<answer>A</answer>"}],
            "t1": [{"fault": "status", "status": 500}, {"fault": "status", "status": 502}, {"text": "<answer>A</answer>"}],
            "t2": [{"fault": "drop"}, {"text": "<answer>A</answer>"}],
            "t3": [{"fault": "stall", "seconds": 3.0, "text": "late"}, {"text": "<answer>A</answer>"}],
            "t4": [{"tool_calls": [{"name": "crop", "arguments": "{\"image\": \"img.png\", \"bbox\": [0,"}]},
                   {"text": "<answer>A</answer>"}],
            "t5": [{"tool_calls": [{"name": "teleport", "arguments": {"to": "mars"}}]}, {"text": "<answer>A</answer>"}],
            "t6": [{"fault": "empty"}],
            "t7": [{"fault": "status", "status": 400}],
            "t8": [{"tool_calls": [{"name": "crop", "arguments": crop}]}, {"text": "<answer>B</answer>"}],
        },
    })
    run = tmp_path / "run"
    with ScriptedServer(script) as srv:
        r = subprocess.run(
            _cli("run", str(ds), "--model", "openai/test", "--base-url", srv.openai_base_url, "--out", str(run),
                 "--setting", "crop", "--retries", "3", "--backoff-base", "0.05", "--request-timeout", "1",
                 "--no-report"),
            capture_output=True, text=True, env=_env(), timeout=180,
        )
        requests = list(srv.requests)
    assert r.returncode == 3, r.stderr  # t7 ended in error: the run finished, with errors
    recs = {str(x["task_id"]): x for x in _records(run)}
    assert sorted(recs) == [f"t{i}" for i in range(9)]
    ok = {k for k, v in recs.items() if v["error"] is None}
    assert ok == {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t8"}
    assert "400" in str(recs["t7"]["error"])
    for k in ("t0", "t1", "t2", "t3", "t4", "t5"):
        assert recs[k]["score"]["value"] == 1.0, k  # type: ignore[index]
    t4_calls = recs["t4"]["trajectory"]["tool_calls"]  # type: ignore[index]
    assert t4_calls[0]["ok"] is False and "not valid JSON" in t4_calls[0]["error"]
    t5_calls = recs["t5"]["trajectory"]["tool_calls"]  # type: ignore[index]
    assert "Unknown tool 'teleport'" in t5_calls[0]["error"]
    assert recs["t6"]["trajectory"]["stop_reason"] == "no_answer"  # type: ignore[index]
    assert recs["t6"]["score"]["value"] == 0.0  # type: ignore[index]
    # t8: the crop image was sent back to the model in a user message after the tool message
    t8 = [q for q in requests if q.task == "t8"]
    last = t8[-1].body["messages"]
    assert last[-2]["role"] == "tool" and last[-1]["role"] == "user"
    assert any(p.get("type") == "image_url" for p in last[-1]["content"])
    per_task = {k: sum(1 for q in requests if q.task == k) for k in ("t0", "t1", "t2", "t3", "t7")}
    assert per_task == {"t0": 2, "t1": 3, "t2": 2, "t3": 2, "t7": 1}
    assert "1 run error(s)" in r.stderr and "retries" in r.stderr


def _chaos_seed() -> int:
    """TOOLSIGHT_CHAOS_SEED reproduces a failure; otherwise a fresh seed, printed with the result."""
    raw = os.environ.get("TOOLSIGHT_CHAOS_SEED")
    return int(raw) if raw else random.SystemRandom().randrange(2**32)


def _wait(cond: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.005)


def _lines(run: Path) -> int:
    try:
        return (run / "records.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_chaos_sigkill_at_random_moments_then_resume_until_done(tmp_path: Path) -> None:
    """SIGKILL `toolsight run` at random moments — start-up included (before and while the run
    directory is created) — and resume until it finishes: at every instant the directory is absent
    or resumable, finished records are never changed, every task ends with exactly one record."""
    seed = _chaos_seed()
    rng = random.Random(seed)
    print(f"\nchaos seed {seed} (reproduce with TOOLSIGHT_CHAOS_SEED={seed})")
    n = 40
    ds = _dataset(tmp_path / "ds", n)
    script = Script(steps=[Step(text="<answer>A</answer>", seconds=0.06)])
    run = tmp_path / "run"
    kills = 0
    phases: dict[str, int] = {}
    kept = b""
    with ScriptedServer(script, record=False) as srv:
        argv = _cli("run", str(ds), "--model", "openai/test", "--out", str(run), "--concurrency", "4",
                    "--no-report", "--base-url", srv.openai_base_url)
        for round_no in range(12):
            resume = ["--resume"] if run.exists() else []
            proc = subprocess.Popen([*argv, *resume], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=_env())
            if round_no < 3:  # start-up: imports, loading the dataset, hashing it
                time.sleep(rng.uniform(0.0, 0.8))
            elif round_no == 3:  # while the directory is being created (a hidden sibling), or just after
                _wait(lambda: any(tmp_path.glob(".run.creating-*")) or run.exists() or proc.poll() is not None)  # noqa: B023 - called at once
            elif round_no == 4:  # the instant the directory appears
                _wait(lambda: run.exists() or proc.poll() is not None)  # noqa: B023 - called at once
            else:  # mid-run: after a few more records, at a random instant
                target = len(kept.splitlines()) + rng.randint(1, 5)
                _wait(lambda: _lines(run) >= target or proc.poll() is not None)  # noqa: B023 - called at once
                time.sleep(rng.uniform(0.0, 0.2))
            if proc.poll() is not None:
                break  # it finished before the kill
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            kills += 1
            phase = "no directory" if not run.exists() else (
                "no new record" if _lines(run) == len(kept.splitlines()) else "mid-run")
            phases[phase] = phases.get(phase, 0) + 1
            # absent or resumable: a directory that exists has a manifest that reads
            assert not run.exists() or read_manifest(run).config_hash
            now = (run / "records.jsonl").read_bytes() if (run / "records.jsonl").exists() else b""
            assert now.startswith(kept), "a finished record changed"
            kept = now[: now.rfind(b"\n") + 1]
        r = subprocess.run([*argv, *(["--resume"] if run.exists() else [])], capture_output=True, text=True,
                           env=_env(), timeout=180)
    assert r.returncode == 0, r.stderr
    after = (run / "records.jsonl").read_bytes()
    assert after.startswith(kept)  # finished records byte-identical
    recs = _records(run)
    ids = [str(x["task_id"]) for x in recs]
    assert sorted(ids) == sorted(f"t{i}" for i in range(n))  # every task exactly once
    assert all(x["error"] is None for x in recs)
    print(f"chaos: {kills} SIGKILLs (by what the kill left: {phases}), "
          f"{len(kept.splitlines())} records kept across them, all {n} tasks exactly once")


def test_ctrl_c_stops_cleanly_with_a_resume_hint(tmp_path: Path) -> None:
    ds = _dataset(tmp_path / "ds", 30)
    run = tmp_path / "run"
    script = Script(steps=[Step(text="<answer>A</answer>", seconds=0.1)])
    with ScriptedServer(script, record=False) as srv:
        argv = _cli("run", str(ds), "--model", "openai/test", "--base-url", srv.openai_base_url, "--out", str(run),
                    "--concurrency", "2", "--no-report")
        # a shell that starts pytest in the background ignores SIGINT and children inherit that: give
        # the child the default disposition so Python installs its Ctrl-C handler
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            p = run / "records.jsonl"
            if p.exists() and p.read_text().count("\n") >= 3:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "--resume" in err and "Traceback" not in err
    kept = _records(run)
    assert 3 <= len(kept) < 30
