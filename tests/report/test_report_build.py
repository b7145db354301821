"""Reports over real fixture runs: tables in md/html/json/csv, best/second marks, deltas, plots, export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from toolsight.metrics import compute_run_metrics
from toolsight.report import ReportError, build_report, export_records
from toolsight.report.plots import PLOTS


def _row(md: str, title: str, setting: str) -> str:
    section = md.split(f"### {title}", 1)[1].split("###", 1)[0]
    return next(line for line in section.splitlines() if line.startswith(f"| mock/alpha | {setting} |"))


def test_markdown_tables_marks_and_deltas(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    base, code = two_runs
    mb, mc = (compute_run_metrics(d) for d in (base, code))
    out = tmp_path / "rep"
    md = build_report([base, code], by=["category", "turn_type"], fmt="md", base_setting="base", out_dir=out)
    assert "### Score % by category" in md and "### Score % by turn_type" in md and "### Tool use" in md
    sb, sc = mb.overall.score.value, mc.overall.score.value
    assert sb is not None and sc is not None and sb != sc
    best, second = ("base", "code") if sb > sc else ("code", "base")
    assert f"**{100 * max(sb, sc):.1f} [" in _row(md, "Score", best)
    # two runs: the worse one is not "second best"
    assert f"| {100 * min(sb, sc):.1f} [" in _row(md, "Score", second) and "<u>" not in _row(md, "Score", second)
    assert f"({100 * (sc - sb):+.1f})" in _row(md, "Score", "code")
    assert "(" not in _row(md, "Score", "base").split("|")[5].split("]")[1]  # no delta on the base row
    # the base setting offers no tools (and made no call): it is left out of the tool tables, which say so
    tools = md.split("### Tool use", 1)[1].split("###", 1)[0]
    assert "| mock/alpha | base |" not in tools and "Not shown (no tools offered): mock/alpha · base." in tools
    tcr = mc.tool_use.proactivity.value
    assert tcr is not None and _row(md, "Tool use", "code").split("|")[3].strip() == f"{100 * tcr:.1f}"
    assert (out / "report.md").read_text() == md
    exported = pd.read_csv(out / "records.csv")  # written in the same pass as the metrics
    assert len(exported) == 32 and set(exported.setting) == {"base", "code"}
    for name in PLOTS:
        assert f"]({name})" in md
        with Image.open(out / name) as im:
            arr = np.asarray(im.convert("L"))
        assert im.width > 300 and float(arr.std()) > 5  # a drawn plot, not a blank canvas


def test_html_embeds_plots_without_out_dir(two_runs: tuple[Path, Path]) -> None:
    text = build_report(list(two_runs), by=["difficulty"], fmt="html", base_setting="base")
    assert text.count("data:image/png;base64,") == len(PLOTS)
    assert "<td class='num best'>" in text and "<h3>Score % by difficulty</h3>" in text


def test_json_and_csv_carry_the_numbers(two_runs: tuple[Path, Path]) -> None:
    base, code = two_runs
    doc = json.loads(build_report([base, code], by=["category"], fmt="json"))
    mc = compute_run_metrics(code, by=["category"])
    assert len(doc["runs"]) == 2
    assert doc["runs"][1]["overall"]["score"]["value"] == pytest.approx(mc.overall.score.value)
    assert doc["runs"][1]["groups"]["category"]["ocr"]["n"] == mc.groups["category"]["ocr"].n
    assert doc["runs"][1]["tool_use"]["eff_tool"]["value"] == pytest.approx(mc.tool_use.eff_tool.value)
    rows = list(csv.DictReader(io.StringIO(build_report([base, code], by=["category"], fmt="csv"))))
    hit = [r for r in rows if r["table"] == "Score % by category" and r["Setting"] == "code" and r["column"] == "ocr"]
    ocr = mc.groups["category"]["ocr"].score.value
    assert ocr is not None and len(hit) == 1 and float(hit[0]["value"]) == pytest.approx(100 * ocr)


def test_warnings_and_bad_requests(run_dir: Path) -> None:
    md = build_report([run_dir], by=["category"], base_setting="nosuch")
    assert "base setting 'nosuch' is not among the runs' settings (code)" in md
    with pytest.raises(ReportError, match="--by nosuchtag: no task of the run"):
        build_report([run_dir], by=["nosuchtag"])
    with pytest.raises(ReportError, match="--format 'pdf'"):
        build_report([run_dir], fmt="pdf")
    with pytest.raises(ReportError, match=r"no manifest\.json"):
        build_report([run_dir / "artifacts"])


def test_error_records_counted_apart(run_dir: Path) -> None:
    md = build_report([run_dir])
    assert "1 run error(s) (model: 1)" in md
    assert _row(md, "Score", "code").split("|")[3].strip() == "11"


def test_export_records_csv(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    p = export_records(list(two_runs), tmp_path / "all.csv")
    df = pd.read_csv(p)
    assert len(df) == 32
    assert {"tag_category", "tag_difficulty", "effective_calls", "score"} <= set(df.columns)
    code = df[df.setting == "code"]
    assert int(code.tool_calls.sum()) == compute_run_metrics(two_runs[1]).tool_use.calls + int(
        code[code.error.notna()].tool_calls.sum())
    with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
        export_records(list(two_runs), tmp_path / "x.xlsx")


def test_export_parquet_when_pyarrow_is_there(run_dir: Path, tmp_path: Path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match="needs pyarrow"):
            export_records([run_dir], tmp_path / "r.parquet")
        return
    p = export_records([run_dir], tmp_path / "r.parquet")
    assert len(pd.read_parquet(p)) == 12
