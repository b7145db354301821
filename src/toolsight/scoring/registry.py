"""Scorers by name: `get_scorer("choice", mode="official")`, and `register_scorer` for new ones.

A factory takes the mode ("official" or "corrected") and returns a Scorer. Scorers with no
official quirks return the same scorer in both modes. The generic scorers are listed once in
`_load` by plain import; a benchmark's own scorers are declared by its `Benchmark.scorers()` and
found through `toolsight.benchmarks.registry.get_scorer`, which looks here first. Third-party
packages add scorers through the `toolsight.scorers` entry-point group
(`name = "package.module:factory"`).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from toolsight.errors import ToolsightError
from toolsight.log.modes import ScorerMode
from toolsight.scoring.base import Scorer

Mode = ScorerMode
ScorerFactory = Callable[[Mode], Scorer]
MODES: tuple[Mode, ...] = ("official", "corrected")

_FACTORIES: dict[str, ScorerFactory] = {}
_loaded = False


class UnknownScorer(ToolsightError, KeyError):
    """A scorer name or mode that does not exist; the message lists the known ones."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownScoringMode(ToolsightError, ValueError):
    """A scoring mode other than 'official' or 'corrected'."""


def register_scorer(name: str, factory: ScorerFactory, *, replace: bool = False) -> None:
    """Make `factory(mode)` available as `name`. Re-registering a name needs `replace=True`."""
    if not name or name != name.strip():
        raise ValueError(f"scorer name must be a non-empty string without surrounding spaces, got {name!r}")
    if name in _FACTORIES and not replace and _FACTORIES[name] is not factory:
        raise ValueError(f"scorer {name!r} is already registered (pass replace=True to override it)")
    _FACTORIES[name] = factory


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from toolsight.scoring.generic import (
        ChoiceScorer,
        ExactMatchScorer,
        LabelSetScorer,
        NumericScorer,
        PositionScorer,
        SetIoUScorer,
    )
    from toolsight.scoring.rubric import RubricScorer
    from toolsight.scoring.semantic import SemanticJudgeScorer

    register_scorer("exact", lambda mode: ExactMatchScorer(normalize=True))
    register_scorer("exact_strict", lambda mode: ExactMatchScorer(normalize=False))
    register_scorer("choice", lambda mode: ChoiceScorer())
    register_scorer("numeric", lambda mode: NumericScorer())
    register_scorer("set_iou", lambda mode: SetIoUScorer())
    register_scorer("position", lambda mode: PositionScorer())
    register_scorer("label_set", lambda mode: LabelSetScorer())
    register_scorer("semantic_judge", lambda mode: SemanticJudgeScorer(mode=mode))
    register_scorer("rubric", lambda mode: RubricScorer(mode=mode))
    for ep in entry_points(group="toolsight.scorers"):
        register_scorer(ep.name, ep.load(), replace=True)


def scorer_names() -> list[str]:
    """Every registered scorer name, sorted."""
    _load()
    return sorted(_FACTORIES)


def get_scorer(name: str, mode: str = "official") -> Scorer:
    """The scorer called `name` in `mode`; an UnknownScorer naming the choices for a bad mode / name."""
    if mode not in MODES:
        raise UnknownScoringMode(f"unknown scoring mode {mode!r}: use 'official' or 'corrected'")
    _load()
    if name not in _FACTORIES:
        raise UnknownScorer(f"unknown scorer {name!r}; known scorers: {', '.join(sorted(_FACTORIES))}")
    return _FACTORIES[name](mode)
