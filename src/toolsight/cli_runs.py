"""`toolsight runs [DIR]`: the runs under a folder as a table (or JSON), filterable (docs/cli.md).

The rows come from `toolsight.report.runs_index`; this module only prints them. Paths are shown
relative to DIR; `--json` prints every field of every row (`RunRow`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from toolsight.errors import EXIT_USAGE

out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)

COLUMNS = ("run", "benchmark", "setting", "model", "loop", "tasks", "errors", "score", "status", "date")


def runs(
    folder: Annotated[Path | None, typer.Argument(help="the folder holding runs and sweeps (default: $TOOLSIGHT_RUNS_DIR, else runs)")] = None,
    benchmark: Annotated[str | None, typer.Option(metavar="GLOB", help="only runs of this benchmark (a glob: vtc-*)")] = None,
    setting: Annotated[str | None, typer.Option(metavar="GLOB", help="only runs of this setting")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", metavar="GLOB", help="only runs of this model (openai/*)")] = None,
    status: Annotated[str | None, typer.Option(metavar="STATUS", help="finished | interrupted | running")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the rows as JSON (every field)")] = False,
) -> None:
    """List the runs under a folder: benchmark, setting, model, loop, tasks, errors, score, status, date."""
    from toolsight.engine.options import runs_root
    from toolsight.report.runs_index import RunsError, list_runs

    root = folder if folder is not None else runs_root()
    if status not in (None, "finished", "interrupted", "running"):
        err.print(f"[bold red]error:[/] --status {status!r}: use finished, interrupted or running")
        raise typer.Exit(EXIT_USAGE)
    filters = {k: v for k, v in (("benchmark", benchmark), ("setting", setting), ("model", model),
                                 ("status", status)) if v is not None}
    try:
        rows = list_runs(root, filters)
    except RunsError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(EXIT_USAGE) from None
    if as_json:
        out.print(json.dumps([r.model_dump() for r in rows], indent=1), markup=False)
        return
    if not rows:
        err.print(f"no runs under {root}" + (" matching the filters" if filters else ""), markup=False)
        return
    table = [COLUMNS] + [_cells(r, root) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    for row in table:
        out.print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip(), markup=False)


def _cells(r: object, root: Path) -> tuple[str, ...]:
    from toolsight.report.runs_index import RunRow

    assert isinstance(r, RunRow)
    try:
        shown = str(Path(r.path).relative_to(root)) or "."
    except ValueError:
        shown = r.path
    tasks = f"{r.tasks}/{r.selected}" if r.selected is not None and r.selected != r.tasks else str(r.tasks)
    score = f"{100 * r.score:.1f}%" if r.score is not None else "-"
    return (shown, r.benchmark, r.setting, r.model, r.loop or "-", tasks, str(r.errors), score, r.status,
            r.created.replace("T", " ").rstrip("Z")[:16])
