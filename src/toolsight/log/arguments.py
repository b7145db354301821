"""Decoding the JSON arguments of a model's tool call, bounded: the model writes them, so they may be
huge or nested thousands deep. Python's decoder raises RecursionError on deep nesting (not a
ValueError), and a value nested a few hundred deep breaks later steps that recurse (validation,
orjson's 255-level limit when the record is stored). Every place that decodes model-written
arguments goes through `load_arguments`, which turns both into an `ArgumentsError` whose text the
model can read and act on."""

from __future__ import annotations

import json
from typing import Any

#: the longest argument string decoded (characters); a tool's own caps (e.g. code length) come after
MAX_ARGUMENT_CHARS = 1_000_000
#: the deepest nesting of objects and lists accepted (tool parameters need a handful of levels)
MAX_ARGUMENT_DEPTH = 32


class ArgumentsError(ValueError):
    """Arguments that cannot be decoded: the message says why and what to send instead."""


def load_arguments(raw: str, *, max_chars: int = MAX_ARGUMENT_CHARS, max_depth: int = MAX_ARGUMENT_DEPTH) -> Any:
    """The decoded JSON value of `raw` (any JSON value; callers check it is an object)."""
    if len(raw) > max_chars:
        raise ArgumentsError(f"arguments are {len(raw):,} characters long, over the limit of {max_chars:,}; "
                             "send shorter arguments")
    try:
        val = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ArgumentsError(f"arguments are not valid JSON ({exc.msg} at column {exc.colno}); "
                             "send a JSON object matching the tool's parameters") from None
    except RecursionError:
        raise _too_deep(max_depth) from None
    check_depth(val, max_depth)
    return val


def check_depth(value: Any, max_depth: int = MAX_ARGUMENT_DEPTH) -> None:
    """Raise ArgumentsError if `value` (arguments already decoded, e.g. by a provider's SDK) nests
    deeper than `max_depth`."""
    if depth(value, limit=max_depth) > max_depth:
        raise _too_deep(max_depth)


def depth(value: Any, limit: int) -> int:
    """How deep `value` nests lists and objects (a scalar is 0), counted without recursion and
    stopping once past `limit`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((c, level) for c in children if isinstance(c, (dict, list)))
    return deepest


def _too_deep(max_depth: int) -> ArgumentsError:
    return ArgumentsError(f"arguments nest objects or lists more than {max_depth} levels deep; "
                          "send a flat JSON object matching the tool's parameters")
