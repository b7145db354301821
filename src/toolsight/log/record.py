"""The record: one finished task as stored in a run directory (one JSON line of records.jsonl).

Records carry `schema_version`; `toolsight.log.files` upgrades older lines when it reads them.
A run with `--epochs N` runs every task N times: its records carry `epoch` (1..N), and a task's
records are told apart by `record_key(task_id, epoch)`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from toolsight.log.score import Score
from toolsight.log.trajectory import Trajectory

#: version of the record layout written by this toolsight; 1 = records written before versioning;
#: 3 added `epoch` (older records are epoch 1); 4 added `score_pending`
RECORD_SCHEMA_VERSION = 4


def record_key(task_id: str, epoch: int = 1) -> str:
    """One key per (task, epoch): the task id itself for epoch 1, so a single-epoch run (every run
    made before epochs existed) is keyed exactly as before; `ID#N` for epoch N > 1."""
    return task_id if epoch <= 1 else f"{task_id}#{epoch}"


class Record(BaseModel):
    """Task id, setting, model, trajectory, score, usage, timings, errors."""

    schema_version: int = RECORD_SCHEMA_VERSION
    task_id: str
    # kept right after task_id: readers find it without parsing the line (`log.files.latest_offsets`)
    epoch: int = Field(default=1, ge=1, description="which run of the task this is (1..--epochs)")
    benchmark: str
    setting: str
    model: str
    tags: dict[str, str] = Field(default_factory=dict)
    trajectory: Trajectory = Field(default_factory=Trajectory)
    score: Score | None = None
    error: str | None = None
    #: the model's work is done but its scoring is not: why (e.g. the judge endpoint stayed down);
    #: `toolsight score RUN` or a resume completes it without running the model again
    score_pending: str | None = None
    started_at: float = 0.0
    duration_s: float = 0.0
    extra: dict[str, Any] = Field(default_factory=dict)
    task_hash: str | None = Field(
        default=None, description="content hash of the task as run (its JSON and image bytes); resume re-runs a "
        "task whose hash changed"
    )

    @property
    def key(self) -> str:
        """The task id, or `ID#N` for epoch N > 1 (see `record_key`)."""
        return record_key(self.task_id, self.epoch)

    @property
    def ok(self) -> bool:
        return self.error is None
