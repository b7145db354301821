"""Issue 27, item 8: a hosted interpreter run's logs (and code) are capped in the record; the provider
sends them whole, and 8 MiB of logs were stored whole. Real run: runner -> OpenAI SDK -> scripted server."""

from __future__ import annotations

import json
from pathlib import Path

from test_tir_official import _official, _run

from toolsight.benchmarks.tir_bench.loop import HOSTED_TEXT_CAP


def test_hosted_logs_and_code_are_capped_in_the_record(tmp_path: Path) -> None:
    data, recs = _official(tmp_path)
    logs = "0123456789abcdef\n" * (8 << 16)  # 8.5 MiB
    code = "x = 1\n" * 20_000
    script = {"steps": [{"text": f"The answer is {recs[0]['answer']}.",
                         "code_interpreter": [{"code": code, "logs": logs}]}]}
    out = _run(tmp_path, data, script, "openai/o3", "code")
    (call,) = out["recs"][0]["trajectory"]["tool_calls"]
    assert len(call["text"]) < HOSTED_TEXT_CAP + 200
    assert call["text"].startswith(logs[:1000]) and f"{len(logs):,} characters in all" in call["text"]
    assert call["extra"]["log_chars"] == len(logs) and call["extra"]["code_chars"] == len(code)
    assert len(json.loads(call["arguments"])["code"]) < HOSTED_TEXT_CAP + 200
    assert out["recs"][0]["error"] is None
