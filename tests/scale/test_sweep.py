"""Sweeps end to end: `toolsight sweep PLAN` against the scripted server on 127.0.0.1 — run
directories under one sweep folder, the combined report, --resume (exactly-once records), one
limiter per endpoint shared by the runs, and plan problems as one clear message.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scalekit import dataset, records

from toolsight.engine.sweep import PlanError, SweepRunner, expand, read_plan, write_sweep_file
from toolsight.models.registry import get_model
from toolsight.models.scripted import Script, ScriptedServer

ROOT = Path(__file__).resolve().parents[2]


def ts(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "200"
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def _plan(tmp: Path, models: list[str], *, extra: str = "") -> Path:
    """A plan over a 6-task dataset folder, two settings, `models` on the plan's scripted server."""
    dataset(tmp / "ds", 6)
    (tmp / "script.json").write_text(json.dumps({"steps": [{"text": "<answer>A</answer>"}]}))
    text = f'name = "t"\nparallel = 3\n{extra}\n[defaults]\nconcurrency = 2\n\n[scripted_server]\nscript = "script.json"\n'
    for m in models:
        text += f'\n[[models]]\nspec = "{m}"\n' + ('base_url = "{scripted}"\n' if m.startswith("openai/") else "")
    text += '\n[[benchmarks]]\nname = "ds"\nsettings = ["direct", "crop"]\n'
    (tmp / "plan.toml").write_text(text)
    return tmp / "plan.toml"


def test_a_sweep_runs_its_table_and_prints_one_combined_report(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["openai/m-a", "random"])
    r = ts("sweep", str(plan), "--out", str(tmp_path / "sw"))
    assert r.returncode == 0, r.stderr[-2000:]
    sw = tmp_path / "sw"
    doc = json.loads((sw / "sweep.json").read_text())
    ids = [x["id"] for x in doc["runs"]]
    assert ids == ["ds__direct__openai_m-a", "ds__direct__random", "ds__crop__openai_m-a", "ds__crop__random"]
    for rid in ids:  # every run is a normal, complete run directory
        assert (sw / "runs" / rid / "manifest.json").is_file()
        assert sorted(x["task_id"] for x in records(sw / "runs" / rid)) == [f"t{i}" for i in range(6)]
    # the scripted model always answers A (the gold answer): 100 % in both settings
    assert all(x["score"]["value"] == 1.0 for x in records(sw / "runs" / "ds__crop__openai_m-a"))
    out = r.stdout
    assert out.count("ds: score by model × setting") == 1
    table = out.split("ds: score by model × setting")[1].split("\n\n")[1]
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[2:]}
    assert set(rows) == {"openai/m-a", "random"}
    assert rows["openai/m-a"].count("**100.0 [100.0–100.0]**") == 2  # one cell per setting, ranked best
    assert (sw / "report" / "report.md").read_text().count("ds: score by model × setting") == 1
    again = ts("report", str(sw))  # on demand, from the sweep folder
    assert again.returncode == 0 and again.stdout.split("ds: score by model × setting")[1].split("\n\n")[1] == table


def test_resume_finishes_a_cut_run_and_adds_new_runs_with_each_record_once(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["openai/m-a"])
    sw = tmp_path / "sw"
    assert ts("sweep", str(plan), "--out", str(sw), "--no-report").returncode == 0
    cut = sw / "runs" / "ds__crop__openai_m-a" / "records.jsonl"
    kept = cut.read_text().splitlines()[:2]
    cut.write_text("\n".join(kept) + "\n")  # as if the sweep had been stopped after two tasks
    whole = (sw / "runs" / "ds__direct__openai_m-a" / "records.jsonl").read_bytes()

    again = ts("sweep", str(plan), "--out", str(sw), "--no-report")
    assert again.returncode == 2 and "--resume" in again.stderr and "Traceback" not in again.stderr

    plan.write_text(plan.read_text().replace('[[benchmarks]]', '[[models]]\nspec = "random"\n\n[[benchmarks]]'))
    r = ts("sweep", str(plan), "--out", str(sw), "--resume")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "2 new run(s)" in r.stderr
    lines = cut.read_text().splitlines()
    assert lines[:2] == kept  # finished records are kept as they were ...
    assert sorted(json.loads(x)["task_id"] for x in lines) == [f"t{i}" for i in range(6)]  # ... and none twice
    assert (sw / "runs" / "ds__direct__openai_m-a" / "records.jsonl").read_bytes() == whole
    assert len(records(sw / "runs" / "ds__crop__random")) == 6
    doc = json.loads((sw / "sweep.json").read_text())
    assert len(doc["runs"]) == 4 and [h["event"] for h in doc["history"]] == ["resume"]
    assert "random" in r.stdout.split("ds: score by model × setting")[1]


def _whole_lines(run_dir: Path) -> bytes:
    """records.jsonl up to its last complete line (a kill may tear the last one)."""
    data = (run_dir / "records.jsonl").read_bytes() if (run_dir / "records.jsonl").exists() else b""
    return data[: data.rfind(b"\n") + 1]


def _lines(run_dir: Path) -> int:
    return _whole_lines(run_dir).count(b"\n")


