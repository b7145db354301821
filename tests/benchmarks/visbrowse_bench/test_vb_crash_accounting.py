"""A reply that crashes VisBrowse-Bench's official loop is no tool call (issue 26 item 9), end to end.

The reference driver crashes on a reply with tool calls and no text (`re.search(None)`); toolsight's
official loop ends that task there. The reply's calls never ran, so the run's summary, the tool
metrics (TCR, calls per task) and the report's tool-call share table must not count them — before
this, each crash was a tool call: "1 tool call(s)", TCR 100 %, and a share column with an empty
header. The crash is a run error of its own kind (exit 3), scored as the driver scores it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from toolsight.log.trajectory import LOOP_CRASH
from toolsight.metrics.compute import compute_run_metrics
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer

#: a reply with a tool call and no text: the reference's loop crashes on it
NO_TEXT_CALL = {"tool_calls": [{"name": "text_search", "arguments": {"query": "harbour"}, "id": "call_1"}]}


def _cli(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"COLUMNS": "250", "TOOLSIGHT_CACHE": str(tmp / "cache")})
    return subprocess.run([sys.executable, "-m", "toolsight", *args], env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_crashing_reply_is_no_tool_call_in_summary_metrics_or_report(miniweb: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    with ScriptedServer(Script.model_validate({"steps": [NO_TEXT_CALL]})) as srv:
        p = _cli("run", "visbrowse-bench", "--data", str(miniweb), "--model", "openai/vb", "--base-url",
                 srv.openai_base_url, "--limit", "2", "--out", str(run), "--no-report", "--no-score", tmp=tmp_path)
        sent = len(srv.requests)
    out = p.stdout + p.stderr
    assert sent == 2, out  # one reply per task, then the crash
    recs = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert [r["trajectory"]["stop_reason"] for r in recs] == ["error", "error"]
    assert all(r["trajectory"]["tool_calls"] == [] and "TypeError" in r["trajectory"]["loop_error"] for r in recs)
    assert "0 tool call(s)" in out and f"2 run error(s) ({LOOP_CRASH}: 2)" in out, out
    assert p.returncode == 3, out

    m = compute_run_metrics(run)
    assert m.tool_use.calls == 0 and m.tool_use.proactivity.value == 0.0 and m.tool_use.volume.value == 0.0
    assert "" not in m.tool_use.tool_share
    assert m.n_errors == 2 and m.error_kinds == {LOOP_CRASH: 2}  # the report counts them as the summary does

    rep = _cli("report", str(run), tmp=tmp_path)
    assert rep.returncode == 0, rep.stderr
    tables = _tables(rep.stdout)
    head, row = tables["Tool use"]
    assert row[head.index("TCR %")] == "0.0" and row[head.index("Calls/task")] == "0.00", rep.stdout
    assert all(h.strip() for h in tables["Tool-call share %"][0]), rep.stdout  # no column without a name


def _tables(markdown: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each `### Title` table of a markdown report: its header cells and its first row's cells."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    for block in markdown.split("### ")[1:]:
        title, *lines = block.splitlines()
        rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines if ln.startswith("|")]
        if len(rows) >= 3:
            out[title.strip()] = (rows[0], rows[2])
    return out
