"""`toolsight list agents` names every agent `--agent` takes, with the tool sets it calls by itself, and
`toolsight list settings tir-bench` shows Table 2's framework rows with their agent and its tools."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def test_list_agents_names_the_frameworks_and_their_tools() -> None:
    r = _cli("list", "agents")
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines() if line.strip()}
    assert set(rows) >= {"default", "vcr", "pyvision", "pyvision-no-tool", "pyvision-no-tool-no-cot", "deepeyes"}
    assert rows["pyvision"].endswith("[tool sets: pyvision]")
    assert rows["pyvision-no-tool"].endswith("[tool sets: pyvision]")
    assert rows["deepeyes"].endswith("[tool sets: deepeyes]")
    assert "[tool sets" not in rows["default"]


def test_list_settings_shows_a_settings_agent_and_the_tools_it_brings() -> None:
    r = _cli("list", "settings", "tir-bench")
    assert r.returncode == 0, r.stderr
    rows = {line.split(":")[0]: line for line in r.stdout.splitlines() if line.strip()}
    assert rows["pyvision"].startswith("pyvision: loop official; agent pyvision; tools: pyvision;")
    assert rows["deepeyes"].startswith("deepeyes: loop official; agent deepeyes; tools: deepeyes;")
    assert rows["code (default)"].startswith("code (default): loop official; tools: ")
    assert "agent" not in rows["code (default)"]


def test_an_unknown_agent_is_one_line_listing_the_agents(tmp_path: Path) -> None:
    r = _cli("run", "tir-bench", "--agent", "pyvison", "--model", "mock/x", "--data", str(tmp_path))
    assert r.returncode == 2, (r.returncode, r.stderr)
    [line] = [x for x in r.stderr.splitlines() if x.strip()]
    assert "--agent 'pyvison': unknown agent" in line and "pyvision" in line and "deepeyes" in line
