"""Generic code never names a benchmark (shared/DESIGN.md: "generic code never names a benchmark;
adding one touches nothing outside its package and the one list of built-ins").

Every module of `src/toolsight` outside the benchmark packages (`benchmarks/<name>/`) is read with
`ast` and must not:

- import a benchmark package (`import`, `from … import`, or a string naming its module, as given to
  `importlib.import_module`);
- use an identifier whose `_`/camel-case segments spell a benchmark's name or short name
  (`VTB_PACKAGES`, `run_tir`, `VisBrowseTool`);
- hold a string literal, other than a docstring, that names a benchmark as a word (`"VTC-Bench"`,
  `"--scorer visualtoolbench-errors"`).

Comments and docstrings may cite a paper as the source of a behaviour. `benchmarks/registry.py` may
name and import the built-ins in its one list (`BUILTINS` and the factories it names, and the
dataset-folder fallback); the rest of that module is checked like any other. The built-in names come
from `builtin_names()`, so a new built-in is covered without editing this test.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import toolsight
from toolsight.benchmarks.registry import builtin_names

SRC = Path(toolsight.__file__).resolve().parent
BENCHMARKS = SRC / "benchmarks"
REGISTRY = BENCHMARKS / "registry.py"
#: short names and spellings that are not registered names (the registered ones are added below)
SHORT_NAMES = ("vtc", "vtb", "tir", "phystool", "phystoolbench", "visualtoolbench", "visbrowse")
#: registered built-ins that are generic concepts: the starter suite is assembled from every
#: benchmark's `Benchmark.starter_parts()`, so generic code says `starter` (StarterPart, starter_parts)
GENERIC_BUILTINS = frozenset({"starter"})
#: written names of the benchmarks, matched as words in string literals (any case, `-`/`_`/space or
#: nothing between the parts)
STRING_NAMES = ("vtc-bench", "tir-bench", "visualtoolbench", "visbrowse", "visbrowse-bench", "phystoolbench")

# Files someone else is rewriting (engine/, api/, cli.py, session.py, sweep_session.py) that still name
# a benchmark: (path relative to src/toolsight, line) -> why. Remove an entry when its file is fixed;
# an entry that no longer matches a violation fails the test, so the list cannot go stale.
ALLOWED: dict[tuple[str, int], str] = {}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.detail}"


def benchmark_packages(root: Path = BENCHMARKS) -> list[str]:
    """The benchmark packages: every folder under benchmarks/ with an `__init__.py`."""
    return sorted(p.parent.name for p in root.glob("*/__init__.py"))


def name_words(builtins: list[str] | None = None) -> set[str]:
    """Lower-case words an identifier's segments must not spell (a `…bench` name also as `…benchmark`)."""
    names = {*SHORT_NAMES, *(n for n in (builtins if builtins is not None else builtin_names())
                             if n not in GENERIC_BUILTINS)}
    words = {re.sub(r"[^a-z0-9]", "", n.lower()) for n in names}
    return words | {w + "mark" for w in words if w.endswith("bench")}


def string_pattern(builtins: list[str] | None = None) -> re.Pattern[str]:
    names = {*STRING_NAMES, *(n for n in (builtins if builtins is not None else builtin_names())
                              if n not in GENERIC_BUILTINS)}
    alts = sorted(("[-_ ]?".join(re.escape(p) for p in re.split(r"[-_ ]", n)) for n in names), key=len, reverse=True)
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(alts) + r")(?![A-Za-z0-9])", re.IGNORECASE)


_SEGMENT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def segments(identifier: str) -> list[str]:
    """`VTBOfficialAgent` -> vtb, official, agent; `run_tir_bench` -> run, tir, bench."""
    return [s.lower() for s in _SEGMENT.findall(identifier)]


