"""VisualToolBench scoring: rubric judging in the reference's `official` way or toolsight's `corrected` way.

The rules live in `toolsight.scoring.rubric` (see its docstring for both modes). This module adds
the benchmark's name, the conversion from the reference's files (a model-response record plus its
`--clean_rubrics` entry) into a toolsight `Task` and response list, and the reference's summary
(APR, ARS, by domain with the STEM categories merged, by `eval_focus`, by `turncase`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from toolsight.errors import ToolsightError
from toolsight.models.base import GenerateConfig
from toolsight.scoring.base import Score, ScoreContext
from toolsight.scoring.judge import JudgeRunner
from toolsight.scoring.rubric import Mode, RubricScorer, gold_text
from toolsight.scoring.rubric_check import CheckJudge, has_checks
from toolsight.tasks.schema import Rubric, Task, Turn

STEM_CATEGORIES = ("chemistry", "maths", "biology", "engineering", "physics")


class VisualToolBenchFormatError(ToolsightError, ValueError):
    """A reference record that cannot be converted (missing key, bad rubric)."""


JSON_MODE = {"response_format": {"type": "json_object"}}


def judge_config(ctx: ScoreContext, mode: Mode) -> GenerateConfig:
    """The judge request settings: the reference sends no temperature or seed and asks for JSON mode.

    JSON mode (`response_format`) goes only to OpenAI-protocol judges (`openai/…` specs); the others have
    no such field. `corrected` keeps toolsight's deterministic settings (temperature 0, seed 0).
    """
    cfg = ctx.judge_config
    if mode == "official":
        cfg = cfg.model_copy(update={"temperature": None, "seed": None})
    name = ctx.judge.name if ctx.judge is not None else ""
    if name.startswith("openai/") and "response_format" not in cfg.extra_body:
        cfg = cfg.model_copy(update={"extra_body": {**cfg.extra_body, **JSON_MODE}})
    return cfg


class VisualToolBenchScorer:
    """The rubric scorer with the benchmark's judge settings, or the deterministic checker without a judge.

    With a judge (`--judge`): every rubric goes to it (official prompt, JSON mode). Without one, a task
    whose rubrics all carry checks (the generated set) is judged by `CheckJudge`; any other task gets a
    `Score.error` saying to pass `--judge` (re-score later with `toolsight score RUN --judge MODEL`).
    """

    def __init__(self, mode: Mode = "official") -> None:
        self.mode: Mode = mode
        self.rubrics = RubricScorer(mode=mode, name="visualtoolbench")
        self.name = "visualtoolbench"

    def judge_need(self, tasks: Sequence[Task]) -> str | None:
        """Rubrics need a judge, except those that carry deterministic checks (the generated set)."""
        n = sum(1 for t in tasks if any(turn.rubrics for turn in t.turns) and not has_checks(t))
        return f"{n} of {len(tasks)} task(s) have rubrics an LLM judge reads" if n else None

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        if ctx.judge is None and any(t.rubrics for t in task.turns):  # no rubric needs no judge
            if not has_checks(task):
                return Score(scorer=self.name, error=(
                    f"task {task.id}: rubric judging needs a judge model: pass --judge MODEL "
                    "(e.g. --judge openai/o4-mini), or re-score with `toolsight score RUN --judge MODEL`"))
            ctx = ctx.model_copy(update={"judge": CheckJudge(task)})
        elif ctx.judge is not None:
            ctx = ctx.model_copy(update={"judge_config": judge_config(ctx, self.mode)})
        return await self.rubrics.score(task, responses, ctx)


def make_scorer(mode: Mode = "official") -> VisualToolBenchScorer:
    """The VisualToolBench scorer in `official` or `corrected` mode."""
    return VisualToolBenchScorer(mode)


# ---- App. B.6 error categories: an optional, judge-driven analysis of failed tasks -----------------------

ERROR_CATEGORIES = ("visual perception", "reasoning", "calculation", "other")
# The paper names the categories (App. B.6) but publishes no prompt; this one is toolsight's.
ERROR_ANALYSIS_TEMPLATE = (
    "You are analysing why a multimodal model failed a visual reasoning task that it could solve with tools "
    "(image processing in Python, a Python interpreter, a calculator, web search).\n\n"
    "Classify the model's main error into exactly one category:\n"
    "- visual perception: the model could not correctly perceive, interpret or extract the relevant "
    "information from the image (misidentified objects, overlooked regions, misread text or numbers).\n"
    "- reasoning: flawed logical inference or problem-solving steps (invalid intermediate steps, "
    "contradictions, inconsistent conclusions).\n"
    "- calculation: incorrect arithmetic or symbolic computation (wrong arithmetic, misapplied formulas, "
    "numerical inaccuracies).\n"
    "- other: anything else (incomplete responses, refusals, hitting the maximum number of tool calls).\n\n"
    "**Question:** {question}\n\n"
    "**Golden Answer:** {golden_answer}\n\n"
    "**Rubric criteria the model did not meet:**\n{unmet}\n\n"
    "**Model Answer:** {model_answer}\n\n"
    "Return JSON: {{\"explanation\": \"one sentence\", \"error_category\": \"visual perception\" | "
    "\"reasoning\" | \"calculation\" | \"other\"}}"
)


def parse_error_category(reply: str) -> str | None:
    """The category named in a reply's JSON (`error_category`), normalised; None when there is none."""
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(reply[start:end + 1])
    except ValueError:
        return None
    raw = obj.get("error_category") if isinstance(obj, dict) else None
    if not isinstance(raw, str):
        return None
    low = re.sub(r"[\s_\-]+", " ", raw).strip(" .").casefold()
    for cat in ERROR_CATEGORIES:
        if low == cat or low.startswith(cat.split()[0]):
            return cat
    return None


