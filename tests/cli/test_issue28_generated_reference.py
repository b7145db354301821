"""Issue 28, item 1: a generated set runs under its benchmark's own settings with `--model reference`
and scores 1.0 through the real tools; where a setting cannot solve it, the warning names the
settings that can. Each command as a user types it (`toolsight generate …`, then `toolsight run …`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clikit import lines, records, ts


def _generate(kind: str, out: Path, n: int = 1, *extra: str) -> Path:
    r = ts("generate", kind, "--n", str(n), "--out", str(out), *extra)
    assert r.returncode == 0, r.stderr
    return out


def _all_solved(run: Path, n: int) -> None:
    recs = records(run)
    assert len(recs) == n
    for rec in recs:
        assert rec["error"] is None and rec["score"]["value"] == 1.0, rec["task_id"]
        assert rec["trajectory"]["tool_calls"], rec["task_id"]  # solved through the tools, not by a guess


@pytest.mark.parametrize("kind", ["jigsaw", "maze"])
def test_tir_bench_default_setting_solves_a_generated_set(kind: str, tmp_path: Path) -> None:
    data = _generate(kind, tmp_path / kind)
    run = tmp_path / "run"
    r = ts("run", "tir-bench", "--data", str(data), "-m", "reference", "--out", str(run), "--no-report")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    _all_solved(run, 1)
    calls = records(run)[0]["trajectory"]["tool_calls"]
    assert [c["name"] for c in calls] == ["code_interpreter"]  # the setting's own (official) code tool


@pytest.mark.parametrize(("kind", "bench", "setting"), [
    ("vtc-bars", "vtc-bench", "interface"),  # the official 35 opencv_* tools, as the driver offers them
    ("phystool", "phystoolbench", "tools"),  # a generated set's default: the official settings offer no tools
    ("vtb", "visualtoolbench", "strong"),
    ("browse", "visbrowse-bench", "+IS"),
])
def test_each_benchmark_default_setting_solves_its_generated_set(kind: str, bench: str, setting: str,
                                                                 tmp_path: Path) -> None:
    data = _generate(kind, tmp_path / kind)
    run = tmp_path / "run"
    r = ts("run", bench, "--data", str(data), "-m", "reference", "--out", str(run), "--no-report")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    _all_solved(run, 1)
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["setting"] == setting


def test_a_generated_phystool_set_names_its_benchmark_run(tmp_path: Path) -> None:
    r = ts("generate", "phystool", "--n", "1", "--out", str(tmp_path / "p"))
    assert r.returncode == 0, r.stderr
    assert f"toolsight run phystoolbench --data {tmp_path / 'p'} --model reference" in r.stdout + r.stderr
    run = ts("run", "phystoolbench", "--data", str(tmp_path / "p"), "-m", "reference", "--out", str(tmp_path / "run"),
             "--no-report")
    assert "note: no --setting given: using 'tools' (perception, crop)" in run.stderr


def test_a_tir_bench_setting_without_a_code_tool_names_the_settings_that_have_one(tmp_path: Path) -> None:
    data = _generate("jigsaw", tmp_path / "jig")
    r = ts("run", "tir-bench", "--data", str(data), "-m", "reference", "--setting", "function",
           "--out", str(tmp_path / "run"), "--no-report")
    warn = [x for x in lines(r.stderr) if x.startswith("warning:")]
    assert len(warn) == 1, r.stderr
    assert "which this setting does not offer (rotate_image)" in warn[0]
    assert "pick a setting that offers them: --setting code / code-s2 / code-s3" in warn[0]
