"""The record: one finished task as stored in a run directory (one JSON line of records.jsonl).

Records carry `schema_version`; `toolsight.log.files` upgrades older lines when it reads them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from toolsight.log.score import Score
from toolsight.log.trajectory import Trajectory

#: version of the record layout written by this toolsight; 1 = records written before versioning
RECORD_SCHEMA_VERSION = 2


class Record(BaseModel):
    """Task id, setting, model, trajectory, score, usage, timings, errors."""

    schema_version: int = RECORD_SCHEMA_VERSION
    task_id: str
    benchmark: str
    setting: str
    model: str
    tags: dict[str, str] = Field(default_factory=dict)
    trajectory: Trajectory = Field(default_factory=Trajectory)
    score: Score | None = None
    error: str | None = None
    started_at: float = 0.0
    duration_s: float = 0.0
    extra: dict[str, Any] = Field(default_factory=dict)
    task_hash: str | None = Field(
        default=None, description="content hash of the task as run (its JSON and image bytes); resume re-runs a "
        "task whose hash changed"
    )

    @property
    def ok(self) -> bool:
        return self.error is None
