"""A deterministic rubric checker that stands in for the LLM judge on generated tasks.

Generated tasks carry a machine check for each objective rubric (`turn.meta["rubric_checks"][rubric_id]`):

- `{"contains": ["16", "dollars"]}` — every string appears in the answer (case-insensitive,
  whitespace collapsed);
- `{"any": ["Americano", "americano coffee"]}` — at least one appears;
- `{"number": 16, "tol": 0.01}` — some number written in the answer is within `tol` of the value;
- `{"not_contains": ["17"]}` — none appears.

Several keys in one check must all hold. `CheckJudge` is a `Model` bound to one task: it reads the
rubric criterion and model answer out of the judge prompt, applies the rubric's check and replies
like a judge (`{"explanation": …, "judge_result": "Met" | "Not Met"}`), so every pooling and
critical-rubric rule of the rubric scorer applies unchanged and the verdicts are recorded as judge
calls of model `rubric-check`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart
from toolsight.tasks.schema import Task

CHECK_KEYS = ("contains", "any", "number", "not_contains")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_QUESTION = re.compile(r"\*\*Question:\*\* (.*?)  \n\n\s*\*\*Golden Answer:\*\*", re.DOTALL)
_CRITERION = re.compile(r"\*\*Rubric Criterion:\*\* (.*?)  \n\n\s*\*\*Model Answer:\*\*", re.DOTALL)
_ANSWER = re.compile(r"\*\*Model Answer:\*\* (.*?)  \n\n\s*### Important Notes:", re.DOTALL)


def _norm(s: str) -> str:
    return " ".join(s.casefold().split())


def numbers_in(text: str) -> list[float]:
    out: list[float] = []
    for m in _NUMBER.finditer(text):
        try:
            out.append(float(m.group(0).replace(",", "")))
        except ValueError:
            continue
    return out


def check_answer(check: Mapping[str, Any], answer: str) -> tuple[bool, str]:
    """(met, why) for one rubric check on an answer."""
    text = _norm(answer)
    why: list[str] = []
    ok = True
    for s in check.get("contains") or []:
        if _norm(str(s)) not in text:
            ok = False
            why.append(f"missing {s!r}")
    anys = [str(s) for s in check.get("any") or []]
    if anys and not any(_norm(s) in text for s in anys):
        ok = False
        why.append(f"none of {anys!r}")
    for s in check.get("not_contains") or []:
        if _norm(str(s)) in text:
            ok = False
            why.append(f"contains {s!r}")
    if "number" in check:
        target = float(check["number"])
        tol = float(check.get("tol", 1e-6))
        if not any(abs(x - target) <= tol for x in numbers_in(answer)):
            ok = False
            why.append(f"no number within {tol} of {target:g}")
    return ok, "; ".join(why) or "all checks hold"


def has_checks(task: Task) -> bool:
    """True when every rubric of the task has a usable check."""
    for turn in task.turns:
        checks = turn.meta.get("rubric_checks")
        for r in turn.rubrics:
            if not isinstance(checks, Mapping) or not isinstance(checks.get(r.id or ""), Mapping):
                return False
    return any(t.rubrics for t in task.turns)


class CheckJudge(Model):
    """A judge `Model` for one task that answers the rubric judge prompt from the rubrics' checks."""

    def __init__(self, task: Task) -> None:
        super().__init__("rubric-check")
        self.checks: dict[tuple[str, str], Mapping[str, Any]] = {}
        for turn in task.turns:
            checks = turn.meta.get("rubric_checks")
            if not isinstance(checks, Mapping):
                continue
            for r in turn.rubrics:
                c = checks.get(r.id or "")
                if isinstance(c, Mapping):
                    self.checks[(turn.prompt, r.text)] = c

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        prompt = messages[-1].text if messages else ""
        q, c, a = _QUESTION.search(prompt), _CRITERION.search(prompt), _ANSWER.search(prompt)
        if not (q and c and a):
            raise ValueError("rubric-check: the prompt is not the rubric judge prompt")
        check = self.checks.get((q.group(1), c.group(1)))
        if check is None:
            raise ValueError(f"rubric-check: no check for rubric {c.group(1)[:60]!r}")
        met, why = check_answer(check, a.group(1))
        reply = json.dumps({"explanation": f"deterministic check: {why}", "judge_result": "Met" if met else "Not Met"})
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text=reply)]), model=self.name)
