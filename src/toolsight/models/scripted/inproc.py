"""`mock/NAME`: plays a script in-process, without HTTP — for the engine benchmark and quick demos.

Same script format and task-key rule as the server (the `[task:ID]` marker in the first user
message, else the task the runner marked current). Faults become the errors a provider would raise: `status` -> ModelError (retryable for
429/5xx, with `retry_after`), `drop` -> retryable connection error, `stall` longer than
`config.timeout` -> retryable timeout, `empty` -> an empty assistant message.
"""

from __future__ import annotations

import asyncio

from toolsight.log.toolspec import ToolSpec
from toolsight.models._common import is_retryable_status
from toolsight.models.base import (
    FinishReason,
    GenerateConfig,
    ImagePart,
    Message,
    Model,
    ModelError,
    ModelOutput,
    TextPart,
    ToolCall,
    Usage,
)
from toolsight.models.scripted.script import Player, Script, task_key
from toolsight.models.task_context import current_task


class ScriptedModel(Model):
    """A model that answers from a script. Cheap: no validation beyond building the ModelOutput."""

    tool_image_mode = "user"

    def __init__(self, name: str, script: Script) -> None:
        super().__init__(name)
        self.player = Player(script)

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        first = ""
        tool_results = 0
        for m in messages:
            if m.role == "tool":
                tool_results += 1
            elif m.role == "user" and not first:
                first = m.text
        step = self.player.next_step(task_key(first) or current_task(), tool_results)
        if step.fault is not None or step.seconds:
            if step.seconds:
                if step.seconds > config.timeout:
                    await asyncio.sleep(config.timeout)
                    raise ModelError(f"{self.name}: no response within {config.timeout:g} s (timeout)",
                                     retryable=True, kind="timeout")
                await asyncio.sleep(step.seconds)
            if step.fault == "status":
                raise ModelError(f"{self.name}: HTTP {step.status}: scripted error {step.status}",
                                 retryable=is_retryable_status(step.status), retry_after=step.retry_after,
                                 status=step.status)
            if step.fault == "drop":
                raise ModelError(f"{self.name}: connection failed: scripted drop", retryable=True,
                                 kind="connection")
            if step.fault == "empty":
                return ModelOutput(message=Message(role="assistant"), usage=Usage(input_tokens=1, output_tokens=1),
                                   model=self.name)
        content: list[TextPart | ImagePart] = [TextPart(text=step.text)] if step.text else []
        calls = [ToolCall(id=c.id or self.player.new_call_id(), name=c.name, arguments=c.raw_arguments())
                 for c in step.tool_calls]
        finish: FinishReason = "tool_calls" if calls else "stop"
        out_tokens = step.output_tokens if step.output_tokens is not None else 1 + len(step.text or "") // 4
        return ModelOutput(
            message=Message(role="assistant", content=content, tool_calls=calls, reasoning=step.reasoning),
            usage=Usage(input_tokens=step.input_tokens or 10 * len(messages), output_tokens=out_tokens),
            finish_reason=finish, model=self.name,
        )
