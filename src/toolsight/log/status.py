"""`status.json`: how a run's last invocation ended, written by the runner when it stops (atomically).

`state` is `finished` (every selected task-epoch has its record), `interrupted` (Ctrl-C, a kill
before the end is seen by its absence, `--fail-on-error`, or a stop: endpoint down, credentials
rejected, disk full — `reason` says which). A run directory whose `run.lock` is held is running,
whatever its status file says (`toolsight runs`, `toolsight view DIR`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

STATUS = "status.json"

RunState = Literal["finished", "interrupted"]


class RunStatus(BaseModel):
    """The end of one invocation of a run (the last one wins)."""

    model_config = ConfigDict(extra="ignore")

    state: RunState
    selected: int | None = None  # task-epochs this invocation covered (its selection × epochs)
    done: int = 0  # records this invocation wrote
    errors: int = 0  # of them, run errors
    exit_code: int | None = None
    reason: str | None = None  # why it did not finish
    ended: str  # UTC, ISO 8601


def read_status(run_dir: Path) -> RunStatus | None:
    """The run's status file, or None (a run still going, killed, or made before status files)."""
    try:
        return RunStatus.model_validate_json((run_dir / STATUS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
