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

import gc

from toolsight.engine.memory import trim_heap, tune_malloc


def release_memory() -> bool:
    """Collect garbage and return the C heap's free pages to the system; True on glibc."""
    gc.collect()
    tune_malloc()
    return trim_heap()
