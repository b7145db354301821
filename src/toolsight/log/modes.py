"""The two mode pairs every benchmark has, as one Literal type each, and their checks.

A loop runs `official` (the benchmark driver's requests, exactly) or `toolsight` (our loop); a scorer
runs `official` (the reference scoring code, bugs included) or `corrected`. Every option, setting,
manifest field and scorer factory uses these two types, and a user's value is checked once by
`loop_mode` / `scorer_mode` (one clear message naming the flag).
"""

from __future__ import annotations

from typing import Literal

from toolsight.errors import ToolsightError

LoopMode = Literal["official", "toolsight"]
ScorerMode = Literal["official", "corrected"]
LOOP_MODES: tuple[LoopMode, ...] = ("official", "toolsight")
SCORER_MODES: tuple[ScorerMode, ...] = ("official", "corrected")


class ModeError(ToolsightError, ValueError):
    """A loop or scorer mode that does not exist; the message names the flag and the choices."""


def loop_mode(value: str, flag: str = "--loop") -> LoopMode:
    """`value` as a loop mode, or a ModeError naming `flag`."""
    if value not in LOOP_MODES:
        raise ModeError(f"{flag} {value!r}: use 'official' or 'toolsight'")
    return value


def scorer_mode(value: str, flag: str = "--scorer-mode") -> ScorerMode:
    """`value` as a scorer mode, or a ModeError naming `flag`."""
    if value not in SCORER_MODES:
        raise ModeError(f"{flag} {value!r}: use 'official' or 'corrected'")
    return value
