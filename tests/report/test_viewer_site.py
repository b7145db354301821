"""The static viewer site: pages, links to real images, gold answers, copies, scores files, serving."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from toolsight.engine.store import iter_records
from toolsight.report.viewer import build_viewer, make_server
from toolsight.report.viewer_compare import build_compare
from toolsight.report.viewer_serve import DEFAULT_PORT, ViewerError
from toolsight.scoring.base import Score

SRC = re.compile(r'<img class="art" src="([^"]+)"')


def _index_rows(index: Path) -> list[dict[str, Any]]:
    """The task list's data (the index builds its table from this JSON in the browser)."""
    m = re.search(r'<script id="rows" type="application/json">(.*?)</script>', index.read_text(), re.S)
    assert m is not None
    rows: list[dict[str, Any]] = json.loads(m.group(1))
    return rows


def _images(page: Path) -> list[Path]:
    return [(page.parent / s).resolve() for s in SRC.findall(page.read_text())]


def test_site_pages_and_images(run_dir: Path) -> None:
    index = build_viewer(run_dir)
    assert index == run_dir / "viewer" / "index.html"
    rows = _index_rows(index)
    ids = [r.task_id for r in iter_records(run_dir)]
    assert [r["id"] for r in rows] == ids and len(ids) == 12
    errs = [r for r in rows if r["status"] == "error"]
    assert len(errs) == 1 and errs[0]["error"].startswith("model error: HTTP 500")
    for tid in ids:
        assert (index.parent / "tasks" / f"{tid}.html").is_file()
    chain = index.parent / "tasks" / "task-00001.html"
    imgs = _images(chain)
    assert len(set(imgs)) == 4 and all(p.is_file() and p.read_bytes()[:4] == b"\x89PNG" for p in imgs)
    assert all(str(p).startswith(str((run_dir / "artifacts").resolve())) for p in imgs)  # linked, not copied
    page = chain.read_text()
    assert "crop → rotate" in page and page.count('class="badge eff"') >= 2
    code_page = (index.parent / "tasks" / "task-00002.html").read_text()
    assert '<pre class="code">img = cv2.imread(path)' in code_page
    assert "ToolError: box outside the image" in code_page
    first = (index.parent / "tasks" / f"{ids[0]}.html").read_text()
    last = (index.parent / "tasks" / f"{ids[-1]}.html").read_text()
    assert 'id="prev"' not in first and f'href="{ids[1]}.html" id="next"' in first
    assert 'id="next"' not in last and f'href="{ids[-2]}.html" id="prev"' in last
    judged = (index.parent / "tasks" / "task-00001.html").read_text()
    assert "Judge call 1: mock/judge" in judged


def test_gold_from_records_when_dataset_is_gone(run_dir: Path, tmp_path: Path) -> None:
    data = Path(json.loads((run_dir / "manifest.json").read_text())["dataset"]["path"])
    shutil.rmtree(data)
    index = build_viewer(run_dir)
    rec = next(r for r in iter_records(run_dir) if r.task_id == "task-00003")
    page = (index.parent / "tasks" / "task-00003.html").read_text()
    golds = re.findall(r'<td class="gold">([^<]*)</td>', page)
    assert golds == rec.extra["gold"] and len(golds) == 2


def test_site_outside_run_copies_images(run_dir: Path, tmp_path: Path) -> None:
    index = build_viewer(run_dir, tmp_path / "site")
    shutil.rmtree(run_dir / "artifacts")  # the site must not depend on the run directory any more
    imgs = _images(index.parent / "tasks" / "task-00001.html")
    assert len(set(imgs)) == 4 and all(p.is_file() and str(p).startswith(str((tmp_path / "site").resolve()))
                                  for p in imgs)


def test_viewer_shows_a_scores_file(run_dir: Path) -> None:
    lines = [{"task_id": r.task_id, "score": {"value": 0.0, "passed": False, "explanation": "rejudged: wrong"}}
             for r in iter_records(run_dir)]
    (run_dir / "scores-harsh.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    index = build_viewer(run_dir, scores="harsh")
    html = index.read_text()
    assert not [r for r in _index_rows(index) if r["status"] == "correct"] and "scores from harsh" in html
    assert "rejudged: wrong" in (index.parent / "tasks" / "task-00002.html").read_text()


def test_serve_over_http(run_dir: Path) -> None:
    server, url = make_server(run_dir, port=0)  # builds the viewer, serves the run dir on 127.0.0.1
    import threading

    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/viewer/index.html")
        body = urllib.request.urlopen(url, timeout=10).read().decode()
        assert "task-00001" in body
        page_url = url.replace("index.html", "tasks/task-00001.html")
        page = urllib.request.urlopen(page_url, timeout=10).read().decode()
        src = SRC.findall(page)[0]
        img_url = urllib.parse.urljoin(page_url, src)
        data = urllib.request.urlopen(img_url, timeout=10).read()
        assert data[:4] == b"\x89PNG"
    finally:
        server.shutdown()
        server.server_close()


def test_a_resumed_task_shows_its_last_record(run_dir: Path) -> None:
    failed = next(r for r in iter_records(run_dir) if r.error is not None)
    redo = failed.model_copy(update={"error": None, "score": Score(value=1.0, passed=True, scorer="choice")})
    with (run_dir / "records.jsonl").open("a") as fh:
        fh.write(redo.model_dump_json() + "\n")
    rows = _index_rows(build_viewer(run_dir))
    assert len(rows) == 12 and [r["status"] for r in rows if r["id"] == failed.task_id] == ["correct"]


def test_view_serve_on_a_taken_port_is_one_line(run_dir: Path) -> None:
    assert DEFAULT_PORT != 8765  # the scripted server's port in docs/models.md
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "toolsight", "view", str(run_dir), "--serve", "--port", str(port)],
                              capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "60"})
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines == [f"error: port {port} on 127.0.0.1 is already in use; choose another with --port N "
                     "(--port 0 picks a free one)"], proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_compare_needs_two_different_runs(run_dir: Path) -> None:
    with pytest.raises(ViewerError, match="at least two"):
        build_compare([run_dir])
    with pytest.raises(ViewerError, match="twice"):
        build_compare([run_dir, run_dir])
