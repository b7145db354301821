"""The closing summary of a run that was interrupted and resumed covers the whole run (issue 26 item 12):
a run stopped by Ctrl-C part-way and finished by `--resume` says "accuracy 30.0% over 20 scored (the
whole run)", not the accuracy of the tasks the resume ran. The real CLI as a subprocess, its OpenAI SDK
talking to the scripted server on 127.0.0.1. (After a full disk the count of tasks run equals the records
written: tests/engine/test_e2e_runs.py, on a real tmpfs.)"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from clikit import TOOLSIGHT, env, records, ts, write_png
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer

N = 20
#: the tasks whose gold is "A" (the model always answers A): 6 of 20, spread so that any prefix the
#: interrupted run finishes has a different accuracy from the whole run's 30%
RIGHT = {0, 3, 7, 11, 15, 19}


def _dataset(root: Path) -> Path:
    write_png(root / "images" / "pic.png")
    with (root / "tasks.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(N):
            fh.write(json.dumps({"id": f"t{i}", "turns": [{
                "prompt": f"Question {i}: which colour is the square?", "images": [{"path": "images/pic.png"}],
                "answer": "A" if i in RIGHT else "B", "options": {"A": "blue", "B": "red"},
                "answer_type": "choice"}]}) + "\n")
    return root


def _lines(run: Path) -> int:
    p = run / "records.jsonl"
    return p.read_bytes().count(b"\n") if p.exists() else 0


def test_after_ctrl_c_and_resume_the_summary_covers_the_whole_run(tmp_path: Path) -> None:
    ds = _dataset(tmp_path / "ds")
    run = tmp_path / "run"
    with ScriptedServer(Script(steps=[Step(text="<answer>A</answer>", seconds=0.2)]), record=False) as srv:
        argv = ["run", str(ds), "-m", "openai/m", "--base-url", srv.openai_base_url, "--out", str(run),
                "--concurrency", "2", "--no-report"]
        # a shell that starts pytest in the background ignores SIGINT and children inherit that: give the
        # child the default disposition so Python installs its Ctrl-C handler
        proc = subprocess.Popen([*TOOLSIGHT, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env(), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 120
        while _lines(run) < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "interrupted" in err and "--resume" in err and "Traceback" not in err
        kept = len(records(run))
        assert 4 <= kept < N, kept
        # an interrupted run still records what its requests carried (the manifest's `sent` block)
        sent = json.loads((run / "manifest.json").read_text(encoding="utf-8"))["sent"]
        assert sent["requests"] >= kept and sent["user_prompts"], sent
        resumed = ts(*argv, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{N - kept} task(s) run, {kept} already finished" in resumed.stderr, resumed.stderr
    assert "0 run error(s)" in resumed.stderr and "0 score error(s)" in resumed.stderr, resumed.stderr
    assert "accuracy 30.0% over 20 scored (the whole run)" in resumed.stderr, resumed.stderr
    assert sorted(r["task_id"] for r in records(run)) == sorted(f"t{i}" for i in range(N))
