"""`toolsight view DIR` over a folder of runs and sweeps: an index of the runs, each run's own viewer,
and any two compared side by side (docs/reports.md).

`build_folder_viewer(DIR)` writes `DIR/viewer/index.html` — one row per run (`runs_index.RunRow`:
benchmark, setting, model, loop, tasks, errors, score, status, date) linking to the run's viewer, which
it builds (`RUN/viewer/`). Served (`serve_folder`), the site lives on 127.0.0.1 with no folder listing;
`/` opens the index, `/compare?a=RUN&b=RUN` builds the comparison of two runs of the folder into
`DIR/viewer/compare/A--B/` and opens it, and the site rebuilds while records arrive (new runs too).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from toolsight.report.runs_index import RunRow, find_runs, list_runs
from toolsight.report.viewer import _env, build_viewer
from toolsight.report.viewer_compare import build_compare
from toolsight.report.viewer_serve import RecordsWatcher, ViewerError, make_site_server, write_live

SITE = "viewer"


def _rel(path: str | Path, root: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), root.resolve())).as_posix()


def build_folder_viewer(root: Path, runs: list[RunRow] | None = None) -> Path:
    """Write the folder's index (and every run's viewer); return the index's path."""
    root = Path(root)
    if not root.is_dir():
        raise ViewerError(f"{root}: no such folder")
    rows = runs if runs is not None else list_runs(root)
    if not rows:
        raise ViewerError(f"{root}: no runs in this folder (a run is a folder with a manifest.json)")
    site = root / SITE
    site.mkdir(parents=True, exist_ok=True)
    entries = []
    for r in rows:
        try:
            viewer = build_viewer(r.path)
            link = Path(os.path.relpath(viewer, site)).as_posix()
        except (OSError, ValueError, ViewerError):  # a run being created: listed, without a link yet
            link = None
        entries.append({"row": r, "rel": _rel(r.path, root), "link": link})
    page = _env().get_template("folder_index.html.j2").render(root=str(root), entries=entries)
    index = site / "index.html"
    index.write_text(page, encoding="utf-8")
    write_live(site, [Path(r.path) for r in rows], sum(r.tasks for r in rows),
               finished=all(r.status != "running" for r in rows))
    return index


def compare_action(root: Path) -> Callable[[dict[str, list[str]]], str]:
    """The served `/compare?a=RUN&b=RUN` action: two runs of the folder (paths relative to it)."""
    lock = threading.Lock()

    def compare(query: dict[str, list[str]]) -> str:
        known = {_rel(p, root): p for p in find_runs(root)}
        picked = [q for key in ("a", "b") for q in query.get(key, [])[:1]]
        if len(picked) != 2 or any(p not in known for p in picked) or picked[0] == picked[1]:
            raise ViewerError("compare needs two different runs of this folder: /compare?a=RUN&b=RUN")
        a, b = (known[p] for p in picked)
        out = root / SITE / "compare" / f"{a.name}--{b.name}"
        with lock:  # one build at a time; the pages are rewritten whole
            index = build_compare([a, b], out)
        return _rel(index, root)

    return compare


def serve_folder(root: Path, port: int, on_ready: Callable[[str], None] = print) -> None:
    """Serve the folder's viewer on 127.0.0.1:`port` until Ctrl-C, rebuilding while records arrive."""
    index = build_folder_viewer(root)
    server = make_site_server(root, port, _rel(index, root), actions={"/compare": compare_action(root)})
    def rebuild() -> None:
        build_folder_viewer(root)

    watcher = _FolderWatcher(root, rebuild).start()
    on_ready(f"serving http://127.0.0.1:{server.server_address[1]}/{_rel(index, root)} "
             "(Ctrl-C to stop) · live: rebuilds as records arrive")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()
        server.server_close()


class _FolderWatcher(RecordsWatcher):
    """A RecordsWatcher over every run of the folder, new ones included."""

    def __init__(self, root: Path, rebuild: Callable[[], None]) -> None:
        self.root = root
        super().__init__(list(find_runs(root)), rebuild)

    def check(self) -> bool:
        self.run_dirs = list(find_runs(self.root))  # a new run changes the stamps' list: a rebuild
        return super().check()


__all__ = ["SITE", "build_folder_viewer", "compare_action", "serve_folder"]
