"""Issue 28, item 9: a VisBrowse-Bench run with the JSONL but not its images fetches only the images
of the tasks it selects (`--limit` first, then the downloads), as `toolsight run` is typed."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from clikit import assert_one_error_line, records, ts
from sharedfiles import missing, shared_dir

SAMPLE = shared_dir() / "data" / "visbrowse-bench"
JSONL = SAMPLE / "data" / "VisBrowse-Bench.sample.jsonl"
N_RECORDS = 12


@pytest.fixture(autouse=True)
def _need_sample() -> None:
    if not JSONL.is_file():
        missing(str(JSONL))


def _jsonl_at(base: str, folder: Path) -> tuple[Path, list[list[str]]]:
    """The first records of the sample with their image URLs under `base`, in a folder without
    images; (the file, each record's image file names)."""
    folder.mkdir()
    out, names = [], []
    for line in JSONL.read_text(encoding="utf-8").splitlines()[:N_RECORDS]:
        rec = json.loads(line)
        rec["image"] = [f"{base}/{u.rsplit('/', 1)[1]}" for u in rec["image"]]
        names.append([u.rsplit("/", 1)[1] for u in rec["image"]])
        out.append(json.dumps(rec) + "\n")
    (folder / "VisBrowse-Bench.jsonl").write_text("".join(out), encoding="utf-8")
    return folder / "VisBrowse-Bench.jsonl", names


def _run(jsonl: Path, *args: str, TOOLSIGHT_CACHE: str) -> subprocess.CompletedProcess[str]:
    return ts("run", "visbrowse-bench", "--data", str(jsonl.parent), "-m", "reference", "--setting", "direct",
              "--loop", "toolsight", "--no-score", *args, TOOLSIGHT_CACHE=TOOLSIGHT_CACHE)


@pytest.fixture
def image_host() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server serving the sample's images; (its base URL, the paths asked for)."""
    served: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *a: object, **k: object) -> None:
            super().__init__(*a, directory=str(SAMPLE / "VisBrowse_Bench_images"), **k)  # type: ignore[arg-type]

        def log_message(self, *a: object) -> None:
            served.append(self.path)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", served
    finally:
        srv.shutdown()
        srv.server_close()


def test_limit_downloads_only_the_selected_tasks_images(tmp_path: Path, image_host: tuple[str, list[str]]) -> None:
    base, served = image_host
    jsonl, names = _jsonl_at(base, tmp_path / "data")
    cache = tmp_path / "cache"
    run = tmp_path / "run"
    r = _run(jsonl, "--limit", "2", "--out", str(run), "--no-report", TOOLSIGHT_CACHE=str(cache))
    assert r.returncode == 0, r.stderr
    want = {n for rec in names[:2] for n in rec}
    assert sorted(p.lstrip("/") for p in served) == sorted(want)  # each once, and nothing of the other tasks
    assert {p.name for p in (cache / "visbrowse-bench" / "VisBrowse_Bench_images").iterdir()} == want
    assert len(records(run)) == 2
    # a resume over more tasks fetches theirs and keeps the run's identity (images hash by URL)
    r = _run(jsonl, "--limit", "4", "--out", str(run), "--no-report", "--resume", TOOLSIGHT_CACHE=str(cache))
    assert r.returncode == 0, r.stderr
    assert sorted(p.lstrip("/") for p in served) == sorted({n for rec in names[:4] for n in rec})
    assert len(records(run)) == 4


def test_offline_limit_names_only_the_selected_tasks_missing_images(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on: every download is refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    jsonl, names = _jsonl_at(f"http://127.0.0.1:{port}", tmp_path / "data")
    n = len({x for rec in names[:2] for x in rec})
    assert n < len({x for rec in names for x in rec})
    r = _run(jsonl, "--limit", "2", "--out", str(tmp_path / "run"), TOOLSIGHT_CACHE=str(tmp_path / "cache"))
    assert_one_error_line(r, 2, f"{n} image(s) not found next to {jsonl}", f"so {n - 1} were not tried",
                          "pass its folder with --data")
    assert not (tmp_path / "run").exists()
