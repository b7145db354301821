"""A real Ray cluster for the Ray executor's tests: a head node and one worker node, started with
`ray start`, inside a network namespace of their own in which only the loopback interface exists.

Why a namespace: Ray replaces 127.0.0.1 by the machine's outward address when it starts a
multi-node cluster; in a namespace with nothing but `lo`, 127.0.0.1 is the only address there is,
so every Ray process, the scripted model server and the driver listen and talk on 127.0.0.1 only.
The namespace is held by a `sleep` process (`unshare --net`); everything else joins it with
`nsenter`. Stopping kills every process in the namespace, then the holder — no `ray stop`, which
would also stop Ray processes that are not ours.

Needs root, util-linux's unshare/nsenter and Ray (`make test` installs the `ray` extra): without
them the tests skip locally with the reason, and fail under CI.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

#: brings `lo` up from inside the namespace (SIOCGIFFLAGS / SIOCSIFFLAGS, IFF_UP): no iproute2 needed
_LO_UP = (
    "import fcntl, socket, struct\n"
    "s = socket.socket()\n"
    "flags = struct.unpack('16sH14s', fcntl.ioctl(s, 0x8913, struct.pack('16sH14s', b'lo', 0, b'')))[1]\n"
    "fcntl.ioctl(s, 0x8914, struct.pack('16sH14s', b'lo', flags | 1, b''))\n"
)


def missing() -> str | None:
    """Why a cluster cannot be started here, or None."""
    if os.geteuid() != 0:
        return "the Ray cluster tests need root (a network namespace of their own)"
    for tool in ("unshare", "nsenter"):
        if shutil.which(tool) is None:
            return f"the Ray cluster tests need util-linux's `{tool}`"
    try:
        import ray  # noqa: F401
    except ImportError:
        return "Ray is not installed: pip install -e '.[ray]' (make test installs it)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LoopbackCluster:
    """See the module docstring. `run(argv)` runs a command inside the namespace."""

    def __init__(self, cpus_per_node: int = 1) -> None:
        self.cpus_per_node = cpus_per_node
        self.home = Path(tempfile.mkdtemp(prefix="tsray-"))  # short: Ray's socket paths must stay < 108 bytes
        self.holder: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.bin = Path(sys.executable).parent

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of every process in the namespace: a HOME of its own (a token file in the
        user's ~/.ray would switch Ray's authentication on), no usage reports."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(HOME=str(self.home), RAY_USAGE_STATS_ENABLED="0", TOOLSIGHT_ROUTE_CACHE="0", **extra)
        return env

    def prefix(self) -> list[str]:
        assert self.holder is not None
        return ["nsenter", f"--net=/proc/{self.holder.pid}/ns/net", "--"]

    def run(self, argv: Sequence[str], timeout: float = 180, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.prefix(), *argv], env=self.env(**env), capture_output=True, text=True,
                              timeout=timeout, check=False)

    def popen(self, argv: Sequence[str], **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen([*self.prefix(), *argv], env=self.env(**env), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def start(self) -> LoopbackCluster:
        self.holder = subprocess.Popen(["unshare", "--net", "sleep", "infinity"])
        deadline = time.monotonic() + 10
        while self._netns() == self._netns(os.getpid()) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the holder is inside its new namespace
        done = self.run([sys.executable, "-c", _LO_UP], timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"cannot bring lo up in the namespace: {done.stderr}")
        self.port = _free_port()
        tmp = str(self.home / "r")
        common = ["--node-ip-address", "127.0.0.1", "--num-cpus", str(self.cpus_per_node), "--temp-dir", tmp,
                  "--disable-usage-stats"]
        head = self.run([str(self.bin / "ray"), "start", "--head", "--port", str(self.port),
                         "--include-dashboard", "false", *common])
        if head.returncode != 0:
            raise RuntimeError(f"ray start --head failed:\n{head.stdout}\n{head.stderr}")
        node = self.run([str(self.bin / "ray"), "start", "--address", self.address, *common])
        if node.returncode != 0:
            raise RuntimeError(f"ray start (worker node) failed:\n{node.stdout}\n{node.stderr}")
        return self

    def _netns(self, pid: int | None = None) -> str:
        p = pid if pid is not None else (self.holder.pid if self.holder else os.getpid())
        try:
            return os.readlink(f"/proc/{p}/ns/net")
        except OSError:
            return ""

    def members(self) -> list[int]:
        """Every process in the namespace except the holder."""
        ns = self._netns()
        own = {self.holder.pid if self.holder else -1}
        out = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) not in own:
                with contextlib.suppress(OSError):
                    if os.readlink(entry / "ns" / "net") == ns:
                        out.append(int(entry.name))
        return out

    def stop(self) -> None:
        if self.holder is None:
            return
        for _ in range(3):
            pids = self.members()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.3)
        self.holder.kill()
        self.holder.wait()
        self.holder = None
        shutil.rmtree(self.home, ignore_errors=True)


@contextlib.contextmanager
def loopback_cluster(cpus_per_node: int = 1) -> Iterator[LoopbackCluster]:
    cluster = LoopbackCluster(cpus_per_node)
    try:
        yield cluster.start()
    finally:
        cluster.stop()
