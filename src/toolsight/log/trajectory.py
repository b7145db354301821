"""The trajectory (layer 1): everything that happened while an agent worked on one task.

Messages keep images as references (path + artifact id), never pixels, so a trajectory is small
and a record stays one JSON line.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from toolsight.log.artifact import Artifact
from toolsight.log.messages import FinishReason, Message, Usage

StopReason = Literal[
    "answered", "max_tool_calls", "max_rounds", "max_tokens", "time_limit", "model_error", "no_answer", "error"
]


class ToolCallRecord(BaseModel):
    """One tool call: what the model asked for, what came back, and how long it took."""

    id: str
    turn: int
    round: int
    name: str
    arguments: str
    ok: bool
    error: str | None = None
    text: str = ""
    artifacts: list[str] = Field(default_factory=list, description="ids of the images the call produced")
    inputs: list[str] = Field(default_factory=list, description="ids of the images the call consumed")
    duration_s: float = 0.0
    image_feedback: Literal["tool", "user", "none"] = "none"
    extra: dict[str, Any] = Field(default_factory=dict)


class StageRecord(BaseModel):
    """One stage of a multi-stage agent (e.g. the VCR agent's five): what it saw, made and said."""

    turn: int
    stage: int
    name: str
    model_calls: int = 0
    inputs: list[str] = Field(default_factory=list, description="artifact ids the stage looked at")
    outputs: list[str] = Field(default_factory=list, description="artifact ids the stage produced")
    text: str = Field(default="", description="the stage's result (model reply, parsed terms, tool summary)")
    started_s: float = Field(default=0.0, description="seconds from the task's start")
    ended_s: float = 0.0
    extra: dict[str, Any] = Field(default_factory=dict)


class TurnResult(BaseModel):
    """The outcome of one user turn."""

    index: int
    response: str = Field(default="", description="the model's final raw text for the turn")
    answer: str | None = Field(default=None, description="the answer extracted by the setting's format, if any")
    scored_response: str | None = Field(
        default=None, description="what scorers read instead of `response`, when an official loop's driver took "
                                  "its answer from somewhere else (the reasoning, an earlier attempt)")
    stop_reason: StopReason = "answered"
    rounds: int = 0
    tool_calls: int = 0
    seen_images: list[str] = Field(default_factory=list, description="artifact ids shown to the model, in order")


class ModelCallRecord(BaseModel):
    """One model call as the runner saw it: how it ended, how often it was retried, how long it took.

    `retries` counts the failed attempts before the reply (or before the last error); `waited_s` is
    the time spent paused while the endpoint was unreachable (not charged to the call's retries).
    """

    index: int
    finish_reason: FinishReason | None = Field(default=None, description="the provider's, None if it failed")
    retries: int = 0
    cached: bool = False
    duration_s: float = 0.0
    waited_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    #: input tokens read from / written to the provider's prompt cache (part of `input_tokens`)
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    #: sent through the provider's batch API
    batch: bool = False
    #: the reply carried no token usage (e.g. a stream without `stream_options.include_usage`, as an
    #: official driver sends it): its tokens are unknown, not 0
    usage_missing: bool = False
    error: str | None = None


#: the kind of run error of a task an official loop ended where its driver crashes (`Trajectory.loop_error`)
LOOP_CRASH = "official loop crash"


class Trajectory(BaseModel):
    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(default_factory=list)
    turns: list[TurnResult] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    model_calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    stop_reason: StopReason = "answered"
    loop_error: str | None = Field(
        default=None, description="an official loop ended the task where its driver crashes (the reason): the "
        "record keeps what the driver would score, and the run counts it as a run error; the reply that crashed "
        "is not a tool call (nothing ran)")
    duration_s: float = 0.0
    stages: list[StageRecord] = Field(default_factory=list, description="multi-stage agents only (e.g. vcr)")
    model_call_log: list[ModelCallRecord] = Field(
        default_factory=list, description="per model call: finish reason, retries, timing (filled by the runner)"
    )

    @property
    def responses(self) -> list[str]:
        return [t.response if t.scored_response is None else t.scored_response for t in self.turns]
