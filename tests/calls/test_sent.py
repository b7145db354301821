"""The `sent` log's rules on plain values: distinct values once in the order first seen, a cap per list with
the rest counted, long texts clipped, the task's prompt templated (the longest first), and a resumed run's
earlier block kept under the new one. (The CLI tests check it against real request bodies:
tests/engine/test_manifest_sent.py, tests/benchmarks/vtc_bench/test_vtc_sent.py.)"""

from __future__ import annotations

from toolsight.calls.sent import MAX_DISTINCT, MAX_TEXT, SentLog, template
from toolsight.log.messages import Message
from toolsight.log.toolspec import ToolSpec

CROP = ToolSpec(name="crop", description="Crop the image.", parameters={"type": "object", "properties": {}})


def test_distinct_values_once_in_order_and_a_cap_with_the_rest_counted() -> None:
    log = SentLog()
    for i in range(MAX_DISTINCT + 7):
        log.note([Message.system("S"), Message.user(f"Q{i}: which colour?")], [CROP] if i % 2 else [])
    snap = log.snapshot()
    assert snap["requests"] == MAX_DISTINCT + 7
    assert snap["tools"] == [CROP.model_dump(mode="json")]
    assert snap["tool_sets"] == [[], ["crop"]] and snap["system_prompts"] == ["S"]
    assert snap["user_prompts"][:2] == ["Q0: which colour?", "Q1: which colour?"]
    assert len(snap["user_prompts"]) == MAX_DISTINCT and snap["dropped"] == {"user_prompts": 7}


def test_prompts_are_templated_longest_first_and_long_texts_clipped() -> None:
    assert template("Task: what is 2+2? Answer.", ["what is 2+2?", "2+2"]) == "Task: {prompt} Answer."
    log = SentLog()
    log.note([Message.system("x" * (MAX_TEXT + 10))], [])
    (text,) = log.snapshot()["system_prompts"]
    assert text.startswith("x" * MAX_TEXT) and text.endswith("[10 more characters]") and len(text) < MAX_TEXT + 40


def test_wire_requests_chat_and_responses() -> None:
    log = SentLog()
    tool = {"type": "function", "function": {"name": "opencv_crop", "description": "d", "parameters": {}}}
    log.note_wire({"messages": [{"role": "system", "content": "SYS"},
                                {"role": "user", "content": [{"type": "text", "text": "Look: Q?"},
                                                             {"type": "image_url", "image_url": {"url": "x"}}]}],
                   "tools": [tool]}, ["Q?"])
    log.note_wire({"input": [{"role": "user", "content": [{"type": "input_text", "text": "Q?"}]}],
                   "instructions": "INS", "tools": [{"type": "code_interpreter", "container": {"type": "auto"}}]},
                  ["Q?"])
    snap = log.snapshot()
    assert snap["tools"][0] == tool and snap["tool_sets"] == [["opencv_crop"], ["code_interpreter"]]
    assert snap["system_prompts"] == ["SYS", "INS"] and snap["user_prompts"] == ["Look: {prompt}", "{prompt}"]


def test_a_resume_adds_to_the_earlier_block() -> None:
    first = SentLog()
    first.note([Message.user("A")], [CROP])
    earlier = first.snapshot()
    second = SentLog()
    second.note([Message.user("B")], [])
    second.note([Message.user("A")], [CROP])
    snap = second.snapshot(earlier)
    assert snap["requests"] == 3 and snap["user_prompts"] == ["A", "B"] and snap["tool_sets"] == [["crop"], []]
