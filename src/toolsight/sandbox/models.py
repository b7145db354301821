"""Pydantic models at the sandbox boundary: the limits of a call, what a call returns, kernel outputs.

Every string that comes from a sandboxed child (stdout, stderr, errors, file names, tracebacks)
goes through `clean_text` before it lands in a model here: lone surrogates and undecodable bytes
become visible escapes, so a result can always be written as UTF-8 (records, reports).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


def clean_text(value: Any, limit: int | None = None) -> str:
    """`value` as valid UTF-8 text: lone surrogates (a non-UTF-8 file name, '\\ud800') become escapes."""
    text = value if isinstance(value, str) else str(value)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text[:limit] if limit is not None else text


class Limits(BaseModel):
    """Resource limits of one sandboxed call (all enforced per call; `session_cpu_s` per stateful session)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_s: float = Field(30.0, gt=0, description="wall-clock seconds before the process group is killed")
    cpu_s: int = Field(20, gt=0, description="RLIMIT_CPU seconds")
    memory_mb: int = Field(4096, gt=0, description="RLIMIT_AS in MiB (address space; a second layer)")
    cgroup_memory_mb: int = Field(2048, gt=0, description="cgroup memory limit in MiB: everything the code's "
                                                          "processes use, including tmpfs files and memfds")
    file_mb: int = Field(64, gt=0, description="RLIMIT_FSIZE in MiB (also caps stdout/stderr)")
    disk_mb: int = Field(512, gt=0, description="per-task workspace quota in MiB (the size of the tmpfs a call "
                                                "writes into)")
    disk_files: int = Field(4096, gt=16, description="files a call may create (tmpfs inodes)")
    open_files: int = Field(256, gt=8, description="RLIMIT_NOFILE")
    processes: int = Field(64, gt=0, description="RLIMIT_NPROC (per sandbox uid) / extra processes")
    output_bytes: int = Field(64 * 1024, gt=0, description="how much of stdout and stderr is read back")
    session_cpu_s: int = Field(600, gt=0, description="RLIMIT_CPU of a stateful session's long-lived child")

    def wire(self) -> dict[str, Any]:
        return self.model_dump()


class ExecResult(BaseModel):
    """The outcome of running code in the sandbox."""

    ok: bool
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    error: str | None = Field(None, description="the exception (type: message), or why the call failed")
    exit_code: int | None = None
    signal: str | None = None
    limit: str | None = Field(
        None, description="which limit ended it: wall_time, cpu_time, memory, file_size, disk, open_files, "
                          "killed, server_timeout"
    )
    duration_s: float = 0.0
    code_s: float | None = Field(None, description="time inside the code itself, as the child reported it")
    cpu_s: float | None = Field(None, description="CPU seconds the code used (from the kernel when it was "
                                                  "ended, else as the child reported)")
    files_read: list[str] = Field(default_factory=list)
    files_written: list[str] = Field(default_factory=list)
    files_skipped: list[dict[str, str]] = Field(default_factory=list, description="written but not kept, why")
    files_tracked: bool = Field(True, description="False when the read/write tracking overflowed: provenance "
                                                  "of this call is unknown")
    server_restarted: bool = False
    session_restarted: bool = False
    backend: str | None = Field(None, description="the sandbox backend that ran the call (forkserver, subprocess)")

    @field_validator("stdout", "stderr", "error", mode="before")
    @classmethod
    def _utf8(cls, v: Any) -> Any:
        return None if v is None else clean_text(v)

    @field_validator("files_read", "files_written", mode="before")
    @classmethod
    def _names(cls, v: Any) -> Any:
        return [clean_text(x, 512) for x in (v or [])][:4096]

    @field_validator("files_skipped", mode="before")
    @classmethod
    def _skipped(cls, v: Any) -> Any:
        out = []
        for item in (v or [])[:50]:
            if isinstance(item, dict):
                out.append({"name": clean_text(item.get("name", ""), 512), "reason": clean_text(item.get("reason", ""), 200)})
        return out

    def trace(self) -> dict[str, Any]:
        """The fields a trajectory records for the call."""
        return {
            "files_read": self.files_read,
            "files_written": self.files_written,
            "files_skipped": self.files_skipped,
            "files_tracked": self.files_tracked,
            "duration_s": self.duration_s,
            "cpu_s": self.cpu_s,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "limit": self.limit,
            "stdout_truncated": self.stdout_truncated,
            "stderr_truncated": self.stderr_truncated,
            "server_restarted": self.server_restarted,
            "backend": self.backend,
        }


