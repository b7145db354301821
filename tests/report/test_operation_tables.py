"""Image-operation share tables: one per vocabulary the runs' benchmarks declare, titled by it.

VisualToolBench declares its 8 categories, VTC-Bench its tool groups, the starter suite both;
TIR-Bench, PhysToolBench, VisBrowse-Bench and dataset folders (benchmark `dataset`) none. A run without tool calls shows
no operation table; a run of a benchmark without the vocabulary shows '–' in its row.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark
from toolsight.benchmarks.registry import benchmark_names, vocabularies
from toolsight.benchmarks.visualtoolbench.taxonomy import CATEGORY_VOCABULARY
from toolsight.benchmarks.vtc_bench.taxonomy import TOOL_GROUP_VOCABULARY
from toolsight.engine.store import RecordWriter, write_manifest
from toolsight.log.manifest import Manifest
from toolsight.log.record import Record
from toolsight.log.score import Score
from toolsight.log.trajectory import ToolCallRecord, Trajectory, TurnResult
from toolsight.report import build_report

VTB_TITLE = "Image-operation share % (VisualToolBench categories)"
VTC_TITLE = "Tool-group share % (VTC-Bench groups)"
Call = tuple[str, dict[str, object]]
#: a zoom that rescales, a crop tool, and code that rotates then crops by slicing
ZOOM: Call = ("opencv_zoom_in", {"image": "a", "param": {"x": 0, "y": 0, "width": 9, "height": 9, "scale": 2}})
CROP: Call = ("crop", {"image": "a", "bbox": [0, 0, 4, 4]})
CODE: Call = ("python_image_processing",
        {"code": "import cv2\nimg = cv2.imread('a.png')\nimg = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)\n"
                 "img = img[0:10, 0:20]\ncv2.imwrite('b.png', img)"})
CALC: Call = ("calculator", {"expression": "1+1"})


def _run(d: Path, benchmark: str, *tasks: list[Call], setting: str = "s") -> Path:
    write_manifest(d, Manifest(benchmark=benchmark, setting=setting, model="m"))
    w = RecordWriter(d)
    for i, calls in enumerate(tasks):
        traj = Trajectory(turns=[TurnResult(index=0)], tool_calls=[
            ToolCallRecord(id=f"c{k}", turn=0, round=k, name=n, arguments=json.dumps(a), ok=True)
            for k, (n, a) in enumerate(calls)])
        w.write(Record(task_id=f"t{i}", benchmark=benchmark, setting=setting, model="m", trajectory=traj,
                       score=Score(value=1.0)))
    w.close()
    return d


def _table(md: str, title: str) -> list[list[str]]:
    """A markdown table's header and rows, as cells."""
    lines = md.split(f"### {title}\n", 1)[1].strip().splitlines()
    rows = [ln for ln in lines[:next((i for i, ln in enumerate(lines) if not ln.startswith("|")), len(lines))]]
    return [[c.strip() for c in ln.strip("|").split("|")] for k, ln in enumerate(rows) if k != 1]


def test_which_benchmarks_declare_which_vocabulary(tmp_path: Path) -> None:
    assert vocabularies("visualtoolbench") == [CATEGORY_VOCABULARY]
    assert vocabularies("vtc-bench") == [TOOL_GROUP_VOCABULARY]
    # the starter suite: its contributors' vocabularies, in registry order (VTC-Bench before VisualToolBench)
    assert vocabularies("starter") == [TOOL_GROUP_VOCABULARY, CATEGORY_VOCABULARY]
    for name in ("tir-bench", "phystoolbench", "visbrowse-bench", "dataset", "no-such-benchmark", str(tmp_path)):
        assert vocabularies(name) == [], name
    assert DatasetBenchmark(tmp_path).vocabularies() == []
    assert {"visualtoolbench", "vtc-bench", "starter", "tir-bench"} <= set(benchmark_names())


