"""Dataset I/O: a toolsight dataset is a folder with `tasks.jsonl` and the images it references.

Everything in a dataset is untrusted input: text that is not UTF-8, images that are decompression
bombs, unreadable, or symlinks out of the folder are problems reported as
`tasks.jsonl:LINE: field: what` — never a traceback, never silently replaced.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolsight import imaging
from toolsight.errors import ToolsightError
from toolsight.tasks.schema import Task
from toolsight.tasks.taskset import TaskSet

TASKS_FILE = "tasks.jsonl"


def cache_root() -> Path:
    """Where downloaded and generated data is kept: `$TOOLSIGHT_CACHE`, else `~/.cache/toolsight`."""
    env = os.environ.get("TOOLSIGHT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "toolsight"

#: the largest input image accepted (pixels); the same limit the tools open images with. A PNG of
#: 50000x50000 fits in 300 KB and would take 7.5 GB to decode.
MAX_IMAGE_PIXELS = imaging.MAX_PIXELS


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
    """Tasks loaded from a folder (held compactly: a `TaskSet`); image paths resolve against `root`."""

    root: Path
    tasks: TaskSet

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


def _iter_lines(path: Path) -> Iterator[tuple[int, str | UnicodeDecodeError]]:
    """Non-empty lines, each decoded strictly as UTF-8 (a line that is not: its decode error)."""
    with path.open("rb") as fh:
        for no, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield no, exc
                continue
            if line.strip():
                yield no, line


def _encoding_problem(no: int, exc: UnicodeDecodeError) -> ValidationProblem:
    bad = exc.object[exc.start : exc.start + 1].hex()
    return ValidationProblem(
        no, "(encoding)", f"byte 0x{bad} at column {exc.start + 1} is not valid UTF-8; save the file as UTF-8"
    )


def _has_lone_surrogate(data: Any) -> bool:
    """True when a JSON value holds a string with an unpaired surrogate escape (e.g. "\\ud800"),
    which no provider or record file can encode."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_image(root: Path, rel: str) -> str | None:
    """Why the image at `rel` cannot be used (None if it can): missing, a symlink out of the
    folder, a decompression bomb, or not decodable."""
    p = root / rel
    try:
        real = p.resolve(strict=True)
    except (OSError, RuntimeError):
        return f"image file not found: {p} (paths are relative to the dataset folder)"
    if not real.is_relative_to(root.resolve()):
        return f"{rel} is a symlink to {real}, outside the dataset folder; copy the image into the folder"
    if not real.is_file():
        return f"image file not found: {p} is not a regular file"
    try:  # the header through the guarded decoder (pixel, byte and format caps)
        info = imaging.check_file(real, max_pixels=1 << 62, max_bytes=imaging.MAX_BYTES)
    except imaging.ImageRejected as exc:
        if "not a readable image" in str(exc):
            return f"not a readable image: {p} (not an image format Pillow can read)"
        return f"image cannot be used: {p}: {exc}"
    except Exception as exc:  # a malformed file may fail in any decoder; it is a problem in the data
        return f"not a readable image: {p} ({type(exc).__name__}: {exc})"
    w, h = info.size
    if w * h > MAX_IMAGE_PIXELS:
        return (f"image is over the {MAX_IMAGE_PIXELS // 10**6} Mpx limit (a decompression bomb?): {p} "
                f"is {w}x{h} ({w * h / 1e6:.0f} Mpx); downscale it")
    if info.format == "PNG":
        with contextlib.suppress(OSError):
            if imaging.png_intact(real.read_bytes()):
                return None  # what Pillow's verify checks, checked without Pillow (the common case)
    return _pil_verify(p, real)


def _pil_verify(p: Path, real: Path) -> str | None:
    """Pillow's verify of the image (its chunks' checksums, its structure); why it fails, or None."""
    from PIL import UnidentifiedImageError  # here: a run whose images are plain PNGs needs no Pillow

    Image = imaging.pil()  # the module, named as `from PIL import Image` names it
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(real, formats=imaging.FORMATS) as im:
                im.verify()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        return (f"image is over the {MAX_IMAGE_PIXELS // 10**6} Mpx limit (a decompression bomb?): {p} ({exc}); "
                "downscale it")
    except UnidentifiedImageError:
        return f"not a readable image: {p} (not an image format Pillow can read)"
    except Exception as exc:  # a malformed file may fail in any decoder; it is a problem in the data
        return f"not a readable image: {p} ({type(exc).__name__}: {exc})"
    return None


