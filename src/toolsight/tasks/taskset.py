"""A compact, read-only sequence of tasks: each task is kept as its JSON text and built when asked for.

A loaded `Task` (pydantic models for the task, its turns and image references) takes about 2 KB;
its JSON line takes about a tenth of that. A run of 10,000 tasks holds every task from start to end
(selection, resume planning, the queue), so holding them as objects made a run's memory grow with
its dataset: 10,000 tasks took 1.25x the peak RSS of 1,000 (issue 19). A `TaskSet` keeps the text
and the id of each task and builds the `Task` (about 7 µs) when a run, a selection or a hash needs
it; nothing keeps the built object after its use.

The text is the exact JSON object the task was validated from (a dataset's line), or, for tasks a
loader built in Python, their dump; building is `Task.model_validate(json.loads(text))` either way,
so a task built from a `TaskSet` equals the task that was loaded. A task whose dump would not come
back equal (a value JSON cannot hold), and a task of a `Task` subclass (a loader's own class,
which a rebuild would turn into a plain `Task`), is kept as the object itself.

Task ids are unique: `from_tasks` (so every loader's `LoadedTasks`, and a selection's expansion)
refuses a repeated id with `DuplicateTaskId` naming it, as `load_dataset` and every benchmark's
loader do — records, resume and `get` find a task by its id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from toolsight.errors import ToolsightError
from toolsight.tasks.schema import Task

_Entry = bytes | Task


class DuplicateTaskId(ToolsightError):
    """Two tasks given to one `TaskSet` share an id."""


def build_task(text: bytes | str) -> Task:
    """The task a JSON object's text describes (what a `TaskSet` entry is built with)."""
    return Task.model_validate(json.loads(text))


def _compact(task: Task) -> _Entry:
    """`task` as the text that builds it again, or the task itself when its dump would not come back equal."""
    if type(task) is not Task:  # a subclass would come back as a plain Task
        return task
    try:
        text = json.dumps(task.model_dump(exclude_defaults=True), ensure_ascii=False, allow_nan=True,
                          separators=(",", ":")).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):  # a value JSON cannot hold (a loader's own object in `meta`)
        return task
    try:
        same = build_task(text) == task  # e.g. a tuple comes back as a list, NaN as not equal to itself
    except ValueError:
        same = False
    return text if same else task


class TaskSet(Sequence[Task]):
    """Tasks in order, held as JSON text (see the module docstring); `ids` without building any."""

    __slots__ = ("_entries", "_index", "ids")

    def __init__(self, entries: list[_Entry], ids: list[str]) -> None:
        if len(entries) != len(ids):
            raise ValueError("a TaskSet needs one id per entry")
        self._entries = entries
        self.ids = ids
        self._index: dict[str, int] | None = None

    @classmethod
    def from_tasks(cls, tasks: Iterable[Task]) -> TaskSet:
        """A TaskSet of `tasks` (a TaskSet is returned as it is); DuplicateTaskId if two share an id."""
        if isinstance(tasks, TaskSet):
            return tasks
        entries: list[_Entry] = []
        ids: list[str] = []
        first: dict[str, int] = {}
        for n, t in enumerate(tasks):
            if first.setdefault(t.id, n) != n:
                raise DuplicateTaskId(f"duplicate task id {t.id!r} (tasks number {first[t.id] + 1} and {n + 1}); "
                                      "every task needs its own id")
            entries.append(_compact(t))
            ids.append(t.id)
        return cls(entries, ids)

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, i: int) -> Task: ...
    @overload
    def __getitem__(self, i: slice) -> TaskSet: ...
    def __getitem__(self, i: int | slice) -> Task | TaskSet:
        if isinstance(i, slice):
            return TaskSet(self._entries[i], self.ids[i])
        e = self._entries[i]
        return e if isinstance(e, Task) else build_task(e)

    def __iter__(self) -> Iterator[Task]:
        for e in self._entries:
            yield e if isinstance(e, Task) else build_task(e)

    def __repr__(self) -> str:
        return f"TaskSet({len(self)} tasks)"

    def position(self, task_id: str) -> int | None:
        """Where the task with this id is (the first, if ids repeat), or None."""
        if self._index is None:
            index: dict[str, int] = {}
            for n, tid in enumerate(self.ids):
                index.setdefault(tid, n)
            self._index = index
        return self._index.get(task_id)

    def get(self, task_id: str) -> Task | None:
        """The task with this id, built; None if there is none."""
        n = self.position(task_id)
        return None if n is None else self[n]

    def take(self, positions: Sequence[int]) -> TaskSet:
        """The tasks at these positions, in the order given (no task is built)."""
        return TaskSet([self._entries[n] for n in positions], [self.ids[n] for n in positions])

