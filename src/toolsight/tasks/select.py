"""Choosing tasks by id and by tag (`--task-id ID`, `--tag KEY=VALUE`).

Ids are exact. A tag filter keeps the tasks whose tag KEY has one of the given values: values
of one key are alternatives (OR), different keys must all match (AND). A requested id or tag
value that matches nothing is an error naming what exists, so a typo never runs an empty or a
partial evaluation silently.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence

from toolsight.errors import ToolsightError
from toolsight.tasks.schema import Task
from toolsight.tasks.taskset import TaskSet


class SelectionError(ToolsightError):
    """A --task-id or --tag that matches no task (the message lists what exists)."""


def parse_limit(value: int | str | tuple[int, int] | list[int] | None) -> int | tuple[int, int] | None:
    """`--limit N` (the first N tasks) or `--limit A-B` (the A-th to the B-th, from 1, both included), as
    Inspect's `--limit`; a ValueError says what is wrong."""
    if value is None or (isinstance(value, int | tuple | list) and not isinstance(value, bool)):
        rng = tuple(value) if isinstance(value, tuple | list) else value
    elif isinstance(value, str) and value.strip().isdigit():
        rng = int(value)
    elif isinstance(value, str) and value.count("-") == 1 and all(p.strip().isdigit() for p in value.split("-")):
        a, b = (int(p) for p in value.split("-"))
        rng = (a, b)
    else:
        raise ValueError("use N (the first N tasks) or A-B (the A-th to the B-th task, from 1), e.g. 10-20")
    if isinstance(rng, int) and rng < 1:
        raise ValueError("N must be at least 1")
    if isinstance(rng, tuple):
        if len(rng) != 2 or not all(isinstance(x, int) for x in rng) or not 1 <= rng[0] <= rng[1]:
            raise ValueError("a range A-B needs 1 <= A <= B, e.g. 10-20")
        return (int(rng[0]), int(rng[1]))
    return rng


def _near(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6)
    return f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""


def _some(values: Sequence[str], n: int = 8) -> str:
    shown = ", ".join(values[:n])
    return shown + (f", … ({len(values)} in all)" if len(values) > n else "")


def select_tasks(
    tasks: Sequence[Task],
    task_ids: Sequence[str] | None = None,
    tags: Mapping[str, Sequence[str]] | None = None,
    limit: int | tuple[int, int] | None = None,
    expand: Callable[[Sequence[Task]], Sequence[Task]] | None = None,
) -> TaskSet:
    """The tasks a run covers, in dataset order: filtered by `tags` and `task_ids`, the first
    `limit` of those (or, for a range `(A, B)`, the A-th to the B-th, counted from 1, both included),
    then `expand`ed (a setting's own expansion, e.g. one item run with two
    prompts as the tasks `ID-cot` and `ID-no-cot`). A task id may name a dataset task (all of
    its expansions run) or an expanded task (only that one runs).

    Works on positions and ids: no task is built unless a tag or an expanded id needs it.
    """
    grow = expand or (lambda ts: ts)
    pool = TaskSet.from_tasks(tasks)
    keep = list(range(len(pool)))
    if tags:
        tag_of = [t.tags for t in pool]
        for key, wanted in tags.items():
            values = sorted({tg[key] for tg in tag_of if key in tg})
            if not values:
                known = sorted({k for tg in tag_of for k in tg})
                raise SelectionError(
                    f"--tag {key}=…: no task has the tag {key!r}; {_near(key, known)}"
                    f"tags: {_some(known) or '(the tasks have no tags)'}")
            for v in wanted:
                if v not in values:
                    raise SelectionError(f"--tag {key}={v}: no task has {key}={v}; {_near(v, values)}values: {_some(values)}")
            keep = [n for n in keep if tag_of[n].get(key) in set(wanted)]
    direct: set[str] = set()
    exact: set[str] = set()  # expanded ids asked for by name
    if task_ids:
        known_ids = list(dict.fromkeys(pool.ids))
        sources: set[str] = set()
        for tid in task_ids:
            if pool.position(tid) is not None:
                direct.add(tid)
                continue
            source = next((t.id for t in pool if any(e.id == tid for e in grow([t]))), None) if expand else None
            if source is None:
                raise SelectionError(f"--task-id {tid}: no such task; {_near(tid, known_ids)}"
                                     f"task ids: {_some(known_ids)}")
            exact.add(tid)
            sources.add(source)
        keep = [n for n in keep if pool.ids[n] in direct | sources]
    if isinstance(limit, tuple):
        keep = keep[limit[0] - 1: limit[1]]
    elif limit:
        keep = keep[:limit]
    out = pool.take(keep)
    expanded = grow(out)
    if exact:
        src_of = {e.id: t.id for t in out for e in grow([t])}
        expanded = [e for e in expanded if e.id in exact or src_of.get(e.id) in direct]
    return TaskSet.from_tasks(expanded)


def parse_tag_filters(items: Sequence[str]) -> dict[str, list[str]]:
    """`KEY=VALUE` strings (repeatable; `KEY=V1,V2` for several values) to {key: [values]}."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise SelectionError(f"--tag {item!r}: expected KEY=VALUE, e.g. --tag category=maze")
        vals = out.setdefault(key.strip(), [])
        vals.extend(v.strip() for v in value.split(",") if v.strip() and v.strip() not in vals)
    return out
