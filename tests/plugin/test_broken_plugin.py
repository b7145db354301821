"""A third-party benchmark whose entry point does not import: every other command still works, and
naming the broken one is one line that says which entry point failed and why."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import plugin_env


def _broken_site(root: Path) -> Path:
    """An installed distribution (its dist-info only) whose benchmark entry point names a missing module."""
    info = root / "broken_bench-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-bench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[toolsight.benchmarks]\nbroken = no_such_module_here:Bench\n")
    return root


def _ts(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_a_broken_plugin_does_not_break_the_others(tmp_path: Path) -> None:
    env = plugin_env(_broken_site(tmp_path / "site"))
    listed = _ts(env, "list", "benchmarks")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("broken"))
    assert "unavailable" in line and "no_such_module_here" in line
    assert any(x.startswith("tir-bench") for x in listed.stdout.splitlines())
    gens = _ts(env, "list", "generators")
    assert gens.returncode == 0 and "jigsaw" in gens.stdout, gens.stderr
    named = _ts(env, "list", "settings", "broken")
    assert named.returncode == 1 and "Traceback" not in named.stderr
    assert "entry point no_such_module_here:Bench" in named.stderr and "ModuleNotFoundError" in named.stderr
    run = _ts(env, "run", "broken", "-m", "reference", "--out", str(tmp_path / "run"))
    assert run.returncode == 2 and "Traceback" not in run.stderr and "cannot be loaded" in run.stderr
    assert not (tmp_path / "run").exists()