def test_a_vtc_run_shows_its_tool_group_shares(tmp_path: Path) -> None:
    run = _run(tmp_path / "vtc", "vtc-bench", [ZOOM, CROP], [CODE, CALC], [])
    md = build_report([run], fmt="md", plots=False)
    assert f"### {VTB_TITLE}" not in md
    # labels: Zoom in, Crop | Rotate, Crop  -> Crop 2/4, Zoom in 1/4, Rotate 1/4; columns in the vocabulary's order
    assert _table(md, VTC_TITLE) == [["Model", "Setting", "Rotate", "Crop", "Zoom in"],
                                     ["m", "s", "25.0", "50.0", "25.0"]]
    doc = json.loads(build_report([run], fmt="json", plots=False))
    tu = doc["runs"][0]["tool_use"]
    assert tu["operation_counts"] == {TOOL_GROUP_VOCABULARY.name: {"Crop": 2, "Zoom in": 1, "Rotate": 1}}
    assert tu["operation_share"][TOOL_GROUP_VOCABULARY.name]["Crop"] == 0.5
    assert {r["column"]: r["value"] for r in doc["tables"][VTC_TITLE]} == {"Rotate": 25.0, "Crop": 50.0,
                                                                          "Zoom in": 25.0}
    rows = list(csv.DictReader(io.StringIO(build_report([run], fmt="csv", plots=False))))
    assert sorted(r["column"] for r in rows if r["table"] == VTC_TITLE) == ["Crop", "Rotate", "Zoom in"]


def test_a_visualtoolbench_run_shows_its_categories_in_the_papers_order(tmp_path: Path) -> None:
    run = _run(tmp_path / "vtb", "visualtoolbench", [ZOOM], [CODE], [CROP, CALC])
    md = build_report([run], fmt="md", plots=False)
    assert f"### {VTC_TITLE}" not in md
    # a zoom with scale is crop + resize; the code rotates and crops -> crop 3/5, resize 1/5, rotate 1/5
    assert _table(md, VTB_TITLE) == [["Model", "Setting", "crop", "resize", "rotate"],
                                     ["m", "s", "60.0", "20.0", "20.0"]]


@pytest.mark.parametrize("benchmark", ["tir-bench", "phystoolbench", "visbrowse-bench", "dataset"])
def test_benchmarks_without_a_vocabulary_have_no_operation_table(tmp_path: Path, benchmark: str) -> None:
    run = _run(tmp_path / "run", benchmark, [ZOOM, CODE], [CROP])
    md = build_report([run], fmt="md", plots=False)
    assert "### Tool-call share %" in md
    assert f"### {VTB_TITLE}" not in md and f"### {VTC_TITLE}" not in md
    doc = json.loads(build_report([run], fmt="json", plots=False))
    assert doc["runs"][0]["tool_use"]["operation_counts"] == {}


def test_a_run_without_tool_calls_has_no_operation_table(tmp_path: Path) -> None:
    run = _run(tmp_path / "base", "starter", [], [], setting="direct")
    md = build_report([run], fmt="md", plots=False)
    assert f"### {VTB_TITLE}" not in md and f"### {VTC_TITLE}" not in md


def test_several_benchmarks_one_table_per_vocabulary(tmp_path: Path) -> None:
    vtc = _run(tmp_path / "vtc", "vtc-bench", [ZOOM, CROP])
    tir = _run(tmp_path / "tir", "tir-bench", [CODE], setting="t")
    starter = _run(tmp_path / "starter", "starter", [CODE], setting="u")
    md = build_report([vtc, tir, starter], fmt="md", plots=False)
    assert md.count(f"### {VTC_TITLE}") == 1 and md.count(f"### {VTB_TITLE}") == 1
    groups = _table(md, VTC_TITLE)
    assert groups[0] == ["Model", "Setting", "Rotate", "Crop", "Zoom in"]
    assert groups[1:] == [["m", "s", "–", "50.0", "50.0"], ["m", "t", "–", "–", "–"], ["m", "u", "50.0", "50.0", "–"]]
    cats = _table(md, VTB_TITLE)
    assert cats[0] == ["Model", "Setting", "crop", "rotate"]
    assert cats[1:] == [["m", "s", "–", "–"], ["m", "t", "–", "–"], ["m", "u", "50.0", "50.0"]]
