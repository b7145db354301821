"""Tool-call arguments the model writes may be huge or nested thousands deep (issue 26, item 6): each
becomes a tool error the model reads, the task goes on to its answer, and the trajectory keeps the
calls. Before, 50,000 levels of nesting ended the task as `harness error: RecursionError` with its
trajectory lost. The official SDKs talk to the scripted server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clikit import dataset, records, ts
from toolsight.log.arguments import MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH
from toolsight.models.scripted.script import Script, ScriptedCall, Step
from toolsight.models.scripted.server import ScriptedServer

CROP = {"image": "pic.png", "bbox": [0, 0, 0.5, 0.5]}


def _nested(levels: int) -> dict[str, object]:
    val: dict[str, object] = {"leaf": 1}
    for _ in range(levels - 1):
        val = {"a": val}
    return val


def _run(tmp: Path, provider: str, *calls: ScriptedCall) -> tuple[str, dict[str, Any]]:
    ds = dataset(tmp / "ds", 1)  # gold A
    steps = [Step(tool_calls=[c]) for c in calls] + [Step(text="<answer>A</answer>")]
    with ScriptedServer(Script(steps=steps)) as srv:
        url = srv.openai_base_url if provider == "openai" else srv.base_url
        r = ts("run", str(ds), "--setting", "crop", "-m", f"{provider}/m", "--base-url", url, "--out",
               str(tmp / "run"), "--no-report")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    (rec,) = records(tmp / "run")
    return r.stderr, rec


def test_deep_and_huge_argument_strings_are_tool_errors_and_the_task_goes_on(tmp_path: Path) -> None:
    deep_list = "[" * 50_000 + "]" * 50_000
    deep_object = '{"a":' * 50_000 + "1" + "}" * 50_000
    just_past = json.dumps({**CROP, "extra": _nested(MAX_ARGUMENT_DEPTH)})  # the crop object adds a level
    huge = json.dumps({**CROP, "note": "x" * MAX_ARGUMENT_CHARS})
    fine = json.dumps(CROP)
    _err, rec = _run(tmp_path, "openai", *(ScriptedCall(name="crop", arguments=a)
                                          for a in (deep_list, deep_object, just_past, huge, fine)))
    assert rec["error"] is None and rec["score"]["passed"] is True
    calls = rec["trajectory"]["tool_calls"]
    assert [c["ok"] for c in calls] == [False, False, False, False, True], [c["error"] for c in calls]
    for c in calls[:3]:
        assert f"more than {MAX_ARGUMENT_DEPTH} levels deep" in c["error"], c["error"]
    assert calls[4]["artifacts"]  # a good call after them still runs
    assert "over the limit of 1,000,000" in calls[3]["error"]
    assert calls[0]["arguments"] == deep_list  # kept as the model sent it


@pytest.mark.parametrize("provider", ["anthropic", "google"])
def test_deep_arguments_decoded_by_the_sdk_are_a_tool_error(tmp_path: Path, provider: str) -> None:
    """Anthropic and Gemini send arguments as a JSON object that their SDK decodes: the depth limit
    applies to the decoded object too, and the next request (which re-sends the call) goes out."""
    _err, rec = _run(tmp_path, provider, ScriptedCall(name="crop", arguments={**CROP, "extra": _nested(60)}))
    assert rec["error"] is None and rec["score"]["passed"] is True, rec["error"]
    (call,) = rec["trajectory"]["tool_calls"]
    assert not call["ok"] and "levels deep" in call["error"]
