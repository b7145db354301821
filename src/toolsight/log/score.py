"""A score as stored in a record: value, verdict, extracted answer, judge calls, per-turn scores (layer 1)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from toolsight.log.messages import Usage


class JudgeCall(BaseModel):
    """One LLM call made while scoring, kept so a judgement can be audited and reproduced."""

    model: str
    prompt: str
    reply: str | None = None
    seed: int | None = None
    temperature: float | None = None
    error: str | None = None
    cached: bool = False
    #: the tokens the call used as the provider reported them (None: not recorded, e.g. an older run)
    usage: Usage | None = None
    #: sent through the provider's batch API
    batch: bool = False


class Score(BaseModel):
    """The result of scoring one task (or one turn, inside `turns`).

    `value` is in [0, 1] (1 = correct; partial credit allowed). `passed` is the pass/fail verdict
    where the benchmark has one (APR). `answer` is the extracted answer, None when extraction
    failed ("no answer" — never a guess). `error` marks a score that could not be computed (e.g. a
    judge reply that never parsed); metrics leave such tasks out and count them.
    """

    value: float = 0.0
    passed: bool | None = None
    answer: str | None = None
    explanation: str = ""
    scorer: str = ""
    error: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    judge_calls: list[JudgeCall] = Field(default_factory=list)
    turns: list[Score] = Field(default_factory=list)
