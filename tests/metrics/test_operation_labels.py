"""Image-operation labels of recorded calls: metrics label them under the vocabularies they are given
(the real recognizer and the real benchmark vocabularies; no stand-in module), count them per
vocabulary name, and name no benchmark themselves."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from toolsight.benchmarks.visualtoolbench.taxonomy import CATEGORY_VOCABULARY
from toolsight.benchmarks.vtc_bench.taxonomy import TOOL_GROUP_VOCABULARY
from toolsight.log.record import Record
from toolsight.log.trajectory import ToolCallRecord, Trajectory, TurnResult
from toolsight.metrics import metrics_from_views
from toolsight.metrics.views import ScoreLite, view_of
from toolsight.scoring.base import Score
from toolsight.tools.operations import Operation, Vocabulary, classify_call

VTB, VTC = CATEGORY_VOCABULARY.name, TOOL_GROUP_VOCABULARY.name
BOTH = (CATEGORY_VOCABULARY, TOOL_GROUP_VOCABULARY)
#: a vocabulary no benchmark declares: metrics must work with any
APIS = Vocabulary(name="apis", title="API share %", order=(), labels=lambda op: (op.api,))
ROTATE = "from PIL import Image\nimg = Image.open(p)\nimg = img.rotate(90)\nimg.save('o.png')"
FLIP = "import cv2\nimg = cv2.imread('a.png')\nimg = cv2.flip(img, 1)\ncv2.imwrite('b.png', img)"


def _record(*calls: tuple[str, str], error: str | None = None) -> Record:
    traj = Trajectory(turns=[TurnResult(index=0)], tool_calls=[
        ToolCallRecord(id=f"c{i}", turn=0, round=i, name=n, arguments=a, ok=True) for i, (n, a) in enumerate(calls)])
    return Record(task_id="t", benchmark="b", setting="s", model="m", trajectory=traj, error=error,
                  score=None if error else Score(value=1.0))


def _code(code: str) -> str:
    return json.dumps({"code": code})


def test_interface_crop_zoom_and_code_calls() -> None:
    rec = _record(("python_image_processing", _code(ROTATE)), ("zoom_in", "{}"),
                  ("crop", json.dumps({"image": "a", "box": [0, 0, 4, 4]})), ("python", _code(FLIP)),
                  ("opencv_zoom_in", json.dumps({"param": {"scale": 2}})))
    v = view_of(rec, None, vocabularies=BOTH)
    # each call's labels once, the calls' labels in call order (a label repeats across calls)
    assert v.labels == {VTB: ["rotate", "crop", "resize", "crop", "flip", "crop", "resize"],
                        VTC: ["Rotate", "Zoom in", "Crop", "Flip", "Zoom in"]}
    assert view_of(rec, None, vocabularies=[APIS]).labels == {
        "apis": ["Image.rotate", "zoom tool", "crop tool", "cv2.flip", "opencv_zoom_in"]}


def test_calls_without_an_image_operation_have_no_label() -> None:
    rec = _record(("calculator", json.dumps({"expression": "1+1"})), ("calculator", "{not json"),
                  ("python", _code("def broken(:")), ("python", _code("print(1 + 1)")))
    assert view_of(rec, None, vocabularies=BOTH).labels == {VTB: [], VTC: []}


def test_without_vocabularies_calls_are_not_classified() -> None:
    assert view_of(_record(("python", _code(FLIP))), None).labels == {}


def test_results_are_fresh_lists_each_time() -> None:
    # the cache holds operations: a caller mutating its list must not change the next answer
    first = classify_call("zoom_in", "{}", BOTH)
    first[VTB].append("bogus")
    assert classify_call("zoom_in", "{}", BOTH) == {VTB: ["crop", "resize"], VTC: ["Zoom in"]}


def test_counts_and_shares_per_vocabulary() -> None:
    ok = ScoreLite(value=1.0, passed=True, error=None)
    views = [
        view_of(_record(("python", _code(ROTATE)), ("zoom_in", "{}")), ok, vocabularies=[*BOTH, APIS]),
        view_of(_record(("crop", "{}"), ("calculator", "{}")), ok, vocabularies=[*BOTH, APIS]),
        view_of(_record(("crop", "{}"), error="model error: HTTP 500"), None, vocabularies=[*BOTH, APIS]),
        view_of(_record(), ok, vocabularies=[*BOTH, APIS]),
    ]
    tu = metrics_from_views(views, resamples=10).tool_use
    # the run-error record is out of tool use, as for every tool-use metric
    assert tu.operation_counts == {VTB: {"crop": 2, "rotate": 1, "resize": 1},
                                   VTC: {"Rotate": 1, "Zoom in": 1, "Crop": 1},
                                   "apis": {"Image.rotate": 1, "zoom tool": 1, "crop tool": 1}}
    assert tu.operation_share[VTB] == {"crop": 0.5, "rotate": 0.25, "resize": 0.25}
    assert tu.operation_share[VTC]["Crop"] == 1 / 3
    assert list(tu.operation_counts) == [VTB, VTC, "apis"]  # the order the vocabularies were given in
    assert metrics_from_views([views[0]], resamples=10).tool_use.operation_counts[VTB] == {
        "rotate": 1, "crop": 1, "resize": 1}
    none = metrics_from_views([view_of(_record(("crop", "{}")), ok)], resamples=10).tool_use
    assert none.operation_counts == {} and none.operation_share == {}
    assert tu.model_dump(mode="json")["operation_share"][VTB]["crop"] == 0.5


BENCHMARK_NAMES = re.compile(r"visual.?tool.?bench|\bvtc|\bvtb|tir.?bench|phys.?tool|vis.?browse", re.I)


def _spelled(tree: ast.AST) -> list[tuple[int, str]]:
    """Identifiers and string literals of a module, docstrings left out (they may cite a paper)."""
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out: list[tuple[int, str]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings:
            out.append((n.lineno, n.value))
        elif isinstance(n, ast.Name):
            out.append((n.lineno, n.id))
        elif isinstance(n, ast.Attribute):
            out.append((n.lineno, n.attr))
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append((n.lineno, n.name))
        elif isinstance(n, ast.arg):
            out.append((n.lineno, n.arg))
        elif isinstance(n, ast.alias):
            out.append((n.lineno, f"{n.name} {n.asname or ''}"))
        elif isinstance(n, ast.ImportFrom):
            out.append((n.lineno, n.module or ""))
    return out


def test_generic_code_names_no_benchmark() -> None:
    src = Path(__file__).resolve().parents[2] / "src" / "toolsight"
    files = [*sorted((src / "tools" / "operations").glob("*.py")), *sorted((src / "metrics").glob("*.py"))]
    assert len(files) >= 10
    found = [f"{f.name}:{line}: {text!r}" for f in files
             for line, text in _spelled(ast.parse(f.read_text(encoding="utf-8"))) if BENCHMARK_NAMES.search(text)]
    assert not found
    # the check itself sees identifiers and literals, and skips docstrings
    probe = ast.parse('"""VisualToolBench Fig. 6."""\nvtb_labels = {"x": "VTC-Bench groups"}\n')
    assert [t for _, t in _spelled(probe) if BENCHMARK_NAMES.search(t)] == ["vtb_labels", "VTC-Bench groups"]


def test_an_operation_is_plain_data() -> None:
    op = Operation(3, "Image.convert", frozenset({"mode=L"}))
    assert op.mode == "L" and not op.has("scale") and Operation(0, "slice").mode is None
