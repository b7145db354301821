"""Helpers for the VisBrowse-Bench loop tests: a scripted in-process model and a one-task runner."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolsight.agents.inputs import register_inputs
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.visbrowse_bench.benchmark import TOOLSETS
from toolsight.benchmarks.visbrowse_bench.loop import VisBrowseAgent
from toolsight.log.trajectory import Trajectory
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolCall, Usage
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec
from toolsight.tools.registry import build_tools
from toolsight.web import WebSession, use_session
from toolsight.web.offline import CorpusBackend
from toolsight.web.server import LocalServer

Reply = Callable[[list[Message], list[ToolSpec]], ModelOutput]


def say(text: str) -> ModelOutput:
    return ModelOutput(message=Message(role="assistant", content=[TextPart(text=text)] if text else []),
                       usage=Usage(input_tokens=3, output_tokens=2))


def calls(text: str, *cs: tuple[str, dict[str, Any] | str]) -> ModelOutput:
    tcs = [ToolCall(id=f"c{i}-{name}", name=name, arguments=a if isinstance(a, str) else json.dumps(a))
           for i, (name, a) in enumerate(cs)]
    return ModelOutput(message=Message(role="assistant", content=[TextPart(text=text)] if text else [],
                                       tool_calls=tcs), finish_reason="tool_calls")


class ScriptModel(Model):
    """Plays `replies` in order (the last repeats); keeps every request (messages and tools)."""

    def __init__(self, replies: list[ModelOutput | Reply], tool_image_mode: str = "user") -> None:
        super().__init__("test/script")
        self.replies = replies
        self.tool_image_mode = tool_image_mode  # type: ignore[assignment]
        self.requests: list[tuple[list[Message], list[ToolSpec], GenerateConfig]] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.requests.append((list(messages), list(tools), config))
        r = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
        out = r(messages, tools) if callable(r) else r
        # fresh ids per request, as a server gives them
        msg = out.message.model_copy(update={"tool_calls": [
            c.model_copy(update={"id": f"{c.id}-r{len(self.requests)}"}) for c in out.message.tool_calls]})
        return out.model_copy(update={"message": msg})


async def run_task(task: Task, root: Path, model: Model, settings: AgentSettings, corpus: Path,
                   work: Path) -> Trajectory:
    store = ArtifactStore(work / task.id)
    box = Toolbox(build_tools(settings.tools, TOOLSETS), store, task.id)
    inputs = register_inputs(task, root, box)
    agent = VisBrowseAgent(model, settings, model.generate, official=settings.loop == "official")
    server = LocalServer(corpus)
    async with WebSession("offline", CorpusBackend(corpus, server), server=server) as s:
        with use_session(s):
            return await agent.run(task, box, inputs)
