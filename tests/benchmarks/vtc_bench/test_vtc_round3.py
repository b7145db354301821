"""Issue 27 in VTC-Bench's code tools: the forbidden-command check in linear time with the official
verdicts (item 1), argument caps, JSON5 parsed once and off the event loop (item 6), at most 8 saved
images read per call (item 5), a displayed image bomb never decoded (item 4, `serve_image`)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path
from typing import Any

import pytest

from enginekit import write_png_bomb
from toolsight.benchmarks.vtc_bench.tools import code as vtc_code
from toolsight.benchmarks.vtc_bench.tools.code import (
    FORBIDDEN_MESSAGE,
    FORBIDDEN_PATTERNS,
    MAX_ARGUMENT_CHARS,
    OFFICIAL_KERNEL_KEY,
    OfficialCodeInterpreter,
    VTCCodeInterpreter,
    forbidden_command,
    serve_image,
)
from toolsight.imaging import ImageRejected
from toolsight.tools.base import ArtifactStore, ToolContext

SRC = Path(__file__).resolve().parents[3] / "src"


def official(code: str) -> str | None:
    """`_check_forbidden_commands` as the reference wrote it."""
    for pattern in FORBIDDEN_PATTERNS:
        if re.search(pattern, code, re.IGNORECASE):
            return FORBIDDEN_MESSAGE.format(pattern=pattern)
    return None


CRAFTED = [
    "import subprocess\nsubprocess.run(['pip', 'install', 'opencv'])",
    "os.system('pip install numpy')", "os.system('conda install numpy')", "os_system(pip, install)",
    "SUBPROCESS.call('PIP INSTALL x')", "subprocess\npip install", "x = 'subprocess pip instal'",
    "!pip install x", "!pip  -q   install y", "!pip3 install z", "!pip3 -q install z", "!conda install q",
    "!apt-get install w", "!apt install w", "!yum install w", "!pipinstall", "! pip install",
    "ſubprocess.run('pip install')", "subprocess pıp ınstall", "subprocess.Popen(['conda', 'install'])",
    "print('pip install later'); import subprocess", "subprocess = 1; pip = 2; install = 3",
    "subprocess\r pip\r install", "a = 'subprocess' + 'pip' + 'install'", "",
]


def _corpus() -> list[str]:
    """Ordinary code: toolsight's own sources and part of the standard library, plus crafted lines."""
    files = sorted(SRC.rglob("*.py"))[:400] + sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[:150]
    return [f.read_text(encoding="utf-8", errors="replace") for f in files] + CRAFTED


def test_forbidden_verdicts_are_the_official_patterns_on_a_corpus_of_code() -> None:
    texts = _corpus()
    assert len(texts) > 300
    differ = [t[:80] for t in texts if forbidden_command(t) != official(t)]
    assert differ == []
    hits = [t for t in texts if official(t) is not None]
    assert len(hits) >= 15  # the corpus exercises the refusals too, each with its pattern named


def test_the_cubic_input_is_decided_at_once() -> None:
    """48 KB of "subprocess pip " took the official patterns about 20 minutes (12 KB: 34 s on the
    event loop). A child process decides it; the bound is a hang guard, not a speed test."""
    prog = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "from toolsight.benchmarks.vtc_bench.tools.code import forbidden_command\n"
            "print(forbidden_command('# ' + 'subprocess pip ' * 3200), "
            "forbidden_command('subprocess pip ' * 3200 + 'install') is not None)")
    out = subprocess.run([sys.executable, "-c", prog, str(SRC)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "True"]


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(store=ArtifactStore(tmp_path / "ws"), call_id="c1", task_id="t1")


def test_an_over_long_argument_string_is_refused_before_anything_runs(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    tool = OfficialCodeInterpreter()
    raw = '{"code": "' + "x = 1\\n" * (MAX_ARGUMENT_CHARS // 6 + 10) + '"}'
    res = asyncio.run(tool(raw, ctx))
    assert not res.ok
    assert f"the limit is {MAX_ARGUMENT_CHARS:,}" in res.text and f"{len(raw):,} characters" in res.text
    assert OFFICIAL_KERNEL_KEY not in ctx.state  # no kernel was started for it


def test_json5_reads_the_arguments_once_and_off_the_event_loop(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A long argument string that is not JSON: the reference parses it with JSON5 twice (5.6 s for 40 KB,
    on the event loop, before)."""
    seen: list[bool] = []
    real = vtc_code.json5.loads

    def spy(text: str, *a: Any, **k: Any) -> Any:
        seen.append(threading.current_thread() is threading.main_thread())
        return real(text, *a, **k)

    monkeypatch.setattr(vtc_code.json5, "loads", spy)
    raw = ('{"code": "import subprocess; subprocess.run([\'pip\', \'install\', \'x\'])", "pad": ['
           + "1," * 2000)  # not closed: JSON5 fails, the text itself is the code, and it is refused
    res = asyncio.run(OfficialCodeInterpreter()(raw, _ctx(tmp_path)))
    assert "Package installation commands are not allowed" in res.text and not res.ok
    assert seen == [False]  # once, in a worker thread


def test_the_toolsight_code_tool_reads_at_most_eight_saved_images(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    tool = VTCCodeInterpreter()
    code = ("import numpy as np, cv2\n"
            "img = np.zeros((4, 4, 3), np.uint8)\n"
            "for i in range(300):\n"
            "    img[0, 0] = (i % 256, i // 256, 7)\n"
            "    cv2.imwrite(f'out_{i:04d}.png', img)\n")

    async def go() -> Any:
        try:
            return await tool({"reasoning": "r", "code": code}, ctx)
        finally:
            kernel = ctx.state.get("vtc_code.kernel")
            if kernel is not None:
                await kernel.aclose()

    res = asyncio.run(go())
    assert len(res.artifacts) == 8
    assert len(ctx.store.all()) == 8  # only those were read and registered (it was all 300)
    assert "292 more image files were written and not read" in res.text
    assert len(res.text) < 1500, len(res.text)  # the names of 8, not of 300


def test_a_displayed_image_bomb_is_refused_before_it_is_decoded(tmp_path: Path) -> None:
    """`serve_image` re-saved a displayed 11300x11300 PNG of 0.5 MB through PIL (RSS +500 MiB, 13 s):
    Pillow only warns below 2x its pixel limit."""
    ws = tmp_path / "ws"
    serve = ws / "serve"
    serve.mkdir(parents=True)
    write_png_bomb(ws / ".display" / "cell1-1.png", 11_000, 11_000)
    with pytest.raises(ImageRejected, match="over the pixel limit"):
        serve_image(ws, ".display/cell1-1.png", "image/png", serve)
    assert list(serve.iterdir()) == []
