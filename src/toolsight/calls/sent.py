"""What a run's loop really sent to the model: the tool schemas, the system prompts and the user prompt
templates, as the manifest's `sent` block records them.

The manifest's `tools` and `agent_settings` say what the setting declares; an official loop may send
other names, wordings or schemas (its benchmark's own), and a loop drops tools on its last call. So
every request is noted as it goes out — `note` for the toolsight messages and tool specs an agent
passes to `generate`, `note_wire` for a request body an official loop built itself (a raw Chat
Completions or Responses call) — and the distinct values are kept:

- `tools`: every tool schema sent, once per distinct schema, in the form it was handed over (a tool
  spec `{name, description, parameters}`, or the wire's own dict for a raw request);
- `tool_sets`: the distinct lists of tool names one request offered (`[]` for a call without tools);
- `system_prompts`: the distinct system texts;
- `user_prompts`: the distinct user texts with the task's own prompt replaced by `{prompt}` — the
  template a loop wraps around each task, and the fixed texts it adds (nudges, feedback, last-call notes).

Texts are kept up to `MAX_TEXT` characters and `MAX_DISTINCT` distinct values per list; how many
further distinct values were seen is counted (`dropped`), so a per-task text never grows the manifest
without bound.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from toolsight.log.messages import Message
from toolsight.log.toolspec import ToolSpec

#: how many distinct values each list keeps
MAX_DISTINCT = 50
#: how many characters of one text are kept
MAX_TEXT = 4000
#: the placeholder that stands for the task's own prompt in a user prompt template
PROMPT = "{prompt}"
LISTS = ("tools", "tool_sets", "system_prompts", "user_prompts")


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def _key(value: Any) -> Any:
    """What tells distinct values apart: a text itself, a list of names as a tuple (both hashable,
    so no JSON encoding and hashing per request), anything else by the digest of its JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return ("#", _digest(value))


#: tool specs seen by `note`, by identity: (the spec, its key, its dump) — a setting builds its
#: specs once, so each request's tools cost a dict look-up, not a dump and a digest each
_SPEC_MEMO_MAX = 1024


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"… [{len(text) - MAX_TEXT} more characters]"


def template(text: str, prompts: Sequence[str]) -> str:
    """`text` with each of the task's prompts (the longest first) replaced by `{prompt}`."""
    for p in sorted((p for p in prompts if p.strip()), key=len, reverse=True):
        text = text.replace(p, PROMPT)
    return text


def _wire_text(content: Any) -> str:
    """The text of a wire message's content: a string, or the text items of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content
                       if isinstance(p, dict) and p.get("type") in ("text", "input_text"))
    return ""


def _wire_tool_name(tool: Any) -> str:
    """The name of a wire tool: Chat Completions nests it under `function`; Responses and Anthropic
    have it at the top; a hosted tool (`code_interpreter`) is named by its type."""
    if not isinstance(tool, dict):
        return str(tool)
    fn = tool.get("function")
    if isinstance(fn, dict) and fn.get("name"):
        return str(fn["name"])
    return str(tool.get("name") or tool.get("type") or "")


class SentLog:
    """The distinct tool schemas and prompts a run's requests carried (see the module docstring)."""

    def __init__(self) -> None:
        self.requests = 0
        self.values: dict[str, list[Any]] = {k: [] for k in LISTS}
        self.seen: dict[str, set[Any]] = {k: set() for k in LISTS}
        self.dropped: dict[str, int] = dict.fromkeys(LISTS, 0)
        self._specs: dict[int, tuple[ToolSpec, Any, dict[str, Any]]] = {}

    def _add(self, kind: str, value: Any, key: Any = None) -> None:
        if key is None:
            key = _key(value)
        if key in self.seen[kind]:
            return
        self.seen[kind].add(key)
        if len(self.values[kind]) < MAX_DISTINCT:
            self.values[kind].append(value)
        else:
            self.dropped[kind] += 1

    def _texts(self, system: Iterable[str], user: Iterable[str], prompts: Sequence[str]) -> None:
        for text in system:
            if text:
                self._add("system_prompts", _clip(text))
        for text in user:
            if text:
                self._add("user_prompts", _clip(template(text, prompts)))

    def note(self, messages: Sequence[Message], tools: Sequence[ToolSpec], prompts: Sequence[str] = ()) -> None:
        """One request an agent passes to `generate`: its messages and tool specs."""
        self.requests += 1
        for t in tools:
            memo = self._specs.get(id(t))
            if memo is None or memo[0] is not t:
                dump = t.model_dump(mode="json")
                memo = (t, _key(dump), dump)
                if len(self._specs) >= _SPEC_MEMO_MAX:
                    self._specs.clear()
                self._specs[id(t)] = memo
            if memo[1] not in self.seen["tools"]:
                self._add("tools", memo[2], memo[1])
        self._add("tool_sets", [t.name for t in tools])
        self._texts((m.text for m in messages if m.role == "system"),
                    (m.text for m in messages if m.role == "user"), prompts)

    def note_wire(self, request: dict[str, Any], prompts: Sequence[str] = ()) -> None:
        """One request body an official loop built itself (Chat Completions `messages` or Responses
        `input`/`instructions`), its tools in the wire's own form."""
        self.requests += 1
        tools = request.get("tools") or []
        for t in tools:
            self._add("tools", t)
        self._add("tool_sets", [_wire_tool_name(t) for t in tools])
        items = [m for m in (request.get("messages") or request.get("input") or []) if isinstance(m, dict)]
        system = [_wire_text(m.get("content")) for m in items if m.get("role") in ("system", "developer")]
        if isinstance(request.get("instructions"), str):
            system.append(request["instructions"])
        self._texts(system, (_wire_text(m.get("content")) for m in items if m.get("role") == "user"), prompts)

    def absorb(self, block: dict[str, Any]) -> None:
        """Add a block another log made (`snapshot` or `drain`: a resumed run's manifest, a Ray worker's
        new values): its values not seen yet, its request and dropped counts."""
        self.requests += int(block.get("requests") or 0)
        for kind in LISTS:
            for v in block.get(kind) or []:
                self._add(kind, v)
            self.dropped[kind] += int((block.get("dropped") or {}).get(kind, 0))

    def drain(self) -> dict[str, Any]:
        """What was noted since the last drain, as a block (`absorb` takes it); values already drained
        are remembered and never sent again (a Ray worker sends its new values with each task)."""
        out = self._block()
        self.requests = 0
        self.values = {k: [] for k in LISTS}
        self.dropped = dict.fromkeys(LISTS, 0)
        return out

    def snapshot(self, earlier: dict[str, Any] | None = None) -> dict[str, Any]:
        """The manifest's `sent` block: this log on top of `earlier` (what a resumed run's earlier
        invocations recorded), each list's values in the order first seen."""
        merged = SentLog()
        merged.absorb(earlier or {})
        merged.absorb(self._block())
        return merged._block()

    def _block(self) -> dict[str, Any]:
        out: dict[str, Any] = {"requests": self.requests}
        out.update({k: list(self.values[k]) for k in LISTS})
        out["dropped"] = {k: n for k, n in self.dropped.items() if n}
        return out
