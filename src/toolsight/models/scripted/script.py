"""The script format scripted models play back, and the player that picks the next step.

A script is a default list of steps, optional per-task lists, and an optional stateless `rule`.
Each step is a text answer, tool calls (arguments as a dict or a raw string, so malformed JSON can
be scripted), or a fault (`status`, `drop`, `stall`, `empty`).

Which list a request plays: the task key is the first `[task:ID]` marker found in the text of the
first user message, else the `X-Toolsight-Task` header (the runner sends the task id in it). Each key has its own step
counter, so concurrent tasks each play their own script. A key without its own list plays the
default list (from its own position); after the last step the last step repeats. With a `rule` (and no list for the key)
the reply is computed from the request alone: `calls` tool calls, counted by the number of tool
results already in the request, then the answer — stateless, so it works at any concurrency.
`batch` sets how the server's batch endpoints behave (delay, failing items, expiry: `BatchScript`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolsight.models.base import ConfigurationError

TASK_MARKER = re.compile(r"\[task:([^\]\s]+)\]")
from toolsight.models.task_context import TASK_HEADER as TASK_HEADER  # noqa: E402 - re-exported


class ScriptedCall(BaseModel):
    """A tool call. `arguments` as a string is sent verbatim (use it for malformed JSON)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None

    def raw_arguments(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


class HostedCode(BaseModel):
    """A run of a provider-hosted code interpreter inside one reply (Responses API `code_interpreter_call`)."""

    model_config = ConfigDict(extra="forbid")

    code: str
    logs: str = ""
    images: list[str] = Field(default_factory=list, description="image URLs the run produced")


class Step(BaseModel):
    """One reply. `fault` turns it into an error; `stall` waits `seconds`, then replies normally."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    reasoning: str | None = None
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    code_interpreter: list[HostedCode] = Field(default_factory=list, description="hosted interpreter runs (Responses API)")
    fault: Literal["status", "drop", "stall", "empty", "malformed"] | None = None
    #: with `fault: malformed`, what is wrong with the 200 reply: a body that is not JSON, not UTF-8,
    #: has no message (`choices: []` / no content blocks / no candidates), or holds a number as the text
    malformed: Literal["not_json", "not_utf8", "no_message", "number_content"] = "not_json"
    status: int = 500
    retry_after: float | None = None
    seconds: float = 0.0
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    @model_validator(mode="after")
    def _check(self) -> Step:
        if self.fault is None and self.text is None and not self.tool_calls:
            raise ValueError("a step needs `text`, `tool_calls` or a `fault`")
        if self.fault == "status" and not 400 <= self.status <= 599:
            raise ValueError("`status` must be an HTTP error status (400-599)")
        return self


class Rule(BaseModel):
    """Stateless load-test mode: `calls` calls of `tool`, then `answer`."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    calls: int = Field(default=1, ge=0)
    answer: str = "done"
    seconds: float = Field(default=0.0, ge=0.0, description="latency of every reply (load tests)")


class Capacity(BaseModel):
    """A server that can serve only `concurrency` requests at once (a rate-limited API, a GPU
    server's batch): each request takes `seconds`; one more is answered with `status` (429) at once
    (`over: reject`), or waits for room, so latency rises with the load (`over: queue`)."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(ge=1)
    seconds: float = Field(default=0.0, ge=0.0, description="service time of every request")
    over: Literal["reject", "queue"] = "reject"
    status: int = Field(default=429, ge=400, le=599)
    retry_after: float | None = None


class BatchScript(BaseModel):
    """How the server's batch endpoints (`scripted/batches.py`) behave. A batch ends at the first
    status read that comes after `polls` earlier reads *and* `seconds` after its submission; then
    its items are played in order, each as if its body had been POSTed to the on-line endpoint."""

    model_config = ConfigDict(extra="forbid")

    polls: int = Field(default=0, ge=0, description="status reads answered 'in progress' before the batch ends")
    seconds: float = Field(default=0.0, ge=0.0, description="the batch ends no sooner than this after submission")
    fail: list[str] = Field(default_factory=list, description="custom ids of items that fail (no step is played)")
    fail_every: int = Field(default=0, ge=0, description="every Nth item (the Nth, 2Nth, ...) fails; 0: none")
    fail_status: int = Field(default=500, ge=400, le=599, description="the HTTP status a failed item reports")
    expire_after: int | None = Field(default=None, ge=0,
                                     description="the batch expires after running this many items; the rest never run")
    hold_after: int | None = Field(default=None, ge=0,
                                   description="batches submitted after the first N stay in progress (a test sets "
                                   "it back to None to let them end); None: every batch may end")


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steps: list[Step] = Field(default_factory=list)
    tasks: dict[str, list[Step]] = Field(default_factory=dict)
    rule: Rule | None = None
    capacity: Capacity | None = None
    #: a streamed Chat Completions reply carries usage in its last chunk `always` (as many compatible
    #: servers do, and the server the golden-wire recordings used), or only when `requested` with
    #: `stream_options.include_usage` (as OpenAI does)
    stream_usage: Literal["always", "requested"] = "always"
    #: the batch endpoints' behaviour (completion delay, failing items, expiry)
    batch: BatchScript = Field(default_factory=BatchScript)
    #: simulate each provider's prompt cache (models/scripted/prompt_cache.py): replies report cached input
    #: tokens as the provider would (OpenAI and Gemini automatically, Anthropic at `cache_control`
    #: breakpoints). Input token totals are the same either way
    prompt_cache: bool = True

    @model_validator(mode="after")
    def _check(self) -> Script:
        if not self.steps and self.rule is None and not self.tasks:
            raise ValueError("a script needs `steps`, `tasks` or a `rule`")
        return self

    @classmethod
    def answer(cls, text: str) -> Script:
        return cls(steps=[Step(text=text)])

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Read a JSON script file; problems become one ConfigurationError naming file and field."""
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigurationError(f"{p}: script file not found") from None
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{p}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            errs = "; ".join(f"{'.'.join(str(x) for x in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors())
            raise ConfigurationError(f"{p}: invalid script: {errs}") from None


def task_key(first_user_text: str) -> str | None:
    m = TASK_MARKER.search(first_user_text)
    return m.group(1) if m else None


def header_task(value: str | None) -> str | None:
    """The task id from an `X-Toolsight-Task` header (percent-encoded by the sender)."""
    return unquote(value) if value else None


class Player:
    """Chooses the step for a request. Not thread-safe: use it from one event loop."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self._pos: dict[str | None, int] = {}
        self._calls = 0
        rule = script.rule
        self._rule_steps: tuple[Step, Step] | None = None
        if rule is not None:  # built once: the rule path runs on every request of a load test
            call = ScriptedCall(name=rule.tool, arguments=rule.arguments)
            self._rule_steps = (Step(tool_calls=[call], seconds=rule.seconds),
                                Step(text=rule.answer, seconds=rule.seconds))

    def next_step(self, key: str | None, tool_results: int) -> Step:
        steps = self.script.tasks.get(key) if key is not None else None
        if steps is None and self._rule_steps is not None:
            return self._rule_steps[0] if tool_results < self._rule_steps_calls() else self._rule_steps[1]
        if steps is None:
            steps = self.script.steps  # each key still keeps its own position in the default list
        if not steps:
            raise ConfigurationError(f"script has no steps for task {key!r}")
        i = self._pos.get(key, 0)
        self._pos[key] = i + 1
        return steps[min(i, len(steps) - 1)]

    def new_call_id(self) -> str:
        self._calls += 1
        return f"call_{self._calls}"

    def _rule_steps_calls(self) -> int:
        return self.script.rule.calls if self.script.rule is not None else 0
