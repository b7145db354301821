"""VTC-Bench's official loop (benchmarks/vtc_bench/loop.py) on three rules of the reference driver
(`FnCallAgent._run` of its Qwen-Agent fork and the client's retry, zhuzil/VTC-Bench @ 484ef7c2) that
no golden transcript reaches. Real runs: runner → OpenAI SDK → scripted server on 127.0.0.1 → real
OpenCV tools; what is checked is the request bodies the server received and the record.

Issue 24 item 7: each test here fails on a one-line change that left every other test green."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from vtckit import run_vtc, texts

from toolsight.benchmarks.vtc_bench import loop as vtc_loop
from toolsight.benchmarks.vtc_bench import prompts as P

FLIP = {"name": "opencv_flip", "arguments": {"image": "$input:t", "param": {"direction": "vertical"}}}
ANSWER = {"text": "<answer>C</answer>"}
MALFORMED = {"text": "", "finish_reason": "malformed_function_call"}
QUESTION = "Which bar is tallest? [task:t]"


@pytest.fixture(autouse=True)
def _no_rerun_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # the driver sleeps 5 s and 10 s before re-running a task; the requests do not depend on it
    monkeypatch.setattr(vtc_loop, "RERUN_WAITS", (0.0, 0.0))


def _run(tmp: Path, steps: list[dict[str, Any]], caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return run_vtc(tmp, [{"id": "chart_1", "question": QUESTION}], {"tasks": {"t": steps}}, caps=caps)


def _flat(body: dict[str, Any]) -> str:
    return "".join(t for m in body["messages"] if m["role"] == "user" for t in texts(m))


def test_the_remaining_calls_note_stops_at_two_and_one_left_gets_the_question_only(tmp_path: Path) -> None:
    """The driver adds "[Note: You have N more conversation opportunities remaining.]" to a tool
    result when 1 < N <= 5 calls are left, and with exactly 1 left only the last-call note (the
    question again) — never "You have 1 more conversation opportunities remaining". A 3-call budget:
    call 1 leaves 2 (the note), call 2 leaves 1 (the question), call 3 has no tools (flattened)."""
    out = _run(tmp_path, [{"tool_calls": [FLIP]}, {"tool_calls": [FLIP]}, ANSWER], caps={"max_rounds": 3})
    bodies = out["bodies"]
    assert len(bodies) == 3 and "tools" in bodies[1] and "tools" not in bodies[2]
    first_tool = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
    assert texts(first_tool)[-1] == P.REMAINING_NOTE.format(n=2)  # its own text item, after the image
    flat = _flat(bodies[2])
    # the driver's question: the first user text between "<image>\n\n" and "\n\n### User Image Path"
    asked = re.search(r"<image>\n\n(.*?)\n\n### User Image Path", texts(bodies[0]["messages"][1])[-1], re.DOTALL)
    assert asked is not None and asked.group(1).startswith(QUESTION)
    last_note = P.LAST_CALL_NOTE.format(question=asked.group(1))
    assert flat.count(P.REMAINING_NOTE.format(n=2)) == 1 and flat.count(last_note) == 1
    assert P.REMAINING_NOTE.format(n=1) not in flat, "1 call left: the driver sends the last-call note only"
    # the second result ends: image path line, then the last-call note straight after it
    second = flat.split("The tool has returned the following result: \n")[-1]
    assert second.endswith(last_note) and "conversation opportunities remaining" not in second
    rec = out["records"]["chart_1"]
    assert rec["error"] is None and rec["trajectory"]["turns"][0]["answer"] == "C"


def test_a_reply_ended_by_a_closing_answer_tag_alone_ends_the_round_and_reruns_the_task(tmp_path: Path) -> None:
    """"It is C.</answer>" (no opening tag, no tool call): the driver's `has_answer_tag` takes either
    tag, so the loop ends — no "Please continue the analysis based on the tool". Its answer
    extraction needs both tags, so the answer is empty and the whole task runs again: the second
    request is the first one again (system + user), and the rerun's tagged answer is kept."""
    out = _run(tmp_path, [{"text": "It is C.</answer>"}, ANSWER])
    bodies = out["bodies"]
    assert len(bodies) == 2
    assert [m["role"] for m in bodies[1]["messages"]] == ["system", "user"]
    assert bodies[1] == bodies[0]  # a new attempt sends exactly the first request again
    assert not any(P.CONTINUE_NUDGE in t for b in bodies for m in b["messages"] for t in texts(m))
    rec = out["records"]["chart_1"]
    assert rec["error"] is None
    assert rec["trajectory"]["turns"][0]["answer"] == "C" and rec["trajectory"]["model_calls"] == 2


def test_a_malformed_call_is_sent_again_unchanged(tmp_path: Path) -> None:
    """A streamed reply ending with finish_reason "malformed_function_call": the driver's client
    re-sends the same request (its max_retries), and the loop goes on with the reply it then gets."""
    out = _run(tmp_path, [MALFORMED, MALFORMED, {"tool_calls": [FLIP]}, ANSWER])
    bodies = out["bodies"]
    assert len(bodies) == 4
    assert bodies[0] == bodies[1] == bodies[2]  # the same request, three times
    assert [m["role"] for m in bodies[3]["messages"]][-2:] == ["assistant", "tool"]
    rec = out["records"]["chart_1"]
    assert rec["error"] is None and rec["trajectory"]["turns"][0]["answer"] == "C"
    assert len(rec["trajectory"]["tool_calls"]) == 1 and rec["trajectory"]["tool_calls"][0]["ok"]


def test_malformed_calls_give_up_after_the_clients_ten_retries(tmp_path: Path) -> None:
    """Eleven sends of the same request (one and ten retries), then the client's own words; the
    driver does not re-run the task for that error."""
    out = _run(tmp_path, [MALFORMED])  # the last step repeats: every reply is malformed
    bodies = out["bodies"]
    assert len(bodies) == vtc_loop.MALFORMED_RETRIES + 1 == 11
    assert all(b == bodies[0] for b in bodies)
    err = out["records"]["chart_1"]["error"]
    assert err is not None and "Maximum number of retries (10) exceeded." in err
