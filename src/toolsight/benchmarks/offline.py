"""Offline sets a benchmark contributes: its generators (`toolsight generate KIND`) and its part of the
built-in starter suite.

A benchmark declares them on its class (`Benchmark.generators()`, `Benchmark.starter_parts()`); the
one generator registry (`toolsight.benchmarks.registry.generate`) serves `toolsight generate`,
sweeps and the starter suite, so every kind is checked, written and described the same way
wherever it is asked for.

Every generated folder holds `generated.json` (`GeneratedSet`): which kind made it, for which
benchmark, with which seed — and how to run it. A set in the benchmark's own layout (a web corpus
beside it, the official file format) is run as `toolsight run BENCH --data DIR`; any other set is a
toolsight dataset folder, run as `toolsight run DIR`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from toolsight.tasks.schema import Task

GENERATED_FILE = "generated.json"
Progress = Callable[[int], None]


@dataclass(frozen=True)
class GenerateRequest:
    """One generation: `n` tasks of `kind` from `seed` into the folder `out` (fresh and empty)."""

    kind: str
    n: int
    seed: int
    out: Path
    difficulty: int | None = None
    progress: Progress | None = None


@dataclass(frozen=True)
class Generator:
    """One kind of generated task a benchmark offers.

    `write(request)` writes the set into `request.out` (an empty folder the registry made) and calls
    `request.progress(done)` as tasks are made. `difficulties` lists the valid `--difficulty`
    values (none: the kind has no levels); `difficulty_help` says what they mean.
    """

    kind: str
    description: str
    write: Callable[[GenerateRequest], None]
    difficulties: tuple[int, ...] = ()
    difficulty_help: str = ""
    #: True: the folder is in the benchmark's own layout and runs as `toolsight run BENCH --data DIR`;
    #: False: it is a toolsight dataset folder (`toolsight run DIR`)
    run_with_benchmark: bool = False
    #: the generic setting (`direct`, `crop`, `code`, `opencv`) a dataset-folder set runs under when no
    #: --setting is given: the one offering the tools its reference solutions call
    setting: str = "direct"
    #: a `run_with_benchmark` set: the benchmark's setting it runs under when none is given (None: the
    #: benchmark's default) — what a sweep that generates the set picks before the set exists
    benchmark_setting: str | None = None


class GeneratedSet(BaseModel):
    """`generated.json` in every generated folder: what made it and how to run it."""

    model_config = ConfigDict(extra="ignore")

    kind: str
    benchmark: str
    n: int
    seed: int
    difficulty: int | None = None
    run_with_benchmark: bool = False
    setting: str = "direct"
    toolsight_version: str = ""

    def run_hint(self, folder: Path) -> str:
        """The command that runs this set with the reference agent."""
        if self.run_with_benchmark:
            return f"toolsight run {self.benchmark} --data {folder} --model reference"
        return f"toolsight run {folder} --model reference"


@dataclass(frozen=True)
class StarterContext:
    """Where a starter part writes: its own `folder`, and the suite's one offline web `corpus`
    (written by the part that builds it, extended by the others)."""

    folder: Path
    corpus: Path


@dataclass(frozen=True)
class StarterPart:
    """Tasks a benchmark adds to the built-in starter suite.

    `make(ctx)` writes its images under `ctx.folder` and returns its tasks with image paths
    relative to that folder. A part that `builds_corpus` writes the suite's web corpus at
    `ctx.corpus` and runs before the parts that add to it. Bump `version` when what `make` writes
    changes, so cached suites are made again.
    """

    folder: str
    make: Callable[[StarterContext], list[Task]]
    builds_corpus: bool = False
    version: int = 1
