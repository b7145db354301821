"""The Toolbox: the tools one setting offers, bound to one task's workspace and artifact store."""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterable
from typing import Any

from toolsight.log.toolspec import ToolSpec
from toolsight.tools.artifacts import ArtifactStore
from toolsight.tools.result import ToolResult
from toolsight.tools.tool import Tool, ToolContext


class Toolbox:
    """The tools one setting offers, bound to one task's workspace and artifact store."""

    def __init__(self, tools: Iterable[Tool], store: ArtifactStore, task_id: str = "") -> None:
        self.tools: dict[str, Tool] = {}
        self.aliases: dict[str, str] = {}
        for t in tools:
            self.tools[t.name] = t
            for a in t.aliases:
                self.aliases.setdefault(a, t.name)
        self.store = store
        self.task_id = task_id
        self.state: dict[str, Any] = {}
        self._calls = 0

    def specs(self) -> list[ToolSpec]:
        ctx = ToolContext(store=self.store, task_id=self.task_id, state=self.state)
        return [t.spec(ctx) for t in self.tools.values()]

    async def call(self, name: str, raw_args: str | dict[str, Any] | None, call_id: str = "") -> ToolResult:
        tool_ = self.tools.get(name) or self.tools.get(self.aliases.get(name, ""))
        if tool_ is None:
            known = ", ".join(self.tools) or "(no tools in this setting)"
            return ToolResult.fail(f"Unknown tool {name!r}. Available tools: {known}.")
        self._calls += 1
        ctx = ToolContext(store=self.store, call_id=call_id or f"call-{self._calls}", task_id=self.task_id,
                          state=self.state)
        t0 = time.perf_counter()
        self.store.begin_call()
        try:
            result = await tool_(raw_args, ctx)
        finally:
            resolved = self.store.end_call()
        result.extra.setdefault("duration_s", round(time.perf_counter() - t0, 6))
        if resolved:
            declared: list[str] = list(result.extra.get("inputs") or [])
            result.extra["inputs"] = [*resolved, *[i for i in declared if i not in resolved]]
        return result

    async def aclose(self) -> None:
        """Release per-task resources tools keep in `state` (e.g. a stateful interpreter)."""
        for v in list(self.state.values()):
            close = getattr(v, "aclose", None)
            if close is not None:
                res = close()
                if inspect.isawaitable(res):
                    await res
