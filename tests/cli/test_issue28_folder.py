"""Issue 28's "done when": `toolsight runs`, `toolsight view DIR`, `runs_df` / `samples_df` and `toolsight
export` over one folder holding single runs of all five benchmarks (generated offline sets, `-m reference`)
and a small sweep — every run listed with its benchmark, setting and status, one DataFrame row per run and
per task-epoch (tags as columns), one Inspect log per run that Inspect reads back, and the folder viewer
serving its index, each run, a task and a comparison on 127.0.0.1 without listing any folder.

Scores of the generated sets under TIR-Bench's and PhysToolBench's own settings are not asserted here (what
`-m reference` scores there is the benchmarks' business, not run management's)."""

from __future__ import annotations

import base64
import csv
import json
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, resolve_sample_attachments
from inspect_ai.model import ContentImage

import toolsight
from clikit import TOOLSIGHT, env, lines, records, ts

#: run (relative to the folder) -> (generator kind, how it is run, setting, benchmark `toolsight runs` shows)
SINGLE = {
    "single/tir": ("jigsaw", ["tir-bench", "--data"], "code", "tir-bench"),
    "single/phys": ("phystool", ["phystoolbench", "--data"], "cot", "phystoolbench"),
    "single/vtb": ("vtb", ["visualtoolbench", "--data"], "strong", "visualtoolbench"),
    "single/browse": ("browse", ["visbrowse-bench", "--data"], "+IS", "visbrowse-bench"),
    "single/vtc": ("vtc-bars", [], "opencv", "vtc-bars"),  # a generated VTC set runs as a dataset folder
}
PLAN = """name = "s"
out = "{out}"
[[models]]
spec = "reference"
[[models]]
spec = "random"
[[benchmarks]]
name = "bars"
settings = ["opencv"]
generate = {{ kind = "vtc-bars", n = 2, seed = 1 }}
"""
SWEEP = {"sweeps/s/runs/bars__opencv__reference": "reference", "sweeps/s/runs/bars__opencv__random": "random"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    data = tmp_path_factory.mktemp("data")
    for rel, (kind, how, setting, _) in SINGLE.items():
        gen = data / kind
        r = ts("generate", kind, "--n", "2", "--out", str(gen))
        assert r.returncode == 0, r.stderr
        target = [how[0], how[1], str(gen)] if how else [str(gen)]
        r = ts("run", *target, "-m", "reference", "--setting", setting, "--out", str(root / rel), "--no-report")
        assert r.returncode == 0, (rel, r.stderr)
    plan = data / "plan.toml"
    plan.write_text(PLAN.format(out=root / "sweeps" / "s"), encoding="utf-8")
    r = ts("sweep", str(plan), "--no-report")
    assert r.returncode == 0, r.stderr
    return root


def _rel(path: str, root: Path) -> str:
    return Path(path).relative_to(root).as_posix()


def test_runs_lists_every_run_with_its_benchmark_setting_and_status(folder: Path) -> None:
    r = ts("runs", str(folder), "--json")
    assert r.returncode == 0, r.stderr
    rows = {_rel(row["path"], folder): row for row in json.loads(r.stdout)}
    assert set(rows) == set(SINGLE) | set(SWEEP)
    for rel, (_, _, setting, bench) in SINGLE.items():
        row = rows[rel]
        assert (row["benchmark"], row["setting"], row["model"], row["status"]) == (bench, setting, "reference",
                                                                                  "finished"), row
        assert (row["tasks"], row["errors"], row["sweep"]) == (2, 0, None), row
    for rel, model in SWEEP.items():
        row = rows[rel]
        assert (row["benchmark"], row["setting"], row["model"], row["status"]) == ("bars", "opencv", model, "finished")
        assert row["sweep"] == str(folder / "sweeps" / "s") and row["tasks"] == 2
    table = ts("runs", str(folder))
    assert table.returncode == 0, table.stderr
    body = {line.split()[0]: line.split() for line in lines(table.stdout)[1:]}
    assert set(body) == set(rows)
    for rel, cells in body.items():
        assert cells[1:3] == [rows[rel]["benchmark"], rows[rel]["setting"]] and "finished" in cells, cells


def test_runs_df_and_samples_df_over_the_folder(folder: Path) -> None:
    runs = toolsight.runs_df(folder)
    assert len(runs) == 7 and {_rel(p, folder) for p in runs["path"]} == set(SINGLE) | set(SWEEP)
    samples = toolsight.samples_df(folder)
    assert len(samples) == 14  # 7 runs x 2 tasks, one epoch
    for path, group in samples.groupby("run"):
        recs = {r["task_id"]: r for r in records(Path(str(path)))}
        assert sorted(group["task_id"]) == sorted(recs)
        run_row = runs[runs["path"] == path].iloc[0]
        for _, s in group.iterrows():
            for key, value in recs[s["task_id"]]["tags"].items():
                assert s[f"tag:{key}"] == value, (path, key)
                col = f"score:{key}={value}"
                want = group[group[f"tag:{key}"] == value]["score"].mean()
                assert run_row[col] == pytest.approx(want), (path, col)
    vtb = samples[samples["benchmark"] == "visualtoolbench"]
    assert set(vtb["tag:turncase"]) <= {"single-turn", "multi-turn"} and vtb["tag:turncase"].notna().all()
    assert samples[samples["benchmark"] != "visualtoolbench"]["tag:turncase"].isna().all()


def test_export_writes_one_inspect_log_per_run(folder: Path, tmp_path: Path) -> None:
    r = ts("export", str(folder), "--out", str(tmp_path / "logs"))
    assert r.returncode == 0, r.stderr
    written = [Path(x.removeprefix("wrote ")) for x in lines(r.stdout)]
    assert len(written) == 7 and all(p.parent == tmp_path / "logs" and p.is_file() for p in written)
    seen = set()
    for p in written:
        log = read_eval_log(str(p))
        run = Path(log.eval.metadata["toolsight_run_dir"]) if log.eval.metadata else Path()
        seen.add(_rel(str(run), folder))
        recs = {r["task_id"]: r for r in records(run)}
        assert log.samples is not None and sorted(str(s.id) for s in log.samples) == sorted(recs)
        for s in log.samples:
            rec = recs[str(s.id)]
            assert s.scores is not None and next(iter(s.scores.values())).value == rec["score"]["value"]
            images = [c for m in resolve_sample_attachments(s).messages if isinstance(m.content, list)
                      for c in m.content if isinstance(c, ContentImage)]
            assert images, (p, s.id)
            for i in images:  # the type named is the bytes' (a generated set's PNG may be named .jpg)
                head, data = i.image.split(",", 1)
                magic = base64.b64decode(data)[:4]
                kind = "png" if magic == b"\x89PNG" else "jpeg" if magic[:3] == b"\xff\xd8\xff" else "?"
                assert head == f"data:image/{kind};base64", (p, s.id, head, magic)
    assert seen == set(SINGLE) | set(SWEEP)


def test_export_csv_has_a_row_per_task_of_every_run(folder: Path, tmp_path: Path) -> None:
    r = ts("export", str(folder), "--format", "csv", "--out", str(tmp_path / "all.csv"))
    assert r.returncode == 0, r.stderr
    with (tmp_path / "all.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 14
    want = {(str(folder / rel), rec["task_id"]) for rel in [*SINGLE, *SWEEP] for rec in records(folder / rel)}
    assert {(row["run_dir"], row["task_id"]) for row in rows} == want


def _get(url: str) -> tuple[int, str, str]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(url, timeout=120) as resp:
            return resp.status, resp.headers.get("Location", ""), resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Location", ""), exc.read().decode("utf-8", "replace")


@pytest.fixture(scope="module")
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


def test_the_folder_viewer_serves_the_index_every_run_a_task_and_a_comparison(served: str, folder: Path) -> None:
    assert _get(served + "/")[:2] == (302, "/viewer/index.html")
    code, _, index = _get(served + "/viewer/index.html")
    assert code == 200
    links = re.findall(r'href="\.\./([^"]+)/viewer/index\.html"', index)
    assert sorted(links) == sorted(set(SINGLE) | set(SWEEP))
    for rel in links:
        code, _, page = _get(f"{served}/{rel}/viewer/index.html")
        assert code == 200, rel
        task = json.loads(next(iter(_json_lines(folder / rel))))["task_id"]
        assert task in page, rel
    code, _, _ = _get(f"{served}/single/vtb/viewer/index.html")
    pages = sorted((folder / "single" / "vtb" / "viewer" / "tasks").glob("*.html"))
    assert code == 200 and len(pages) == 2
    code, _, task_page = _get(f"{served}/single/vtb/viewer/tasks/{pages[0].name}")
    assert code == 200 and "<img" in task_page
    code, where, _ = _get(served + "/compare?a=single/vtc&b=sweeps/s/runs/bars__opencv__reference")
    assert code == 302 and where.startswith("/viewer/compare/"), where
    code, _, cmp = _get(served + where)
    assert code == 200 and "vtc-bars" in cmp and "bars__opencv__reference" in cmp
    for listing in ("/single/", "/sweeps/", "/sweeps/s/runs/", "/single/tir/", "/single/tir/artifacts/"):
        code, _, body = _get(served + listing)
        assert code == 404 and "records.jsonl" not in body and "manifest.json" not in body, listing


def _json_lines(run: Path) -> Iterator[str]:
    yield from (x for x in (run / "records.jsonl").read_text(encoding="utf-8").splitlines() if x.strip())
