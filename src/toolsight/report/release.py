"""Giving freed memory back to the system between the phases of `toolsight run`.

After a run, the C heap holds the run's freed buffers (response bodies, encoded images, parsed
records) in free chunks the allocator keeps for reuse; the report and the trace viewer built next
would grow the process above the run's own peak. `release_memory` collects the cycles Python has
not freed yet and asks glibc to return the free pages (`malloc_trim`); it also fixes glibc's mmap and
trim thresholds at their 128 KiB defaults, so the report's large temporary buffers (the bootstrap's
resample arrays, a rendered page) are mapped and unmapped, not left in the heap as glibc's adaptive
threshold would after the first one is freed. Elsewhere (macOS, musl) it only collects.
docs/speed.md has the figures.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable

#: mallopt parameters (malloc.h) and the value both are fixed at (glibc's default, 128 KiB)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, THRESHOLD = -1, -3, 128 * 1024


@functools.cache
def _glibc() -> tuple[Callable[[int], int], Callable[[int, int], int]] | None:
    """glibc's `malloc_trim` and `mallopt`, or None where the C library has not both."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim, libc.mallopt
    except (OSError, AttributeError):
        return None


def release_memory() -> bool:
    """Collect garbage, fix the heap's thresholds and return its free pages; True on glibc."""
    gc.collect()
    fns = _glibc()
    if fns is None:
        return False
    trim, mallopt = fns
    mallopt(M_MMAP_THRESHOLD, THRESHOLD)
    mallopt(M_TRIM_THRESHOLD, THRESHOLD)
    trim(0)
    return True