def spells_benchmark(identifier: str, words: set[str]) -> str | None:
    """The benchmark word a run of consecutive segments spells (`Vis`+`Browse` = visbrowse), or None."""
    segs = segments(identifier)
    for i in range(len(segs)):
        joined = ""
        for seg in segs[i:]:
            joined += seg
            if joined in words:
                return joined
    return None


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string constants that are docstrings (module, class, function)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def _identifiers(tree: ast.Module) -> Iterator[tuple[str, int]]:
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name):
            yield node.id, line
        elif isinstance(node, ast.Attribute):
            yield node.attr, line
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, line
        elif isinstance(node, ast.arg):
            yield node.arg, line
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg, line
        elif isinstance(node, ast.alias):
            for part in [*node.name.split("."), *([node.asname] if node.asname else [])]:
                yield part, line
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for n in node.names:
                yield n, line
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name, line
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            yield node.name, line


def _imported_packages(node: ast.AST, packages: set[str]) -> Iterator[str]:
    """The benchmark packages an import statement imports (absolute or relative)."""
    if isinstance(node, ast.Import):
        for a in node.names:
            parts = a.name.split(".")
            if parts[:2] == ["toolsight", "benchmarks"] and len(parts) > 2 and parts[2] in packages:
                yield a.name
    elif isinstance(node, ast.ImportFrom):
        module = node.module or ""
        parts = module.split(".")
        if node.level == 0 and parts[:2] == ["toolsight", "benchmarks"]:
            if len(parts) > 2 and parts[2] in packages:
                yield module
            elif len(parts) == 2:
                yield from (f"{module}.{a.name}" for a in node.names if a.name in packages)
        elif node.level > 0:  # inside benchmarks/ (a relative import elsewhere cannot reach it by name)
            for part in [*parts, *(a.name for a in node.names)]:
                if part in packages:
                    yield f"{'.' * node.level}{module} ({part})"


def _exempt_lines(tree: ast.Module) -> set[int]:
    """benchmarks/registry.py's one list of built-ins: `BUILTINS`, the factories it names, and the
    import of the dataset-folder fallback."""
    lines: set[int] = set()
    factories: set[str] = set()
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == "BUILTINS" and node.end_lineno is not None:
            lines.update(range(node.lineno, node.end_lineno + 1))
            factories.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in factories and node.end_lineno is not None:
            lines.update(range(node.lineno, node.end_lineno + 1))
    for sub in ast.walk(tree):
        if isinstance(sub, ast.ImportFrom) and (sub.module or "").startswith("toolsight.benchmarks.dataset"):
            lines.add(sub.lineno)
    return lines


def check_source(source: str, path: str, packages: list[str], builtins: list[str], *,
                 registry: bool = False) -> list[Violation]:
    """Every violation in one module's source."""
    tree = ast.parse(source, filename=path)
    words = name_words(builtins)
    pattern = string_pattern(builtins)
    pkgs = set(packages)
    module_ref = re.compile(r"\btoolsight[./]benchmarks[./](" + "|".join(map(re.escape, sorted(pkgs))) + r")\b")
    docs = _docstrings(tree)
    out: list[Violation] = []
    for node in ast.walk(tree):
        for mod in _imported_packages(node, pkgs):
            out.append(Violation(path, getattr(node, "lineno", 0), "imports a benchmark package", mod))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if (m := module_ref.search(node.value)) is not None:
                out.append(Violation(path, node.lineno, "names a benchmark module", repr(m.group(0))))
            elif (m := pattern.search(node.value)) is not None:
                out.append(Violation(path, node.lineno, "string names a benchmark", repr(m.group(0))))
    seen: set[tuple[str, int]] = set()
    for ident, line in _identifiers(tree):
        word = spells_benchmark(ident, words)
        if word is not None and (ident, line) not in seen:
            seen.add((ident, line))
            out.append(Violation(path, line, "identifier names a benchmark", f"{ident} ({word})"))
    if registry:
        exempt = _exempt_lines(tree)
        out = [v for v in out if v.line not in exempt]
    return sorted(out, key=lambda v: (v.line, v.rule, v.detail))


