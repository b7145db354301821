"""`--task-id` / `--tag` selection rules (toolsight.tasks.select): order, OR within a key, AND
across keys, ids of a setting's expanded tasks, and errors that name what exists."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from toolsight.tasks.schema import Task, Turn
from toolsight.tasks.select import SelectionError, parse_tag_filters, select_tasks


def _tasks() -> list[Task]:
    return [Task(id=f"q{i}", turns=[Turn(prompt="p")], tags={"kind": "maze" if i < 3 else "jigsaw", "level": str(i % 2)})
            for i in range(6)]


def _expand(ts: Sequence[Task]) -> list[Task]:  # like PhysToolBench `both`: one item, two prompts
    return [t.model_copy(update={"id": f"{t.id}-{v}"}) for t in ts for v in ("cot", "no-cot")]


def test_tags_and_ids_filter_in_dataset_order_then_limit() -> None:
    ts = _tasks()
    assert [t.id for t in select_tasks(ts, tags={"kind": ["jigsaw"]})] == ["q3", "q4", "q5"]
    assert [t.id for t in select_tasks(ts, tags={"kind": ["jigsaw", "maze"], "level": ["1"]})] == ["q1", "q3", "q5"]
    assert [t.id for t in select_tasks(ts, task_ids=["q5", "q0"])] == ["q0", "q5"]
    assert [t.id for t in select_tasks(ts, task_ids=["q5", "q0", "q4"], tags={"level": ["0"]})] == ["q0", "q4"]
    assert [t.id for t in select_tasks(ts, tags={"kind": ["maze"]}, limit=2)] == ["q0", "q1"]


def test_an_expanded_id_selects_only_that_expansion() -> None:
    ts = _tasks()
    got = [t.id for t in select_tasks(ts, task_ids=["q1-no-cot", "q2"], expand=_expand)]
    assert got == ["q1-no-cot", "q2-cot", "q2-no-cot"]
    assert [t.id for t in select_tasks(ts, limit=1, expand=_expand)] == ["q0-cot", "q0-no-cot"]


def test_selection_errors_name_what_exists() -> None:
    ts = _tasks()
    with pytest.raises(SelectionError, match=r"--task-id q9: no such task; task ids: q0, q1, q2, q3, q4, q5$"):
        select_tasks(ts, task_ids=["q9"])
    with pytest.raises(SelectionError, match=r"--task-id q1x: no such task; did you mean 'q1'"):
        select_tasks(ts, task_ids=["q1x"])
    with pytest.raises(SelectionError, match=r"--task-id q1-cott: no such task"):
        select_tasks(ts, task_ids=["q1-cott"], expand=_expand)
    with pytest.raises(SelectionError, match=r"no task has kind=sudoku; values: jigsaw, maze"):
        select_tasks(ts, tags={"kind": ["sudoku"]})
    with pytest.raises(SelectionError, match=r"no task has the tag 'knd'; did you mean 'kind'\? tags: kind, level"):
        select_tasks(ts, tags={"knd": ["maze"]})


def test_tag_flags_parse() -> None:
    assert parse_tag_filters(["kind=maze", "kind=jigsaw,maze", "level=1"]) == {"kind": ["maze", "jigsaw"], "level": ["1"]}
    with pytest.raises(SelectionError, match="expected KEY=VALUE"):
        parse_tag_filters(["kind"])
