"""PhysToolBench scoring: the official CoT answer parse and set comparison, plus a `corrected` mode.

Reference: EnVision-Research/PhysToolBench @ 3fbb2ea5, `src/inference.py:process_sample` (the CoT
answer is `response.split("### Answer")[1].split("'''")[0]` with ``` and newlines removed; the
no-CoT answer is the raw response) and `src/metric.py` (`normalize_answer`: comma-split, stripped,
non-empty strings as a set; correct iff the sets are equal).

Pure rules: `phystool_parse_cot(response, mode)`, `phystool_parse_no_cot(response, mode)`,
`phystool_normalize(answer, mode)`, `phystool_correct(pred, gold, mode)`.
`corrected` (docs/fidelity.md): the answer heading may be `## Answer`, `### Answers` or
`### Answer:`; the answer is the first paragraph under it (lines of numbers joined as a list, prose
after it dropped); quotes, `**`, brackets, code fences, a final `.`, an `Object ` prefix and
full-width commas are removed, `none` in any case is `None`, and non-ASCII digits are read as
digits. No-CoT answers get the same cleaning (but no parsing of sentences).

`PhysToolScorer(mode, setting)` scores a Task: gold ← `turn.answer` (the `correct_tool` string, a
list is joined with ', '); setting ← `turn.meta["setting"]` / `task.meta["setting"]` ('cot' or
'no_cot') else the scorer's own.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from toolsight.log.modes import ScorerMode
from toolsight.scoring.base import Score, ScoreContext
from toolsight.tasks.schema import Task

Mode = ScorerMode
Setting = Literal["cot", "no_cot"]
SETTINGS: tuple[Setting, ...] = ("cot", "no_cot")

_HEADING = re.compile(r"#{2,6}[ \t]*answers?\b[ \t]*[:：]?", re.IGNORECASE)
_NEXT_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]", re.MULTILINE)
_LISTY_LINE = re.compile(r"^[\s\d,，;\[\](){}\"'*`.]*$|^\W*none\W*$", re.IGNORECASE)


def phystool_parse_cot(response: str, mode: Mode = "official") -> str:
    """The CoT answer string ('' when there is no answer heading)."""
    if mode == "official":
        if "### Answer" not in response:
            return ""
        return response.split("### Answer")[1].split("'''")[0].replace("```", "").replace("\n", "")
    m = _HEADING.search(response)
    if m is None:
        return ""
    body = response[m.end():]
    nxt = _NEXT_HEADING.search(body)
    if nxt is not None:
        body = body[:nxt.start()]
    body = body.split("'''")[0].replace("```", "\n").replace("\r", "")
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", body) if p.strip()]
    if not paragraphs:
        return ""
    lines = [ln.strip() for ln in paragraphs[0].split("\n") if ln.strip()]
    listy: list[str] = []
    for ln in lines:
        if not _LISTY_LINE.match(ln):
            break
        listy.append(ln)
    return ", ".join(listy) if listy else lines[0]


def phystool_parse_no_cot(response: str, mode: Mode = "official") -> str:
    """The no-CoT answer: the raw response (official); code fences and line breaks → list (corrected)."""
    if mode == "official":
        return response
    text = response.replace("```", "\n")
    return ", ".join(ln.strip() for ln in text.splitlines() if ln.strip())


def _clean_item(item: str) -> str:
    s = item.strip()
    prev = None
    while prev != s:
        prev = s
        s = s.strip(" \t\r\n\"'`*[](){}").rstrip(".").strip()
        s = re.sub(r"^(?:object|tool|item)\s*#?\s*", "", s, flags=re.IGNORECASE)
    if s.casefold() == "none":
        return "None"
    if s.isdigit():
        return str(int(s))
    return s


def phystool_normalize(answer: Any, mode: Mode = "official") -> set[str]:
    """`metric.normalize_answer`: the set of non-empty stripped comma-separated items."""
    text = answer if isinstance(answer, str) else str(answer)
    if mode == "official":
        return {s.strip() for s in text.split(",") if s.strip()}
    text = re.sub(r"[，;、]", ",", text)
    return {c for c in (_clean_item(s) for s in text.split(",")) if c}


def phystool_correct(pred: Any, gold: Any, mode: Mode = "official") -> bool:
    """True iff the normalised sets are equal (as `compute_scores` counts)."""
    return phystool_normalize(pred, mode) == phystool_normalize(gold, mode)


def phystool_parse(response: str, setting: Setting, mode: Mode = "official") -> str:
    return phystool_parse_cot(response, mode) if setting == "cot" else phystool_parse_no_cot(response, mode)


class PhysToolScorer:
    """PhysToolBench scorer for one setting ('cot' or 'no_cot'); see the module docstring."""

    def __init__(self, mode: Mode = "official", setting: Setting = "cot") -> None:
        if mode not in ("official", "corrected"):
            raise ValueError(f"unknown scoring mode {mode!r}: use 'official' or 'corrected'")
        if setting not in SETTINGS:
            raise ValueError(f"unknown PhysToolBench setting {setting!r}: use 'cot' or 'no_cot'")
        self.mode: Mode = mode
        self.setting: Setting = setting
        self.name = "phystoolbench" if setting == "cot" else "phystoolbench-no-cot"

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        turn = task.turns[0]
        gold = turn.answer
        if gold is None:
            return Score(scorer=self.name, error=f"task {task.id}: no gold answer (correct_tool)")
        gold_text = ", ".join(gold) if isinstance(gold, list) else gold
        setting = turn.meta.get("setting") or task.meta.get("setting") or self.setting
        if setting not in SETTINGS:
            return Score(scorer=self.name, error=f"task {task.id}: meta.setting must be 'cot' or 'no_cot', "
                                                 f"got {setting!r}")
        response = responses[0] if responses else ""
        pred = phystool_parse(response, setting, self.mode)
        ok = phystool_correct(pred, gold_text, self.mode)
        return Score(value=1.0 if ok else 0.0, passed=ok, answer=pred or None, scorer=self.name,
                     explanation=f"{setting} {self.mode}: {sorted(phystool_normalize(pred, self.mode))} vs "
                                 f"{sorted(phystool_normalize(gold_text, self.mode))}",
                     details={"setting": setting, "mode": self.mode,
                              "normalized_pred": sorted(phystool_normalize(pred, self.mode)),
                              "normalized_gold": sorted(phystool_normalize(gold_text, self.mode))})


def make_scorer(mode: Mode = "official") -> PhysToolScorer:
    return PhysToolScorer(mode, "cot")


def _no_cot(mode: Mode) -> PhysToolScorer:
    return PhysToolScorer(mode, "no_cot")


#: the scorers this module provides, registered by `toolsight.scoring.registry`
SCORERS = {"phystoolbench": make_scorer, "phystoolbench-no-cot": _no_cot}
