"""`toolsight run --sandbox BACKEND`: the run's code tools go through the chosen sandbox backend, and
the manifest records the isolation that backend gives (the subprocess backend says it gives none)."""

from __future__ import annotations

import json
from pathlib import Path

from clikit import assert_one_error_line, ts
from toolsight.benchmarks.generation import generate


def _run(tmp_path: Path, backend: str) -> tuple[dict[str, object], list[dict[str, object]]]:
    data = tmp_path / "maze"
    if not data.exists():
        generate("maze", 1, 3, data, difficulty=5)
    out = tmp_path / f"run-{backend}"
    r = ts("run", str(data), "-m", "reference", "--setting", "code", "--sandbox", backend, "--out", str(out),
           "--no-report")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    return manifest, records


def test_the_chosen_backend_runs_the_code_and_is_recorded(tmp_path: Path) -> None:
    for backend, isolated in (("subprocess", False), ("forkserver", True)):
        manifest, records = _run(tmp_path, backend)
        iso = manifest["isolation"]
        assert isinstance(iso, dict) and iso["backend"] == backend and iso["isolated"] is isolated
        assert manifest["options"]["sandbox"] == backend  # type: ignore[index]
        calls = [c for rec in records for c in rec["trajectory"]["tool_calls"]]  # type: ignore[index]
        assert calls and {c["extra"]["backend"] for c in calls} == {backend}
        assert all(rec["score"]["value"] == 1.0 for rec in records)  # type: ignore[index]


def test_an_unknown_backend_is_one_line_before_anything_runs(tmp_path: Path) -> None:
    generate("maze", 1, 3, tmp_path / "maze", difficulty=5)
    r = ts("run", str(tmp_path / "maze"), "-m", "reference", "--setting", "code", "--sandbox", "docker",
           "--out", str(tmp_path / "run"))
    assert_one_error_line(r, 2, "--sandbox", "'docker'", "forkserver", "subprocess")
    assert not (tmp_path / "run").exists()
