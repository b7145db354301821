"""Hand freed request bodies back to the system at once (glibc's malloc, Linux).

A tool loop's request carries the task's images in base64: a few hundred KB per request, 32 or more
in flight. glibc serves such a block with its own `mmap` (returned on `free`) only until the first
one is freed; then it raises its threshold to that size, and the next bodies come from the heap,
whose freed top it keeps. Fixing both thresholds at 128 KiB (glibc's starting values; setting them
turns the adjustment off, and sets back one raised earlier in the process, e.g. by imports): bodies
stay mapped on their own and go back when sent. The crop workload of
`bench/engine.py` peaks ~4 MB lower (issue 29 item 5; docs/speed.md). Nothing is changed when the user
set glibc's own `MALLOC_TRIM_THRESHOLD_` / `MALLOC_MMAP_THRESHOLD_`, or on another C library.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameter numbers (malloc.h)
THRESHOLD = 128 * 1024

_done = False


def tune_malloc() -> bool:
    """Fix glibc's trim and mmap thresholds (the module docstring), once per process; whether they were set."""
    global _done
    if _done:
        return False
    _done = True
    if not sys.platform.startswith("linux") or any(
            k in os.environ for k in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")):
        return False
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
        if not hasattr(libc, "gnu_get_libc_version"):  # musl and others: their malloc has no such knob
            return False
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_TRIM_THRESHOLD, THRESHOLD)) and bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD))
