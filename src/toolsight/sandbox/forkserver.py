"""The `forkserver` backend (the default): pools of pre-warmed, confined fork servers.

Stateless calls borrow a server of the pool of their preload profile (`image`: numpy, cv2, PIL;
`full`: also pandas, scipy, sympy, matplotlib) and run in a fresh confined child of it. A stateful
sandbox (a session, the IPython kernel) gets a fresh dedicated server of its own, never a pooled
one, whose one long-lived child is frozen between calls. The layers (a separate uid, namespaces, a
tmpfs workspace, cgroups, rlimits, capabilities, Landlock, a seccomp allowlist) are in `_server.py`
and `_confine.py`; the harness side of the servers is `client.py`.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from toolsight.sandbox.client import SandboxPool, SandboxSession
from toolsight.sandbox.interface import MAX_READ_BYTES, RunOutcome, read_file, write_file
from toolsight.sandbox.models import ExecResult, Limits

NAME = "forkserver"
PROFILES = ("image", "full", "kernel")


class ForkServerSandbox:
    """A task's sandbox on the fork-server backend (stateless calls go to the shared pool)."""

    backend = NAME

    def __init__(self, pool: SandboxPool, workspace: Path, limits: Limits, stateful: bool, mode: str,
                 profile: str | None) -> None:
        self.pool = pool
        self.workspace = Path(workspace)
        self.limits = limits
        self.stateful = stateful
        self._session: SandboxSession | None = (pool.session(self.workspace, limits, mode, profile)
                                                if stateful else None)

    async def exec(self, code: str, limits: Limits | None = None, wall_s: float | None = None) -> ExecResult:
        if self._session is not None:
            return (await self.run(code, wall_s)).result
        lim = limits or self.limits
        if wall_s is not None:
            lim = lim.model_copy(update={"wall_s": wall_s})
        res = await asyncio.to_thread(self.pool.run, code, self.workspace, lim)
        res.backend = NAME
        return res

    async def run(self, code: str, wall_s: float | None = None) -> RunOutcome:
        if self._session is None:
            return RunOutcome(await self.exec(code, wall_s=wall_s))
        res, frame = await asyncio.to_thread(self._session.run_frame, code, wall_s)
        res.backend = NAME
        report = frame.get("report")
        ended = bool(frame.get("session_dead")) or res.limit == "server_timeout" or res.server_restarted
        return RunOutcome(res, report if isinstance(report, dict) else {}, ended)

    async def read_file(self, name: str, max_bytes: int = MAX_READ_BYTES) -> bytes:
        return await read_file(self.workspace, name, max_bytes)

    async def write_file(self, name: str, data: bytes, read_only: bool = False) -> None:
        await write_file(self.workspace, name, data, read_only)

    def isolation(self) -> dict[str, Any]:
        return self.pool.isolation()

    async def restart(self) -> None:
        if self._session is not None:
            await asyncio.to_thread(self._session.restart)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.aclose()


class ForkServerBackend:
    """Pools of pre-warmed fork servers, one per preload profile, created on first use."""

    name = NAME

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: dict[str, SandboxPool] = {}
        self._size: int | None = None
        self._config: dict[str, Any] = {}

    def configure(self, size: int | None = None, *, cgroup: bool | None = None, pids_max: int | None = None) -> None:
        """Size the pools (e.g. to the run's concurrency) and set server options before first use."""
        with self._lock:
            if size is not None:
                self._size = size
                for p in self._pools.values():
                    p.resize(size)
            if cgroup is not None:
                self._config["cgroup"] = cgroup
            if pids_max is not None:
                self._config["pids_max"] = pids_max

    def pool(self, profile: str = "image") -> SandboxPool:
        """The pool of a preload profile, created on first use.

        'image' servers preload numpy, cv2 and PIL (small, so each fork is cheap); 'full' servers also
        preload pandas, scipy, sympy, matplotlib and bs4 (for python_interpreter). Anything else is
        importable lazily in both.
        """
        if profile not in PROFILES:
            raise ValueError(f"unknown sandbox profile {profile!r}; use one of {', '.join(PROFILES)}")
        with self._lock:
            pool = self._pools.get(profile)
            if pool is None:
                pool = self._pools[profile] = SandboxPool(self._size, {**self._config, "preload": profile})
            return pool

    def start(self, workspace: Path, *, limits: Limits | None = None, stateful: bool = False,
              profile: str | None = None, mode: str = "exec") -> ForkServerSandbox:
        if stateful:  # a dedicated server of `profile`, started through the image pool (never one of its servers)
            return ForkServerSandbox(self.pool("image"), workspace, limits or Limits(), True, mode, profile or "full")
        return ForkServerSandbox(self.pool(profile or "image"), workspace, limits or Limits(), False, mode, None)

    def isolation_report(self) -> dict[str, Any]:
        """The layers in force, from the start-up probe of a server (starts one if none is running)."""
        return self.pool("image").isolation()

    def shutdown(self) -> None:
        """Stop every server of the pools (safe to call more than once; pools are made again on use)."""
        with self._lock:
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.shutdown()
