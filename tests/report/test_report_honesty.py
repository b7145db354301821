"""Report numbers that say what they mean (issue 17 item 7) and report text a model cannot inject
into (issue 11 item 10): reference-less tasks, CSV percentages, plots with every format, marks with
two runs, the last record per task, the tool-share labels, md/csv/html escaping."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from runfixture import make_fixture_run
from toolsight.log import Record, iter_records
from toolsight.metrics import compute_run_metrics
from toolsight.report import build_report, export_records
from toolsight.report.plots import PLOTS, tool_share_figure

EVIL_TOOL = "<svg onload=alert(1)>"
FORMULA_TOOL = '=HYPERLINK("http://127.0.0.1/x","click")'


def _rewrite(run_dir: Path, change: dict[str, str]) -> None:
    """Rename tools in every record (as a model calling tools of those names would leave them)."""
    lines = []
    for rec in iter_records(run_dir):
        data = rec.model_dump(mode="json")
        for c in data["trajectory"]["tool_calls"]:
            c["name"] = change.get(c["name"], c["name"])
        for m in data["trajectory"]["messages"]:
            for tc in m.get("tool_calls") or []:
                tc["name"] = change.get(tc["name"], tc["name"])
        lines.append(json.dumps(data))
    (run_dir / "records.jsonl").write_text("\n".join(lines) + "\n")


def test_tasks_without_reference_chain_are_left_out_of_mae(run_dir: Path) -> None:
    recs = [r for r in iter_records(run_dir) if r.error is None]
    with_ref = [r for r in recs if any(r.extra["reference_chain_lengths"])]
    assert 0 < len(with_ref) < len(recs)  # the fixture's 'direct' tasks have no reference chain
    m = compute_run_metrics(run_dir, by=["category"])
    assert m.tool_use.with_reference == len(with_ref)
    expect = sum(abs(sum(r.extra["reference_chain_lengths"]) - len(r.trajectory.tool_calls)) for r in with_ref)
    assert m.tool_use.mae_all.value == pytest.approx(expect / len(with_ref))
    assert 0 not in m.distributions.reference_lengths
    assert sum(g.n for g in m.chain_groups["category"].values()) == len(with_ref)
    rows = {r["task_id"]: r for r in csv.DictReader(export_records([run_dir], run_dir / "x.csv").open())}
    assert rows["task-00000"]["reference_length"] == ""  # no reference: blank, not 0
    assert rows["task-00001"]["reference_length"] == "2"


def test_csv_and_json_percent_columns_hold_percentages(two_runs: tuple[Path, Path]) -> None:
    base, code = two_runs
    mc = compute_run_metrics(code)
    rows = list(csv.DictReader(io.StringIO(build_report([base, code], fmt="csv"))))
    hit = next(r for r in rows if r["table"] == "Score" and r["Setting"] == "code" and r["column"].startswith("Score"))
    assert mc.overall.score.value is not None and mc.overall.score.lo is not None
    assert float(hit["value"]) == pytest.approx(100 * mc.overall.score.value)
    assert float(hit["lo"]) == pytest.approx(100 * mc.overall.score.lo)
    calls = next(r for r in rows if r["table"] == "Tool use" and r["Setting"] == "code" and r["column"] == "Calls/task")
    assert float(calls["value"]) == pytest.approx(mc.tool_use.volume.value)  # not a percentage: unscaled
    doc = json.loads(build_report([base, code], fmt="json"))
    j = next(r for r in doc["tables"]["Score"] if r["Setting"] == "code" and str(r["column"]).startswith("Score"))
    assert j["value"] == pytest.approx(100 * mc.overall.score.value)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_out_writes_plots_for_every_format(two_runs: tuple[Path, Path], tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"rep-{fmt}"
    text = build_report(list(two_runs), fmt=fmt, out_dir=out)
    for name in PLOTS:
        assert (out / name).is_file() and (out / name).read_bytes()[:4] == b"\x89PNG"
    assert (out / f"report.{fmt}").read_text() == text
    if fmt == "json":
        assert json.loads(text)["plots"] == list(PLOTS)


def test_two_runs_mark_no_second_best(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    md = build_report(list(two_runs), by=["category"])
    assert "<u>" not in md.split("**bold**")[0]
    rows = list(csv.DictReader(io.StringIO(build_report(list(two_runs), fmt="csv"))))
    assert not [r for r in rows if r["mark"] == "second"]
    assert [r for r in rows if r["mark"] == "best"]
    third = make_fixture_run(tmp_path, name="third", setting="code3", n_tasks=16, seed=5)
    rows3 = list(csv.DictReader(io.StringIO(build_report([*two_runs, third], fmt="csv"))))
    seconds = [r for r in rows3 if r["mark"] == "second" and r["table"] == "Score"]
    assert seconds  # with three runs the middle one is underlined
    for r in seconds:
        vals = sorted(float(x["value"]) for x in rows3 if x["table"] == "Score" and x["column"] == r["column"]
                      and x["value"] and x["Model"] != "random guess (expected)")
        assert vals[0] < float(r["value"]) < vals[-1]


def test_a_resumed_task_counts_once_with_its_last_record(run_dir: Path) -> None:
    before = compute_run_metrics(run_dir)
    assert before.n_errors == 1
    failed = next(r for r in iter_records(run_dir) if r.error is not None)
    redo = Record.model_validate({**failed.model_dump(), "error": None,
                                  "score": {"value": 1.0, "passed": True, "scorer": "choice"}})
    with (run_dir / "records.jsonl").open("a") as fh:
        fh.write(redo.model_dump_json() + "\n")
    after = compute_run_metrics(run_dir)
    assert after.n_records == before.n_records and after.n_errors == 0
    assert after.n_scored == before.n_scored + 1


def test_tool_share_labels_sit_on_their_bars(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    third = make_fixture_run(tmp_path, name="third", setting="code3", n_tasks=16, seed=5)
    metrics = [compute_run_metrics(d) for d in (*two_runs, third)]  # the first run made no tool call
    fig = tool_share_figure(metrics)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    ticks = list(ax.get_yticks())
    from matplotlib.patches import Rectangle

    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() > 0]
    assert labels and bars
    for name, y in zip(labels, ticks, strict=True):
        mine = [p for p in bars if abs(p.get_y() + p.get_height() / 2 - y) < 0.45]
        assert mine, name
        lo = min(p.get_y() for p in mine)
        hi = max(p.get_y() + p.get_height() for p in mine)
        assert lo < y < hi and abs((lo + hi) / 2 - y) < 1e-9, (name, lo, hi, y)


def test_model_and_tool_strings_are_neutralised(run_dir: Path, tmp_path: Path) -> None:
    _rewrite(run_dir, {"crop": EVIL_TOOL, "rotate": FORMULA_TOOL, "resize": "a|b`c`"})
    md = build_report([run_dir])
    assert "<svg" not in md and "&lt;svg onload=alert(1)&gt;" in md
    assert "a\\|b\\`c\\`" in md  # the table keeps its columns
    header = next(line for line in md.splitlines() if "&lt;svg" in line)
    assert header.count(" | ") == md.split("### Tool-call share")[1].splitlines()[4].count(" | ")
    html = build_report([run_dir], fmt="html")
    assert "<svg" not in html and "&lt;svg onload=alert(1)&gt;" in html
    rows = list(csv.reader(io.StringIO(build_report([run_dir], fmt="csv"))))
    cells = [c for r in rows for c in r]
    assert "'" + FORMULA_TOOL in cells and FORMULA_TOOL not in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not _number(c))]
    out = tmp_path / "rep"
    build_report([run_dir], fmt="md", out_dir=out)
    exported = list(csv.reader((out / "records.csv").open()))
    assert not [c for r in exported for c in r if c[:1] in ("=", "+", "@")]


def _number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True
