"""Run sandbox tests as an unprivileged user that this run makes up (run by root; CI runs it in `make test`).

    python tests/sandbox/unprivileged.py [pytest args...]   # no test paths given: the sandbox attack tests

The tests run as uid `TOOLSIGHT_TEST_UID` (default 61234; it needs no account) with no supplementary
groups and no capabilities, so the sandbox confines model code the way it does for a researcher's
normal account (docs/sandbox.md, "Three situations"). Nothing on the machine is changed: the
interpreter, the venv and the checkout often sit under a folder only root may enter (pyenv under
/root, mode 700), so this script makes a private mount namespace of its own and, there only, covers
each such folder with an empty tmpfs that holds read-only binds of just the paths the tests need.
The user gets a fresh writable temp folder; everything else it may only read.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_TESTS = ["tests/sandbox/test_sandbox_attacks.py", "tests/sandbox/test_sandbox_round2.py",
                 "tests/sandbox/test_sandbox_round3.py", "tests/sandbox/test_rootless.py"]
CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_BIND, MS_REC, MS_PRIVATE, MS_REMOUNT = 1, 2, 4096, 16384, 1 << 18, 32
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if LIBC.mount(src.encode() if src else None, target.encode(), fstype.encode() if fstype else None, flags,
                  data.encode() if data else None) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"mount {target}: {os.strerror(e)}")


def _closed_ancestor(path: Path) -> Path | None:
    """The highest folder above `path` that others may not enter (no o+x), or None."""
    for anc in reversed(path.parents):
        if anc != Path("/") and not os.stat(anc).st_mode & stat.S_IXOTH:
            return anc
    return None


def open_up(needed: list[Path], hold: Path) -> None:
    """In this (private) mount namespace: make every path of `needed` reachable for others."""
    for _ in range(16):  # each round opens one closed folder; a path may have several
        closed = {a for p in needed if (a := _closed_ancestor(p)) is not None}
        if not closed:
            return
        top = min(closed, key=lambda a: len(a.parts))
        keep = sorted({p.relative_to(top).parts[0] for p in needed if top in p.parents})
        saved = hold / f"h{len(list(hold.iterdir()))}"
        saved.mkdir()
        for name in keep:  # hold the children the tests need before the folder is covered
            (saved / name).mkdir()
            _mount(str(top / name), str(saved / name), None, MS_BIND | MS_REC)
        _mount("tmpfs", str(top), "tmpfs", MS_NOSUID, "mode=0755,size=1m")
        for name in keep:
            (top / name).mkdir()
            _mount(str(saved / name), str(top / name), None, MS_BIND | MS_REC)
    raise RuntimeError(f"could not open the paths {needed} for an unprivileged user")


def enter_open_namespace() -> Path:
    """As root: move this process into a private mount namespace where the interpreter, the venv and the
    checkout are reachable for other users (bench/sandbox.py uses it too); the folder holding the binds."""
    needed = [Path(os.path.realpath(sys.executable)), Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(),
              REPO, Path(sysconfig.get_paths()["purelib"]).resolve()]
    if LIBC.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    hold = Path(tempfile.mkdtemp(prefix="toolsight-unpriv-hold-"))
    _mount("tmpfs", str(hold), "tmpfs", 0, "mode=0700,size=1m")
    open_up(needed, hold)
    return hold


def main(argv: list[str]) -> int:
    if os.geteuid() != 0:
        print("tests/sandbox/unprivileged.py: not root, so the tests already run unprivileged; nothing to do")
        return 0
    uid = int(os.environ.get("TOOLSIGHT_TEST_UID", "61234"))
    venv = Path(sys.prefix)
    hold = enter_open_namespace()
    tmp = Path(tempfile.mkdtemp(prefix="toolsight-unpriv-"))
    os.chown(tmp, uid, uid)
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "CI", "TERM", "TOOLSIGHT_SANDBOX_BACKEND")}
    env.update({"HOME": str(tmp), "TMPDIR": str(tmp), "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONPATH": str(REPO / "src"), "TOOLSIGHT_CACHE": str(tmp / "cache")})
    given_paths = [a for a in argv if a.startswith("tests") or a.endswith(".py")]
    args = argv if given_paths else [*argv, *DEFAULT_TESTS]
    cmd = [str(venv / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=-ra",
           "--basetemp", str(tmp / "pytest"), *args]
    print(f"running as uid {uid} (no groups, no capabilities): {' '.join(cmd)}", flush=True)
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(REPO)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.execve(cmd[0], cmd, env)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(tmp, ignore_errors=True)
    LIBC.umount2(str(hold).encode(), 2)  # MNT_DETACH: the held binds go with it
    os.rmdir(hold)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
