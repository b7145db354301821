"""The benchmark's own data format, read into toolsight tasks.

A set is a folder with `shapes.json` and the images it names:

    {"format": "shapes/1",
     "items": [{"id": "s0-0000", "image": "images/s0-0000.png", "color": "red", "shape": "circle",
                "answer": 3, "choices": [1, 3, 4, 6], "level": "easy",
                "solution": [{"tool": "count_shapes",
                              "arguments": {"image": "$input", "color": "red", "shape": "circle"}}]}]}

`choices` (optional) become the options A, B, …; `solution` (optional; generated sets have one) is the
reference agent's program: the tool calls it makes (`$input` = the item's image), read back with
`answer_from`. Every problem is a `ShapesError` naming the file, the item and the field.
"""

from __future__ import annotations

import hashlib
import json
import string
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from toolsight.benchmarks.base import BenchmarkError
from toolsight.tasks.schema import ImageRef, Task, ToolStep, Turn

from toolsight_shapes.tools import Color, Shape

BENCHMARK = "shapes"
SET_FILE = "shapes.json"
FORMAT = "shapes/1"
LEVELS = ["easy", "medium", "hard"]
QUESTION = "How many {color} {shape}s are in the image?"


class ShapesError(BenchmarkError):
    """A problem with a shapes set (names the file, item and field)."""


class Call(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Item(BaseModel):
    """One question: how many shapes of one colour and kind are in the image."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    image: str = Field(min_length=1)
    color: Color
    shape: Shape
    answer: int = Field(ge=0)
    choices: list[int] | None = Field(default=None, min_length=2, max_length=len(string.ascii_uppercase))
    level: Literal["easy", "medium", "hard"] = "easy"
    solution: list[Call] | None = None


class SetFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["shapes/1"]
    items: list[Item] = Field(min_length=1)


def read_set(folder: Path) -> list[Item]:
    """The items of the set in `folder`, checked (images present, answers among the choices)."""
    path = folder / SET_FILE
    if not path.is_file():
        raise ShapesError(f"{folder}: no {SET_FILE} here (make a set with `toolsight generate shape-count --out DIR`)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ShapesError(f"{path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ShapesError(f"{path}: not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    try:
        items = SetFile.model_validate(raw).items
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in first["loc"]).replace(".[", "[")
        got = f" (got {first['input']!r})" if first["type"] not in ("missing", "extra_forbidden") else ""
        raise ShapesError(f"{path}: {where}: {first['msg']}{got}") from None
    seen: set[str] = set()
    for i, item in enumerate(items):
        where = f"{path}: items[{i}] ({item.id})"
        if item.id in seen:
            raise ShapesError(f"{where}.id: duplicate id {item.id!r}")
        seen.add(item.id)
        try:
            ImageRef(path=item.image)
        except ValidationError:
            raise ShapesError(f"{where}.image: {item.image!r} must be a relative path inside {folder}") from None
        if not (folder / item.image).is_file():
            raise ShapesError(f"{where}.image: {item.image} does not exist in {folder}")
        if item.choices is not None and item.answer not in item.choices:
            raise ShapesError(f"{where}.answer: {item.answer} is not among the choices {item.choices}")
    return items


def to_task(item: Item) -> Task:
    """One item as a toolsight task: the question, its options, its tags and the reference program."""
    options = None
    if item.choices is not None:
        options = {string.ascii_uppercase[k]: str(c) for k, c in enumerate(item.choices)}
    meta: dict[str, Any] = {"color": item.color, "shape": item.shape}
    steps: list[ToolStep] = []
    if item.solution:  # the `reference` baseline replays these calls and reads the count from the last one
        meta["reference_calls"] = [c.model_dump() for c in item.solution]
        meta["answer_from"] = {"field": "count"}
        steps = [ToolStep(tool=c.tool, arguments=c.arguments) for c in item.solution]
    turn = Turn(prompt=QUESTION.format(color=item.color, shape=item.shape), images=[ImageRef(path=item.image)],
                answer=str(item.answer), options=options, answer_type="integer", reference_steps=steps, meta=meta)
    return Task(id=item.id, benchmark=BENCHMARK, turns=[turn],
                tags={"level": item.level, "shape": item.shape, "color": item.color})


def fingerprint(folder: Path, items: list[Item]) -> str:
    """A hash of the set file and every image it names."""
    h = hashlib.sha256((folder / SET_FILE).read_bytes())
    for item in items:
        h.update((folder / item.image).read_bytes())
    return h.hexdigest()[:16]


def write_set(folder: Path, items: list[Item]) -> None:
    """Write `shapes.json` for `items` (their images already in `folder`)."""
    doc = SetFile(format=FORMAT, items=items).model_dump(exclude_none=True)
    (folder / SET_FILE).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
