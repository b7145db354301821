"""Rubric judging (VisualToolBench style): one judge call per rubric, weighted score, critical pass.

For each turn the judge sees the question, the golden answer, one rubric and the model's answer
(the VisualToolBench judge prompt, verbatim from `xi1ngang/VisualToolBench`
`scripts/run_judge_single_turn.py`) and replies with JSON `{"explanation", "judge_result":
"Met" | "Not Met"}`. Rubrics of all turns are pooled: score = Σ met·w / Σ w; a task passes when
no critical rubric is unmet.

Two modes:

- `corrected` (toolsight default): critical = `Rubric.is_critical` (the explicit flag, else
  weight ≥ 4); the verdict is read case- and space-insensitively from the JSON (code fences and
  text around the object allowed) and must be Met or Not Met; a reply that does not parse is
  retried (`ctx.judge_retries` attempts) and then recorded as `Score.error` — never counted as a
  fail; a judge that keeps failing is an error too; a turn with no response has its rubrics unmet
  without a judge call; a task without rubrics is an error.
- `official`: the reference script's behaviour, line for line: critical = weight ≥ 4 (the flag is
  ignored); only the exact string "Met" adds weight and only the exact "Not Met" on a weight ≥ 4
  rubric fails the task; 3 attempts, an empty reply is retried, any non-empty reply is final;
  3 raised errors give `{"explanation": "Failed to get judge result", "judge_result": "Not Met"}`;
  a reply that `json.loads` cannot read or without a `judge_result` key kills the reference's
  whole chunk — here the task gets `Score.error` (and `details["dropped"] = True`); multi-turn
  pooling is `zip(responses, turns)` (turns the model did not answer are ignored); no rubrics →
  score 0, pass.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsight.log.modes import ScorerMode
from toolsight.scoring.base import JudgeCall, Score, ScoreContext
from toolsight.scoring.judge import JudgeRunner, shared_runner
from toolsight.tasks.schema import Rubric, Task, Turn

Mode = ScorerMode
OFFICIAL_ATTEMPTS = 3
OFFICIAL_FAILED_REPLY = '{"explanation": "Failed to get judge result", "judge_result": "Not Met"}'

#: The rubric judge prompt: the VisualToolBench judge's, verbatim (the body of the f-string in
#: `LLM_Judge.LLMasJudge`; its single- and multi-turn scripts are identical). A good general rubric prompt,
#: and the one its official scorer must send byte for byte, so it is the default for every rubric scorer.
RUBRIC_JUDGE_TEMPLATE = (
    '\n'
    "        You are an expert evaluator tasked with judging whether a model's answer meets a specific rubric criterion.  \n"
    '        You will be provided with:  \n'
    '        - a question  \n'
    '        - a golden (reference) answer  \n'
    '        - a rubric criterion  \n'
    "        - the model's answer  \n"
    '\n'
    "        Your task is to decide if the model's answer **meets** or **does not meet** the given rubric criterion, referencing the golden answer only as needed.\n"
    '\n'
    '        ### Inputs:\n'
    '        **Question:** {question}  \n'
    '\n'
    '        **Golden Answer:** {golden_answer}  \n'
    '\n'
    '        **Rubric Criterion:** {rubric_criteria}  \n'
    '\n'
    '        **Model Answer:** {model_answer}  \n'
    '\n'
    '        ### Important Notes:\n'
    "        - The model's answer does not need to be correct to meet the criterion if correctness is not required.  \n"
    '        *Example:* If the rubric is "The model should show its reasoning process to answer the question," the answer can be incorrect but still meet the rubric if model\'s reasoning process is present.  \n'
    '        - For writing style or presentation rubrics, apply leniency.  \n'
    '        *Example:* If the rubric asks for conciseness, answers that are slightly longer than the golden answer but still reasonably length should be considered as meeting the rubric.\n'
    "        - The model's answer may satisfy the rubric implicitly without explicitly mentioning the exact term. This should still be considered as meeting the criterion if model's answer is reasonable and makes sense.  \n"
    '        *Example:* If the rubric is "The model should demonstrate understanding of photosynthesis," and the model states "Plants make their own food using sunlight," without explicitly mentioning the term "photosynthesis," it still meets the criterion.\n'
    '\n'
    '        ### Output Format:\n'
    '        Return your judgement in the following JSON format:\n'
    '        {{\n'
    '            "explanation": "Brief explanation of your judgement",\n'
    '            "judge_result": "Met" or "Not Met"\n'
    '        }}\n'
    '        '
)


def judge_prompt(question: str, golden_answer: str, rubric: str, model_answer: str) -> str:
    """The rubric judge prompt (`RUBRIC_JUDGE_TEMPLATE`) for one rubric."""
    return RUBRIC_JUDGE_TEMPLATE.format(question=question, golden_answer=golden_answer,
                                        rubric_criteria=rubric, model_answer=model_answer)


_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def parse_verdict(reply: str) -> tuple[bool, str] | None:
    """(met, explanation) from a judge reply, or None when it is not a clear Met / Not Met verdict."""
    text = _FENCE.sub("", reply.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start:end + 1])
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("judge_result"), str):
        return None
    verdict = re.sub(r"[\s_\-]+", " ", obj["judge_result"]).strip(" .").casefold()
    explanation = obj.get("explanation")
    expl = explanation if isinstance(explanation, str) else ""
    if verdict == "met":
        return True, expl
    if verdict == "not met":
        return False, expl
    return None


def gold_text(turn: Turn) -> str:
    if turn.answer is None:
        return ""
    return turn.answer if isinstance(turn.answer, str) else "; ".join(turn.answer)


@dataclass
class RubricResult:
    """What one rubric got: its verdict (None = error), the reply used and every call."""

    turn: int
    rubric: Rubric
    met: bool | None
    fails_task: bool
    reply: str | None = None
    explanation: str = ""
    error: str | None = None
    dropped: bool = False
    calls: list[JudgeCall] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return {
            "turn": self.turn, "id": self.rubric.id, "text": self.rubric.text, "weight": self.rubric.weight,
            "critical": self.rubric.is_critical, "kind": self.rubric.kind, "met": self.met, "fails_task": self.fails_task,
            "explanation": self.explanation, "reply": self.reply, "error": self.error,
        }


class RubricScorer:
    """Per-rubric LLM judging with weights and critical rubrics (see the module docstring)."""

    def __init__(self, mode: Mode = "corrected", name: str = "rubric", concurrency: int = 8) -> None:
        if mode not in ("official", "corrected"):
            raise ValueError(f"rubric scorer mode must be 'official' or 'corrected', got {mode!r}")
        self.mode: Mode = mode
        self.name = name
        self.concurrency = concurrency

    @property
    def official(self) -> bool:
        return self.mode == "official"

    def judge_need(self, tasks: Sequence[Task]) -> str | None:
        """Rubrics are read by an LLM judge: needed when any task has one."""
        n = sum(1 for t in tasks if any(turn.rubrics for turn in t.turns))
        return f"{n} of {len(tasks)} task(s) are graded by rubrics, which an LLM judge reads" if n else None

    def _pairs(self, task: Task, responses: list[str]) -> list[tuple[int, Turn, str | None]]:
        if self.official:  # zip(model turns, rubric turns): extra turns on either side are ignored
            return [(i, t, r) for i, (r, t) in enumerate(zip(responses, task.turns, strict=False))]
        return [(i, t, responses[i] if i < len(responses) else None) for i, t in enumerate(task.turns)]

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        pairs = self._pairs(task, responses)
        jobs = [(i, turn, resp, rub) for i, turn, resp in pairs for rub in turn.rubrics]
        if not jobs:
            if self.official:  # the reference still writes judge_results: [] (one list per turn when multi-turn)
                details = {"mode": self.mode, "rubrics": [], "dropped": False,
                           "judge_results": _official_layout(task, pairs, [])}
                return Score(value=0.0, passed=True, scorer=self.name, details=details,
                             explanation="no rubrics: the reference gives score 0 and pass")
            return Score(scorer=self.name, error=f"task {task.id} has no rubrics to judge")
        runner = shared_runner(ctx, self.name, concurrency=self.concurrency)
        results = await asyncio.gather(*(self._judge(runner, i, turn, resp, rub) for i, turn, resp, rub in jobs))
        return self._combine(task, pairs, list(results), responses)

    async def _judge(self, runner: JudgeRunner, i: int, turn: Turn, response: str | None, rubric: Rubric) -> RubricResult:
        if response is None or (not self.official and not response.strip()):
            return RubricResult(i, rubric, met=False, fails_task=rubric.is_critical,
                                explanation="no response for this turn: not met (no judge call)")
        prompt = judge_prompt(turn.prompt, gold_text(turn), rubric.text, response)
        if self.official:
            return await self._judge_official(runner, i, rubric, prompt)
        outcome = await runner.ask(prompt, parse_verdict)
        if outcome.value is None:
            return RubricResult(i, rubric, met=None, fails_task=False, reply=outcome.reply,
                                error=outcome.error, calls=outcome.calls)
        met, expl = outcome.value
        return RubricResult(i, rubric, met=met, fails_task=(not met) and rubric.is_critical,
                            reply=outcome.reply, explanation=expl, calls=outcome.calls)

    async def _judge_official(self, runner: JudgeRunner, i: int, rubric: Rubric, prompt: str) -> RubricResult:
        calls = await runner.attempts(prompt, stop=bool, max_attempts=OFFICIAL_ATTEMPTS)
        judge_result: str | None = None
        for n, call in enumerate(calls):
            if call.error is None:
                judge_result = call.reply
            elif n == OFFICIAL_ATTEMPTS - 1:
                judge_result = OFFICIAL_FAILED_REPLY
        try:
            parsed = json.loads(judge_result)  # type: ignore[arg-type]  # None raises, as in the reference
            verdict = parsed["judge_result"]
        except Exception as exc:  # the reference's chunk-level `except Exception` → task dropped
            return RubricResult(i, rubric, met=None, fails_task=False, reply=judge_result, dropped=True,
                                error=f"{type(exc).__name__}: {exc}", calls=calls)
        explanation = parsed.get("explanation", "") if isinstance(parsed, dict) else ""
        return RubricResult(i, rubric, met=verdict == "Met", fails_task=verdict == "Not Met" and rubric.weight >= 4,
                            reply=judge_result, explanation=str(explanation), calls=calls)

    def _combine(self, task: Task, pairs: list[tuple[int, Turn, str | None]], results: list[RubricResult],
                 responses: list[str]) -> Score:
        calls = [c for r in results for c in r.calls]
        rows = [r.row() for r in results]
        answer = next((r for r in reversed(responses) if r.strip()), None)
        details: dict[str, Any] = {"mode": self.mode, "rubrics": rows,
                                   "judge_results": _official_layout(task, pairs, results)}
        dropped = [r for r in results if r.dropped]
        if dropped:
            first = dropped[0]
            details["dropped"] = True
            return Score(scorer=self.name, answer=answer, details=details, judge_calls=calls,
                         error=(f"official: the reference judge script drops this task (its whole chunk): "
                                f"reply {first.reply!r} to rubric {first.rubric.id or first.rubric.text!r} "
                                f"-> {first.error}"))
        details["dropped"] = False
        failed = [r for r in results if r.met is None]
        if failed:
            return Score(scorer=self.name, answer=answer, details=details, judge_calls=calls,
                         error=f"{len(failed)} rubric(s) could not be judged: {failed[0].error}")
        value, passed = _pool(results)
        turns: list[Score] = []
        if len(pairs) > 1:
            for i, _turn, resp in pairs:
                mine = [r for r in results if r.turn == i]
                if mine:
                    tv, tp = _pool(mine)
                    turns.append(Score(value=tv, passed=tp, answer=resp, scorer=self.name,
                                       explanation=_explain(mine)))
        return Score(value=value, passed=passed, answer=answer, scorer=self.name, explanation=_explain(results),
                     details=details, judge_calls=calls, turns=turns)


def _pool(results: list[RubricResult]) -> tuple[float, bool]:
    total = sum(r.rubric.weight for r in results)
    met = sum(r.rubric.weight for r in results if r.met)
    return (met / total if total > 0 else 0.0), not any(r.fails_task for r in results)


def _explain(results: list[RubricResult]) -> str:
    total = sum(r.rubric.weight for r in results)
    met = sum(r.rubric.weight for r in results if r.met)
    n_met = sum(1 for r in results if r.met)
    text = f"{n_met}/{len(results)} rubrics met, weight {met}/{total}"
    fails = [r for r in results if r.fails_task]
    if fails:
        text += "; critical not met: " + ", ".join(f"{r.rubric.id or r.rubric.text[:40]!s} (w{r.rubric.weight})"
                                                  for r in fails)
    return text


def _official_layout(task: Task, pairs: list[tuple[int, Turn, str | None]],
                     results: list[RubricResult]) -> list[Any]:
    """The raw judge strings as the reference stores them: flat (single-turn) or one list per turn."""
    by_turn: list[list[str | None]] = [[r.reply for r in results if r.turn == i] for i, _t, _r in pairs]
    rubric_turns = task.meta.get("rubric_turns")  # set by task_from_official: the reference's zip length
    if isinstance(rubric_turns, int):
        by_turn = by_turn[:rubric_turns]
    if not task.is_multi_turn:
        return by_turn[0] if by_turn else []
    return by_turn
