"""Scoring a count: the model's answer against the gold count (or the letter of the option holding it).

`official`: the text inside the last `<answer>…</answer>`, stripped, must be the gold count or its
option letter; a reply without the tag has no answer. `corrected` forgives formatting only: without
a tag the last non-empty line is read, a letter may be written `(B)` or `B.`, a count may carry words
(`3 circles`). `shapes-near` (a named scorer, `toolsight score RUN --scorer shapes-near`) gives
partial credit for a near count: 1 − |answer − gold| / max(gold, 1), at least 0.
"""

from __future__ import annotations

import re

from toolsight.log.modes import ScorerMode
from toolsight.scoring.base import Score, ScoreContext
from toolsight.tasks.schema import Task, Turn

_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_LETTER = re.compile(r"^\(?([A-Z])\)?[.:)]?$")
_NUMBER = re.compile(r"-?\d+")


def extract(response: str, mode: ScorerMode) -> str | None:
    """The answer text of a reply (None: no answer)."""
    tags = _TAG.findall(response)
    if tags:
        return str(tags[-1]).strip() or None
    if mode == "official":
        return None
    lines = [ln.strip() for ln in response.splitlines() if ln.strip()]
    return lines[-1] if lines else None


def read_count(answer: str, turn: Turn, mode: ScorerMode) -> int | None:
    """The count an answer names: a number, or an option letter (None: neither)."""
    text = answer.strip()
    letter = _LETTER.match(text) if mode == "corrected" else re.fullmatch(r"([A-Z])", text)
    if letter and turn.options and letter.group(1) in turn.options:
        text = turn.options[letter.group(1)]
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    found = _NUMBER.search(text) if mode == "corrected" else None
    return int(found.group()) if found else None


class ShapesScorer:
    """Exact count (see the module docstring); `near=True`: partial credit for a near count."""

    def __init__(self, mode: ScorerMode = "official", near: bool = False) -> None:
        self.mode: ScorerMode = mode
        self.near = near
        self.name = "shapes-near" if near else "shapes"

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        turn = task.turns[0]
        gold = int(str(turn.answer))
        answer = extract(responses[0] if responses else "", self.mode)
        count = read_count(answer, turn, self.mode) if answer is not None else None
        if count is None:
            return Score(value=0.0, passed=False, answer=answer, scorer=self.name,
                         explanation="no answer" if answer is None else f"{answer!r} names no count")
        value = float(count == gold)
        if self.near:
            value = max(0.0, 1.0 - abs(count - gold) / max(gold, 1))
        return Score(value=value, passed=count == gold, answer=str(count), scorer=self.name,
                     explanation=f"{count} vs gold {gold}", details={"mode": self.mode, "count": count})


def exact(mode: ScorerMode) -> ShapesScorer:
    return ShapesScorer(mode)


def near(mode: ScorerMode) -> ShapesScorer:
    return ShapesScorer(mode, near=True)
