"""Tasks held compactly (toolsight.tasks.taskset): built equal to what was loaded, small, and the
run, selection and task hashes work on them (issue 19: a run's memory flat in its number of tasks)."""

from __future__ import annotations

import hashlib
import json
import math
import tracemalloc
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from toolsight.benchmarks.base import LoadedTasks
from toolsight.tasks.dataset import load_dataset, task_hashes
from toolsight.tasks.schema import Rubric, Task, Turn
from toolsight.tasks.select import select_tasks
from toolsight.tasks.taskset import TaskSet

LINES: list[dict[str, Any]] = [
    {"id": "a", "turns": [{"prompt": "Wie viele Äpfel? 🍎", "images": [{"path": "img.png"}], "answer": "3",
                           "answer_type": "integer"}], "tags": {"level": 2, "kind": "count"}},
    {"id": "b", "benchmark": "x", "turns": [{"prompt": "p1", "options": {"A": "red", "B": "blue"}, "answer": "A",
                                              "answer_type": "choice"},
                                             {"prompt": "p2", "rubrics": [{"text": "says blue", "weight": 4}]}],
     "meta": {"score": 0.25, "nested": {"list": [1, 2.5, None, True]}}},
    {"id": "c", "turns": [{"prompt": "nan in meta", "meta": {"v": float("nan")}}]},
]


def _dataset(tmp: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    Image.new("RGB", (8, 8), (200, 10, 10)).save(tmp / "img.png")
    (tmp / "tasks.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return tmp


def test_a_loaded_task_is_built_equal_to_its_line(tmp_path: Path) -> None:
    ds = load_dataset(_dataset(tmp_path, LINES))
    assert isinstance(ds.tasks, TaskSet) and ds.tasks.ids == ["a", "b", "c"]
    for got, row in zip(ds.tasks, LINES, strict=True):
        want = Task.model_validate(row)
        assert got.model_dump_json() == want.model_dump_json()
    assert ds.tasks[0].tags == {"level": "2", "kind": "count"}  # coerced as on load
    assert math.isnan(ds.tasks[2].turns[0].meta["v"])  # NaN survives (a dump would turn it into null)
    assert ds.tasks.get("b") is not None and ds.tasks.get("b").turns[1].rubrics[0].is_critical  # type: ignore[union-attr]
    assert ds.tasks.get("zz") is None
    assert [t.id for t in ds.tasks[1:]] == ["b", "c"] and ds.tasks.take([2, 0]).ids == ["c", "a"]


def test_tasks_built_in_python_come_back_equal_or_are_kept() -> None:
    made = [
        Task(id="p", turns=[Turn(prompt="q", answer=["x", "y"], answer_type="set",
                                 rubrics=[Rubric(text="r", weight=5, categories=["c"])])], tags={"t": "1"}),
        Task(id="tuple", turns=[Turn(prompt="q")], meta={"box": (1, 2, 3, 4)}),  # JSON would make it a list
        Task(id="nan", turns=[Turn(prompt="q")], meta={"v": float("inf")}),
    ]
    ts = TaskSet.from_tasks(made)
    assert ts[0] == made[0] and ts[0] is not made[0]  # kept as text, built again
    assert ts[1].meta["box"] == (1, 2, 3, 4)  # kept as the object: a list would not be equal
    assert ts[2].meta["v"] == float("inf")
    loaded = LoadedTasks(made, Path("."), "src", "fp")
    assert isinstance(loaded.tasks, TaskSet) and [t.id for t in loaded.tasks] == ["p", "tuple", "nan"]


def test_a_task_set_is_a_fraction_of_the_built_tasks(tmp_path: Path) -> None:
    rows = [{"id": f"t{i}", "turns": [{"prompt": f"Which letter? q{i}", "images": [{"path": "img.png"}],
                                       "answer": "A"}]} for i in range(3000)]
    root = _dataset(tmp_path, rows)
    tracemalloc.start()
    try:
        ds = load_dataset(root, check_images=False)
        compact = tracemalloc.get_traced_memory()[0]
        built = list(ds.tasks)
        both = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(built) == 3000
    assert compact < (both - compact) / 4, (compact, both - compact)  # measured: about a tenth


def test_selection_works_on_a_task_set(tmp_path: Path) -> None:
    rows = [{"id": f"t{i}", "turns": [{"prompt": "q"}], "tags": {"par": "even" if i % 2 == 0 else "odd"}}
            for i in range(10)]
    ts = load_dataset(_dataset(tmp_path, rows)).tasks
    sel = select_tasks(ts, tags={"par": ["odd"]}, limit=3)
    assert isinstance(sel, TaskSet) and sel.ids == ["t1", "t3", "t5"]
    assert [t.tags["par"] for t in sel] == ["odd"] * 3
    assert select_tasks(ts, task_ids=["t7", "t2"]).ids == ["t2", "t7"]  # dataset order
    doubled = select_tasks(ts, limit=2, expand=lambda xs: [t.model_copy(update={"id": t.id + s}) for t in xs
                                                              for s in ("-a", "-b")])
    assert doubled.ids == ["t0-a", "t0-b", "t1-a", "t1-b"] and doubled[3].id == "t1-b"


def test_task_hashes_over_batches_are_each_task_s_own(tmp_path: Path) -> None:
    root = tmp_path
    for i in range(3):
        Image.new("RGB", (4, 4), (i * 50, 0, 0)).save(root / f"i{i}.png")
    rows = [{"id": f"t{i}", "turns": [{"prompt": f"q{i}", "images": [{"path": f"i{i % 3}.png"}]}]} for i in range(600)]
    (root / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ts = load_dataset(root).tasks
    hashes = task_hashes(ts, root)  # 600 tasks: three batches
    assert len(hashes) == 600
    for n in (0, 255, 256, 599):
        t = ts[n]
        image = hashlib.sha256((root / t.image_paths()[0]).read_bytes()).hexdigest()
        h = hashlib.sha256(t.model_dump_json().encode())  # the hash --resume compares (unchanged format)
        h.update(f"\x00{t.image_paths()[0]}\x00{image}".encode())
        assert hashes[t.id] == h.hexdigest()[:16]
    assert len({hashes[f"t{i}"] for i in range(600)}) == 600
