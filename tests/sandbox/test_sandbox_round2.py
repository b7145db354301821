"""Issue 11's attacks, each a real snippet through the public API (sandbox.start(...).exec, the tools).

Every test also checks that the next call works. Tests that need a layer this machine does not
have are skipped with the reason printed (they never pass silently).
"""

from __future__ import annotations

import asyncio
import ctypes
import hashlib
import json
import os
import select
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
from sandboxkit import need

from toolsight import sandbox
from toolsight.sandbox import ExecResult, Limits, SandboxPool
from toolsight.tools.base import ArtifactStore, Toolbox, ToolContext, ToolResult
from toolsight.tools.calculator import Calculator
from toolsight.tools.python_tools import PythonImageProcessing, PythonInterpreter

FAST = Limits(wall_s=5, cpu_s=3)


def run(code: str, ws: Path, limits: Limits = FAST) -> ExecResult:
    return asyncio.run(sandbox.start(ws, limits=limits).exec(code))


def still_works(ws: Path) -> None:
    res = run("print(6 * 7)", ws)
    assert res.ok and res.stdout.strip() == "42", res


def _image_ctx(tmp_path: Path) -> tuple[ToolContext, str]:
    import numpy as np
    from PIL import Image

    store = ArtifactStore(tmp_path / "ws")
    src = tmp_path / "scene.png"
    Image.fromarray(np.full((60, 80, 3), 90, np.uint8)).save(src)
    art = store.add_file(src, source="input")
    return ToolContext(store=store, call_id="c1", task_id="t1"), art.file


