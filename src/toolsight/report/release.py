"""Giving freed memory back to the system between the phases of `toolsight run`.

After a run, the C heap holds the run's freed buffers (response bodies, encoded images, parsed
records) in free chunks the allocator keeps for reuse; the report and the trace viewer built next
would grow the process above the run's own peak. `release_memory` collects the cycles Python has
not freed yet and asks glibc to return the free pages (`malloc_trim`). It also fixes glibc's mmap
and trim thresholds (`engine.memory.tune_malloc`, which a run has normally done already), so the
report's large temporaries (the bootstrap's resample arrays) are unmapped when freed. Elsewhere
(macOS, musl) it only collects. docs/speed.md has the figures.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable

from toolsight.engine.memory import tune_malloc


@functools.cache
def _glibc() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None where the C library has none."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def release_memory() -> bool:
    """Collect garbage and return the C heap's free pages to the system; True on glibc."""
    gc.collect()
    trim = _glibc()
    if trim is None:
        return False
    tune_malloc()
    trim(0)
    return True
