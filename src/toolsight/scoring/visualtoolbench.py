"""VisualToolBench scoring: rubric judging in the reference's `official` way or toolsight's `corrected` way.

The rules live in `toolsight.scoring.rubric` (see its docstring for both modes). This module adds
the benchmark's name, the conversion from the reference's files (a model-response record plus its
`--clean_rubrics` entry) into a toolsight `Task` and response list, and the reference's summary
(APR, ARS, by domain with the STEM categories merged, by `eval_focus`, by `turncase`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from toolsight.errors import ToolsightError
from toolsight.scoring.base import Score
from toolsight.scoring.rubric import Mode, RubricScorer
from toolsight.tasks.schema import Rubric, Task, Turn

STEM_CATEGORIES = ("chemistry", "maths", "biology", "engineering", "physics")


class VisualToolBenchFormatError(ToolsightError, ValueError):
    """A reference record that cannot be converted (missing key, bad rubric)."""


def make_scorer(mode: Mode = "official") -> RubricScorer:
    """The VisualToolBench scorer in `official` or `corrected` mode."""
    return RubricScorer(mode=mode, name="visualtoolbench")


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "no", "true", "false"):
        return value.strip().lower() in ("yes", "true")
    return None


def rubrics_from_official(rubrics: Mapping[str, Any], where: str) -> list[Rubric]:
    """`{rubric_id: {description, weight, critical: "yes"/"no", ...}}` → Rubric list, in order."""
    out: list[Rubric] = []
    for rid, raw in rubrics.items():
        if not isinstance(raw, Mapping) or "description" not in raw or "weight" not in raw:
            raise VisualToolBenchFormatError(f"{where}: rubric {rid!r} needs 'description' and 'weight'")
        kind = str(raw.get("objective/subjective") or raw.get("type") or "objective").lower()
        cats = raw.get("category") or []
        try:
            out.append(Rubric(
                id=str(rid), text=str(raw["description"]), weight=int(raw["weight"]), critical=_flag(raw.get("critical")),
                kind="subjective" if kind.startswith("subj") else "objective",
                categories=[str(c) for c in (cats if isinstance(cats, list) else [cats])],
            ))
        except (ValidationError, ValueError, TypeError) as exc:
            raise VisualToolBenchFormatError(f"{where}: rubric {rid!r}: {exc}") from None
    return out


def task_from_official(example: Mapping[str, Any], clean_rubrics_item: Mapping[str, Any]) -> tuple[Task, list[str]]:
    """A reference model-response record and its clean-rubrics entry → (Task, responses).

    Single-turn records have `prompt, golden_answer, model_answer` and `rubrics: {id: {...}}`;
    multi-turn records have `turns[{prompt, golden_answer, model_answer}]` and `turns[{rubrics}]`.
    The task gets as many turns as either side has (rubric-less or prompt-less turns stay empty), and
    the responses are the model answers in order — so the official `zip` semantics apply unchanged.
    """
    tid = str(example.get("task_id", clean_rubrics_item.get("task_id", "?")))
    tags = {k: str(example[k]) for k in ("turncase", "eval_focus", "prompt_category") if k in example}
    if "prompt_category" in example:
        cat = str(example["prompt_category"])
        tags["domain"] = "STEM" if cat in STEM_CATEGORIES else cat
    try:
        if "turns" in example:
            model_turns = list(example["turns"])
            rubric_turns = list(clean_rubrics_item.get("turns", []))
            turns = []
            for n in range(max(len(model_turns), len(rubric_turns), 1)):
                mt = model_turns[n] if n < len(model_turns) else {}
                rt = rubric_turns[n] if n < len(rubric_turns) else {}
                turns.append(Turn(prompt=str(mt.get("prompt", "")), answer=str(mt.get("golden_answer", "")),
                                  answer_type="open",
                                  rubrics=rubrics_from_official(rt.get("rubrics", {}), f"task {tid} turn {n + 1}")))
            responses = [str(mt.get("model_answer", "")) for mt in model_turns]
        else:
            turns = [Turn(prompt=str(example["prompt"]), answer=str(example.get("golden_answer", "")),
                          answer_type="open",
                          rubrics=rubrics_from_official(clean_rubrics_item.get("rubrics", {}), f"task {tid}"))]
            responses = [str(example.get("model_answer", ""))]
    except KeyError as exc:
        raise VisualToolBenchFormatError(f"task {tid}: missing key {exc} in the model-response record") from None
    meta = {"rubric_turns": len(clean_rubrics_item.get("turns", []))} if "turns" in example else {}
    return Task(id=tid, benchmark="visualtoolbench", turns=turns, tags=tags, meta=meta), responses


def summarize(items: Iterable[tuple[Mapping[str, str], Score]]) -> dict[str, Any]:
    """The reference's `analyze_results`: APR / ARS overall and by domain, eval_focus and turncase.

    `items` = (task tags, score) pairs. Scores with an error (dropped or unjudged tasks) are left
    out, as the reference's results file leaves dropped tasks out; their number is reported.
    """
    kept = [(tags, s) for tags, s in items]
    errors = sum(1 for _t, s in kept if s.error)
    kept = [(t, s) for t, s in kept if not s.error]

    def agg(rows: list[tuple[Mapping[str, str], Score]]) -> dict[str, float | int]:
        n = len(rows)
        return {"n": n, "APR": sum(bool(s.passed) for _t, s in rows) / n if n else 0.0,
                "ARS": sum(s.value for _t, s in rows) / n if n else 0.0}

    def group(key: str) -> dict[str, dict[str, float | int]]:
        names = sorted({str(t.get(key, "")) for t, _s in kept})
        return {g: agg([(t, s) for t, s in kept if str(t.get(key, "")) == g]) for g in names}

    return {"overall": agg(kept), "errors": errors, "domain": group("domain"),
            "eval_focus": group("eval_focus"), "turncase": group("turncase")}