def generic_modules(src: Path = SRC) -> list[Path]:
    """Every module outside the benchmark packages (benchmarks/base.py, offline.py, … are generic)."""
    inside = [BENCHMARKS / p for p in benchmark_packages()]
    return sorted(p for p in src.rglob("*.py") if not any(p.is_relative_to(d) for d in inside))


def check_tree(src: Path = SRC) -> list[Violation]:
    packages, builtins = benchmark_packages(), builtin_names()
    out: list[Violation] = []
    for path in generic_modules(src):
        rel = path.relative_to(src).as_posix()
        out += check_source(path.read_text(encoding="utf-8"), rel, packages, builtins, registry=path == REGISTRY)
    return out


# ---------------------------------------------------------------------------------------- the rule


def test_generic_code_names_no_benchmark() -> None:
    found = check_tree()
    bad = [v for v in found if (v.path, v.line) not in ALLOWED]
    assert not bad, "generic code names a benchmark (move it into the benchmark's package):\n" + "\n".join(
        map(str, bad))
    stale = sorted(set(ALLOWED) - {(v.path, v.line) for v in found})
    assert not stale, f"allowlisted lines that no longer name a benchmark (remove them from ALLOWED): {stale}"


def test_the_walk_covers_generic_code_and_skips_the_packages() -> None:
    rels = {p.relative_to(SRC).as_posix() for p in generic_modules()}
    assert {"tools/registry.py", "benchmarks/base.py", "benchmarks/offline.py", "benchmarks/generation.py",
            "benchmarks/registry.py", "engine/runner.py"} <= rels
    packages = benchmark_packages()
    assert {"tir_bench", "vtc_bench", "visualtoolbench", "visbrowse_bench", "phystoolbench"} <= set(packages)
    assert not any(r.startswith(f"benchmarks/{p}/") for r in rels for p in packages)


# ---------------------------------------------------------------------------------------- it bites

PACKAGES = ["dataset", "newbench", "tir_bench", "visbrowse_bench"]
BUILTINS = ["starter", "tir-bench", "visbrowse-bench", "newbench"]


def _rules(source: str, *, registry: bool = False) -> list[tuple[int, str]]:
    return [(v.line, v.rule) for v in check_source(source, "mod.py", PACKAGES, BUILTINS, registry=registry)]


@pytest.mark.parametrize("source", [
    "import toolsight.benchmarks.tir_bench.loop\n",
    "from toolsight.benchmarks.visbrowse_bench.loop import run\n",
    "from toolsight.benchmarks import newbench\n",
    "def f():\n    from toolsight.benchmarks.newbench.scorer import s\n    return s\n",
    "from .newbench import benchmark\n",
])
def test_an_import_of_a_benchmark_package_fails(source: str) -> None:
    assert "imports a benchmark package" in {r for _, r in _rules(source)}


def test_a_module_name_in_a_string_fails() -> None:
    src = "import importlib\n\ndef f():\n    return importlib.import_module('toolsight.benchmarks.newbench.loop')\n"
    assert _rules(src) == [(4, "names a benchmark module")]


def test_generic_imports_pass() -> None:
    src = ("from toolsight.benchmarks.base import Benchmark\nfrom toolsight.benchmarks import registry\n"
           "from toolsight.benchmarks.offline import StarterPart\n")
    assert _rules(src) == []


@pytest.mark.parametrize(("ident", "word"), [
    ("VTB_PACKAGES", "vtb"), ("vtc_judge", "vtc"), ("run_tir", "tir"), ("TIRBenchmark", "tir"),
    ("VisBrowseTool", "visbrowse"), ("PhysToolBenchmark", "phystool"), ("visualtoolbench_prompt", "visualtoolbench"),
    ("NewbenchScorer", "newbench"), ("newbench_template", "newbench"),
])
def test_an_identifier_that_spells_a_benchmark_fails(ident: str, word: str) -> None:
    assert spells_benchmark(ident, name_words(BUILTINS)) == word
    for src in (f"{ident} = 1\n", f"def {ident}():\n    pass\n", f"class {ident}:\n    pass\n",
                f"x.{ident}()\n", f"f({ident}=1)\n", f"f'{{{ident}}}'\n"):
        assert _rules(src) == [(1, "identifier names a benchmark")], src


