"""The check of issue 13, widened by issue 25: every golden-wire transcript of the official VTC-Bench
driver (`../shared/golden-wire/vtc-bench/*.json`, however many there are) replayed through toolsight's
official loop against the scripted server.

Per transcript: the same number of requests, for the same tasks, in the same order, and every
request body identical after the transcripts' own normalisation (README of the transcripts) —
key order, messages, content parts, image format/size/bytes/sha256, texts, parameters and the
tool schemas; for the code track the Jupyter outputs too (`Cell In[12]`, context lines, the served
display image and the matplotlib figure). Script tokens (`$input`) are resolved in object and
raw-string arguments alike (REPLAY.md). One field is masked on both sides, by name: the frame list
of the driver's generic tool-error traceback (`<TRACEBACK frames=N: file:function | …>`), which names
the driver's own source files (docs/fidelity.md). One setting follows the recording's environment
rather than the published reference: the code interpreter's init cell (`INIT_VARIANT = "recorded"`:
the recording's CJK font was an empty stand-in, so its init cell stopped before `%xmode Minimal`).
What the driver finally recorded per task (`final`) must match the record's answer and final text;
a `final` that records an error must be an error record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goldenwirekit import (
    assert_same_requests,
    golden_bodies,
    is_error_final,
    mask_tracebacks,
    replay,
    require,
    task_of_final,
    transcripts,
)
from toolsight.benchmarks.vtc_bench import loop as vtc_loop
from toolsight.benchmarks.vtc_bench.tools import code as vtc_code

FILES = transcripts("vtc-bench")


@pytest.fixture(autouse=True)
def _no_rerun_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # the driver sleeps 5 s and 10 s before re-running a task; the order of requests does not depend on it
    monkeypatch.setattr(vtc_loop, "RERUN_WAITS", (0.0, 0.0))
    # the recording's environment: the code interpreter's CJK font was an empty stand-in (transcripts'
    # README), so the reference's init cell stopped at the font line (no `%xmode Minimal`)
    monkeypatch.setattr(vtc_code, "INIT_VARIANT", "recorded")


def test_transcripts_are_there() -> None:
    require(FILES)
    assert all(p.stem.rsplit(".", 1)[-1] in ("interface", "strong_gt", "weak", "code") for p in FILES), FILES


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_replay_is_identical(path: Path, tmp_path: Path) -> None:
    out = replay(path, tmp_path)
    g = out["golden"]
    want = [mask_tracebacks(b) for b in golden_bodies(g)]
    got = [mask_tracebacks(b) for b in out["bodies"]]
    assert_same_requests(got, want, out["tasks"], [r["task"] for r in g["requests"]])
    by_id = {r["task_id"]: r for r in out["records"]}
    for fin in g["final"]:
        rec = by_id[out["rows"][task_of_final(fin, out["rows"])]["id"]]
        if is_error_final(fin):  # the driver gave up on the task: so must toolsight
            assert rec["error"] is not None or rec["trajectory"]["stop_reason"] in ("error", "model_error"), rec
            continue
        assert rec["error"] is None, rec["error"]
        turn = rec["trajectory"]["turns"][0]
        assert turn["answer"] == fin["agent_answer"]
        assert turn["response"] == fin["full_response"]
        # provenance for the toolchain metrics: every tool output is an artifact made from its input
        arts = {a["id"]: a for a in rec["trajectory"]["artifacts"]}
        for call in rec["trajectory"]["tool_calls"]:
            assert all(arts[a]["parents"] == tuple(call["inputs"]) or arts[a]["parents"] == call["inputs"]
                       for a in call["artifacts"])
