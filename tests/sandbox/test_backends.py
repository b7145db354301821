"""Sandbox backends by name: the registry, the environment default, which backend really runs the code,
and the subprocess backend's honesty (its report says unisolated; its environment and rlimits hold).

Which backend ran a call is read from the process itself: the subprocess backend's code is a child of
this very process (its parent pid is ours), a fork server's code is a child of the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import toolsight
from toolsight import sandbox
from toolsight.errors import ToolsightError
from toolsight.sandbox import KernelResult, Limits, UnknownSandboxBackend
from toolsight.tools.base import ArtifactStore, Toolbox, ToolResult
from toolsight.tools.python_tools import kernel_tools, stateful_code_tools

PARENT = "import os\nprint(os.getppid())"


def ran_here(parent_pid: str) -> bool:
    """The code's parent was this test process: it ran on the subprocess backend, not in a fork server."""
    return int(parent_pid.strip().splitlines()[-1]) == os.getpid()


def test_names_and_an_unknown_name() -> None:
    assert sandbox.backend_names() == ("forkserver", "subprocess")
    assert sandbox.get_backend().name == "forkserver"
    with pytest.raises(UnknownSandboxBackend) as info:
        sandbox.use_backend("docker")
    assert isinstance(info.value, ToolsightError)
    assert str(info.value) == "unknown sandbox backend 'docker'; the backends are: forkserver, subprocess"
    assert sandbox.get_backend().name == "forkserver"  # a bad name changes nothing
    sandbox.use_backend("subprocess")
    assert sandbox.get_backend().name == "subprocess"
    assert sandbox.get_backend() is sandbox.get_backend()  # one instance per process: its children are tracked


def _fresh_python(env_value: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != sandbox.ENV_VAR}
    env["PYTHONPATH"] = str(Path(toolsight.__file__).parents[1])
    if env_value is not None:
        env[sandbox.ENV_VAR] = env_value
    code = ("from toolsight import sandbox\n"
            "try:\n    print(sandbox.get_backend().name)\n"
            "except sandbox.UnknownSandboxBackend as e:\n    print('ERROR', e)\n")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_the_environment_variable_is_the_default_in_a_fresh_process() -> None:
    assert _fresh_python(None).stdout.strip() == "forkserver"
    assert _fresh_python("subprocess").stdout.strip() == "subprocess"
    bad = _fresh_python("nsjail")
    assert bad.stdout.strip() == ("ERROR unknown sandbox backend 'nsjail' (from the environment variable "
                                  "TOOLSIGHT_SANDBOX_BACKEND); the backends are: forkserver, subprocess"), bad.stderr


