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
import functools
import os
import sys
from typing import Any

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameter numbers (malloc.h)
THRESHOLD = 128 * 1024

_done = False


@functools.cache
def glibc() -> Any | None:
    """The C library when it is glibc (Linux), else None: musl and others have no such knobs."""
    if not sys.platform.startswith("linux") or not (name := ctypes.util.find_library("c")):
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    if not all(hasattr(libc, f) for f in ("gnu_get_libc_version", "mallopt", "malloc_trim")):
        return None
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.mallopt.restype = ctypes.c_int
    return libc


def tune_malloc() -> bool:
    """Fix glibc's trim and mmap thresholds (the module docstring), once per process; whether they were set."""
    global _done
    if _done:
        return False
    _done = True
    libc = glibc()
    if libc is None or any(k in os.environ for k in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_",
                                                     "MALLOC_TOP_PAD_")):
        return False
    return bool(libc.mallopt(M_TRIM_THRESHOLD, THRESHOLD)) and bool(libc.mallopt(M_MMAP_THRESHOLD, THRESHOLD))


def trim_heap() -> bool:
    """Return the C heap's free pages to the system (glibc's `malloc_trim`); whether it could."""
    libc = glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
