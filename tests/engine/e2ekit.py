"""Helpers for tests that run `toolsight` as a real subprocess against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from enginekit import write_png


def dataset(root: Path, n: int, image: str = "img.png", size: int = 64) -> Path:
    write_png(root / image, size, size)
    with (root / "tasks.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"t{i}", "turns": [{"prompt": f"[task:t{i}] Which colour?",
                                 "images": [{"path": image}], "answer": "A",
                                 "options": {"A": "red", "B": "blue"}}]}) + "\n")
    return root


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "toolsight", *args]


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e["COLUMNS"] = "200"
    return e


def default_sigint() -> None:
    """For Popen(preexec_fn=...): a shell that starts pytest in the background ignores SIGINT, and
    children inherit that; give the child the default so Python installs its Ctrl-C handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(cli(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                            preexec_fn=default_sigint)


def run(*args: str, timeout: float = 180, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli(*args), capture_output=True, text=True, env=env(), timeout=timeout, cwd=cwd)


def records(run_dir: Path) -> list[dict[str, Any]]:
    p = run_dir / "records.jsonl"
    if not p.exists():
        return []
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]


def complete_bytes(run_dir: Path) -> bytes:
    """records.jsonl up to its last complete line."""
    p = run_dir / "records.jsonl"
    data = p.read_bytes() if p.exists() else b""
    return data[: data.rfind(b"\n") + 1]


def wait_until(cond: Callable[[], bool], timeout: float = 120, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def kill_when(args: tuple[str, ...] | list[str], cond: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Start `toolsight *args` and SIGKILL it as soon as `cond()` holds (e.g. a batch id in its journal)."""
    proc = start(*args)
    try:
        wait_until(cond, timeout=timeout, what=what)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()


def kill_after_submit_then_resume(srv: Any, args: list[str], out: Path) -> tuple[subprocess.CompletedProcess[str], int]:
    """A `--batch` run against a scripted server whose batches are held (`hold_after`): SIGKILLed once
    its journal holds the batch id, then resumed with the batches let go. (The resumed run's result,
    how many times the killed run's tag reached the server.)"""
    from toolsight.calls.batch_journal import read_journal

    kill_when(args, lambda: any(e["kind"] == "batch" for e in read_journal(out)), "the batch's id in the journal")
    (tag,) = [e["tag"] for e in read_journal(out) if e["kind"] == "submit"]
    srv.script.batch.hold_after = None
    r = run(*args, "--resume")
    return r, srv.batches.submissions(tag)


def n_records(run_dir: Path) -> int:
    p = run_dir / "records.jsonl"
    try:
        return p.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0