def test_the_subprocess_backend_says_it_is_not_isolated(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox.use_backend("subprocess")
    report = sandbox.isolation_report()
    assert report["backend"] == "subprocess" and report["isolated"] is False and report["level"] == "none"
    assert "NOT isolated" in report["warning"] and report["warning"] in report["warnings"]
    layers = report["layers"]
    for layer in ("uid_separation", "landlock_fs", "seccomp", "mount_namespace", "net_namespace", "cgroup_memory"):
        assert layers[layer] is False, layer
    # what does hold, as the probe child found it
    assert layers["clean_env"] is True and layers["rlimits"] is True and layers["setsid"] is True
    assert layers["network_closed"] is False  # it says so: a plain child can open sockets
    # and the other backend's report names itself
    fork = sandbox.get_pool().isolation()
    assert fork["backend"] == "forkserver" and fork["sandbox"] == "fork-server"
    # the scrubbed environment, seen by the code: no key of the harness
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-must-not-leak")
    res = asyncio.run(sandbox.run_code("import os\nprint(sorted(os.environ))\nprint(os.environ.get('OPENAI_API_KEY'))",
                                       ws, Limits(wall_s=20)))
    assert res.ok and res.backend == "subprocess", res
    keys = json.loads(res.stdout.splitlines()[0].replace("'", '"'))
    assert "OPENAI_API_KEY" not in keys and "LD_LIBRARY_PATH" not in keys and res.stdout.splitlines()[1] == "None"
    assert "sk-test" not in res.stdout


def test_the_subprocess_backends_limits_bite(ws: Path) -> None:
    sandbox.use_backend("subprocess")

    def run(code: str, **limits: Any) -> sandbox.ExecResult:
        return asyncio.run(sandbox.run_code(code, ws, Limits(**{"wall_s": 30, **limits})))

    cpu = run("while True:\n    pass", cpu_s=1)
    assert not cpu.ok and cpu.limit == "cpu_time" and cpu.signal == "SIGXCPU", cpu
    big = run("open('big.bin', 'wb').write(b'x' * (4 << 20))", file_mb=1)
    assert not big.ok and big.limit == "file_size" and "File too large" in (big.error or ""), big
    mem = run("import numpy as np\na = np.ones(2 << 30, np.uint8)", memory_mb=1024)
    assert not mem.ok and mem.limit == "memory" and "MemoryError" in (mem.error or ""), mem
    # the wall clock kills the whole process group: a grandchild started by the code dies with it
    slow = run("import subprocess\np = subprocess.Popen(['sleep', '600'])\nprint(p.pid, flush=True)\n"
               "import time\ntime.sleep(600)", wall_s=3)
    assert not slow.ok and slow.limit == "wall_time", slow
    grandchild = int(slow.stdout.split()[0])
    for _ in range(200):  # killed at once; its new parent may take a moment to reap it
        if not _running(grandchild):
            break
        asyncio.run(asyncio.sleep(0.05))
    assert not _running(grandchild)
    assert run("print(6 * 7)").stdout.strip() == "42"


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_chosen_backend_runs_the_kernel_the_session_and_the_code_tools(tmp_path: Path, backend: str) -> None:
    """use_backend(name) reaches open_kernel, open_session, run_code and the tools built on them."""
    store = ArtifactStore(tmp_path / "ws")
    tools = Toolbox([*stateful_code_tools(Limits(wall_s=30)), *kernel_tools(Limits(wall_s=30))], store, "t")

    async def go() -> tuple[KernelResult, sandbox.ExecResult, sandbox.ExecResult, list[ToolResult]]:
        k = sandbox.open_kernel(store.workspace, Limits(wall_s=30))
        s = sandbox.open_session(store.workspace, Limits(wall_s=30))
        try:
            kr = await k.execute("import os\nos.getppid()")
            sr = await s.exec(PARENT)
            rr = await sandbox.run_code(PARENT, store.workspace)
            tr = [await tools.call(name, {"code": PARENT})
                  for name in ("python_image_processing", "python_interpreter", "python_kernel")]
            assert k.backend == backend and k.isolation()["backend"] == backend
            return kr, sr, rr, tr
        finally:
            await k.aclose()
            await s.aclose()
            await tools.aclose()

    kr, sr, rr, tr = asyncio.run(go())
    here = backend == "subprocess"
    assert kr.ok and kr.exec.backend == backend and ran_here(kr.outputs[-1].text or "") is here
    assert sr.ok and sr.backend == backend and ran_here(sr.stdout) is here
    assert rr.ok and rr.backend == backend and ran_here(rr.stdout) is here
    for res in tr:
        assert res.ok and res.extra["backend"] == backend, res
        assert ran_here(res.text.split("Out[")[-1].split(":")[-1] if "Out[" in res.text else res.text.split("\n")[0]) is here


def test_the_benchmark_code_tools_run_on_the_chosen_backend(tmp_path: Path, backend: str) -> None:
    """TIR-Bench's and VTC-Bench's kernels and VisualToolBench's official code tool follow the choice too."""
    from toolsight.benchmarks.tir_bench.tools import TIRCodeInterpreter
    from toolsight.benchmarks.visualtoolbench.tools import OfficialTools, start_turn
    from toolsight.benchmarks.vtc_bench.tools.code import VTCCodeInterpreter
    from toolsight.tools.registry import build_tools

    store = ArtifactStore(tmp_path / "ws")
    Image.fromarray(np.full((20, 30, 3), 200, np.uint8)).save(tmp_path / "in.png")
    art = store.add_file(tmp_path / "in.png", source="input")
    tools = Toolbox([TIRCodeInterpreter(), *build_tools(["python"])], store, "t")
    vtc = Toolbox([VTCCodeInterpreter()], ArtifactStore(tmp_path / "vtc"), "t")
    official = OfficialTools(tools)
    turn = start_turn(tools, 0, art, "image_0.png")

    async def go() -> tuple[ToolResult, ToolResult, Any]:
        try:
            tir = await tools.call("code_interpreter", {"code": "import os\nos.getppid()"})
            vt = await vtc.call("code_interpreter", {"reasoning": "", "code": "import os\nos.getppid()"})
            vtb = await official.call("python_interpreter", {"code": PARENT}, "c1", turn)
            return tir, vt, vtb
        finally:
            await tools.aclose()
            await vtc.aclose()

    tir, vt, vtb = asyncio.run(go())
    here = backend == "subprocess"
    assert tir.ok and tir.extra["backend"] == backend, tir
    assert ran_here(tir.text.rsplit(": ", 1)[-1]) is here
    assert vt.ok and ran_here(vt.text.split("```")[1]) is here, vt.text
    assert vtb.extra["backend"] == backend and ran_here(vtb.observation["stdout"]) is here, vtb
