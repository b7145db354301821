"""The scorer interface: a task and the model's final responses in, a Score out.

Scorers see only what a finished trajectory yields — the raw final response text of each turn —
so any run can be re-scored later without calling the evaluated model again. A scorer that
needs an LLM (judge, answer extractor) gets a `Model` through `ScoreContext`.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from toolsight.log.score import JudgeCall as JudgeCall
from toolsight.log.score import Score as Score
from toolsight.models.base import GenerateConfig, Model
from toolsight.tasks.schema import Task


class ScoreContext(BaseModel):
    """What a scorer may use besides the task: a judge model and its settings."""

    model_config = {"arbitrary_types_allowed": True}

    judge: Model | None = None
    judge_config: GenerateConfig = Field(default_factory=lambda: GenerateConfig(temperature=0.0, seed=0))
    judge_retries: int = 3
    #: judge calls a scorer may have waiting at once, raising its own limit: set when judge calls go
    #: through a batch API (`--judge-batch`), so every waiting call joins one batch instead of a scorer's
    #: few-at-a-time limit cutting them into many batches, each a whole batch turnaround long
    judge_width: int | None = Field(default=None, ge=1)


class Scorer(Protocol):
    """Scores a task from the final raw response of each turn ('' where the model gave none)."""

    name: str

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score: ...
