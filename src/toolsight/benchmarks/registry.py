"""Benchmarks by name. A folder path given instead of a name is loaded as a generic dataset.

Built-in benchmarks are listed once in `_builtins` by plain import (inside each factory, so
naming one benchmark does not import the others); third-party packages add benchmarks through
the `toolsight.benchmarks` entry-point group (`name = "package.module:BenchmarkClass"`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from toolsight.benchmarks.base import Benchmark, BenchmarkError, ScorerFactory
from toolsight.log.modes import SCORER_MODES
from toolsight.scoring.base import Scorer
from toolsight.tools.operations import Vocabulary

BenchmarkFactory = Callable[[], Benchmark]

_FACTORIES: dict[str, BenchmarkFactory] = {}
_loaded = False


def register_benchmark(name: str, factory: BenchmarkFactory) -> None:
    """Add (or replace) benchmark `name`; `factory()` returns a Benchmark."""
    _FACTORIES[name] = factory


def _starter() -> Benchmark:
    from toolsight.benchmarks.starter.benchmark import StarterBenchmark

    return StarterBenchmark(lambda: loadable([n for n in builtin_names() if n != "starter"]))


def _tir() -> Benchmark:
    from toolsight.benchmarks.tir_bench.benchmark import TIRBenchmark

    return TIRBenchmark()


def _vtc() -> Benchmark:
    from toolsight.benchmarks.vtc_bench.benchmark import VTCBenchmark

    return VTCBenchmark()


def _phystool() -> Benchmark:
    from toolsight.benchmarks.phystoolbench.benchmark import PhysToolBenchmark

    return PhysToolBenchmark()


def _vtb() -> Benchmark:
    from toolsight.benchmarks.visualtoolbench.benchmark import VisualToolBenchmark

    return VisualToolBenchmark()


def _visbrowse() -> Benchmark:
    from toolsight.benchmarks.visbrowse_bench.benchmark import VisBrowseBenchmark

    return VisBrowseBenchmark()


#: the one list of built-in benchmarks (the starter suite is made of the others' parts)
BUILTINS: dict[str, BenchmarkFactory] = {
    "starter": _starter,
    "tir-bench": _tir,
    "vtc-bench": _vtc,
    "phystoolbench": _phystool,
    "visualtoolbench": _vtb,
    "visbrowse-bench": _visbrowse,
}


def _builtins() -> None:
    for name, factory in BUILTINS.items():
        register_benchmark(name, factory)


def builtin_names() -> list[str]:
    """The built-in benchmarks, in their listed order."""
    return list(BUILTINS)


def _from_entry_point(ep: EntryPoint) -> BenchmarkFactory:
    """A factory that imports a third-party benchmark when it is first used; a plugin that fails to
    import or to build is one BenchmarkError naming its entry point, not a traceback in every command."""

    def make() -> Benchmark:
        try:
            bench = ep.load()()
        except Exception as exc:
            raise BenchmarkError(f"benchmark {ep.name!r} (entry point {ep.value}) cannot be loaded: "
                                 f"{type(exc).__name__}: {exc}") from None
        if not isinstance(bench, Benchmark):
            raise BenchmarkError(f"benchmark {ep.name!r} (entry point {ep.value}) is not a toolsight Benchmark")
        return bench

    return make


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    _builtins()
    for ep in entry_points(group="toolsight.benchmarks"):
        register_benchmark(ep.name, _from_entry_point(ep))


def loadable(names: list[str] | None = None) -> list[Benchmark]:
    """The named (default: every registered) benchmarks that load; a broken plugin is left out with a
    warning on the `toolsight` logger, so listings and lookups across benchmarks still work."""
    out: list[Benchmark] = []
    for name in benchmark_names() if names is None else names:
        try:
            bench = _load(name)
        except BenchmarkError as exc:
            logging.getLogger("toolsight").warning("%s", exc)
            continue
        if bench is not None:
            out.append(bench)
    return out


def benchmark_names() -> list[str]:
    _load_all()
    return list(_FACTORIES)


def _load(name: str) -> Benchmark | None:
    _load_all()
    factory = _FACTORIES.get(name)
    return factory() if factory is not None else None


def get_benchmark(target: str) -> Benchmark:
    """A benchmark by name, or a dataset folder."""
    bench = _load(target)
    if bench is not None:
        return bench
    p = Path(target)
    if p.is_dir():
        from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark

        return DatasetBenchmark(p)
    known = ", ".join(benchmark_names())
    raise BenchmarkError(
        f"{target!r} is neither a benchmark ({known}) nor a dataset folder (a folder with tasks.jsonl)"
    )


def _known(name: str) -> Benchmark | None:
    """Benchmark `name` for a report's layout: None when it is unknown or its plugin does not load."""
    found = loadable([name]) if name in benchmark_names() else []
    return found[0] if found else None


def category_order(name: str, tag: str) -> list[str]:
    """The order benchmark `name` shows the values of `tag` in; [] when it declares none or is unknown."""
    bench = _known(name)
    return list(bench.category_order.get(tag, [])) if bench is not None else []


def vocabularies(name: str) -> list[Vocabulary]:
    """The image-operation vocabularies benchmark `name` declares; [] when it declares none or is unknown."""
    bench = _known(name)
    return list(bench.vocabularies()) if bench is not None else []


def report_tags(name: str) -> list[str]:
    """The tags benchmark `name` groups its report by when none are asked for ([] if unknown)."""
    bench = _known(name)
    return list(bench.report_tags) if bench is not None else []


def row_tag(name: str) -> str | None:
    """The tag whose values benchmark `name` reports as separate rows of one run (None if none)."""
    bench = _known(name)
    return bench.row_tag if bench is not None else None


def reference_rows(name: str, tag: str) -> dict[str, dict[str, float]]:
    """Reference rows (label -> column -> percent) benchmark `name` shows under its `tag` table."""
    bench = _known(name)
    return dict(bench.reference_rows.get(tag, {})) if bench is not None else {}


def group_cis(name: str) -> bool:
    """Whether benchmark `name` shows confidence intervals in its grouped tables."""
    bench = _known(name)
    return bool(bench.group_cis) if bench is not None else False


def report_tables(name: str) -> list[tuple[str, str]]:
    """The (tag, metric) tables benchmark `name` shows by default; [] when it declares none or is unknown."""
    bench = _known(name)
    return list(bench.report_tables) if bench is not None else []


def _benchmark_scorers() -> dict[str, ScorerFactory]:
    """Every registered benchmark's named scorers (a name two benchmarks declare: the first one)."""
    out: dict[str, ScorerFactory] = {}
    for bench in loadable():
        for key, factory in bench.scorers().items():
            out.setdefault(key, factory)
    return out


def scorer_names() -> list[str]:
    """Every scorer name `toolsight score --scorer` accepts: the generic ones and every benchmark's."""
    from toolsight.scoring.registry import scorer_names as generic

    return sorted({*generic(), *_benchmark_scorers()})


def get_scorer(name: str, mode: str = "official") -> Scorer:
    """The scorer called `name` in `mode`: a generic one, else the benchmark that declares it."""
    from toolsight.scoring import registry as generic

    if mode not in SCORER_MODES:
        raise generic.UnknownScoringMode(f"unknown scoring mode {mode!r}: use 'official' or 'corrected'")
    if name in generic.scorer_names():
        return generic.get_scorer(name, mode)
    factory = _benchmark_scorers().get(name)
    if factory is None:
        raise generic.UnknownScorer(f"unknown scorer {name!r}; known scorers: {', '.join(scorer_names())}")
    return factory(mode)
