"""The fork server's layers in the three situations a harness runs in, as one table.

A harness runs as root, as a normal user whose kernel allows unprivileged user namespaces (most
distributions), or as a normal user without them. The server probes what it got (`client.summarize`);
this table says what each situation gets, and why a layer is missing where it is. It is shown in the
isolation report (`situations`, beside the layers the probe found) and, rendered by `markdown()`, in
docs/sandbox.md; a test keeps both in step with the probe.

Each cell is `yes` (the layer is in force), or starts with `no` / `partial` followed by what stands in
for it; `if delegated` marks cgroups a normal user has only where a cgroup v2 subtree is delegated to it.
"""

from __future__ import annotations

from typing import Literal

#: the columns: the values of the isolation report's `privilege`
SITUATIONS = ("root", "normal user, user namespaces", "normal user, no user namespaces")
Situation = Literal["root", "normal user, user namespaces", "normal user, no user namespaces"]

_NO_NS = "no: the kernel allows no user namespace"

#: report layer -> (what it is, one cell per situation in the order of SITUATIONS)
TABLE: dict[str, tuple[str, tuple[str, str, str]]] = {
    "clean_env": ("clean environment (no API keys)", ("yes", "yes", "yes")),
    "rlimits": ("rlimits: CPU, address space, file size, files, processes", ("yes", "yes", "yes")),
    "setsid": ("own session and process group (wall clock kills the group)", ("yes", "yes", "yes")),
    "no_new_privs": ("no_new_privs", ("yes", "yes", "yes")),
    "seccomp_allowlist": ("seccomp syscall allowlist", ("yes", "yes", "yes")),
    "landlock_fs": ("Landlock file system rules", ("yes", "yes", "yes")),
    "capabilities_dropped": ("capabilities dropped", ("yes", "yes (those of its user namespace)",
                                                      "no: none held")),
    "uid_separation": ("a uid of its own", (
        "yes: a dedicated host uid", "partial: uid 65534 in a user namespace of its own, the harness's uid on "
        "the host", "no: the harness user")),
    "user_namespace": ("user namespace", ("no: not needed (a dedicated host uid)", "yes", _NO_NS)),
    "mount_namespace": ("mount namespace + read-only skeleton root", ("yes", "yes", _NO_NS)),
    "net_namespace": ("network namespace (no interface but its own loopback)", ("yes", "yes", _NO_NS)),
    "ipc_namespace": ("IPC namespace", ("yes", "yes", _NO_NS)),
    "pid_namespace": ("PID namespace (the server is its pid 1)", ("yes", "yes", _NO_NS)),
    "tmpfs_workspace": ("tmpfs workspace with the disk quota", ("yes", "yes", _NO_NS)),
    "cgroup_pids": ("pids cgroup", ("yes", "if delegated, else no: RLIMIT_NPROC bounds the processes",
                                    "if delegated, else no: RLIMIT_NPROC bounds the processes")),
    "cgroup_memory": ("memory cgroup", ("yes", "if delegated, else no: RLIMIT_AS bounds each process",
                                        "if delegated, else no: RLIMIT_AS bounds each process")),
}


def expected(situation: str) -> dict[str, str]:
    """The cells of one situation's column, by report layer."""
    col = SITUATIONS.index(situation)
    return {key: cells[col] for key, (_, cells) in TABLE.items()}


def in_force(cell: str, delegated: bool = False) -> bool:
    """Whether a cell says the layer holds (`if delegated` cells hold where a cgroup is delegated)."""
    return cell.startswith("yes") or (delegated and cell.startswith("if delegated"))


def markdown() -> str:
    """The table as docs/sandbox.md shows it."""
    lines = ["| layer | " + " | ".join(SITUATIONS) + " |", "|---" * (len(SITUATIONS) + 1) + "|"]
    for key, (what, cells) in TABLE.items():
        lines.append(f"| {what} (`{key}`) | " + " | ".join(cells) + " |")
    return "\n".join(lines)
