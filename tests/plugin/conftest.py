"""The example plugin (`examples/plugin-benchmark`, distribution `toolsight-shapes`) installed for real.

pip builds and installs a copy of the example into a temporary folder (`pip install --target`), not
into the shared virtualenv: every CLI subprocess gets `PYTHONPATH = <this checkout>/src:<that folder>`,
so it imports this checkout's toolsight and finds the plugin's entry point, while this pytest process,
every other test and anyone else using the virtualenv never see it. The folder is deleted at the end
of the session (the uninstall). pip first builds offline (`--no-build-isolation`, which needs
setuptools ≥ 70.1 or `wheel` in the environment), else with build isolation (setuptools from the
package index). If neither works the tests are skipped with pip's message — and fail when `CI` is set.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "plugin-benchmark"
DIST = "toolsight-shapes"


def _pip_install(source: Path, target: Path) -> str | None:
    """Install `source` into `target`; None on success, else what pip said (each attempt's last lines)."""
    failures = []
    for isolation in (["--no-build-isolation"], []):
        shutil.rmtree(target, ignore_errors=True)
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--quiet",
                               *isolation, "--target", str(target), str(source)],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode == 0:
            return None
        said = [ln.strip(" |│╰─>") for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        errors = [ln for ln in said if "error:" in ln.lower()] or said
        failures.append(f"pip install {' '.join(isolation) or '(build isolation)'}: {' | '.join(errors[-2:])}")
    return "; ".join(failures)


def plugin_env(target: Path) -> dict[str, str]:
    """The environment of a CLI subprocess: this checkout's toolsight, the installed plugin, no API keys."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "OPENAI_BASE_URL"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(target)])
    env["COLUMNS"] = "200"
    return env


@pytest.fixture(scope="session")
def shapes_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The example plugin installed by pip; yields the environment CLI subprocesses run in."""
    base = tmp_path_factory.mktemp("plugin")
    source, target = base / "source", base / "site"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    problem = _pip_install(source, target)
    if problem is not None:
        message = f"cannot install {EXAMPLE} with pip: {problem}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    env = plugin_env(target)
    where = subprocess.run([sys.executable, "-c", "import toolsight, toolsight_shapes; "
                            "print(toolsight.__file__); print(toolsight_shapes.__file__)"],
                           capture_output=True, text=True, env=env, timeout=60)
    assert where.returncode == 0, where.stderr
    toolsight_file, plugin_file = where.stdout.split()
    assert Path(toolsight_file).is_relative_to(ROOT / "src"), toolsight_file  # this checkout's toolsight
    assert Path(plugin_file).is_relative_to(target), plugin_file  # the plugin as pip installed it
    yield env
    shutil.rmtree(target, ignore_errors=True)