class KernelOutput(BaseModel):
    """One output of a kernel cell, in order, as a Jupyter kernel would publish it."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["stream", "execute_result", "display_data", "error"]
    text: str | None = Field(None, description="stream text, the text/plain repr, or the formatted traceback")
    image: str | None = Field(None, description="workspace-relative file name of an image output")
    mime: str | None = None
    name: str | None = Field(None, description="stream name: stdout or stderr")

    @field_validator("text", "image", mode="before")
    @classmethod
    def _utf8(cls, v: Any) -> Any:
        return None if v is None else clean_text(v)


class KernelError(BaseModel):
    """An exception raised by a cell: its type, message and IPython's traceback lines (no ANSI codes)."""

    ename: str
    evalue: str
    traceback: list[str] = Field(default_factory=list)

    @field_validator("ename", "evalue", mode="before")
    @classmethod
    def _utf8(cls, v: Any) -> Any:
        return clean_text(v, 4000)

    @field_validator("traceback", mode="before")
    @classmethod
    def _lines(cls, v: Any) -> Any:
        return [clean_text(x, 20000) for x in (v or [])][:200]


class KernelResult(BaseModel):
    """What one `Kernel.execute` produced."""

    ok: bool
    stdout: str = ""
    stderr: str = ""
    outputs: list[KernelOutput] = Field(default_factory=list)
    error: KernelError | None = None
    execution_count: int | None = None
    timed_out: bool = False
    restarted: bool = Field(False, description="the kernel had died (limit, crash) and was started afresh")
    ended: bool = Field(False, description="this call ended the kernel (a limit, a crash): its state is gone and "
                                           "the next call starts a fresh kernel")
    exec: ExecResult = Field(description="the sandbox-level outcome: limits, files, durations")

    @field_validator("stdout", "stderr", mode="before")
    @classmethod
    def _utf8(cls, v: Any) -> Any:
        return clean_text(v)

    @property
    def images(self) -> list[str]:
        return [o.image for o in self.outputs if o.image]

    def stop_reason(self, limits: Limits | None = None) -> str | None:
        """Why the cell failed without a traceback of its own — the kernel was killed by a limit or a
        signal, or its process ended — in words for the model; None when the kernel reported the error
        itself (a traceback among the outputs) or the cell succeeded."""
        if self.ok or any(o.kind == "error" for o in self.outputs):
            return None
        ex = self.exec
        lim = limits or Limits()
        if self.timed_out or ex.limit == "wall_time":
            why = "the cell ran longer than its time limit and the kernel was stopped"
        elif ex.limit == "memory":
            why = (f"the kernel was killed by the memory limit ({lim.cgroup_memory_mb} MiB): the code used too "
                   "much memory")
        elif ex.limit == "cpu_time":
            why = f"the kernel was killed by the CPU time limit ({lim.session_cpu_s} s of CPU in all)"
        elif ex.signal:
            hint = " (an alarm the code set with signal.alarm went off)" if ex.signal == "SIGALRM" else ""
            why = f"the kernel process was killed by the signal {ex.signal}{hint}"
        elif ex.error:
            why = ex.error
        else:
            why = f"the kernel process ended (exit status {ex.exit_code})"
        if self.ended:
            why += "; its variables are gone and the next call starts a fresh kernel"
        return why
