"""glibc's trim threshold fixed for a run (engine/memory.py): freed request bodies go back to the system.

Checked with glibc's own accounting (`mallinfo2().hblks`, the blocks served by their own `mmap`), in
a fresh interpreter each time: by default glibc raises its threshold when the first such block is
freed, so the next block of the same size comes from the heap; tuned, it stays mapped on its own.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = r"""
import ctypes, ctypes.util, sys
from toolsight.engine.memory import tune_malloc
tuned = tune_malloc() if sys.argv[1] == "tune" else False
libc = ctypes.CDLL(ctypes.util.find_library("c"))

class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                "fsmblks", "uordblks", "fordblks", "keepcost")]

libc.mallinfo2.restype = Info
first = bytes(400_000)      # a request body: its own mmap
del first                   # freed: glibc's default raises its mmap threshold to 400 KB now
before = libc.mallinfo2().hblks
second = bytearray(300_000)
print(tuned, libc.mallinfo2().hblks > before)
"""


def _probe(mode: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    r = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env={**clean, **env},
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_a_tuned_process_keeps_a_second_large_body_mapped_on_its_own() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's malloc: Linux only")
    assert _probe("default") == "False False"  # the default: the second body is on the heap
    assert _probe("tune") == "True True"


def test_the_users_own_malloc_settings_are_left_alone() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's malloc: Linux only")
    assert _probe("tune", MALLOC_TOP_PAD_="0").startswith("False")
