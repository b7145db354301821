"""The Tool interface: a name, a description, a JSON schema and an async call; the call context.

Arguments from a model arrive as a JSON string (or dict); they are parsed here, and any failure
becomes a failed ToolResult the model can act on — never an exception that ends the task.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsight.errors import TaskAbort
from toolsight.log.arguments import ArgumentsError, check_depth, load_arguments
from toolsight.log.toolspec import ToolSpec
from toolsight.tools.artifacts import ArtifactStore
from toolsight.tools.result import ToolError, ToolResult


@dataclass
class ToolContext:
    """What a tool call may touch: its task's workspace and artifact store, and its call id."""

    store: ArtifactStore
    call_id: str = ""
    task_id: str = ""
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def workspace(self) -> Path:
        return self.store.workspace


ToolFn = Callable[..., Awaitable[ToolResult] | ToolResult]


class Tool:
    """A callable tool with a JSON schema. Subclass, or build one with @tool from a function."""

    name: str
    description: str
    parameters: dict[str, Any]
    #: other names the toolbox accepts for this tool without advertising them (e.g. a paper's names)
    aliases: tuple[str, ...] = ()

    def __init__(self, name: str, description: str, parameters: dict[str, Any]) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters

    def spec(self, ctx: ToolContext | None = None) -> ToolSpec:
        """The schema sent to the model (a tool may describe the task's files, given a context)."""
        # built once per tool, not per task: the same name, description and schema give the same spec
        key = (self.name, self.description, id(self.parameters))
        cached: tuple[tuple[str, str, int], ToolSpec] | None = self.__dict__.get("_spec_cache")
        if cached is None or cached[0] != key:
            cached = (key, ToolSpec(name=self.name, description=self.description, parameters=self.parameters))
            self.__dict__["_spec_cache"] = cached
        return cached[1]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    def startup_warning(self, web: Any) -> str | None:
        """What a run should be told before it starts, given its web session (None without one):
        e.g. that this tool cannot do what its reference did with this set-up. None by default."""
        return None

    async def __call__(self, raw_args: str | dict[str, Any] | None, ctx: ToolContext) -> ToolResult:
        """Parse, validate and run; any failure becomes a failed ToolResult the model can read."""
        try:
            args = parse_arguments(raw_args)
        except ToolError as exc:
            return ToolResult.fail(f"Error calling {self.name}: {exc}")
        try:
            return await self.run(args, ctx)
        except TaskAbort:
            raise
        except ToolError as exc:
            return ToolResult.fail(f"Error in {self.name}: {exc}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not end the task
            text = scrub_host_paths(f"{type(exc).__name__}: {exc}", ctx.workspace)
            return ToolResult.fail(f"Error in {self.name}: {text}")


_ABS_PATH = re.compile(r"(?<![\w.~/-])/(?:[\w.@+-]+/)+[\w.@+-]*")


def scrub_host_paths(text: str, workspace: Path) -> str:
    """`text` without host paths: a path inside the task workspace becomes workspace-relative, any
    other absolute path `<host path>` (an unexpected error's text is shown to the model)."""
    root = str(workspace)

    def sub(m: re.Match[str]) -> str:
        path = m.group(0)
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return path[len(root):].lstrip("/") or "."
        return "<host path>"

    return _ABS_PATH.sub(sub, text)


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """A call's arguments as an object, bounded in size and depth (`log.arguments`); anything else is
    a ToolError the model reads."""
    if raw is None or raw == "":
        return {}
    try:
        if isinstance(raw, dict):
            check_depth(raw)
            return raw
        val = load_arguments(raw)
    except ArgumentsError as exc:
        raise ToolError(str(exc)) from None
    if not isinstance(val, dict):
        raise ToolError("arguments must be a JSON object")
    return val
