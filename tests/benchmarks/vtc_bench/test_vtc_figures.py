"""VTC-Bench's default setting (official loop, streamed raw calls) reports true figures (issue 26,
item 8): tokens from the stream's usage, every request names its task in `X-Toolsight-Task`, each
call is in the trajectory's call log; an endpoint that streams without usage is said to have done
so instead of reporting 0 tokens as if counted. Through the CLI against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vtckit import make_data

from clikit import records, ts
from toolsight.models.scripted.script import TASK_HEADER, Script
from toolsight.models.scripted.server import RecordedRequest, ScriptedServer

ROWS = [{"id": "chart_1", "question": "Which bar? [task:a]"}, {"id": "chart_2", "question": "Which line? [task:b]"}]
STEPS = {"a": [{"text": "<answer>C</answer>"}], "b": [{"text": "<answer>B</answer>"}]}


def _run(tmp: Path, stream_usage: str) -> tuple[str, list[dict[str, Any]], list[RecordedRequest]]:
    data = tmp / "data"
    make_data(data, ROWS)
    script = Script.model_validate({"tasks": STEPS, "steps": [{"text": "unexpected"}], "stream_usage": stream_usage})
    with ScriptedServer(script) as srv:
        r = ts("run", "vtc-bench", "--data", str(data), "-m", "openai/Qwen3-VL-30B-A3B-Thinking", "--base-url",
               srv.openai_base_url, "--out", str(tmp / stream_usage), "--no-report")
        reqs = list(srv.requests)
    assert r.returncode == 0, r.stderr
    return r.stderr, records(tmp / stream_usage), reqs


def test_the_official_loop_counts_tokens_and_names_each_task(tmp_path: Path) -> None:
    err, recs, reqs = _run(tmp_path, "always")
    assert all(q.body.get("stream") is True for q in reqs) and "stream_options" not in reqs[0].body  # the driver's body
    assert sorted(q.headers.get(TASK_HEADER.lower(), "") for q in reqs) == ["chart_1", "chart_2"]
    by_id = {x["task_id"]: x for x in recs}
    for rec in by_id.values():
        (call,) = rec["trajectory"]["model_call_log"]
        usage = rec["trajectory"]["usage"]
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
        assert (call["input_tokens"], call["output_tokens"]) == (usage["input_tokens"], usage["output_tokens"])
        assert not call["usage_missing"]
    total = sum(x["trajectory"]["usage"]["input_tokens"] + x["trajectory"]["usage"]["output_tokens"] for x in recs)
    assert f"; {total} tokens;" in err and "reported no token usage" not in err
    assert by_id["chart_1"]["score"]["passed"] and not by_id["chart_2"]["score"]["passed"]


def test_a_stream_without_usage_is_reported_not_counted_as_zero(tmp_path: Path) -> None:
    err, recs, _ = _run(tmp_path, "requested")  # as OpenAI: no usage unless stream_options asks for it
    assert all(x["trajectory"]["model_call_log"][0]["usage_missing"] for x in recs)
    assert "2 model call(s) reported no token usage" in err, err
    assert json.dumps([x["trajectory"]["usage"]["input_tokens"] for x in recs]) == "[0, 0]"
