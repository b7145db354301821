"""Vocabularies: how a benchmark names image operations, and the labels of a call under several.

A `Vocabulary` is a value a benchmark declares (`Benchmark.vocabularies()`): a `name` (the key
metrics and reports use), a `title` for its report table, its labels in the order its paper shows
them, and `labels(operation)`, the labels of one `Operation` (several when one operation is, say,
a crop and a resize; none when the vocabulary has no word for it). Labels come only from here:
generic code never spells one.

`classify_call(tool, arguments, vocabularies)` gives each vocabulary's labels of one call, each
label once, in order of first appearance. Calls are recognised once per (tool, arguments) string
through a bounded cache, whatever the vocabularies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from toolsight.tools.operations.calls import call_operations
from toolsight.tools.operations.operation import Operation

LabelFn = Callable[[Operation], tuple[str, ...]]


@dataclass(frozen=True)
class Vocabulary:
    """A named set of labels for image operations (see the module docstring)."""

    name: str
    title: str
    order: tuple[str, ...]
    labels: LabelFn

    def label_all(self, operations: Iterable[Operation]) -> list[str]:
        """The labels of `operations` in order of first appearance, each once."""
        out: list[str] = []
        for op in operations:
            out.extend(label for label in self.labels(op) if label not in out)
        return out


def classify_call(tool_name: str, arguments: Mapping[str, Any] | str | None,
                  vocabularies: Sequence[Vocabulary]) -> dict[str, list[str]]:
    """Vocabulary name -> labels of one call (fresh lists: callers may change them)."""
    ops = cached_operations(tool_name, arguments) if isinstance(arguments, str) else call_operations(
        tool_name, arguments)
    return {v.name: v.label_all(ops) for v in vocabularies}


@lru_cache(maxsize=512)  # small: keys hold whole argument strings (model code up to 5,000 chars)
def cached_operations(tool_name: str, arguments: str) -> tuple[Operation, ...]:
    """`call_operations` for a recorded call (arguments as their JSON string), cached."""
    return call_operations(tool_name, arguments)
