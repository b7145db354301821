"""Progress as plain lines, for when stderr is not a terminal (a pipe, a log file, CI, a notebook).

A bar redrawn in place is noise in a log, and nothing at all is worse (a long `generate` looked
hung). `PlainProgress` prints one line when work starts, then one whenever another tenth of it is
done or `every` seconds have passed, and one at the end — never more than a few dozen lines.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class PlainProgress:
    """`update(done, total, status)` prints `label: 12/60 (20%) · status · 14 s` now and then."""

    def __init__(self, label: str, total: int | None = None, *, every: float = 15.0,
                 write: Callable[[str], None] | None = None, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.total = total
        self.every = every
        self._clock = clock
        self._t0 = clock()
        self._last_t = self._t0
        self._last_step = -1
        self._done = -1
        out = stream
        self._write = write or (lambda line: print(line, file=out or sys.stderr, flush=True))

    def _line(self, done: int, status: str) -> str:
        total = self.total
        count = f"{done}/{total} ({100 * done / total:.0f}%)" if total else f"{done}"
        tail = f" · {status}" if status else ""
        return f"{self.label}: {count}{tail} · {self._clock() - self._t0:.0f} s"

    def update(self, done: int, total: int | None = None, status: str = "") -> None:
        if total is not None:
            self.total = total
        if done == self._done:
            return
        self._done = done
        now = self._clock()
        step = int(10 * done / self.total) if self.total else done
        finished = bool(self.total) and done >= (self.total or 0)
        if step != self._last_step or now - self._last_t >= self.every or finished:
            self._last_step, self._last_t = step, now
            self._write(self._line(done, status))

    def start(self, what: str) -> None:
        self._write(f"{self.label}: {what}")
