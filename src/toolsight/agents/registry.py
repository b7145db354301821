"""Agents by name: the loop a setting (or `--agent NAME`) runs a task with.

An agent turns one Task into a Trajectory (`Solver.run`). The default is the tool loop in
`toolsight.agents.loop`; other agents (a benchmark's official loop, the VCR pipeline) register
here, built-ins by plain import in `_load`, third-party ones through the `toolsight.agents`
entry-point group (`name = "package.module:factory"`). A factory is called as
`factory(model, settings, generate)`. An agent that calls tools by itself names their tool sets
(`toolsets`); the agent frameworks' own sets (`pyvision`, `deepeyes`) are registered here, with the
agents, into the tool registry (`toolsight list tools` shows them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Protocol

from toolsight.agents.settings import AgentSettings
from toolsight.errors import ToolsightError
from toolsight.log.trajectory import Trajectory
from toolsight.models.base import Generate, Model
from toolsight.tasks.schema import Task
from toolsight.tools.base import Artifact, Tool, Toolbox
from toolsight.tools.registry import register_toolset


class Solver(Protocol):
    """What the runner needs from an agent: run one task in its toolbox, return the trajectory."""

    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory: ...


AgentFactory = Callable[[Model, AgentSettings, Generate], Solver]


@dataclass(frozen=True)
class AgentEntry:
    name: str
    factory: AgentFactory
    description: str
    toolsets: tuple[str, ...] = ()


class UnknownAgent(ToolsightError):
    """`--agent NAME` or a setting named an agent that is not registered."""


_AGENTS: dict[str, AgentEntry] = {}
_loaded = False


def register_agent(name: str, factory: AgentFactory, description: str = "", *,
                   toolsets: tuple[str, ...] = ()) -> None:
    """Make `factory(model, settings, generate)` available as agent `name` (replaces a same-named one).

    `toolsets` names tool sets the agent calls by itself (the runner adds them to the task's toolbox)."""
    _AGENTS[name] = AgentEntry(name, factory, description, toolsets)


def _default(model: Model, settings: AgentSettings, generate: Generate) -> Solver:
    from toolsight.agents.loop import Agent

    return Agent(model, settings, generate=generate)


def _vcr(model: Model, settings: AgentSettings, generate: Generate) -> Solver:
    from toolsight.agents.vcr import VCRAgent

    return VCRAgent(model, settings, generate)


def _pyvision(prompt: str) -> AgentFactory:
    def factory(model: Model, settings: AgentSettings, generate: Generate) -> Solver:
        from toolsight.agents.pyvision.agent import PyVisionAgent

        return PyVisionAgent(model, settings, generate, prompt=prompt)

    return factory


def _deepeyes(model: Model, settings: AgentSettings, generate: Generate) -> Solver:
    from toolsight.agents.deepeyes.agent import DeepEyesAgent

    return DeepEyesAgent(model, settings, generate)


def _pyvision_tools() -> list[Tool]:
    from toolsight.agents.pyvision.executor import executor_tools

    return executor_tools()


def _deepeyes_tools() -> list[Tool]:
    from toolsight.agents.deepeyes.zoom import zoom_tools

    return zoom_tools()


def _frameworks() -> None:
    """The agent frameworks and the tool sets they call by themselves (docs/agents.md)."""
    register_toolset("pyvision", _pyvision_tools, "pyvision_python: PyVision's executor (a persistent namespace "
                     "with image_clue_i, plt.show() as PNG, 20 s timeout) on a sandbox kernel; the pyvision "
                     "agent's own tool", needs_sandbox=True)
    register_toolset("deepeyes", _deepeyes_tools, "image_zoom_in_tool: DeepEyes' zoom-in (crop of the original "
                     "image, Qwen smart_resize, bicubic) run in the sandbox; the deepeyes agent's own tool",
                     needs_sandbox=True)
    pv = ("PyVision (agents-x-project/PyVision): the model writes <code> blocks run in a persistent Python "
          "namespace in the sandbox (image_clue_i preloaded, plt.show() figures come back); loop official|toolsight")
    register_agent("pyvision", _pyvision("vistool_with_img_info_v2"), pv, toolsets=("pyvision",))
    register_agent("pyvision-no-tool", _pyvision("no_tool"), "PyVision with its `no_tool` prompt (code in a "
                   "reply still runs)", toolsets=("pyvision",))
    register_agent("pyvision-no-tool-no-cot", _pyvision("no_tool_no_cot"), "PyVision with its `no_tool_no_cot` "
                   "prompt", toolsets=("pyvision",))
    register_agent("deepeyes", _deepeyes, "DeepEyes (Visual-Agent/DeepEyes eval): <tool_call> zoom-ins on the "
                   "original image, for the RL-trained DeepEyes checkpoint behind an OpenAI-compatible server; "
                   "loop official|toolsight", toolsets=("deepeyes",))


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    register_agent("default", _default, "the tool loop: model and tools alternate until an answer or a cap")
    register_agent("vcr", _vcr, "Vision-Centric Reasoning: global analysis, detection terms, "
                   "detect_and_crop_objects, parallel per-crop analysis, integration", toolsets=("detect",))
    _frameworks()
    for ep in entry_points(group="toolsight.agents"):
        register_agent(ep.name, ep.load(), f"from {ep.value}")


def agent_names() -> list[str]:
    _load()
    return list(_AGENTS)


def describe_agents() -> dict[str, str]:
    _load()
    return {k: v.description for k, v in _AGENTS.items()}


def agent_toolsets(name: str) -> tuple[str, ...]:
    """The tool sets agent `name` calls by itself (none for an unknown name)."""
    _load()
    entry = _AGENTS.get(name)
    return entry.toolsets if entry is not None else ()


def make_agent(name: str, model: Model, settings: AgentSettings, generate: Generate) -> Solver:
    """Build agent `name` for one task; an unknown name is a one-line error listing the known ones."""
    _load()
    entry = _AGENTS.get(name)
    if entry is None:
        raise UnknownAgent(f"unknown agent {name!r}; known agents: {', '.join(_AGENTS)}")
    return entry.factory(model, settings, generate)


__all__ = ["AgentFactory", "Generate", "Solver", "agent_names", "agent_toolsets", "describe_agents", "make_agent", "register_agent"]
