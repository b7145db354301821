"""TaskSet (toolsight.tasks.taskset) on what loaders hand it: tasks of their own `Task` subclass come
back as that subclass (the same objects), and a repeated task id is refused at load time naming the
id, as `load_dataset` and the benchmark loaders refuse it — never resolved silently to one of the two.

Issue 24 item 7: each test here fails on a one-line change that left every other test green."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsight.benchmarks.base import LoadedTasks
from toolsight.errors import ToolsightError
from toolsight.tasks.dataset import DatasetError, load_dataset, validate_dataset
from toolsight.tasks.schema import Task, Turn
from toolsight.tasks.select import select_tasks
from toolsight.tasks.taskset import DuplicateTaskId, TaskSet


class ChartTask(Task):
    """A loader's own task class: what it adds is lost if a rebuild makes it a plain `Task`."""

    def chart_kind(self) -> str:
        return self.tags.get("chart", "?")


def _chart(tid: str, chart: str) -> ChartTask:
    return ChartTask(id=tid, turns=[Turn(prompt=f"What does the {chart} chart show?")], tags={"chart": chart})


def test_a_loaders_task_subclass_comes_back_as_that_subclass() -> None:
    made = [_chart("c1", "bar"), _chart("c2", "pie"), _chart("c3", "bar")]
    loaded = LoadedTasks(made, Path("."), "charts", "fp")  # what a benchmark's load() returns
    ts = loaded.tasks
    assert isinstance(ts, TaskSet) and ts.ids == ["c1", "c2", "c3"]
    assert [type(t) for t in ts] == [ChartTask] * 3
    assert all(got is want for got, want in zip(ts, made, strict=True))  # kept as they are
    assert ts[1].chart_kind() == "pie"  # type: ignore[attr-defined]
    got = ts.get("c3")
    assert isinstance(got, ChartTask) and got is made[2]
    # the way a run selects its tasks: by tag, by id, a limit; a slice and `take`
    sel = select_tasks(ts, tags={"chart": ["bar"]}, limit=5)
    assert sel.ids == ["c1", "c3"] and [type(t) for t in sel] == [ChartTask] * 2
    assert type(select_tasks(ts, task_ids=["c2"])[0]) is ChartTask
    assert type(ts[1:][0]) is ChartTask and type(ts.take([2])[0]) is ChartTask


def test_a_repeated_task_id_from_a_loader_is_refused_naming_it() -> None:
    made = [_chart("c1", "bar"), _chart("dup", "pie"), _chart("c2", "line"), _chart("dup", "bar")]
    with pytest.raises(DuplicateTaskId, match=r"duplicate task id 'dup' \(tasks number 2 and 4\)") as ei:
        LoadedTasks(made, Path("."), "charts", "fp")
    assert isinstance(ei.value, ToolsightError)  # shown as one line by the CLI, no traceback
    plain = [Task(id="x", turns=[Turn(prompt="q")]), Task(id="x", turns=[Turn(prompt="other q")])]
    with pytest.raises(DuplicateTaskId, match="'x'"):
        TaskSet.from_tasks(plain)


def test_an_expansion_that_repeats_an_id_is_refused() -> None:
    ts = TaskSet.from_tasks([Task(id=f"t{i}", turns=[Turn(prompt="q")]) for i in range(3)])
    with pytest.raises(DuplicateTaskId, match="'t1-cot'"):
        select_tasks(ts, expand=lambda xs: [t.model_copy(update={"id": "t1-cot"}) for t in xs])


def test_a_dataset_with_a_repeated_id_is_refused_the_same_way(tmp_path: Path) -> None:
    """The consistency the TaskSet rule follows: the dataset loader names the id (and both lines)."""
    rows = [{"id": "a", "turns": [{"prompt": "q1"}]}, {"id": "a", "turns": [{"prompt": "q2"}]}]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    problems = validate_dataset(tmp_path)
    assert [(p.line, p.message) for p in problems] == [(2, "duplicate id 'a' (first on line 1)")]
    with pytest.raises(DatasetError, match="duplicate id 'a'"):
        load_dataset(tmp_path)


def test_the_position_of_a_repeated_id_is_its_first() -> None:
    """A TaskSet taken with a position twice (the low-level constructor allows it) finds the first."""
    ts = TaskSet.from_tasks([Task(id="a", turns=[Turn(prompt="qa")]), Task(id="b", turns=[Turn(prompt="qb")])])
    again = ts.take([1, 0, 1])
    assert again.ids == ["b", "a", "b"]
    assert (again.position("b"), again.position("a"), again.position("zz")) == (0, 1, None)
