"""The end of `toolsight run` keeps memory down: freed heap pages go back to the system before the
report, and building a viewer does not import the HTTP server (docs/speed.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolsight.engine.memory import glibc
from toolsight.report.release import release_memory


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").is_file() or glibc() is None, reason="glibc on Linux only")
def test_release_memory_returns_the_freed_heap_pages() -> None:
    # 40,000 buffers of 2 KB (malloc'd, not pymalloc'd), then one kept above them: freeing the rest
    # leaves ~80 MB of free chunks under a live one, which glibc keeps until it is told to trim
    chunks = [bytearray(2000) for _ in range(40_000)]
    for c in chunks:
        c[0] = 1
    pin = bytearray(2000)
    del chunks
    before = _rss_kb()
    assert release_memory() is True
    after = _rss_kb()
    assert before - after > 40_000, f"RSS {before} kB -> {after} kB: the freed pages were not returned"
    assert pin[0] == 0


def test_building_a_viewer_does_not_import_the_http_server(tmp_path: Path) -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parents[1])!r})\n"
        "from runfixture import make_fixture_run\n"
        "from toolsight.report.viewer import build_viewer\n"
        f"build_viewer(make_fixture_run(__import__('pathlib').Path({str(tmp_path)!r}), n_tasks=3))\n"
        "print(sorted(m for m in ('http.server', 'socketserver') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
