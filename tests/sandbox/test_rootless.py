"""The same isolation for a normal user (issue 27): what the report says, and what the code meets.

These run in both of CI's passes: as root, and as a made-up unprivileged uid (`tests/sandbox/unprivileged.py`,
run by `make test`). As a normal user the server makes a user namespace of its own, so the code gets
the mount, network, IPC and PID namespaces and the tmpfs workspace as under root; what a normal user
cannot have (a second host uid, cgroups without delegation) is named in the report, with the reason.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from toolsight.sandbox import Limits, SandboxPool, situations

REPO = Path(__file__).resolve().parents[2]
FAST = Limits(wall_s=15, cpu_s=10, disk_mb=64)
NAMESPACES = ("mount_namespace", "net_namespace", "ipc_namespace", "pid_namespace", "tmpfs_workspace")


def _userns_possible() -> bool:
    if os.geteuid() == 0:
        return True
    try:
        with open("/proc/sys/user/max_user_namespaces") as fh:
            return int(fh.read()) > 0
    except (OSError, ValueError):
        return False


def assert_its_column(report: dict[str, Any]) -> None:
    """The report's layers are what the table's column for its privilege says: a `yes` cell is in force,
    a `no`/`partial` cell is not (and its layer names the gap), an `if delegated` cell is in force or
    names the missing delegation."""
    column = situations.expected(report["privilege"])
    assert report["situations"] == {k: dict(zip(situations.SITUATIONS, c, strict=True))
                                    for k, (_, c) in situations.TABLE.items()}
    for key, cell in column.items():
        got = report["layers"][key]
        if cell.startswith("if delegated"):
            assert got is True or str(got).startswith("no cgroup delegated to this user"), (key, got)
        else:
            assert (got is True) == situations.in_force(cell), (key, cell, got)


def test_the_report_names_the_privilege_and_every_layer(iso: dict[str, Any]) -> None:
    assert_its_column(iso)
    layers = iso["layers"]
    if os.geteuid() == 0:
        assert iso["privilege"] == "root" and iso["level"] == "full", iso
        assert all(layers[k] is True for k in (*NAMESPACES, "uid_separation", "cgroup_pids", "cgroup_memory"))
        return
    if not _userns_possible():
        pytest.fail("this kernel allows no user namespaces for a normal user: the rootless layers cannot be "
                    "tested here (/proc/sys/user/max_user_namespaces)")
    assert iso["privilege"] == "normal user, user namespaces", iso
    for key in (*NAMESPACES, "user_namespace", "capabilities_dropped", "landlock_fs", "seccomp_allowlist"):
        assert layers[key] is True, (key, layers[key])
    # what a normal user cannot have is named, with why, in the layer and in the warnings
    assert str(layers["uid_separation"]).startswith("partial: the code is uid 65534")
    for key, value in layers.items():
        if isinstance(value, str) and key not in ("capabilities_dropped", "session_freezer"):
            assert f"{key}: {value}" in iso["warnings"]
    if "cgroup_memory" not in (iso.get("cgroups") or {}):
        assert str(layers["cgroup_memory"]).startswith("no cgroup delegated to this user")


def test_the_code_meets_its_own_namespaces(tmp_path: Path) -> None:
    """The child's view: not root, a PID namespace whose pid 1 is its server, a workspace of its quota,
    no host path; on any privilege."""
    ws = tmp_path / "ws"
    ws.mkdir()
    pool = SandboxPool(size=1, config={"prewarm_servers": False})
    code = (
        "import os, ctypes\n"
        "print('uid', os.getuid())\n"
        "print('ppid', os.getppid())\n"
        "print('host', os.path.exists('/etc/passwd'), os.path.exists('/home'))\n"
        "st = os.statvfs('.')\n"
        "print('quota', st.f_blocks * st.f_frsize <= 80 << 20)\n"
    )
    try:
        res = pool.run(code, ws, FAST)
        iso = pool.isolation()
    finally:
        pool.shutdown()
    assert res.ok, res
    out = dict(line.split(" ", 1) for line in res.stdout.strip().splitlines())
    assert out["uid"] != "0"
    if iso["layers"]["pid_namespace"] is True:
        assert out["ppid"] == "1", out  # its server is pid 1 of a PID namespace: no host process is in it
    if iso["layers"]["mount_namespace"] is True:
        assert out["host"] == "False False" and out["quota"] == "True", out


def test_the_network_namespace_alone_keeps_the_code_off_the_harness_loopback(tmp_path: Path) -> None:
    """With seccomp and Landlock switched off, only the network namespace stands between the code and a
    service of the harness on 127.0.0.1 (the main defence against SSRF from model code)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    seen: list[bytes] = []

    def serve() -> None:
        listener.settimeout(20)
        try:
            conn, _ = listener.accept()
            seen.append(conn.recv(100))
            conn.close()
        except OSError:
            pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    pool = SandboxPool(size=1, config={"seccomp": False, "landlock": False, "prewarm_servers": False})
    code = (
        "import socket\n"
        "try:\n"
        f"    s = socket.create_connection(('127.0.0.1', {port}), timeout=3); s.sendall(b'leak'); print('CONNECTED')\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
    )
    try:
        iso = pool.isolation()
        if iso["layers"]["net_namespace"] is not True:
            pytest.fail(f"no network namespace for the code here: {iso['layers']['net_namespace']}")
        res = pool.run(code, ws, FAST)
    finally:
        pool.shutdown()
        listener.close()
    assert res.ok and "refused" in res.stdout, res
    assert seen == []


def test_without_user_namespaces_the_gap_is_named(tmp_path: Path) -> None:
    """A normal user whose kernel refuses user namespaces (here: switched off) keeps Landlock, seccomp and
    the rlimits, and the report says which layers are gone and why. Run by root, the test runs itself
    again as a made-up normal user (tests/sandbox/unprivileged.py), so the server really has no namespaces."""
    if os.geteuid() == 0:
        me = f"{Path(__file__).resolve().relative_to(REPO)}::test_without_user_namespaces_the_gap_is_named"
        proc = subprocess.run([sys.executable, str(REPO / "tests" / "sandbox" / "unprivileged.py"), me, "-q"],
                              capture_output=True, text=True, timeout=300, cwd=REPO)
        assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-2000:]
        return
    pool = SandboxPool(size=1, config={"userns": False, "prewarm_servers": False})
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        res = pool.run("print('ok')", ws, FAST)
        assert res.ok and res.stdout.strip() == "ok", res
        report = pool.isolation()
    finally:
        pool.shutdown()
    assert report["privilege"] == "normal user, no user namespaces"
    assert_its_column(report)
    for key in (*NAMESPACES, "user_namespace"):
        assert str(report["layers"][key]).startswith("no user namespaces"), (key, report["layers"][key])
    assert report["layers"]["landlock_fs"] is True and report["layers"]["seccomp"] is True
    assert report["level"] == "partial"


def test_docs_show_the_table_the_report_uses() -> None:
    docs = (REPO / "docs" / "sandbox.md").read_text(encoding="utf-8")
    assert situations.markdown() in docs
