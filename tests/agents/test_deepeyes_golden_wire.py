"""Issue 30's check for DeepEyes: every transcript in `../shared/golden-wire/deepeyes/` (any number of
them) replayed through `--agent deepeyes` in the official loop, with the OpenAI SDK against the
scripted server; each V* record is one task (question, options, image), in the order the driver ran.

Per transcript: the driver's requests (its judge requests, `judge-*`, belong to V*'s scorer
`judge_result.py`, not to the agent) in the same order and identical after the normalisation of
PROTOCOL.md (the system prompt with its schema, the instruction, the input JPEG as it is, each crop's
PNG bytes labelled image/jpeg, the parameters); and per task what the driver saved: `pred_ans` (the
turn's answer) and `status` (`error` → the turn's stop reason `error`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentwirekit import first_difference, replay_deepeyes, require, transcripts

FILES = transcripts("deepeyes")


def test_transcripts_are_there() -> None:
    require(FILES, "deepeyes")
    assert {f.name for f in FILES} >= {"d1-answer-at-once.json", "d2-zoom.json"}


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_replay_is_identical(path: Path, tmp_path: Path) -> None:
    out = replay_deepeyes(path, tmp_path)
    g = out["golden"]
    driver = [r for r in g["requests"] if not str(r["task"]).startswith("judge-")]
    assert out["tasks"] == [r["task"] for r in driver]
    got = out["bodies"]
    assert len(got) == len(driver)
    for i, (a, r) in enumerate(zip(got, driver, strict=True), start=1):
        if a != r["body"]:
            pytest.fail(f"request {i} ({r['task']}) differs at {first_difference(a, r['body'])}")
        assert list(a) == list(r["body"]), f"request {i}: key order"
    by_id = {r["task_id"]: r for r in out["records"]}
    finals = {k: v for k, v in g["final"].items() if k != "final_acc.json"}
    assert finals
    for key, fin in finals.items():
        rec = by_id[Path(key).stem]
        assert rec["error"] is None, rec["error"]
        turn = rec["trajectory"]["turns"][0]
        assert (turn["answer"] or "") == fin["pred_ans"], key
        assert (turn["stop_reason"] == "error") == (fin["status"] == "error"), key
        crops = [a for a in rec["trajectory"]["artifacts"] if a["source"] == "tool"]
        inputs = [a["id"] for a in rec["trajectory"]["artifacts"] if a["source"] == "input"]
        assert all(list(a["parents"]) == inputs for a in crops)  # each crop is cut from the original
