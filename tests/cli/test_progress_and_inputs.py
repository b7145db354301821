"""Plain progress lines when stderr is not a terminal (issue 17, item 8), and the generic tool
settings telling the model its input image's name so the first tool call can use it (item 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import toolsight
from clikit import dataset, lines, ts
from toolsight.api.progress import PlainProgress
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_plain_progress_prints_a_tenth_at_a_time_and_when_time_passes() -> None:
    out: list[str] = []
    clock = Clock()
    p = PlainProgress("gen", 60, every=15.0, write=out.append, clock=clock)
    p.start("generating 60 task(s)")
    for done in range(1, 61):
        clock.t += 0.1
        p.update(done, status="ok")
    assert out[0] == "gen: generating 60 task(s)"
    # the first task, then one line per tenth
    assert len(out) == 12 and out[-1].startswith("gen: 60/60 (100%) · ok")
    assert out[1] == "gen: 1/60 (2%) · ok · 0 s" and out[2] == "gen: 6/60 (10%) · ok · 1 s"
    slow: list[str] = []
    clock.t = 0.0
    q = PlainProgress("run", 1000, every=15.0, write=slow.append, clock=clock)
    for done in range(1, 5):  # well under a tenth, but 20 s apart
        clock.t += 20
        q.update(done)
    assert len(slow) == 4 and slow[-1] == "run: 4/1000 (0%) · 80 s"
    q.update(4)  # no news: no line
    assert len(slow) == 4


def test_generate_and_run_report_progress_in_a_pipe(tmp_path: Path) -> None:
    r = ts("generate", "vtc-bars", "--n", "12", "--out", str(tmp_path / "g"))
    assert r.returncode == 0, r.stderr
    err = lines(r.stderr)
    assert err[0] == f"generate vtc-bars: generating 12 vtc-bars task(s) into {tmp_path / 'g'}"
    assert err[-1].startswith("generate vtc-bars: 12/12 (100%)") and 3 <= len(err) <= 14
    assert lines(r.stdout) == [f"wrote 12 vtc-bars task(s) to {tmp_path / 'g'}; run them with "
                               f"`toolsight run {tmp_path / 'g'} --model reference`"]
    run = ts("run", str(tmp_path / "g"), "-m", "reference", "--setting", "opencv", "--out", str(tmp_path / "run"),
             "--no-report")
    assert run.returncode == 0, run.stderr
    progress = [ln for ln in lines(run.stderr) if ln.startswith("dataset/opencv: ")]
    assert 3 <= len(progress) <= 13 and re.match(r"dataset/opencv: 12/12 \(100%\) · errors 0 · ", progress[-1])
    assert "\r" not in run.stderr and "\x1b[" not in run.stderr  # no bar redrawn in a log


def test_tool_settings_name_the_input_image_and_a_call_by_that_name_works(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 1)
    flip = {"name": "opencv_flip", "arguments": {"image": "pic.png", "param": {"direction": "vertical"}}}
    script = Script.model_validate({"steps": [{"tool_calls": [flip]}, {"text": "<answer>A</answer>"}]})
    with ScriptedServer(script) as srv:
        res = toolsight.evaluate(str(ds), "openai/x", base_url=srv.openai_base_url, setting="opencv",
                                 out=str(tmp_path / "opencv"), progress=False)
        first = json.dumps(srv.requests[0].body["messages"])
    assert "Input image file(s): pic.png. Tools take an image by this file name" in first
    call = res.records[0].trajectory.tool_calls[0]
    assert call.name == "opencv_flip" and call.ok, call.error
    assert res.accuracy == 1.0
    with ScriptedServer(Script(steps=[Step(text="<answer>A</answer>")])) as srv:
        toolsight.evaluate(str(ds), "openai/x", base_url=srv.openai_base_url, setting="direct",
                           out=str(tmp_path / "direct"), progress=False)
        assert "Input image file" not in json.dumps(srv.requests[0].body["messages"])  # no tools, no note
