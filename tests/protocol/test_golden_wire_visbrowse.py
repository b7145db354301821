"""Issue 25: every golden-wire transcript of the official VisBrowse-Bench driver
(`../shared/golden-wire/visbrowse-bench/*.json`, however many) replayed through toolsight's official
loop against the scripted server and the README's web stand-ins, request for request.

Per transcript: the same requests — the agent's and the `visit` tool's summary-model calls — for the
same tasks in the same order, and every body identical after the README's normalisation: the SDK's
key order with `stream: false` and `tool_choice: "auto"`; one-part lists for the system message, text
tool results and the driver's own user messages; images by URL (the dataset's raw GitHub URLs, the
crop's Hugging Face URL) without `detail`; search-hit images inlined as downloaded; replies re-sent
as the SDK's `model_dump()` with their nulls; tool messages with `name`; the summary model's first
request as a list, its re-ask as a string. Numbers compare by value (the driver's `temperature: 1` is
toolsight's 1.0).

Beyond the bodies: the search and page-reader requests the tools made carry the driver's arguments,
and each uploaded crop has the driver's bytes. What the driver wrote per task (`final`: `gen`) is the
record's answer (its sentinel `'No answer'` is a record without one, which the scorer reads as that
sentinel); when the driver's process crashed (`driver.exit_code` ≠ 0), the task it crashed on
is an error record and the tasks after it, which the driver never ran, are not compared (toolsight
records the error and goes on: docs/fidelity.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from vbwire import FOLDER, api_calls, replay, uploads

from goldenwirekit import assert_same_requests, golden_bodies, require, transcripts
from toolsight.benchmarks.visbrowse_bench.loop import NO_ANSWER

FILES = transcripts(FOLDER)


def test_transcripts_are_there() -> None:
    require(FILES, FOLDER)


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_replay_is_identical(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = replay(path, tmp_path, monkeypatch)
    g = out["golden"]
    assert_same_requests(out["bodies"], golden_bodies(g), out["tasks"], [r["task"] for r in g["requests"]])
    assert api_calls(out["web"]) == api_calls(g["web_requests"])
    assert uploads(out["web"]) == uploads(g["web_requests"])
    records = {str(r["task_id"]): r for r in out["records"]}
    written = {str(f["id"]): f for f in g["final"]}
    for key in g["fixture"]["task_order"]:
        rec = records[key]
        if key in written:
            gen = written[key]["gen"]  # the sentinel 'No answer' (no answer in time) is toolsight's None
            assert rec["error"] is None and rec["trajectory"]["turns"][0]["answer"] == (None if gen == NO_ANSWER
                                                                                         else gen), key
            continue
        assert g["driver"]["exit_code"] != 0, f"the driver wrote nothing for task {key} but did not crash"
        assert rec["trajectory"]["stop_reason"] == "error", f"task {key}: the driver crashed here, toolsight did not"
        break  # the driver never ran the tasks after the one it crashed on
