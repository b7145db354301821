"""End to end: generated VTC-style tasks through the agent loop with the interface setting and the
reference agent (real OpenCV tools), checking the prompts the model receives; and the code tool."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PIL import Image

from toolsight.agents.inputs import register_inputs
from toolsight.agents.loop import Agent
from toolsight.benchmarks.vtc_bench import prompts as P
from toolsight.benchmarks.vtc_bench.benchmark import VTC_TOOLSETS
from toolsight.benchmarks.vtc_bench.generate import vtc_starter
from toolsight.benchmarks.vtc_bench.settings import SETTINGS, render_user_prompt, to_agent_settings
from toolsight.models.base import GenerateConfig, Message, ModelOutput
from toolsight.models.baselines import ReferenceModel
from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec
from toolsight.tools.registry import build_tools


def test_starter_with_reference_agent(tmp_path: Path) -> None:
    root = tmp_path / "data"
    tasks = vtc_starter(root, seed=0)
    setting = SETTINGS["interface"]
    agent_settings = to_agent_settings(setting, "toolsight")  # the generic loop, toolsight's tools

    async def run() -> list[Any]:
        out: list[Any] = []
        ref = ReferenceModel(dataset_root=root)
        for i, t in enumerate(tasks):
            box = Toolbox(build_tools(agent_settings.tools, extra=VTC_TOOLSETS), ArtifactStore(tmp_path / f"ws{i}"), task_id=t.id)
            inputs = register_inputs(t, root, box)
            model = ref.for_task(t)
            seen: list[Message] = []
            offered: list[str] = []

            async def gen(msgs: list[Message], tools: list[ToolSpec], cfg: GenerateConfig,
                          model: Any = model, seen: list[Message] = seen, offered: list[str] = offered) -> ModelOutput:
                if not seen:
                    seen.extend(msgs)
                    offered.extend(s.name for s in tools)
                result: ModelOutput = await model.generate(msgs, tools, cfg)
                return result

            traj = await Agent(model, agent_settings, generate=gen).run(t, box, inputs)
            out.append((t.turns[0].answer, traj.turns[0].answer, len(traj.tool_calls), seen, offered))
        return out

    results = asyncio.run(run())
    for task, (gold, got, n_calls, seen, offered) in zip(tasks, results, strict=True):
        assert got == gold, task.id
        assert n_calls == len(task.turns[0].meta["reference_calls"])
        assert len(offered) == 35 and all(n.startswith("opencv_") for n in offered)
        system = [m for m in seen if m.role == "system"]
        assert system and system[0].text == P.SYSTEM_STRONG
        user = next(m for m in seen if m.role == "user")
        name = Path(task.turns[0].images[0].path).name
        w, h = task.turns[0].meta["width"], task.turns[0].meta["height"]
        assert user.text == render_user_prompt(task, name, w, h, setting)


def test_code_interpreter_tool(tmp_path: Path) -> None:
    """The toolsight variant (`vtc_code`) on the sandbox kernel: state persists, the description's own
    `display(Image(...))` pattern works (issue 13 item 8), an image saved without display is returned too,
    tracebacks carry the model's own line numbers, an install attempt is refused before it runs."""
    agent_settings = to_agent_settings(SETTINGS["code"], "toolsight")
    assert agent_settings.tools == ["vtc_code"]

    async def run() -> list[Any]:
        store = ArtifactStore(tmp_path)
        Image.new("RGB", (40, 30), (200, 10, 10)).save(tmp_path / "in.png")
        store.add_file(tmp_path / "in.png", source="input", keep_name=True)
        box = Toolbox(build_tools(agent_settings.tools, extra=VTC_TOOLSETS), store)
        spec = box.specs()[0]
        assert spec.name == "code_interpreter" and spec.description == P.CODE_TOOL_DESCRIPTION
        assert spec.parameters["properties"]["code"]["description"] == P.CODE_PARAM_DESCRIPTION
        out = []
        for args in ({"reasoning": "set x", "code": "x = 41\nprint(x + 1)"}, {"reasoning": "", "code": "x"},
                     {"reasoning": "no code"},
                     {"reasoning": "gray", "code": "import cv2\nim = cv2.imread('in.png')\n"
                      "cv2.imwrite('gray.png', cv2.cvtColor(im, cv2.COLOR_BGR2GRAY))"},
                     {"reasoning": "show", "code": "from IPython.display import Image, display\n"
                      "cv2.imwrite('half.png', im[:15, :20])\ndisplay(Image(filename='half.png'))"},
                     {"reasoning": "fail", "code": "y = 1\nz = im[100, 100]"},
                     {"reasoning": "install", "code": "!pip install opencv-contrib-python\nprint('ran')"}):
            r = await box.call("code_interpreter", args)
            out.append((r.ok, r.text, [(a.file, a.width, a.height, a.tool) for a in r.artifacts]))
        await box.aclose()
        return out

    (ok1, t1, _), (ok2, t2, _), (ok3, t3, _), (ok4, t4, a4), (ok5, t5, a5), (ok6, t6, _), (ok7, t7, _) = asyncio.run(run())
    assert ok1 and t1 == "stdout:\n\n```\n42\n\n```"
    assert ok2 and t2 == "execute_result:\n\n```\n41\n```"  # stateful, like the reference's Jupyter kernel
    assert not ok3 and "code" in t3
    assert ok4 and "The saved image path is: gray.png" in t4 and a4 == [("gray.png", 40, 30, "code_interpreter")]
    # written, then shown: one image (the same bytes), named as the code named it
    assert ok5 and [(w, h) for _, w, h, _ in a5] == [(20, 15)] and "The saved image path is: half.png" in t5
    assert not ok6 and "----> 2 z = im[100, 100]" in t6 and "_M6CountdownTimer" not in t6
    assert "IndexError: index 100 is out of bounds" in t6
    assert not ok7 and "package installation is not available" in t7 and "ran" not in t7
