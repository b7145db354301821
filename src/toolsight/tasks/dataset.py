"""Dataset I/O: a toolsight dataset is a folder with `tasks.jsonl` and the images it references."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError
from pydantic import ValidationError

from toolsight.errors import ToolsightError
from toolsight.tasks.schema import Task

TASKS_FILE = "tasks.jsonl"


@dataclass(frozen=True)
class ValidationProblem:
    """One problem in a dataset, printed as `tasks.jsonl:LINE: field: what is wrong`."""

    line: int
    field: str
    message: str
    file: str = TASKS_FILE

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.message}"


class DatasetError(ToolsightError):
    """A dataset that cannot be used; `problems` lists every problem found."""

    def __init__(self, root: Path, problems: list[ValidationProblem]) -> None:
        self.root = root
        self.problems = problems
        head = "\n".join(str(p) for p in problems[:20])
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"dataset {root} has {len(problems)} problem(s):\n{head}{more}")


@dataclass
class Dataset:
    """Tasks loaded from a folder; image paths resolve against `root`."""

    root: Path
    tasks: list[Task]

    def image_path(self, rel: str) -> Path:
        return self.root / rel

    def fingerprint(self) -> str:
        """A hash of tasks.jsonl (the dataset hash written to the run manifest)."""
        h = hashlib.sha256()
        f = self.root / TASKS_FILE
        if f.exists():
            h.update(f.read_bytes())
        else:
            for t in self.tasks:
                h.update(t.model_dump_json().encode())
        return h.hexdigest()[:16]


def _loc(err: dict[str, Any]) -> str:
    parts = [str(p) for p in err.get("loc", ())]
    out = ""
    for p in parts:
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "(record)"


def _iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for no, line in enumerate(fh, start=1):
            if line.strip():
                yield no, line


def _check_image(root: Path, rel: str) -> str | None:
    p = root / rel
    if not p.is_file():
        return f"image file not found: {p} (paths are relative to the dataset folder)"
    try:
        with Image.open(p) as im:
            im.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        return f"not a readable image: {p} ({exc})"
    return None


def _parse(root: Path, check_images: bool) -> tuple[list[Task], list[ValidationProblem]]:
    f = root / TASKS_FILE
    if not root.is_dir():
        raise DatasetError(root, [ValidationProblem(0, "(folder)", f"no such folder: {root}")])
    if not f.is_file():
        raise DatasetError(
            root, [ValidationProblem(0, "(file)", f"missing {f}; a dataset folder needs a tasks.jsonl")]
        )
    tasks: list[Task] = []
    problems: list[ValidationProblem] = []
    seen: dict[str, int] = {}
    checked: dict[str, str | None] = {}
    for no, line in _iter_lines(f):
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(ValidationProblem(no, "(json)", f"not valid JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(data, dict):
            problems.append(ValidationProblem(no, "(json)", "each line must be a JSON object"))
            continue
        raw_id = data.get("id")
        if isinstance(raw_id, str) and raw_id in seen:
            problems.append(ValidationProblem(no, "id", f"duplicate id {raw_id!r} (first on line {seen[raw_id]})"))
        elif isinstance(raw_id, str):
            seen[raw_id] = no
        try:
            task = Task.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                msg = str(err.get("msg", "invalid"))
                if err.get("type") == "extra_forbidden":
                    msg = "unknown field (check the spelling; see docs/datasets.md)"
                problems.append(ValidationProblem(no, _loc(dict(err)), msg))
            continue
        if check_images:
            for ti, turn in enumerate(task.turns):
                for ii, img in enumerate(turn.images):
                    if img.path not in checked:
                        checked[img.path] = _check_image(root, img.path)
                    why = checked[img.path]
                    if why:
                        problems.append(ValidationProblem(no, f"turns[{ti}].images[{ii}].path", why))
        tasks.append(task)
    if not tasks and not problems:
        problems.append(ValidationProblem(0, "(file)", f"{f} holds no tasks"))
    return tasks, problems


def validate_dataset(root: Path | str) -> list[ValidationProblem]:
    """Every problem in a dataset folder (all of them, not just the first)."""
    try:
        _, problems = _parse(Path(root), check_images=True)
    except DatasetError as exc:
        return exc.problems
    return problems


def load_dataset(root: Path | str, check_images: bool = True) -> Dataset:
    """Load a dataset folder; raises DatasetError listing every problem if any."""
    r = Path(root)
    tasks, problems = _parse(r, check_images)
    if problems:
        raise DatasetError(r, problems)
    return Dataset(root=r, tasks=tasks)


def write_dataset(root: Path | str, tasks: list[Task]) -> Path:
    """Write tasks to `root/tasks.jsonl` (images must already be in place)."""
    r = Path(root)
    r.mkdir(parents=True, exist_ok=True)
    with (r / TASKS_FILE).open("w", encoding="utf-8") as fh:
        for t in tasks:
            fh.write(t.model_dump_json(exclude_defaults=True) + "\n")
    return r
