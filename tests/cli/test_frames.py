"""`toolsight.runs_df(DIR)` / `toolsight.samples_df(DIR)` (issue 28): DataFrames over every run under a
folder — one row per run with a score column per breakdown value, one row per task-epoch with the
task's tags as columns."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolsight
from clikit import dataset, ts
from toolsight.errors import ToolsightError


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/: `reference` (scores 0 without tools) and `random` on 6 tagged choice tasks; random with 2 epochs."""
    root = tmp_path_factory.mktemp("runs")
    ds = dataset(tmp_path_factory.mktemp("data") / "ds", 6)
    assert ts("run", str(ds), "-m", "reference", "--out", str(root / "ref"), "--no-report").returncode == 0
    r = ts("run", str(ds), "-m", "random", "--epochs", "2", "--out", str(root / "sub" / "rnd"), "--no-report")
    assert r.returncode == 0, r.stderr
    return root


def test_runs_df_has_a_row_per_run_and_the_breakdowns(folder: Path) -> None:
    df = toolsight.runs_df(folder).set_index("model")
    assert sorted(df.index) == ["random", "reference"]
    assert df.loc["reference", "tasks"] == 6 and df.loc["random", "tasks"] == 12  # task-epochs
    assert df.loc["reference", "status"] == "finished" and df.loc["reference", "setting"] == "direct"
    rnd = toolsight.samples_df(folder, model="random")
    for key, value in (("category", "even"), ("level", "2")):
        want = rnd[rnd[f"tag:{key}"] == value]["score"].mean()
        assert df.loc["random", f"score:{key}={value}"] == pytest.approx(want)
    assert df.loc["random", "score"] == pytest.approx(rnd["score"].mean())


def test_samples_df_has_a_row_per_task_epoch_with_tags(folder: Path) -> None:
    df = toolsight.samples_df(folder)
    assert len(df) == 18
    assert {"run", "benchmark", "setting", "model", "task_id", "epoch", "score", "tag:category", "tag:level"} <= set(df.columns)
    rnd = df[df["model"] == "random"]
    assert sorted(rnd["epoch"].unique()) == [1, 2] and len(rnd) == 12
    assert set(df["tag:category"]) == {"even", "odd"}
    assert df[df["model"] == "reference"]["score"].tolist() == [0.0] * 6


def test_filters_defaults_and_errors(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert list(toolsight.runs_df(folder, model="ref*")["model"]) == ["reference"]
    assert toolsight.runs_df(folder, status="running").empty
    monkeypatch.setenv("TOOLSIGHT_RUNS_DIR", str(folder))
    assert len(toolsight.runs_df()) == 2
    with pytest.raises(ToolsightError, match="no such folder"):
        toolsight.samples_df(tmp_path / "nope")
    with pytest.raises(ToolsightError, match="unknown filter 'colour'"):
        toolsight.runs_df(folder, colour="red")
