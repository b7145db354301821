"""`toolsight view DIR` over a folder of runs (issue 28, item 6): the index of the runs, each run's viewer,
two runs compared on request, served on 127.0.0.1 with `/` opening the index and no folder listed; the
two-run comparison is written beside the runs, not into the first one."""

from __future__ import annotations

import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from clikit import TOOLSIGHT, dataset, env, lines, ts


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    ds = dataset(tmp_path_factory.mktemp("data") / "ds", 4)
    for name, model in (("a", "reference"), ("b", "random")):
        r = ts("run", str(ds), "-m", model, "--out", str(root / "group" / name), "--no-report")
        assert r.returncode == 0, r.stderr
    return root


def test_view_a_folder_writes_an_index_of_its_runs(folder: Path) -> None:
    r = ts("view", str(folder))
    assert r.returncode == 0, r.stderr
    assert lines(r.stdout) == [f"viewer: {folder / 'viewer' / 'index.html'}"]
    page = (folder / "viewer" / "index.html").read_text(encoding="utf-8")
    for run, model in (("group/a", "reference"), ("group/b", "random")):
        assert f'href="../{run}/viewer/index.html"' in page and f"<td>{model}</td>" in page
        assert (folder / run / "viewer" / "index.html").is_file()
    assert page.count('class="pick"') == 2 and "finished" in page


def _get(url: str) -> tuple[int, str, str]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=60) as resp:
            return resp.status, resp.headers.get("Location", ""), resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Location", ""), exc.read().decode("utf-8", "replace")


@pytest.fixture
def served(folder: Path) -> Iterator[str]:
    proc = subprocess.Popen([*TOOLSIGHT, "view", str(folder), "--serve", "--port", "0"], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"serving (http://127\.0\.0\.1:\d+)/viewer/index\.html", line)
        assert m, (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        yield m.group(1)
    finally:
        proc.terminate()
        proc.wait(30)


def test_served_folder_opens_the_index_lists_no_folder_and_compares_two_runs(served: str, folder: Path) -> None:
    code, where, _ = _get(served + "/")
    assert (code, where) == (302, "/viewer/index.html")
    code, _, body = _get(served + "/viewer/index.html")
    assert code == 200 and "Runs in" in body
    for listing in ("/group/", "/group/a/", "/group/a/viewer/tasks/"):
        code, _, body = _get(served + listing)
        assert code == 404 and "records.jsonl" not in body, listing
    code, where, _ = _get(served + "/compare?a=group/a&b=group/b")
    assert code == 302 and where == "/viewer/compare/a--b/index.html", where
    code, _, body = _get(served + where)
    assert code == 200 and "reference" in body and "random" in body
    assert not (folder / "group" / "a" / "viewer-compare").exists()
    assert _get(served + "/compare?a=group/a&b=../etc")[0] == 400


def test_comparing_two_runs_writes_beside_them_not_into_the_first(folder: Path) -> None:
    r = ts("view", str(folder / "group" / "a"), str(folder / "group" / "b"))
    assert r.returncode == 0, r.stderr
    site = folder / "group" / "compare-a--b"
    assert lines(r.stdout) == [f"viewer: {site / 'index.html'}"]
    assert not (folder / "group" / "a" / "viewer-compare").exists()
    assert '<div class="table-wrap"><table class="tasks" id="tasks">' in (site / "index.html").read_text(encoding="utf-8")


def test_a_folder_without_runs(tmp_path: Path) -> None:
    r = ts("view", str(tmp_path))
    assert r.returncode == 1 and lines(r.stderr) == [f"error: {tmp_path}: no runs in this folder (a run is a folder "
                                                     "with a manifest.json)"], r.stderr


def test_the_index_rebuilds_when_a_run_appears(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    root = tmp_path / "runs"
    assert ts("run", str(ds), "-m", "reference", "--out", str(root / "one"), "--no-report").returncode == 0
    proc = subprocess.Popen([*TOOLSIGHT, "view", str(root), "--serve", "--port", "0"], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and "serving" in proc.stdout.readline()
        assert ts("run", str(ds), "-m", "random", "--out", str(root / "two"), "--no-report").returncode == 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "two/viewer/index.html" not in (root / "viewer" / "index.html").read_text():
            time.sleep(0.5)
        assert "two/viewer/index.html" in (root / "viewer" / "index.html").read_text()
    finally:
        proc.terminate()
        proc.wait(30)
