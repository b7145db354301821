"""VTC-Bench's official loop builds its Chat Completions bodies itself (the driver's, byte for byte) and
sends them raw: the manifest's `sent` block records those bodies' tools and prompts, checked against what
the scripted server received through the OpenAI SDK (issue 26, "the manifest records the tool schemas and
prompts actually sent")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vtckit import make_data

from clikit import ts
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")


def test_the_official_loop_records_the_raw_requests_it_built(tmp_path: Path) -> None:
    data, run = tmp_path / "data", tmp_path / "run"
    make_data(data, [{"id": "c_1", "question": "How many bars are there? [task:a]"},
                     {"id": "c_2", "question": "Which bar is tallest? [task:b]"}])
    with ScriptedServer(Script(steps=[Step(text="<answer>C</answer>")])) as srv:
        r = ts("run", "vtc-bench", "--data", str(data), "-m", "openai/m", "--base-url", srv.openai_base_url,
               "--out", str(run), "--no-report")
        bodies = [q.body for q in srv.requests]
    assert r.returncode == 0, r.stderr
    sent = json.loads((run / "manifest.json").read_text(encoding="utf-8"))["sent"]
    assert sent["requests"] == len(bodies) >= 2
    wire: list[Any] = []
    for b in bodies:
        wire.extend(t for t in b.get("tools") or [] if t not in wire)
    assert wire and sent["tools"] == wire  # the driver's own schemas in its wire form
    sets: list[list[str]] = []
    for b in bodies:
        names = [t["function"]["name"] for t in b.get("tools") or []]
        sets.extend([names] if names not in sets else [])
    assert sent["tool_sets"] == sets
    system = [_text(m["content"]) for b in bodies for m in b["messages"] if m["role"] == "system"]
    assert sent["system_prompts"] == list(dict.fromkeys(system))
    users = [_text(m["content"]) for b in bodies for m in b["messages"] if m["role"] == "user"]
    assert any("How many bars are there?" in u for u in users)
    assert not any("How many bars are there?" in u for u in sent["user_prompts"])  # templated
    assert any("{prompt}" in u for u in sent["user_prompts"]), sent["user_prompts"]
