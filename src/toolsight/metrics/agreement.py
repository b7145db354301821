"""Judge-vs-human agreement on rubric verdicts (VisualToolBench App. B.7).

Human grades come as JSONL, one rubric verdict per line:
`{"task_id": "t1", "rubric": "r2", "human": "Met", "turn": 0, "kind": "objective"}` — `human` is
Met / Not Met (or true / false, yes / no), `turn` defaults to 0 and `kind` to the judge's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from toolsight.errors import ToolsightError
from toolsight.metrics.stats import Estimate, bootstrap
from toolsight.metrics.views import RubricVerdict, _verdict


class HumanGradesError(ToolsightError, ValueError):
    """A human-grades file that cannot be read (names the file and line)."""


@dataclass(frozen=True)
class HumanGrade:
    met: bool
    kind: str | None


Key = tuple[str, int, str]


def load_human_grades(path: Path) -> dict[Key, HumanGrade]:
    """(task_id, turn, rubric id) -> the human verdict."""
    if not path.is_file():
        raise HumanGradesError(f"human grades file not found: {path}")
    out: dict[Key, HumanGrade] = {}
    with path.open("r", encoding="utf-8") as fh:
        for no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as exc:
                raise HumanGradesError(f"{path}:{no}: not valid JSON ({exc.msg})") from None
            if not isinstance(d, dict) or "task_id" not in d or "rubric" not in d:
                raise HumanGradesError(f"{path}:{no}: each line needs task_id, rubric and human")
            met = _verdict({"met": d.get("human")})
            if met is None:
                raise HumanGradesError(
                    f"{path}:{no}: human: {d.get('human')!r} is not a verdict; use \"Met\" or \"Not Met\""
                )
            kind = d.get("kind") if isinstance(d.get("kind"), str) else None
            out[(str(d["task_id"]), int(d.get("turn", 0)), str(d["rubric"]))] = HumanGrade(met, kind)
    return out


class Agreement(BaseModel):
    """Share of rubric verdicts where the judge agrees with the human, with Cohen's kappa."""

    n: int = 0
    overall: Estimate = Field(default_factory=Estimate)
    objective: Estimate = Field(default_factory=Estimate)
    subjective: Estimate = Field(default_factory=Estimate)
    kappa: float | None = None
    unmatched_human: int = 0


class AgreementCounter:
    """Accumulates judge/human pairs while records stream by."""

    def __init__(self, human: dict[Key, HumanGrade]) -> None:
        self.human = human
        self.pairs: list[tuple[bool, bool, str | None]] = []  # judge, human, kind
        self.matched: set[Key] = set()

    def add(self, task_id: str, verdicts: list[RubricVerdict]) -> None:
        for v in verdicts:
            key = (task_id, v.turn, v.rubric)
            h = self.human.get(key)
            if h is None:
                continue
            self.matched.add(key)
            self.pairs.append((v.met, h.met, h.kind or v.kind))

    def result(self, seed: int = 0) -> Agreement:
        agree = [float(j == h) for j, h, _ in self.pairs]
        obj = [float(j == h) for j, h, k in self.pairs if k == "objective"]
        sub = [float(j == h) for j, h, k in self.pairs if k == "subjective"]
        return Agreement(
            n=len(self.pairs), overall=bootstrap(agree, seed=seed), objective=bootstrap(obj, seed=seed),
            subjective=bootstrap(sub, seed=seed), kappa=_kappa([(j, h) for j, h, _ in self.pairs]),
            unmatched_human=len(self.human) - len(self.matched),
        )


def _kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    n = len(pairs)
    if n == 0:
        return None
    po = sum(1 for j, h in pairs if j == h) / n
    pj = sum(1 for j, _ in pairs if j) / n
    ph = sum(1 for _, h in pairs if h) / n
    pe = pj * ph + (1 - pj) * (1 - ph)
    if pe >= 1.0:
        return 1.0 if po >= 1.0 else None
    return (po - pe) / (1 - pe)