@pytest.mark.parametrize("ident", ["cv2.cvtColor", "COLOR_BGR2RGB", "tiramisu", "vtcx", "starter_parts",
                                   "StarterPart", "virtual", "satire", "TIRE", "benchmark_names"])
def test_look_alike_identifiers_pass(ident: str) -> None:
    assert _rules(f"y = {ident}\n") == []


@pytest.mark.parametrize("text", ["the 35 VTC-Bench OpenCV operations", "(VisualToolBench contract)",
                                  "--scorer visualtoolbench-errors", "tir_bench", "TIR Bench", "visbrowse-bench",
                                  "PhysToolBench", "newbench"])
def test_a_string_that_names_a_benchmark_fails(text: str) -> None:
    assert _rules(f"x = {text!r}\n") == [(1, "string names a benchmark")]
    assert _rules(f"x = f'{{y}} {text}'\n") == [(1, "string names a benchmark")]


@pytest.mark.parametrize("text", ["cvtColor", "virtual", "vtc", "data/vtb", "starter", "toolsight run starter",
                                  "newbenchmarks"])
def test_look_alike_strings_pass(text: str) -> None:
    assert _rules(f"x = {text!r}\n") == []


def test_docstrings_and_comments_may_cite_a_paper() -> None:
    src = ('"""Rubric judging (VisualToolBench style)."""\n\n\n'
           "def f() -> None:\n"
           '    """As TIR-Bench does."""\n'
           "    # PhysToolBench's crops\n"
           "\n\nclass C:\n"
           '    """VTC-Bench Table 5."""\n')
    assert _rules(src) == []
    assert _rules('def f() -> str:\n    x = 1\n    "VTC-Bench"\n    return ""\n') == [(3, "string names a benchmark")]


def test_the_registry_may_name_its_builtins_and_nothing_else() -> None:
    src = ("def _tir():\n"
           "    from toolsight.benchmarks.tir_bench.benchmark import TIRBenchmark\n"
           "    return TIRBenchmark()\n"
           "BUILTINS = {'tir-bench': _tir}\n"
           "def get(p):\n"
           "    from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark\n"
           "    return DatasetBenchmark(p)\n"
           "def other(name):\n"
           "    return name == 'tir-bench'\n")
    assert _rules(src, registry=True) == [(9, "string names a benchmark")]
    assert len(_rules(src)) > 1  # the same source anywhere else


def test_the_built_in_names_are_read_from_the_registry() -> None:
    words = name_words()
    assert {re.sub(r"[^a-z0-9]", "", n) for n in builtin_names() if n not in GENERIC_BUILTINS} <= words
    assert string_pattern().search("run tir-bench now")


def test_the_tree_check_reports_a_planted_violation(tmp_path: Path) -> None:
    (tmp_path / "benchmarks" / "tir_bench").mkdir(parents=True)
    (tmp_path / "benchmarks" / "tir_bench" / "__init__.py").write_text("")
    bad = tmp_path / "tools" / "bad.py"
    bad.parent.mkdir()
    bad.write_text('"""A tool."""\n\nfrom toolsight.benchmarks.tir_bench import loop\n\nVTB_X = "VTC-Bench"\n')
    packages = benchmark_packages(tmp_path / "benchmarks")
    found = check_source(bad.read_text(), "tools/bad.py", packages, builtin_names())
    assert [str(v) for v in found] == [
        "tools/bad.py:3: imports a benchmark package: toolsight.benchmarks.tir_bench",
        "tools/bad.py:5: identifier names a benchmark: VTB_X (vtb)",
        "tools/bad.py:5: string names a benchmark: 'VTC-Bench'",
    ]