def error_prompt(task: Task, responses: list[str], score: Score) -> str:
    """The error-analysis prompt for a failed task: every turn's question and gold, the unmet rubrics."""
    rows = score.details.get("rubrics") or []
    unmet = [f"- (turn {int(r.get('turn', 0)) + 1}, weight {r.get('weight')}) {r.get('text')}" for r in rows
             if isinstance(r, dict) and r.get("met") is False]
    question = "\n".join(f"[Turn {i + 1}] {t.prompt}" if task.is_multi_turn else t.prompt
                         for i, t in enumerate(task.turns))
    gold = "\n".join(gold_text(t) for t in task.turns)
    answer = "\n".join(responses)
    return ERROR_ANALYSIS_TEMPLATE.format(question=question, golden_answer=gold, unmet="\n".join(unmet) or "-",
                                          model_answer=answer)


class ErrorAnalysisScorer(VisualToolBenchScorer):
    """The rubric score plus, for a failed task, the judge's error category in `details['error_category']`."""

    def __init__(self, mode: Mode = "official") -> None:
        super().__init__(mode)
        self.name = "visualtoolbench-errors"

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        score = await super().score(task, responses, ctx)
        if score.error is not None or score.passed or ctx.judge is None:
            return score
        runner = JudgeRunner.from_context(ctx, self.name)
        outcome = await runner.ask(error_prompt(task, responses, score), parse_error_category)
        details = dict(score.details)
        details["error_category"] = outcome.value
        if outcome.error:
            details["error_category_error"] = outcome.error
        return score.model_copy(update={"details": details, "judge_calls": [*score.judge_calls, *outcome.calls]})


SCORERS = {"visualtoolbench": make_scorer, "visualtoolbench-errors": ErrorAnalysisScorer}


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "no", "true", "false"):
        return value.strip().lower() in ("yes", "true")
    return None


#: key spellings seen for the two rubric-type fields (the dataset card does not show the exact keys)
KIND_KEYS = ("objective/subjective", "objective_subjective", "type", "rubric_type", "objective")
EXPLICIT_KEYS = ("explicit/implicit", "explicit_implicit", "explicit", "implicit/explicit")


def _first(raw: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for k in keys:
        v = raw.get(k)
        if isinstance(v, str) and v.strip():
            return v.strip().lower()
    return ""


def rubrics_from_official(rubrics: Mapping[str, Any], where: str) -> list[Rubric]:
    """`{rubric_id: {description, weight, critical: "yes"/"no", ...}}` → Rubric list, in order."""
    out: list[Rubric] = []
    for rid, raw in rubrics.items():
        if not isinstance(raw, Mapping) or "description" not in raw or "weight" not in raw:
            raise VisualToolBenchFormatError(f"{where}: rubric {rid!r} needs 'description' and 'weight'")
        kind = _first(raw, KIND_KEYS) or "objective"
        explicit = _first(raw, EXPLICIT_KEYS)
        cats = raw.get("category") or raw.get("categories") or []
        try:
            out.append(Rubric(
                id=str(rid), text=str(raw["description"]), weight=int(raw["weight"]), critical=_flag(raw.get("critical")),
                kind="subjective" if kind.startswith("subj") else "objective",
                explicit=(explicit.startswith("exp") if explicit.startswith(("exp", "imp")) else None),
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
