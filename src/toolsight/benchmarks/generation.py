"""The one generator registry: every benchmark's generators by kind, for `toolsight generate`, sweeps
and the starter suite alike.

`generator_kinds()` lists them (kind -> owning benchmark and `Generator`), read from each registered
benchmark's `Benchmark.generators()`. `generate(...)` checks the request once (known kind, `--n`,
`--difficulty`, a usable output folder), writes the set into a hidden sibling folder, adds
`generated.json` (`GeneratedSet`: what made it and how to run it) and renames it into place, so a
half-written set is never taken for a finished one. An output folder that already exists is replaced
only when it is empty or holds an earlier generated set; anything else is refused.
"""

from __future__ import annotations

import difflib
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from toolsight.benchmarks.base import BenchmarkError
from toolsight.benchmarks.offline import GENERATED_FILE, GeneratedSet, GenerateRequest, Generator, Progress
from toolsight.benchmarks.registry import loadable
from toolsight.version import __version__


class GenerateError(BenchmarkError):
    """A bad generation request (unknown kind, bad --n or --difficulty, unusable --out), with the fix."""


@dataclass(frozen=True)
class Kind:
    """A generator kind and the benchmark that offers it."""

    benchmark: str
    generator: Generator


def generator_kinds() -> dict[str, Kind]:
    """Every generator kind of every registered benchmark, in registry order (a kind two benchmarks
    declare: the first one)."""
    out: dict[str, Kind] = {}
    for bench in loadable():
        for kind, gen in bench.generators().items():
            out.setdefault(kind, Kind(bench.name, gen))
    return out


def get_kind(kind: str) -> Kind:
    """The generator of `kind`, or a GenerateError naming the kinds there are."""
    kinds = generator_kinds()
    if kind in kinds:
        return kinds[kind]
    close = difflib.get_close_matches(kind, list(kinds), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise GenerateError(f"unknown generator kind {kind!r}; {hint}choose one of: {', '.join(kinds)} "
                        "(`toolsight list generators`)")


def check_request(kind: str, n: int, difficulty: int | None, out: Path | None = None) -> Kind:
    """The generator for a request whose count and difficulty are valid for it (and, given `out`, whose
    output folder can be written)."""
    found = get_kind(kind)
    if n < 1:
        raise GenerateError(f"--n must be at least 1 (got {n})")
    levels = found.generator.difficulties
    if difficulty is not None and not levels:
        raise GenerateError(f"--difficulty: the {kind} generator has no difficulty levels; drop --difficulty")
    if difficulty is not None and difficulty not in levels:
        raise GenerateError(f"--difficulty {difficulty} is not valid for {kind}; choose one of: "
                            f"{found.generator.difficulty_help or ', '.join(map(str, levels))}")
    if out is not None:
        _check_target(Path(out))
        _check_writable(Path(out))
    return found


def read_generated(folder: Path) -> GeneratedSet | None:
    """The `generated.json` of a generated folder (None when there is none or it is unreadable)."""
    try:
        return GeneratedSet.model_validate_json((folder / GENERATED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _check_target(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise GenerateError(f"--out {out}: a file is in the way; choose a folder name")
    if out.is_dir() and any(out.iterdir()) and read_generated(out) is None:
        raise GenerateError(f"--out {out}: the folder is not empty and holds no generated set; choose a new "
                            "folder (an earlier generated set there would be replaced)")


def _check_writable(out: Path) -> None:
    """A scratch folder can be made beside `out` (where the set is written before it is renamed into place)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent)).rmdir()
    except OSError as exc:
        raise GenerateError(f"--out {out}: cannot write there ({exc.strerror or exc}); choose a folder you can write") from None


def generate(kind: str, n: int, seed: int, out: Path, difficulty: int | None = None,
             progress: Progress | None = None) -> GeneratedSet:
    """Write `n` tasks of `kind` from `seed` into the folder `out` (atomically) and return its
    `generated.json`. Every user mistake is a GenerateError."""
    found = check_request(kind, n, difficulty)
    out = Path(out)
    _check_target(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as exc:
        raise GenerateError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None
    info = GeneratedSet(kind=kind, benchmark=found.benchmark, n=n, seed=seed, difficulty=difficulty,
                        run_with_benchmark=found.generator.run_with_benchmark, setting=found.generator.setting,
                        toolsight_version=__version__)
    try:
        try:
            found.generator.write(GenerateRequest(kind, n, seed, tmp, difficulty, progress))
        except ValueError as exc:  # a generator's own check of the request
            raise GenerateError(f"{kind}: {exc}") from None
        (tmp / GENERATED_FILE).write_text(json.dumps(info.model_dump(), indent=1) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return info
