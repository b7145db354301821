"""`--loop`, `toolsight list settings` and the run identity; the empty-rubric scoring fix."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from vtckit import make_data

from toolsight.benchmarks.registry import get_benchmark, get_scorer
from toolsight.engine.options import RunOptions, config_hash
from toolsight.engine.runner import Runner, load_for_run
from toolsight.models.registry import get_model
from toolsight.scoring.base import ScoreContext
from toolsight.tasks.schema import Task, Turn


def _ts(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "250"
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_list_settings_shows_the_loop_mode() -> None:
    vtc = _ts("list", "settings", "vtc-bench")
    assert vtc.returncode == 0, vtc.stderr
    lines = {ln.split(":")[0].split(" ")[0]: ln for ln in vtc.stdout.splitlines()}
    assert "loop official" in lines["interface"] and "vtc_interface_official" in lines["interface"]
    assert "loop official" in lines["base"]
    assert "vtc_code_official" in lines["code"] and "task timeout 10815 s" in lines["code"]  # 3 × 3600 + 5 + 10
    tir = _ts("list", "settings", "tir-bench")
    assert "tir_code" in tir.stdout and "task timeout" not in tir.stdout
    assert all("loop official" in ln for ln in tir.stdout.splitlines() if ln.strip()), tir.stdout
    starter = _ts("list", "settings", "starter")
    assert "loop toolsight" in starter.stdout


def test_bad_loop_flag_is_one_clear_message() -> None:
    r = _ts("run", "vtc-bench", "--model", "mock/x", "--loop", "fast")
    assert r.returncode == 2 and "--loop 'fast': use 'official' or 'toolsight'" in r.stderr
    assert "Traceback" not in r.stderr


def test_loop_is_part_of_the_run_identity(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_data(data, [{"id": "c_1", "question": "Q? [task:t]"}])
    bench = get_benchmark("vtc-bench")
    loaded = load_for_run(bench, str(data))
    model = get_model("openai/x", base_url="http://127.0.0.1:9/v1")

    def runner(loop: str | None) -> Runner:
        opts = RunOptions.of(benchmark="vtc-bench", model="openai/x", data=str(data), loop=loop,
                          out=str(tmp_path / "run"))
        return Runner(opts, bench, loaded, model)

    default, official, toolsight = runner(None), runner("official"), runner("toolsight")
    assert default.settings.loop == "official" and toolsight.settings.loop == "toolsight"
    def ident(r: Runner) -> dict[str, object]:
        return r.opts.identity("vtc-bench", "interface", "data-hash")

    assert ident(default) == ident(official) != ident(toolsight)
    assert config_hash(ident(default)) != config_hash(ident(toolsight))
    assert toolsight.settings.tools == ["opencv"] and default.settings.tools == ["vtc_interface_official"]


def test_an_empty_rubric_set_still_writes_judge_results() -> None:
    scorer = get_scorer("visualtoolbench", "official")
    one = Task(id="a", turns=[Turn(prompt="q", answer="x")])
    s = asyncio.run(scorer.score(one, ["an answer"], ScoreContext()))
    assert s.value == 0.0 and s.passed is True and s.details["judge_results"] == []
    two = Task(id="b", turns=[Turn(prompt="q1", answer="x"), Turn(prompt="q2", answer="y")],
               meta={"rubric_turns": 2})
    s2 = asyncio.run(scorer.score(two, ["r1", "r2"], ScoreContext()))
    assert s2.details["judge_results"] == [[], []]
