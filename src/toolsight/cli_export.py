"""`toolsight export PATH --format inspect|csv|parquet`: a run, or every run under a folder, for other tools
(docs/reports.md).

`inspect` writes one Inspect AI `.eval` log per run (`toolsight.report.inspect_export`) — into `RUN/inspect/`,
or for a folder into `DIR/inspect/`, one Inspect log folder (`inspect view --log-dir DIR/inspect`); `csv` and
`parquet` write one row per task of every run into one file (`toolsight.report.export_records`). This module
only reads the flags and prints what was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from toolsight.errors import EXIT_USAGE, ToolsightError

out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)

FORMATS = ("inspect", "csv", "parquet")


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(' '.join(message.split()))}")
    return typer.Exit(code)


def export(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="a run directory, or a folder holding runs and sweeps")],
    fmt: Annotated[str, typer.Option("--format", help="inspect (Inspect AI .eval logs) | csv | parquet")] = "inspect",
    out_path: Annotated[Path | None, typer.Option("--out", metavar="PATH", help="inspect: a folder, or a .eval file for one run (default PATH/inspect/); csv, parquet: the file (default PATH/records.csv or .parquet)")] = None,
    scores: Annotated[str | None, typer.Option(metavar="NAME", help="export scores-NAME.jsonl instead of the records' scores")] = None,
) -> None:
    """Export a run (or every run under a folder) as Inspect AI logs, or its tasks as CSV / Parquet."""
    from toolsight.report.runs_index import find_runs

    if fmt not in FORMATS:
        raise _fail(f"--format {fmt!r}: use inspect, csv or parquet")
    if not path.is_dir():
        raise _fail(f"{path}: no such folder (give a run directory or a folder holding runs)")
    runs = list(find_runs(path))
    if not runs:
        raise _fail(f"{path}: no runs in this folder (a run is a folder with a manifest.json)")
    try:
        if fmt == "inspect":
            _inspect(path, runs, out_path, scores)
        else:
            from toolsight.report.export import export_records

            target = out_path if out_path is not None else path / f"records.{fmt}"
            if target.suffix.lower() != f".{fmt}":
                raise _fail(f"--out {target}: a --format {fmt} file ends in .{fmt}")
            out.print(f"wrote {export_records(runs, target, scores)}", markup=False)
    except ToolsightError as exc:
        raise _fail(str(exc), exc.exit_code) from None
    except (ValueError, OSError) as exc:
        raise _fail(str(exc)) from None


def _inspect(path: Path, runs: list[Path], out_path: Path | None, scores: str | None) -> None:
    from toolsight.report.inspect_export import SUFFIX, export_inspect_many

    target = out_path if out_path is not None else path / "inspect"
    if target.suffix == SUFFIX and len(runs) > 1:
        raise _fail(f"--out {target}: {len(runs)} runs need a folder (one .eval log per run), not one file")
    export_inspect_many(runs, target, scores, lambda p: out.print(f"wrote {p}", markup=False))
