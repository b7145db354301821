"""The text tool protocol for models without native function calling.

The model writes `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`; tool results come back
as user messages wrapped in `<tool_response>`. The tool list is described in the system prompt.
"""

from __future__ import annotations

import json
import re

from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import ToolCall

_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def describe_tools(specs: list[ToolSpec]) -> str:
    lines = [
        "You can call tools. To call one, write exactly:",
        '<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>',
        "and stop; the result comes back in <tool_response>...</tool_response>. Available tools:",
    ]
    for s in specs:
        lines.append(json.dumps({"name": s.name, "description": s.description, "parameters": s.parameters}))
    return "\n".join(lines)


def parse_tool_calls(text: str, round_no: int) -> list[ToolCall]:
    """Tool calls written in the text; a malformed body is kept raw so the tool reports it."""
    calls: list[ToolCall] = []
    for i, m in enumerate(_CALL.finditer(text)):
        body = m.group(1)
        name = "invalid_tool_call"
        args = body
        try:
            obj = json.loads(body)
            if isinstance(obj, dict) and isinstance(obj.get("name"), str):
                name = obj["name"]
                a = obj.get("arguments", {})
                args = a if isinstance(a, str) else json.dumps(a)
        except json.JSONDecodeError:
            pass
        calls.append(ToolCall(id=f"text-{round_no}-{i}", name=name, arguments=args))
    return calls
