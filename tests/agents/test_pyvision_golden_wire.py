"""Issue 30's check for PyVision: every transcript in `../shared/golden-wire/pyvision/` (any number of
them) replayed through `--agent pyvision` (`pyvision-no-tool` for a `--prompt no_tool` recording) in the
official loop, with the OpenAI SDK against the scripted server.

Per transcript: the same number of requests, for the same task, every body identical after the
README's normalisation (key order, messages, content parts, texts, parameters, and each image's
format, mode, size, bytes, sha256 and data-URL prefix — the input file as it is and matplotlib's PNG,
both labelled image/jpeg); the final response main.py prints; the roles of the saved history and its
last message (the final reply, which is not sent).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentwirekit import first_difference, replay_pyvision, require, transcripts

FILES = transcripts("pyvision")


def test_transcripts_are_there() -> None:
    require(FILES, "pyvision")
    assert {f.name for f in FILES} >= {"s1-answer-at-once.v2.json", "s2-print-and-plot.json", "s3-errors.json"}


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_replay_is_identical(path: Path, tmp_path: Path) -> None:
    out = replay_pyvision(path, tmp_path)
    g = out["golden"]
    want = [r["body"] for r in g["requests"]]
    got = out["bodies"]
    assert out["tasks"] == [r["task"] for r in g["requests"]]
    assert len(got) == len(want), (len(got), len(want))
    for i, (a, b) in enumerate(zip(got, want, strict=True), start=1):
        if a != b:
            pytest.fail(f"request {i} differs at {first_difference(a, b)}")
        assert list(a) == list(b), f"request {i}: key order"
    [rec] = out["records"]
    assert rec["error"] is None, rec["error"]
    traj = rec["trajectory"]
    assert traj["turns"][0]["response"] == g["final"]["final_response"]
    assert [m["role"] for m in traj["messages"]] == g["final"]["saved_messages_roles"]
    last = traj["messages"][-1]
    assert [p["text"] for p in last["content"]] == [p["text"] for p in g["final"]["saved_last_message"]["content"]]
    # every figure the model saw is an artifact made from the input image (effective chains, viewer)
    arts = {a["id"]: a for a in traj["artifacts"]}
    inputs = [a["id"] for a in traj["artifacts"] if a["source"] == "input"]
    for call in traj["tool_calls"]:
        assert call["name"] == "pyvision_python"
        assert all(arts[a]["parents"] and set(arts[a]["parents"]) <= set(inputs) for a in call["artifacts"])
