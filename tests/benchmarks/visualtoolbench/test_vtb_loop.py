"""The official loop's rules, in process: round cap and its literal answer, parallel calls, task-ending
errors, the no-tool branches, JPEG q85, and the reference driver's generation settings."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image
from vtbkit import official_rows, write_converted

from toolsight.agents.inputs import register_inputs
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.registry import get_benchmark
from toolsight.benchmarks.visualtoolbench import prompts as P
from toolsight.benchmarks.visualtoolbench.benchmark import reference_generate
from toolsight.benchmarks.visualtoolbench.loop import VTBOfficialAgent
from toolsight.log.trajectory import Trajectory
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolCall
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec
from toolsight.tools.registry import build_tools

Policy = Callable[[list[Message], list[ToolSpec]], ModelOutput]


class Scripted(Model):
    def __init__(self, policy: Policy, name: str = "test/vlm") -> None:
        super().__init__(name)
        self.policy = policy
        self.seen: list[tuple[list[Message], list[ToolSpec], GenerateConfig]] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.seen.append((messages, tools, config))
        return self.policy(messages, tools)


def say(text: str) -> ModelOutput:
    return ModelOutput(message=Message(role="assistant", content=[TextPart(text=text)]))


def calls(*cs: tuple[str, str, str]) -> ModelOutput:
    return ModelOutput(message=Message(role="assistant", tool_calls=[ToolCall(id=i, name=n, arguments=a)
                                                                     for i, n, a in cs]))


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Task], Path]:
    root = write_converted(official_rows(), tmp_path_factory.mktemp("vtb") / "data-root")
    lt = get_benchmark("visualtoolbench").load(root)
    return {t.id: t for t in lt.tasks}, lt.root


def _run(task: Task, root: Path, model: Scripted, setting: str, tmp: Path, **upd: object) -> Trajectory:
    bench = get_benchmark("visualtoolbench")
    settings: AgentSettings = bench.setting(setting).model_copy(update=upd)
    toolbox = Toolbox(build_tools(settings.tools, extra=bench.toolsets()), ArtifactStore(tmp / task.id), task.id)
    inputs = register_inputs(task, root, toolbox)
    agent = bench.make_agent(settings, model, model.generate)
    assert isinstance(agent, VTBOfficialAgent)
    return asyncio.run(agent.run(task, toolbox, inputs))


def test_cap_counts_rounds_and_answers_the_literal_string(loaded: tuple[dict[str, Task], Path], tmp_path: Path) -> None:
    tasks, root = loaded
    n = {"i": 0}

    def policy(msgs: list[Message], tools: list[ToolSpec]) -> ModelOutput:
        n["i"] += 1  # two calls per round: the cap counts rounds, so 20 rounds = 40 calls
        return calls((f"a{n['i']}", "calculator", '{"expression": "1+1"}'),
                     (f"b{n['i']}", "calculator", '{"expression": "2*2"}'))

    model = Scripted(policy)
    traj = _run(tasks["st-1"], root, model, "strong", tmp_path)
    assert len(model.seen) == P.MAX_TOOL_CALLS == 20
    assert traj.turns[0].response == "Model hit the maximum number of tool calls"
    assert traj.turns[0].stop_reason == "max_tool_calls" and traj.turns[0].tool_calls == 40
    assert len(traj.tool_calls) == 40 and all(c.ok for c in traj.tool_calls)
    last = model.seen[-1][0]
    assert last[-1].role == "tool" and last[-1].text == "{'result': '4', 'expression': '2*2', 'status': 'success'}"


def test_parallel_image_calls_interleave_tool_and_user_messages(loaded: tuple[dict[str, Task], Path],
                                                                tmp_path: Path) -> None:
    tasks, root = loaded
    code = ("from PIL import Image\nim = Image.open('image_0.png')\n"
            "im.crop((0, 0, {w}, 20)).save(str(PROCESSED_IMAGE_SAVE_PATH) + '/transformed_image_{i}.png')")
    script = [calls(("c1", "python_image_processing", json.dumps({"code": code.format(w=30, i=0)})),
                    ("c2", "python_image_processing", json.dumps({"code": code.format(w=50, i=1)}))),
              say("done")]
    model = Scripted(lambda m, t: script[min(len(model.seen), len(script)) - 1])
    traj = _run(tasks["st-1"], root, model, "strong", tmp_path)
    msgs = model.seen[1][0]
    roles = [(m.role, m.tool_call_id) for m in msgs[-4:]]
    assert roles == [("tool", "c1"), ("user", None), ("tool", "c2"), ("user", None)]  # the reference's order
    assert msgs[-3].text == "Here are the transformed images from the tool call c1."
    for m in (msgs[-3], msgs[-1]):
        img = m.images[0]
        assert img.mime == "image/jpeg"
        with Image.open(img.path) as im:
            assert im.format == "JPEG" and im.mode == "RGB"
    widths = [a.width for a in traj.artifacts if a.source == "tool"]
    assert sorted(widths) == [30, 50]
    desc = model.seen[1][1][0].description
    listed = desc.split("file list: ", 1)[1].split(".\n", 1)[0]
    assert listed.count("/turn_0/transformed_image_") == 2 and listed.endswith("transformed_image_1.png']")
    # the first user message sends only the first of the task's two images
    assert len(model.seen[0][0][1].images) == 1 and len(tasks["st-1"].turns[0].images) == 2


def test_unknown_tool_or_bad_json_ends_the_task_with_processing_error(loaded: tuple[dict[str, Task], Path],
                                                                      tmp_path: Path) -> None:
    tasks, root = loaded
    model = Scripted(lambda m, t: calls(("x1", "web_browse", "{}")))
    traj = _run(tasks["mt-1"], root, model, "strong", tmp_path / "a")
    assert traj.turns[0].response == "Processing Error: 'web_browse'" and traj.stop_reason == "error"
    assert len(traj.turns) == 1 and len(model.seen) == 1
    # the crash is the task's loop error; the call never ran: no tool call (issue 26 item 10)
    assert "'web_browse'" in (traj.loop_error or "") and traj.tool_calls == [] and traj.turns[0].tool_calls == 0
    model = Scripted(lambda m, t: calls(("x1", "calculator", "{not json")))
    traj = _run(tasks["st-1"], root, model, "strong", tmp_path / "b")
    assert traj.turns[0].response.startswith("Processing Error: Expecting property name enclosed in double quotes")
    # a vision call in the no-vision-tool setting is not offered: same ending
    model = Scripted(lambda m, t: calls(("x1", "python_image_processing", '{"code": "print(1)"}')))
    traj = _run(tasks["st-1"], root, model, "no-vision-tool", tmp_path / "c")
    assert [t.name for t in model.seen[0][1]] == ["python_interpreter", "google_search", "browser_get_page_text",
                                                  "historical_weather", "calculator"]
    assert traj.turns[0].response == "Processing Error: 'python_image_processing'"


def test_wrong_arguments_are_the_references_type_error(loaded: tuple[dict[str, Task], Path], tmp_path: Path) -> None:
    tasks, root = loaded
    script = [calls(("c1", "calculator", '{"expr": "1+1"}')), say("ok")]
    model = Scripted(lambda m, t: script[min(len(model.seen), len(script)) - 1])
    traj = _run(tasks["st-1"], root, model, "weak", tmp_path)
    assert model.seen[0][0][0].text == P.SYSTEM_LOW
    assert traj.tool_calls[0].text == "{'error': \"VisionTools.safe_calculator() got an unexpected keyword argument 'expr'\"}"
    assert traj.tool_calls[0].ok is False and traj.turns[0].response == "ok"


def test_no_tools_branch_sends_no_system_prompt_and_no_image_in_multi_turn(loaded: tuple[dict[str, Task], Path],
                                                                           tmp_path: Path) -> None:
    tasks, root = loaded
    model = Scripted(lambda m, t: say("answer"))
    _run(tasks["st-1"], root, model, "no-tools", tmp_path / "a")
    msgs, tools, _ = model.seen[0]
    assert tools == [] and [m.role for m in msgs] == ["user"] and len(msgs[0].images) == 1
    assert isinstance(msgs[0].content[0], TextPart)  # text first, then the image
    model = Scripted(lambda m, t: say("answer"))
    traj = _run(tasks["mt-1"], root, model, "no-tools", tmp_path / "b")
    assert [m.role for m in model.seen[1][0]] == ["user", "assistant", "user"]
    assert all(not m.images for msgs, _, _ in model.seen for m in msgs)  # the reference's bug, reproduced
    assert model.seen[1][0][1].text == "GOLD-ONE: the proximal humerus."
    assert [t.response for t in traj.turns] == ["answer", "answer"]


def test_jpeg_is_quality_85() -> None:
    import tempfile

    from toolsight.benchmarks.visualtoolbench.loop import jpeg_part

    d = Path(tempfile.mkdtemp())
    src = d / "a.png"
    Image.new("RGBA", (64, 48), (10, 200, 30, 128)).save(src)
    part = jpeg_part(src, "img-x", d / ".sent")
    data = Path(part.path).read_bytes()
    ref = io.BytesIO()
    Image.new("RGBA", (64, 48), (10, 200, 30, 128)).convert("RGB").save(ref, format="JPEG", quality=85, optimize=True)
    assert data == ref.getvalue()


@pytest.mark.parametrize(("name", "given", "tools", "temperature"), [
    ("openai/gpt-4o", GenerateConfig(), True, 0.0),
    ("openai/o3", GenerateConfig(), True, 1.0),
    ("openai/gpt-5-mini", GenerateConfig(), False, 1.0),
    ("anthropic/claude-sonnet-4", GenerateConfig(thinking_budget=5000), True, 1.0),
    ("anthropic/claude-sonnet-4", GenerateConfig(thinking_budget=5000), False, 0.0),
    ("openai/gpt-5", GenerateConfig(reasoning_effort="high"), True, None),
    ("openai/gpt-4o", GenerateConfig(temperature=0.3), True, 0.3),
])
def test_reference_generation_settings(name: str, given: GenerateConfig, tools: bool,
                                       temperature: float | None) -> None:
    assert reference_generate(name, given, tools).temperature == temperature