def test_a_sweep_killed_mid_run_resumes_to_every_task_exactly_once(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["openai/m-a", "openai/m-b"])
    (tmp_path / "script.json").write_text(json.dumps({  # slow replies: the kill lands mid-run
        "steps": [{"text": "<answer>A</answer>"}], "capacity": {"concurrency": 2, "seconds": 0.4, "over": "queue"}}))
    sw = tmp_path / "sw"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.Popen([sys.executable, "-m", "toolsight", "sweep", str(plan), "--out", str(sw), "--no-report"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and sum(_lines(d) for d in (sw / "runs").glob("*")) < 3:
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    before = {d.name: _whole_lines(d) for d in (sw / "runs").glob("*")}
    assert 3 <= sum(b.count(b"\n") for b in before.values()) < 24, "the kill must land mid-sweep"
    r = ts("sweep", str(plan), "--out", str(sw), "--resume", "--no-report")
    assert r.returncode == 0, r.stderr[-2000:]
    for rid in ("ds__direct__openai_m-a", "ds__direct__openai_m-b", "ds__crop__openai_m-a", "ds__crop__openai_m-b"):
        done = (sw / "runs" / rid / "records.jsonl").read_bytes()
        assert done.startswith(before.get(rid, b""))  # what was finished before the kill is kept
        assert sorted(x["task_id"] for x in records(sw / "runs" / rid)) == [f"t{i}" for i in range(6)], rid


def test_the_runs_of_a_sweep_share_one_limit_per_endpoint(tmp_path: Path) -> None:
    """Two models on one server, 3 connections each: together they never exceed 3 at once."""
    data = dataset(tmp_path / "ds", 16)
    script = Script.model_validate({"steps": [{"text": "<answer>A</answer>"}],
                                    "capacity": {"concurrency": 100, "seconds": 0.1, "over": "queue"}})
    with ScriptedServer(script) as srv:
        (tmp_path / "plan.toml").write_text(
            f'parallel = 2\n[defaults]\nconcurrency = 6\nmax_connections = 3\nadaptive = false\n'
            f'[[models]]\nspec = "openai/a"\nbase_url = "{srv.openai_base_url}"\n'
            f'[[models]]\nspec = "openai/b"\nbase_url = "{srv.openai_base_url}"\n'
            f'[[benchmarks]]\nname = "{data}"\n')
        path = tmp_path / "plan.toml"
        sweep = expand(read_plan(path), path, tmp_path / "sw")
        write_sweep_file(sweep, resume=False)
        started: list[str] = []
        runner = SweepRunner(sweep, lambda spec, url: get_model(spec, base_url=url),
                             on_start=lambda r: started.append(r.id))
        outcomes = asyncio.run(asyncio.wait_for(runner.run(), 120))
        peak = srv.peak_inflight
    assert len(started) == 2 and all(o.summary is not None and o.summary.done == 16 for o in outcomes)
    assert peak == 3, f"two runs on one endpoint with a shared limit of 3 reached {peak} requests at once"
    assert outcomes[0].summary is not None and outcomes[1].summary is not None
    assert outcomes[0].summary.limiters[0] is outcomes[1].summary.limiters[0]


@pytest.mark.parametrize(("text", "expect"), [
    ('models = []\n[[benchmarks]]\nname = "starter"\n', "models: List should have at least 1 item"),
    ('[[models]]\nspec = "random"\ncolour = 1\n[[benchmarks]]\nname = "starter"\n', "models[0].colour: unknown field"),
    ('[[models]]\nspec = "random"\n[[benchmarks]]\nname = "no-such-bench"\n', "benchmarks[0].name"),
    ('[[models]]\nspec = "random"\n[[benchmarks]]\nname = "vtc-bench"\nsettings = ["nope"]\n',
     "benchmarks[0].settings: 'nope' is not a setting of vtc-bench"),
    ('[defaults]\nmodel = "x"\n[[models]]\nspec = "random"\n[[benchmarks]]\nname = "starter"\n', "defaults.model"),
    ('[defaults]\nconcurrency = "many"\n[[models]]\nspec = "random"\n[[benchmarks]]\nname = "starter"\n',
     "concurrency"),
    ('[[models]]\nspec = "openai/x"\nbase_url = "{scripted}"\n[[benchmarks]]\nname = "starter"\n',
     "no scripted_server table"),
    ('[[models]\n', "not valid TOML"),
])
def test_a_bad_plan_is_one_message_naming_the_file_and_field(tmp_path: Path, text: str, expect: str) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    r = ts("sweep", str(plan), "--out", str(tmp_path / "sw"))
    assert r.returncode == 2, r.stderr
    assert expect in r.stderr and str(plan) in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "sw" / "sweep.json").exists()


def test_a_yaml_plan_reads_like_the_toml_one(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("name: y\nmodels:\n  - model: random\nbenchmarks:\n  - name: starter\n"
                                     "    settings: [direct]\n")
    (tmp_path / "bad.yaml").write_text("models: [\n")
    plan = read_plan(tmp_path / "p.yaml")
    assert plan.models[0].spec == "random" and plan.benchmarks[0].settings == ["direct"]
    with pytest.raises(PlanError, match=r"bad\.yaml:\d+: not valid YAML"):
        read_plan(tmp_path / "bad.yaml")


def test_the_example_plan_expands_to_its_table() -> None:
    path = ROOT / "examples" / "sweep.toml"
    sweep = expand(read_plan(path), path, Path("/nonexistent/sw"), scripted_url="http://127.0.0.1:1/v1")
    assert len(sweep.runs) == 8  # 4 models × 2 settings
    assert {r.opts.model.base_url for r in sweep.runs if r.model.startswith("openai/")} == {"http://127.0.0.1:1/v1"}
    assert all(r.opts.benchmark == "/nonexistent/sw/data/0-vtc-bars-n8-s0" for r in sweep.runs)
