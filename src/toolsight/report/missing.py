"""Whether a run directory still holds the images its records refer to (its `artifacts/` folder).

`report`, `view` and `score` read a run from its records, so they can go on without the images;
they say so in one line instead of quietly showing a run with its pictures gone. Checking costs
nothing while the folder is there; without it, records are read until one refers to an image.
"""

from __future__ import annotations

from pathlib import Path

from toolsight.engine.store import ARTIFACTS
from toolsight.log.files import RECORDS, iter_latest_records

#: what each command does without the images, for the warning's second half
CONSEQUENCE = {
    "report": "the report's numbers come from records.jsonl and are complete",
    "view": "the trace viewer shows those images as missing",
    "score": "scoring reads the final responses only and goes on",
}


def missing_artifacts(run_dir: Path | str, command: str) -> str | None:
    """One warning line naming the missing `RUN/artifacts` folder when the run's records refer to
    images (inputs or tool outputs), else None."""
    rd = Path(run_dir)
    folder = rd / ARTIFACTS
    if folder.is_dir() or not (rd / RECORDS).is_file():
        return None
    try:
        refers = any(rec.trajectory.artifacts for rec in iter_latest_records(rd))
    except (OSError, ValueError):  # an unreadable run: the command itself says what is wrong
        return None
    if not refers:
        return None
    return (f"{folder} is missing (deleted or moved?): the images the records refer to cannot be shown or read; "
            f"{CONSEQUENCE.get(command, 'going on without them')}")