def _parse(root: Path, check_images: bool) -> tuple[TaskSet, list[ValidationProblem]]:
    f = root / TASKS_FILE
    if not root.is_dir():
        raise DatasetError(root, [ValidationProblem(0, "(folder)", f"no such folder: {root}")])
    if not f.is_file():
        raise DatasetError(
            root, [ValidationProblem(0, "(file)", f"missing {f}; a dataset folder needs a tasks.jsonl")]
        )
    lines: list[bytes | Task] = []  # each task's line, which builds it again (see TaskSet)
    ids: list[str] = []
    problems: list[ValidationProblem] = []
    seen: dict[str, int] = {}
    checked: dict[str, str | None] = {}
    for no, line in _iter_lines(f):
        if isinstance(line, UnicodeDecodeError):
            problems.append(_encoding_problem(no, line))
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(ValidationProblem(no, "(json)", f"not valid JSON: {exc.msg} at column {exc.colno}"))
            continue
        except RecursionError:
            problems.append(ValidationProblem(no, "(json)", "nested too deeply"))
            continue
        except ValueError as exc:  # e.g. an integer longer than Python converts (4,300 digits)
            what = ("holds an integer too long to read (over 4,300 digits); shorten it or write it as a string"
                    if "digits" in str(exc) else f"not readable: {' '.join(str(exc).split())}")
            problems.append(ValidationProblem(no, "(json)", what))
            continue
        if not isinstance(data, dict):
            problems.append(ValidationProblem(no, "(json)", "each line must be a JSON object"))
            continue
        if _has_lone_surrogate(data):
            problems.append(ValidationProblem(
                no, "(text)", "holds an unpaired surrogate escape such as \\ud800 (not encodable text); remove it"
            ))
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
        lines.append(line.strip().encode("utf-8"))
        ids.append(task.id)
    if not lines and not problems:
        problems.append(ValidationProblem(0, "(file)", f"{f} holds no tasks"))
    return TaskSet(lines, ids), problems


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


def count_tasks(root: Path | str) -> int:
    """How many tasks a (valid) dataset folder holds."""
    return sum(1 for _, line in _iter_lines(Path(root) / TASKS_FILE) if isinstance(line, str))


def _file_digest(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return "missing"


#: tasks hashed per batch: their images are read in parallel, and at most this many tasks are built at once
_HASH_BATCH = 256


def task_hashes(tasks: Iterable[Task], root: Path, remote: Mapping[str, str] | None = None) -> dict[str, str]:
    """task id -> a hash of the task's content: its JSON and the bytes of every image it names.

    What `--resume` compares: an edited gold answer or a replaced image changes the task's hash,
    a moved folder or a path written differently does not. Each image is read once (in a few
    threads: hashlib releases the GIL on large buffers). Tasks are taken a batch at a time, so a
    `TaskSet` never has more than a batch of them built. An image in `remote` (path -> URL: fetched
    by a run for the tasks it selects) counts as its URL, fetched yet or not.
    """
    remote = remote or {}
    digests: dict[str, str] = {rel: f"url:{url}" for rel, url in remote.items()}
    out: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        it = iter(tasks)
        while batch := list(itertools.islice(it, _HASH_BATCH)):
            new = sorted({rel for t in batch for rel in t.image_paths()} - digests.keys())
            digests.update(zip(new, pool.map(lambda rel: _file_digest(root / rel), new), strict=True))
            for t in batch:
                h = hashlib.sha256(t.model_dump_json().encode("utf-8", "surrogatepass"))
                for rel in t.image_paths():
                    h.update(f"\x00{rel}\x00{digests[rel]}".encode("utf-8", "surrogatepass"))
                out[t.id] = h.hexdigest()[:16]
    return out


def dataset_hash(hashes: dict[str, str]) -> str:
    """One hash of a whole dataset from its task hashes (order-independent)."""
    h = hashlib.sha256()
    for tid in sorted(hashes):
        h.update(f"{tid}\x00{hashes[tid]}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


def write_dataset(root: Path | str, tasks: list[Task]) -> Path:
    """Write tasks to `root/tasks.jsonl` (images must already be in place)."""
    r = Path(root)
    r.mkdir(parents=True, exist_ok=True)
    with (r / TASKS_FILE).open("w", encoding="utf-8") as fh:
        for t in tasks:
            fh.write(t.model_dump_json(exclude_defaults=True) + "\n")
    return r
