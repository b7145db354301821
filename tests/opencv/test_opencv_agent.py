"""End to end: a scripted model chains rotate -> crop -> threshold -> connected components in the agent loop."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from pathlib import Path

import cv2
import numpy as np

from toolsight.agents.inputs import register_inputs
from toolsight.agents.loop import Agent
from toolsight.agents.settings import AgentSettings
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolCall, Usage
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec
from toolsight.tools.opencv import opencv_tools

PLAN = [
    ("opencv_rotate", {"angle": 180}),
    ("opencv_crop", {"x": 0, "y": 100, "width": 300, "height": 100}),
    ("opencv_threshold", {"mode": "binary", "threshold_value": 128}),
    ("opencv_connected_components_with_stats", {"threshold_mode": "none"}),
]


class ChainModel(Model):
    """Calls the planned tools one per round, each on the image the previous call produced."""

    def __init__(self) -> None:
        super().__init__("test/opencv-chain")
        self.native_tools = True
        self.step = 0

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        usage = Usage(input_tokens=10, output_tokens=5)
        if self.step == 0:
            image = messages[-1].images[0].artifact_id
        else:
            last = next(m for m in reversed(messages) if m.role == "tool")
            found = re.search(r"Edited Image Path: (img-[0-9a-f]+)", last.text)
            if found is None:  # the previous call failed: stop and report it
                return ModelOutput(message=Message(role="assistant", content=[TextPart(text=last.text)]), usage=usage)
            image = found.group(1)
            if self.step == len(PLAN):
                count = json.loads(last.text.split(" INFO: ", 1)[1].split("\n", 1)[0])["total_components"]
                return ModelOutput(message=Message(role="assistant",
                                                   content=[TextPart(text=f"<answer>{count}</answer>")]), usage=usage)
        name, param = PLAN[self.step]
        self.step += 1
        assert name in {t.name for t in tools}
        args = json.dumps({"image": image, "param": param})
        return ModelOutput(message=Message(role="assistant", tool_calls=[ToolCall(id=f"c{self.step}", name=name,
                                                                                  arguments=args)]),
                           usage=usage, finish_reason="tool_calls")


def test_agent_chains_rotate_crop_threshold_components(tmp_path: Path) -> None:
    img = np.zeros((200, 300, 3), np.uint8)
    for x in (30, 110, 190):
        cv2.circle(img, (x + 20, 60), 15, (200, 200, 200), -1)
    (tmp_path / "ds").mkdir()
    cv2.imwrite(str(tmp_path / "ds" / "blobs.png"), img)
    task = Task.model_validate({"id": "cv1", "turns": [{"prompt": "How many blobs?",
                                                          "images": [{"path": "blobs.png"}], "answer": "3"}]})
    box = Toolbox(opencv_tools(), ArtifactStore(tmp_path / "ws"), task.id)
    inputs = register_inputs(task, tmp_path / "ds", box)
    settings = AgentSettings(tools=["opencv"], answer_format="answer_tag", max_rounds=10)
    traj = asyncio.run(Agent(ChainModel(), settings).run(task, box, inputs))
    assert [c.name for c in traj.tool_calls] == [name for name, _ in PLAN]
    assert all(c.ok for c in traj.tool_calls), [c.error for c in traj.tool_calls]
    assert traj.turns[0].answer == "3"
    # provenance: each call consumed the image the previous one produced
    for prev, nxt in itertools.pairwise(traj.tool_calls):
        art = box.store.get(nxt.artifacts[0])
        assert art is not None and art.parents == tuple(prev.artifacts)
