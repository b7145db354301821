"""The VisBrowse-Bench loop: the reference's behaviour in official mode (bugs included) and the
corrected loop, driven by a scripted model against the offline mini-web."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from vbkit import ScriptModel, calls, run_task, say

from toolsight.agents.loop import TaskFailed
from toolsight.benchmarks.visbrowse_bench.benchmark import visbrowse_settings
from toolsight.benchmarks.visbrowse_bench.loop import BAD_FORMAT, MUST_ANSWER, NUDGE
from toolsight.benchmarks.visbrowse_bench.scorer import make_scorer
from toolsight.log.trajectory import Trajectory
from toolsight.models.base import ImagePart, Message, ModelError, ModelOutput
from toolsight.tasks.dataset import load_dataset
from toolsight.tasks.schema import Task


def _task(miniweb: Path) -> Task:
    return load_dataset(miniweb).tasks[0]


def _run(miniweb: Path, tmp: Path, model: ScriptModel, loop: str = "official", setting: str = "+IS") -> Trajectory:
    s = visbrowse_settings()[setting].model_copy(update={"loop": loop})
    return asyncio.run(run_task(_task(miniweb), miniweb, model, s, miniweb / "corpus", tmp))


def _tool_msgs(msgs: list[Message]) -> list[Message]:
    return [m for m in msgs if m.role == "tool"]


def test_official_runs_parallel_calls_but_keeps_only_the_last_tool_message(miniweb: Path, tmp_path: Path) -> None:
    two = calls("Let me search twice.", ("text_search", {"query": "painting"}), ("image_search", {"query": "film"}))
    model = ScriptModel([two, say("<answer>1999</answer>")])
    traj = _run(miniweb, tmp_path, model)
    assert [c.name for c in traj.tool_calls] == ["text_search", "image_search"]  # both ran
    assert traj.tool_calls[0].extra.get("dropped_by_official_loop") is True
    sent = _tool_msgs(model.requests[1][0])
    assert len(sent) == 1 and sent[0].tool_call_id == traj.tool_calls[1].id and sent[0].name == "image_search"
    assert any(isinstance(p, ImagePart) for p in sent[0].content)  # image hits inlined in the tool message
    assert traj.turns[0].answer == "1999" and traj.stop_reason == "answered"

    corrected = ScriptModel([two, say("<answer>1999</answer>")])
    traj2 = _run(miniweb, tmp_path / "c", corrected, loop="toolsight")
    sent2 = corrected.requests[1][0]
    assert [m.name for m in _tool_msgs(sent2)] == ["text_search", "image_search"]
    # a model that wants images in a user message gets them there in the corrected loop
    assert not any(isinstance(p, ImagePart) for m in _tool_msgs(sent2) for p in m.content)
    assert sent2[-1].role == "user" and sent2[-1].images
    assert "dropped_by_official_loop" not in traj2.tool_calls[0].extra


def test_fifteen_rounds_then_must_answer_then_no_answer(miniweb: Path, tmp_path: Path) -> None:
    model = ScriptModel([calls("Searching.", ("text_search", {"query": "x"}))])
    traj = _run(miniweb, tmp_path, model)
    assert len(model.requests) == 16 and len(traj.tool_calls) == 15
    last_msgs, last_tools, _ = model.requests[-1]
    assert last_msgs[-1].role == "user" and last_msgs[-1].text == MUST_ANSWER
    assert len(last_tools) == 5  # the reference still offers the tools on the last call
    assert traj.stop_reason == "max_rounds" and traj.turns[0].answer is None
    score = asyncio.run(make_scorer("official").score(_task(miniweb), traj.responses, _ctx()))
    assert score.details["gen"] == "No answer" and score.value == 0.0

    corrected = ScriptModel([calls("Searching.", ("text_search", {"query": "x"}))])
    _run(miniweb, tmp_path / "c", corrected, loop="toolsight")
    # the corrected loop forces an answer on the last call: the tools stay (the cached prefix), forbidden
    _, final_tools, final_config = corrected.requests[-1]
    assert len(final_tools) == 5 and final_config.tool_choice == "none" and final_config.prompt_cache == "read"
    assert {c.tool_choice for _, _, c in corrected.requests[:-1]} == {"auto"}
    assert {c.prompt_cache for _, _, c in corrected.requests[:-1]} == {"write"}
    assert {c.prompt_cache for _, _, c in model.requests} == {"off"}  # the official loop asks for no caching


def _ctx() -> Any:
    from toolsight.scoring.base import ScoreContext

    return ScoreContext(judge=None)


def test_official_answer_is_the_first_tag_unstripped(miniweb: Path, tmp_path: Path) -> None:
    model = ScriptModel([say("Done. <answer> 1999 </answer> or <answer>2000</answer>")])
    traj = _run(miniweb, tmp_path, model)
    assert traj.turns[0].answer == " 1999 "
    traj2 = _run(miniweb, tmp_path / "c", ScriptModel([say("<answer> 1999 </answer> <answer>2000</answer>")]),
                 loop="toolsight")
    assert traj2.turns[0].answer == "2000"


def test_tool_call_without_text_crashes_the_reference(miniweb: Path, tmp_path: Path) -> None:
    model = ScriptModel([calls("", ("text_search", {"query": "x"})), say("<answer>1</answer>")])
    traj = _run(miniweb, tmp_path, model)
    assert traj.stop_reason == "error" and len(model.requests) == 1
    # the driver's crash is the task's loop error; the call never ran, so it is no tool call (issue 26 item 9)
    assert traj.tool_calls == [] and "TypeError" in (traj.loop_error or "") and "'text_search'" in (traj.loop_error or "")
    ok = _run(miniweb, tmp_path / "c", ScriptModel([calls("", ("text_search", {"query": "x"})),
                                                     say("<answer>1</answer>")]), loop="toolsight")
    assert ok.turns[0].answer == "1" and ok.tool_calls[0].ok


@pytest.mark.parametrize("bad", [("teleport", {"to": "mars"}), ("text_search", '{"query": ')])
def test_unknown_tool_or_bad_json_crashes_the_reference_only(miniweb: Path, tmp_path: Path,
                                                             bad: tuple[str, object]) -> None:
    step = calls("Trying.", bad)  # type: ignore[arg-type]
    traj = _run(miniweb, tmp_path, ScriptModel([step, say("<answer>1</answer>")]))
    assert traj.stop_reason == "error" and traj.tool_calls == [] and traj.loop_error
    model = ScriptModel([step, say("<answer>1</answer>")])
    fixed = _run(miniweb, tmp_path / "c", model, loop="toolsight")
    assert fixed.turns[0].answer == "1"
    err = _tool_msgs(model.requests[1][0])[0].text
    assert "Unknown tool 'teleport'" in err or "not valid JSON" in err


def test_text_reply_resends_the_stale_tool_message(miniweb: Path, tmp_path: Path) -> None:
    model = ScriptModel([calls("Search.", ("text_search", {"query": "heron"})), say("Hmm, thinking."),
                         say("<answer>x</answer>")])
    traj = _run(miniweb, tmp_path, model)
    third = model.requests[2][0]
    tools = _tool_msgs(third)
    assert len(tools) == 2 and tools[0] == tools[1]  # the same tool message again, same call id
    assert traj.turns[0].answer == "x"

    first = ScriptModel([say("Let me think."), say("<answer>x</answer>")])
    crashed = _run(miniweb, tmp_path / "b", first)
    assert crashed.stop_reason == "error" and len(first.requests) == 1

    nudged = ScriptModel([say("Let me think."), say("<answer>x</answer>")])
    t3 = _run(miniweb, tmp_path / "c", nudged, loop="toolsight")
    assert nudged.requests[1][0][-1].text == NUDGE and t3.turns[0].answer == "x"


def test_empty_tool_name_and_empty_replies(miniweb: Path, tmp_path: Path) -> None:
    model = ScriptModel([calls("Oops.", ("", {})), say("<answer>y</answer>")])
    traj = _run(miniweb, tmp_path, model)
    assert model.requests[1][0][-1].text == BAD_FORMAT and traj.tool_calls == []

    empty = ScriptModel([say("")])
    t2 = _run(miniweb, tmp_path / "e", empty)
    assert len(empty.requests) == 11 and t2.stop_reason == "no_answer" and t2.retries == 11


def test_crop_image_goes_into_the_tool_message_with_its_url(miniweb: Path, tmp_path: Path) -> None:
    task = _task(miniweb)
    url = task.turns[0].meta["image_urls"][0]
    model = ScriptModel([calls("Zoom.", ("crop_image", {"image_url": url, "bbox": [0.1, 0.1, 0.4, 0.4]})),
                         say("<answer>z</answer>")])
    traj = _run(miniweb, tmp_path, model)
    msg = _tool_msgs(model.requests[1][0])[0]
    assert isinstance(msg.content[0], ImagePart) and msg.content[1].text.startswith(  # type: ignore[union-attr]
        "The url of cropped image: https://img.toolsight.test/")
    crop = traj.tool_calls[0]
    assert crop.name == "crop_image" and crop.ok and crop.artifacts  # the paper's name is accepted
    input_id = traj.turns[0].seen_images[0]
    assert crop.inputs == [] or input_id in crop.inputs
    art = next(a for a in traj.artifacts if a.id == crop.artifacts[0])
    assert art.parents == (input_id,)  # provenance back to the query picture
    # 10 % padding per side of the box: 0.3 × 640 px box → 19.2 px pad → [44, 44, 275, 275)
    assert crop.extra["box_px"] == [44, 44, 275, 275]
    assert (art.width, art.height) == (231, 231)


def test_model_errors_end_the_task_with_an_error(miniweb: Path, tmp_path: Path) -> None:
    def boom(msgs: list[Message], tools: list[object]) -> ModelOutput:
        raise ModelError("HTTP 400: bad request", status=400)

    with pytest.raises(TaskFailed, match="model error: HTTP 400"):
        _run(miniweb, tmp_path, ScriptModel([boom]))  # type: ignore[list-item]
