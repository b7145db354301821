"""Issue 25: every golden-wire transcript of the official PhysToolBench driver
(`../shared/golden-wire/phystoolbench/*.json`, however many) replayed through toolsight's official
`both` setting against the scripted server, request for request.

Per transcript: the same requests for the same prompts in the same order — including the requests
a failing call makes: the OpenAI SDK's own two retries inside each attempt (an HTTP 500 answered by
the same request again), then the next attempt — and every body identical after the README's
normalisation: key order (`model, messages, max_tokens, temperature`), the prompt then the image as
a PNG data URL without `detail`, each image in the mode the dataset stores (palette, grey, RGB; RGBA
converted to RGB), byte for byte. The health probe of toolsight's outage breaker sends no chat
request (only chat requests are compared; the scripted server would record one).

When the driver's process ended the run (a call that failed on every try: `driver.exit_code` ≠ 0)
its requests are compared as the start of toolsight's, the task it stopped on must be an error
record, and the tasks it never reached are not compared — toolsight records the error and goes on
(docs/fidelity.md). What the driver wrote per item (`final`) must be the records' responses.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ptbwire import FOLDER, replay

from goldenwirekit import assert_same_requests, golden_bodies, require, transcripts

FILES = transcripts(FOLDER)


def test_transcripts_are_there() -> None:
    require(FILES, FOLDER)


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_replay_is_identical(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = replay(path, tmp_path, monkeypatch)
    g = out["golden"]
    want, want_tasks = golden_bodies(g), [r["task"] for r in g["requests"]]
    got, got_tasks = out["bodies"], out["tasks"]
    records = {r["task_id"]: r for r in out["records"]}
    if g["driver"]["exit_code"] != 0:  # the driver gave up the whole run on its last task
        got, got_tasks = got[:len(want)], got_tasks[:len(want)]
        stopped = want_tasks[-1]
        ids = [rid for rid, r in records.items() if stopped in r["trajectory"]["turns"][0].get("prompt", "")
               or rid.endswith("@cot" if stopped.endswith("c") else "@no-cot")]
        assert any(records[i]["error"] for i in ids), f"toolsight recorded no error for {stopped}"
    assert_same_requests(got, want, got_tasks, want_tasks)
    for item, fin in g["final"].items():
        cot, no_cot = records[f"{item}@cot"], records[f"{item}@no-cot"]
        assert cot["trajectory"]["turns"][0]["response"] == fin["cot_response_full"], item
        assert no_cot["trajectory"]["turns"][0]["response"] == fin["no_cot_answer"], item
