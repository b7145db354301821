"""The scripted judge the scoring and benchmark tests share: a judge *input*, not a mock of the code
under test — a Model that replies with recorded reply sequences, the way the fidelity vectors were
produced with a stub client."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable

from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import GenerateConfig, Message, Model, ModelError, ModelOutput, TextPart

RAISE = "RAISE"


class ScriptedJudge(Model):
    """Replies from per-key reply sequences; a key is found as a substring of the prompt.

    Each key has its own attempt counter; past the end of a sequence its last reply repeats.
    The reply "RAISE" raises a ModelError on that attempt. `default` answers prompts no key matches.
    """

    def __init__(self, script: dict[str, list[str]] | None = None, default: str | None = None,
                 name: str = "scripted/judge", gate: asyncio.Event | None = None,
                 reply_fn: Callable[[str], str] | None = None) -> None:
        super().__init__(name)
        self.script = script or {}
        self.default = default
        self.reply_fn = reply_fn
        self.counts: dict[str, int] = defaultdict(int)
        self.prompts: list[str] = []
        self.configs: list[GenerateConfig] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.gate = gate

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        prompt = messages[-1].text
        self.prompts.append(prompt)
        self.configs.append(config)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0)
            if self.gate is not None:
                await self.gate.wait()
            reply = self._reply(prompt)
        finally:
            self.in_flight -= 1
        if reply == RAISE:
            raise ModelError("scripted judge failure", retryable=False)
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text=reply)]), model=self.name)

    def _reply(self, prompt: str) -> str:
        if self.reply_fn is not None:
            return self.reply_fn(prompt)
        keys = [k for k in self.script if k in prompt]
        if not keys:
            if self.default is None:
                raise AssertionError(f"scripted judge has no reply for prompt: {prompt[:200]!r}")
            return self.default
        key = max(keys, key=len)
        seq = self.script[key]
        n = self.counts[key]
        self.counts[key] += 1
        return seq[min(n, len(seq) - 1)]