def _tool(tool: Any, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return asyncio.run(tool(args, ctx))


# ----------------------------------------------------------------------------- 1. metadata writes, set-uid

def test_child_runs_as_a_dedicated_uid_and_cannot_touch_metadata(tmp_path: Path, iso: dict[str, Any]) -> None:
    need(iso, "uid_separation")
    ctx, name = _image_ctx(tmp_path)
    path = ctx.workspace / name
    # (the tool itself makes registered images read-only before each call: compare without the w bits)
    before = (path.stat().st_mode & ~0o222, path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    code = (
        "import os, shutil\n"
        "print('uid', os.getuid(), os.getgid())\n"
        f"for what, fn in (('chmod', lambda: os.chmod({name!r}, 0o666)), ('utime', lambda: os.utime({name!r}, (0, 0))),\n"
        f"                 ('xattr', lambda: os.setxattr({name!r}, 'user.x', b'1')),\n"
        "                 ('chmod-out', lambda: os.chmod('/usr/bin/id', 0o4755)),\n"
        "                 ('utime-out', lambda: os.utime('/usr/bin/id', (0, 0)))):\n"
        "    try:\n"
        "        fn(); print('DID', what)\n"
        "    except OSError as e:\n"
        "        print('denied', what, e.errno)\n"
        "shutil.copyfile('/usr/bin/id', 'id')\n"
        "try:\n"
        "    os.chmod('id', 0o4755); print('DID setuid')\n"
        "except OSError as e:\n"
        "    print('denied setuid', e.errno)\n"
    )
    res = _tool(PythonImageProcessing(FAST), {"code": code}, ctx)
    assert "DID" not in res.text and res.text.count("denied") == 6, res.text
    uid = int(res.text.split("uid ")[1].split()[0])
    assert uid not in (0, os.getuid()) and uid >= 1_000_000, res.text
    after = (path.stat().st_mode & ~0o222, path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    assert after == before
    assert os.stat("/usr/bin/id").st_mode & stat.S_ISUID == 0
    copied = ctx.workspace / "id"
    assert copied.exists() and copied.stat().st_mode & (stat.S_ISUID | stat.S_ISGID) == 0
    assert copied.stat().st_uid == os.getuid()  # written back by the server, never owned by the sandbox uid
    still_works(ctx.workspace)


# ----------------------------------------------------------------------------- 2. host UNIX sockets

def test_host_unix_socket_cannot_be_reached(ws: Path, tmp_path: Path, iso: dict[str, Any]) -> None:
    need(iso, "seccomp_allowlist")
    sock_path = tmp_path / "host.sock"
    lsn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsn.bind(str(sock_path))
    lsn.listen(1)
    try:
        code = (
            "import socket\n"
            "for fam, typ in ((socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_UNIX, socket.SOCK_DGRAM)):\n"
            "    try:\n"
            f"        s = socket.socket(fam, typ); s.connect({str(sock_path)!r}); print('CONNECTED')\n"
            "    except OSError as e:\n"
            "        print('denied', e.errno)\n"
            "try:\n"
            "    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); print('DGRAM PAIR')\n"
            "except OSError as e:\n"
            "    print('denied', e.errno)\n"
            "a, b = socket.socketpair()\n"  # streams stay allowed (asyncio needs them)
            "a.send(b'x'); print('pair', b.recv(1))\n"
        )
        res = run(code, ws)
        assert res.ok and "CONNECTED" not in res.stdout and "DGRAM PAIR" not in res.stdout, res
        assert res.stdout.count("denied 1") == 3 and "pair b'x'" in res.stdout, res.stdout
        ready, _, _ = select.select([lsn], [], [], 0)
        assert not ready
    finally:
        lsn.close()
    still_works(ws)


# ----------------------------------------------------------------------------- 3. SysV IPC

def test_sysv_shared_memory_is_out_of_reach(ws: Path, iso: dict[str, Any]) -> None:
    need(iso, "ipc_namespace")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget(0, 4096, 0o600 | 0o1000)  # IPC_PRIVATE, IPC_CREAT: another process's secret segment
    assert shmid >= 0
    try:
        addr = libc.shmat(shmid, None, 0)
        ctypes.memmove(addr, b"SHM-SECRET-7781", 15)
        code = (
            "import ctypes\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.shmat.restype = ctypes.c_void_p\n"
            "buf = ctypes.create_string_buffer(256)\n"
            "hits = []\n"
            "for i in range(64):\n"
            "    r = libc.shmctl(i, 15, buf)\n"  # SHM_STAT_ANY
            "    if r >= 0: hits.append(r)\n"
            f"r = libc.shmat({shmid}, None, 0)\n"
            "print('attach', r if r in (None, 2**64 - 1) else 'ATTACHED', ctypes.get_errno())\n"
            "big = libc.shmget(0, 512 << 20, 0o1600)\n"
            "print('stat', hits, 'big', big)\n"
        )
        res = run(code, ws)
        assert res.ok and "ATTACHED" not in res.stdout and "stat [] big -1" in res.stdout, res
        segs = Path("/proc/sysvipc/shm").read_text()
        assert str(512 << 20) not in segs  # no 512 MiB segment outlives the call
    finally:
        libc.shmctl(shmid, 0, None)  # IPC_RMID
    still_works(ws)


# ----------------------------------------------------------------------------- 4. strings that break UTF-8

def test_lone_surrogates_and_non_utf8_names_never_break_a_result(tmp_path: Path) -> None:
    ctx, _ = _image_ctx(tmp_path)
    box = Toolbox([PythonImageProcessing(FAST)], ctx.store, "t1")
    code = (
        "open(b'bad\\xffname.txt', 'wb').write(b'x')\n"
        "import sys\nsys.stdout.write('out \\udcff\\n')\n"
        "raise ValueError('\\ud800')\n"
    )

    async def go() -> list[ToolResult]:
        return [await box.call("python_image_processing", {"code": code}),
                await box.call("python_image_processing", {"code": "print('next')"})]

    bad, nxt = asyncio.run(go())
    assert not bad.ok and "ValueError" in bad.text
    dumped = bad.model_dump_json().encode("utf-8")  # strict: would raise on a lone surrogate
    json.loads(dumped)
    assert "\\udcff" in bad.text or "\\ud800" in bad.text or "\\xff" in json.dumps(bad.extra)
    assert not any(os.fsencode(p.name) == b"bad\xffname.txt" for p in ctx.workspace.iterdir())
    assert any("UTF-8" in s["reason"] for s in bad.extra["files_skipped"])
    assert nxt.ok and "next" in nxt.text


# ----------------------------------------------------------------------------- 5. cross-task leak

def test_no_earlier_request_is_reachable_from_the_next_child(tmp_path: Path) -> None:
    own = SandboxPool(size=1)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    marker = "TASKA" + "".join(chr(ord("a") + (i * 7) % 26) for i in range(12))
    walker = (
        "import sys, gc\n"
        f"m = ''.join(chr(c) for c in {[ord(c) for c in marker]})\n"
        "found = []\n"
        "def scan(o, depth, seen):\n"
        "    if depth > 6 or id(o) in seen: return\n"
        "    seen.add(id(o))\n"
        "    if isinstance(o, (str, bytes)):\n"
        "        if (m if isinstance(o, str) else m.encode()) in o and o is not m: found.append(repr(o)[:80])\n"
        "        return\n"
        "    if isinstance(o, dict):\n"
        "        for k, v in list(o.items()): scan(k, depth + 1, seen); scan(v, depth + 1, seen)\n"
        "    elif isinstance(o, (list, tuple, set)):\n"
        "        for v in list(o): scan(v, depth + 1, seen)\n"
        "    elif hasattr(o, '__dict__') and not isinstance(o, type):\n"
        "        scan(vars(o), depth + 1, seen)\n"
        "f = sys._getframe().f_back\n"
        "seen = {id(m), id(found)}\n"
        "while f is not None:\n"
        "    scan(f.f_locals, 0, seen); f = f.f_back\n"
        "for o in gc.get_objects():\n"
        "    if isinstance(o, dict): scan(o, 5, seen)\n"
        "print('FOUND', len(found), found[:3])\n"
    )
    try:
        first = own.run(f"print({marker!r})", a, FAST)
        assert first.ok and marker in first.stdout
        second = own.run(walker, b, FAST)
        assert second.ok, second
        assert "FOUND 0" in second.stdout, second.stdout
        assert str(a) not in second.stdout
    finally:
        own.shutdown()


def test_a_stateful_session_never_uses_a_pooled_server(pool: SandboxPool, ws: Path) -> None:
    pool.warm(1)
    pooled = {s.proc.pid for s in pool._all}
    box = sandbox.start(ws, limits=FAST, stateful=True)

    async def go() -> ExecResult:
        try:
            return await box.exec("import os\nprint(os.getppid())")
        finally:
            await box.aclose()

    res = asyncio.run(go())
    assert res.ok, res
    assert int(res.stdout.strip()) not in pooled


# ----------------------------------------------------------------------------- 6. memory and disk

def test_memfd_is_denied_and_the_memory_cgroup_counts_tmpfs(ws: Path, iso: dict[str, Any]) -> None:
    need(iso, "cgroup_memory", "tmpfs_workspace", "seccomp_allowlist")
    res = run("import os\ntry:\n    os.memfd_create('x'); print('MEMFD')\nexcept OSError as e:\n    print('denied', e.errno)\n", ws)
    assert res.ok and "denied 1" in res.stdout, res
    # 384 MiB of files in the tmpfs workspace against a 256 MiB memory limit: killed by the cgroup
    lim = Limits(wall_s=20, cpu_s=10, cgroup_memory_mb=256, disk_mb=1024, file_mb=64)
    code = ("chunk = b'x' * (1 << 20)\n"
            "for i in range(6):\n"
            "    with open(f'f{i}.bin', 'wb') as fh:\n"
            "        for _ in range(64): fh.write(chunk)\n"
            "print('WROTE ALL')\n")
    res = run(code, ws, lim)
    assert not res.ok and res.limit == "memory" and "WROTE ALL" not in res.stdout, res
    touched = run("import numpy as np\na = np.ones(512 << 20, np.uint8)\nprint('TOUCHED', a.sum())", ws, lim)
    assert not touched.ok and touched.limit == "memory" and "TOUCHED" not in touched.stdout, touched
    still_works(ws)


def test_disk_quota_stops_many_files(ws: Path, iso: dict[str, Any]) -> None:
    need(iso, "tmpfs_workspace")
    lim = Limits(wall_s=20, cpu_s=10, disk_mb=64, file_mb=16)
    code = ("chunk = b'x' * (1 << 20)\n"
            "n = 0\n"
            "for i in range(40):\n"
            "    with open(f'big{i}.bin', 'wb') as fh:\n"
            "        for _ in range(16): fh.write(chunk); n += 1\n")
    res = run(code, ws, lim)
    assert not res.ok and res.limit == "disk" and "No space left" in (res.error or ""), res
    total = sum(p.stat().st_size for p in ws.iterdir())
    assert total <= 64 << 20, total
    still_works(ws)


# ----------------------------------------------------------------------------- 7. harvest and sessions

def test_fifty_thousand_files_do_not_flood_the_result(tmp_path: Path) -> None:
    ctx, _ = _image_ctx(tmp_path)
    code = ("n = 0\n"
            "try:\n"
            "    for i in range(50000):\n"
            "        open(f'transformed_image_{i}.png', 'wb').close(); n += 1\n"
            "except OSError as e:\n"
            "    print('stopped at', n, e.errno)\n")
    res = _tool(PythonImageProcessing(Limits(wall_s=30, cpu_s=20)), {"code": code}, ctx)
    assert len(res.text) < 8000 and res.artifacts == [], len(res.text)
    assert len(list(ctx.workspace.iterdir())) <= 4200
    nxt = _tool(PythonImageProcessing(FAST), {"code": "print('next')"}, ctx)
    assert nxt.ok and "next" in nxt.text


def test_a_sessions_threads_are_frozen_between_calls(tmp_path: Path, iso: dict[str, Any]) -> None:
    ctx, _ = _image_ctx(tmp_path)
    box = Toolbox([PythonInterpreter(FAST, stateful=True)], ctx.store, "t1")
    start = ("import threading, time\n"
             "stamps = []\n"
             "def tick():\n"
             "    while True:\n"
             "        stamps.append(time.monotonic()); time.sleep(0.01)\n"
             "threading.Thread(target=tick, daemon=True).start()\n"
             "time.sleep(0.1)\n"
             "end1 = time.monotonic()\n")
    check = ("t2 = time.monotonic()\n"
             "gap = [s for s in stamps if end1 + 0.2 < s < t2 - 0.2]\n"
             "print('ticks in the gap', len(gap), 'gap', round(t2 - end1, 2))\n")

    async def go() -> list[ToolResult]:
        first = await box.call("python_interpreter", {"code": start})
        await asyncio.sleep(1.5)
        second = await box.call("python_interpreter", {"code": check})
        await box.aclose()
        return [first, second]

    first, second = asyncio.run(go())
    assert first.ok and second.ok, (first.text, second.text)
    assert "ticks in the gap 0 " in second.text, second.text


def test_calculator_bomb_is_refused() -> None:
    ctx = ToolContext(store=ArtifactStore(Path("/tmp") / "toolsight-calc-test"))
    res = _tool(Calculator(), {"expression": "('a'*10**9).center(2*10**9)"}, ctx)
    assert not res.ok and "cannot evaluate" in res.text
    assert _tool(Calculator(), {"expression": "10 ** 10 ** 10"}, ctx).ok is False


# ----------------------------------------------------------------------------- 9. the report channel

def test_malformed_report_kills_the_child(ws: Path) -> None:
    code = "import os, time\nos.write(3, b'[' * 5000)\ntime.sleep(60)\n"
    res = run(code, ws, Limits(wall_s=30, cpu_s=5))
    assert not res.ok and res.limit == "killed" and "malformed" in (res.error or ""), res
    still_works(ws)


# ----------------------------------------------------------------------------- 10. smaller ones

def test_inotify_is_denied_and_overflow_marks_provenance_unknown(tmp_path: Path, iso: dict[str, Any]) -> None:
    need(iso, "seccomp_allowlist")
    ctx, name = _image_ctx(tmp_path)
    code = (
        "import ctypes, shutil\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('inotify', libc.inotify_init1(0), ctypes.get_errno())\n"
        f"shutil.copyfile({name!r}, 'other.png')\n"
        "for i in range(12000):\n"
        f"    open({name!r}, 'rb').read(1); open('other.png', 'rb').read(1)\n"
        f"from PIL import Image\nImage.open({name!r}).save('transformed_image_0.png')\n"
    )
    res = _tool(PythonImageProcessing(Limits(wall_s=30, cpu_s=20)), {"code": code}, ctx)
    assert res.ok, res.text
    assert "inotify -1 1" in res.text
    assert res.extra["files_tracked"] is False and res.extra["provenance"] == "unknown"
    assert "provenance of images it produced is unknown" in res.text
    assert len(res.artifacts) == 1


def test_inputs_and_earlier_outputs_cannot_be_replaced(tmp_path: Path) -> None:
    ctx, name = _image_ctx(tmp_path)
    tool = PythonImageProcessing(FAST)
    first = _tool(tool, {"code": f"from PIL import Image\nImage.open({name!r}).rotate(90).save('transformed_image_0.png')"}, ctx)
    assert first.ok and len(first.artifacts) == 1
    stored = {a.file: a.sha256 for a in ctx.store.all()}
    code = (
        "import os\n"
        "for f in ('" + name + "', 'transformed_image_0.png'):\n"
        "    for what, fn in (('write', lambda: open(f, 'wb').write(b'junk')), ('remove', lambda: os.remove(f)),\n"
        "                     ('rename', lambda: os.rename('new.txt', f)), ('chmod', lambda: os.chmod(f, 0o666))):\n"
        "        open('new.txt', 'w').write('junk')\n"
        "        try:\n"
        "            fn(); print('DID', what, f)\n"
        "        except OSError as e:\n"
        "            print('denied', what, e.errno)\n"
    )
    _tool(tool, {"code": code}, ctx)
    for file, digest in stored.items():
        assert hashlib.sha256((ctx.workspace / file).read_bytes()).hexdigest() == digest, file


def test_proc_is_limited_and_namespaces_are_private(ws: Path, iso: dict[str, Any]) -> None:
    need(iso, "mount_namespace", "net_namespace", "ipc_namespace", "landlock_fs")
    code = (
        "import os\n"
        "for p in ('/proc/self/net/dev', '/proc/self/mountinfo', '/proc/self/cgroup', '/proc/self/environ', "
        "'/proc/1/environ', '/proc/net/tcp', '/etc/hostname', '/home'):\n"
        "    try:\n"
        "        open(p).read(); print('READ', p)\n"
        "    except OSError as e:\n"
        "        print('denied', p, type(e).__name__)\n"
        "print('NS', ' '.join(os.readlink('/proc/self/ns/' + k) for k in ('mnt', 'net', 'ipc')))\n"
        "print('status', len(open('/proc/self/status').read()) > 0)\n"
    )
    res = run(code, ws)
    assert res.ok and "READ" not in res.stdout and "status True" in res.stdout, res.stdout
    mine = [os.readlink(f"/proc/self/ns/{k}") for k in ("mnt", "net", "ipc")]
    theirs = res.stdout.split("NS ")[1].split("\n")[0].split()
    assert all(a != b for a, b in zip(mine, theirs, strict=True)), (mine, theirs)


def test_kill_minus_one_only_reaches_the_sandbox_itself(ws: Path, iso: dict[str, Any]) -> None:
    # a dedicated uid (root), or a PID namespace whose pid 1 is the server (a normal user: same host uid)
    need(iso, "uid_separation" if iso["layers"].get("uid_separation") is True else "pid_namespace",
         "landlock_signal_scope")
    still_works(ws)
    server = sandbox.get_pool().server_of(ws)
    res = run("import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\n    print('survived')\n"
              "except ProcessLookupError:\n    print('survived: nothing else to signal')", ws)
    # Linux spares the caller; every process it may signal is its own (a dedicated uid, Landlock scope). In
    # the PID namespace of its server there may be no other process at all but pid 1, which kill(-1)
    # never signals: then the call fails with ESRCH (a previous call's child not yet reaped is signalled)
    assert res.ok and "survived" in res.stdout, res
    os.kill(os.getpid(), 0)  # the harness is alive
    assert server is not None and server.alive  # and so is the sandbox server of this task
    still_works(ws)


# ----------------------------------------------------------------------------- the limits bite

def test_open_files_stop_at_the_limit(ws: Path) -> None:
    code = ("fs = []\n"
            "try:\n"
            "    while len(fs) < 5000: fs.append(open('/dev/null'))\n"
            "except OSError as e:\n"
            "    print('opened', len(fs), e.errno)\n")
    res = run(code, ws, Limits(wall_s=10, cpu_s=5, open_files=64))
    assert res.ok, res
    opened = int(res.stdout.split()[1])
    assert opened < 64 and "24" in res.stdout.split()[2], res.stdout  # EMFILE below the 64 limit


def test_cpu_limit_is_the_one_set(ws: Path) -> None:
    res = run("while True:\n    pass", ws, Limits(wall_s=120, cpu_s=1))
    assert not res.ok and res.limit == "cpu_time", res
    assert res.cpu_s is not None and res.cpu_s < 3.0, res.cpu_s  # 1 s soft, 2 s hard: never 10 s


def test_every_layer_is_in_force_on_a_root_linux_machine(iso: dict[str, Any]) -> None:
    """Where every layer can exist (root, Landlock with scopes, cgroup memory), each must be in force:
    removing any layer from the code makes this fail instead of making the layer's tests skip."""
    import os as _os

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = int(libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))  # landlock_create_ruleset VERSION
    have_memcg = any(_os.path.exists(p) for p in ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                                   "/sys/fs/cgroup/cgroup.controllers"))
    if _os.geteuid() != 0:  # a normal user's layers, and the gaps named, are test_rootless.py's
        assert iso["privilege"] != "root" and iso["layers"]["uid_separation"] is not True, iso
        return
    if abi < 6 or not have_memcg:
        reason = "no Landlock ABI >= 6 or no memory cgroup on this root machine: layers may be missing"
        if _os.environ.get("CI"):
            pytest.fail(reason)
        print("SKIP:", reason)
        pytest.skip(reason)
    # root needs no user namespace (its code gets a dedicated host uid): that entry only says so
    assert iso["layers"]["user_namespace"] == "not needed as root (a dedicated host uid)"
    missing = {k: v for k, v in iso["layers"].items() if v is not True and k not in ("session_freezer", "user_namespace")}
    assert not missing and iso["level"] == "full", (missing, iso["warnings"])
    assert iso["layers"]["session_freezer"] == "cgroup freezer"
