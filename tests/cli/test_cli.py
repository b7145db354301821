"""The command line: clear one-line errors for bad input, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOLSIGHT = [sys.executable, "-m", "toolsight"]


def ts(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e.update(env or {})
    e["COLUMNS"] = "200"
    return subprocess.run([*TOOLSIGHT, *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=120)


def test_validate_good_and_bad(dataset: Path, tmp_path: Path) -> None:
    ok = ts("validate", str(dataset))
    assert ok.returncode == 0 and "6 task(s), no problems" in ok.stdout
    (dataset / "tasks.jsonl").write_text('{"id": "x", "turns": [{"prompt": "p", "images": [{"path": "nope.png"}]}]}\n{bad\n')
    bad = ts("validate", str(dataset))
    assert bad.returncode == 1  # validate: 1 = problems found
    assert "tasks.jsonl:1: turns[0].images[0].path: image file not found" in bad.stdout
    assert "tasks.jsonl:2: (json): not valid JSON" in bad.stdout
    assert "Traceback" not in bad.stdout + bad.stderr


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["run", "no-such-bench", "--model", "openai/x"], "neither a benchmark"),
        (["run", "{ds}", "--model", "openai/x", "--setting", "bogus"], "unknown setting 'bogus'"),
        (["run", "{ds}", "--model", "nosuchprovider/x"], "nosuchprovider"),
        (["run", "{ds}", "--model", "openai/gpt-4o"], "OPENAI_API_KEY"),
        (["run", "{ds}", "--model", "anthropic/claude"], "ANTHROPIC_API_KEY"),
        (["run", "{ds}", "--model", "openai/x", "--scorer-mode", "fancy"], "--scorer-mode"),
        (["run", "{ds}", "--model", "openai/x", "--concurrency", "0"], "concurrency"),
        (["run", "{ds}", "--model", "openai/x", "--cap", "max_tool_calls"], "NAME=VALUE"),
        (["report", "{tmp}"], "not a run directory"),
        (["view", "{tmp}"], "no runs in this folder"),  # a folder: the runs under it (issue 28)
        (["list", "settings", "nope"], "neither a benchmark"),
    ],
)
def test_bad_input_is_one_clear_message(args: list[str], expect: str, dataset: Path, tmp_path: Path) -> None:
    argv = [a.replace("{ds}", str(dataset)).replace("{tmp}", str(tmp_path)) for a in args]
    r = ts(*argv, cwd=tmp_path)
    assert r.returncode != 0
    assert expect in r.stdout + r.stderr, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_list_commands(dataset: Path) -> None:
    r = ts("list", "settings", str(dataset))
    assert r.returncode == 0 and "direct (default)" in r.stdout and "crop" in r.stdout
    r = ts("list", "tools")
    assert r.returncode == 0 and "crop" in r.stdout


def test_cli_run_against_an_unreachable_server_stops_without_failing_tasks(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = ts("run", str(dataset), "--model", "openai/x", "--base-url", "http://127.0.0.1:9/v1", "--out", str(out),
           "--retries", "0", "--limit", "2", "--no-report", "--outage-timeout", "1", "--backoff-base", "0.1")
    assert r.returncode == 4, r.stderr
    assert (out / "records.jsonl").read_text() == ""  # the tasks did not fail: the endpoint was down
    assert "stopped: model endpoint unreachable" in r.stderr and "--resume" in r.stderr
    assert "Traceback" not in r.stderr


def test_generate_then_validate(tmp_path: Path) -> None:
    for kind in ("jigsaw", "vtc-bars"):
        out = tmp_path / kind
        r = ts("generate", kind, "--n", "2", "--seed", "5", "--out", str(out))
        assert r.returncode == 0, r.stderr
        assert ts("validate", str(out)).returncode == 0
    first = (tmp_path / "jigsaw" / "tasks.jsonl").read_text()
    ts("generate", "jigsaw", "--n", "2", "--seed", "5", "--out", str(tmp_path / "again"))
    assert (tmp_path / "again" / "tasks.jsonl").read_text() == first  # deterministic for a seed
    bad = ts("generate", "sudoku", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "unknown generator kind 'sudoku'" in bad.stderr
    bad = ts("generate", "maze", "--difficulty", "4", "--out", str(tmp_path / "y"))
    assert bad.returncode == 2 and "choose one of" in bad.stderr and "Traceback" not in bad.stderr
