"""LLM semantic-equivalence judging (VisBrowse-Bench style): is the model's answer the gold answer?

The judge prompt is verbatim from `ZhengboZhang/VisBrowse-Bench` `eval.py` (typo "groud truth"
included). Flow per turn: no answer → wrong without a judge call; exact match with the gold →
right without a judge call; otherwise the judge decides "yes" / "no". A list gold answer means
*parts* of one answer, joined with "; " as the reference does.

`official`: the reference's rules — the sentinel `'No answer'` (exact string) is wrong; the
exact-match shortcut compares raw strings; the judge's reply must be exactly `'yes'` (anything
else, even `'Yes'` or `'yes\\n'`, is wrong), and any reply is final (no retry). `corrected`:
the answer is stripped, the shortcut compares whitespace-collapsed, case-folded strings, and the
reply is read case- and punctuation-insensitively (`Yes.`, `**yes**`, `Yes, they match` → yes);
a reply that is neither yes nor no is retried and then recorded as `Score.error`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from toolsight.log.modes import ScorerMode
from toolsight.scoring.base import Score, ScoreContext
from toolsight.scoring.extract import final_answer
from toolsight.scoring.generic import combine_turns
from toolsight.scoring.judge import JudgeRunner, shared_runner
from toolsight.tasks.schema import Task, Turn

Mode = ScorerMode

SEMANTIC_JUDGE_PROMPT = (
    "\n"
    'You are a rigorous question-and-answer quality assessment expert. Given a question, your task is to '
    'compare the "groud truth" and the "model answer", determine whether they are semantically equivalent, '
    'and output "yes" or "no".\n'
    "question: {}\n"
    "ground truth: {}\n"
    "model answer: {}\n"
)
NO_ANSWER = "No answer"


def semantic_prompt(question: str, gold: str, answer: str) -> str:
    return SEMANTIC_JUDGE_PROMPT.format(question, gold, answer)


def join_gold(answer: str | list[str]) -> str:
    """The reference's gold string: one answer as is, several joined with "; "."""
    if isinstance(answer, str):
        return answer
    if not answer:
        raise ValueError("the gold answer list is empty")
    return "; ".join(answer) if len(answer) > 1 else answer[0]


def squash(text: str) -> str:
    """Whitespace collapsed, stripped, case-folded."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def parse_yes_no(reply: str) -> bool | None:
    """True / False for a yes / no reply (case, punctuation and markdown ignored), else None."""
    words = re.findall(r"[a-z]+", reply.casefold())
    if not words or words[0] not in ("yes", "no"):
        return None
    return bool(words[0] == "yes")


def official_yes(reply: str) -> bool | None:
    return reply == "yes"


class SemanticJudgeScorer:
    """Exact-match shortcut, then an LLM judge of semantic equivalence (see the module docstring)."""

    def __init__(self, mode: Mode = "corrected", name: str = "semantic_judge",
                 extract: Callable[[str], str | None] | None = None, concurrency: int = 8) -> None:
        if mode not in ("official", "corrected"):
            raise ValueError(f"semantic judge mode must be 'official' or 'corrected', got {mode!r}")
        self.mode: Mode = mode
        self.name = name
        self.concurrency = concurrency
        self._extract = extract or self._default_extract

    @staticmethod
    def _default_extract(response: str) -> str | None:
        got = final_answer(response, allow_plain=True)
        return got.text if got else None

    def extract(self, response: str) -> str | None:
        return self._extract(response)

    def judge_need(self, tasks: Sequence[Task]) -> str | None:
        """An answer that does not match the gold exactly goes to the judge: needed for any task with gold."""
        n = sum(1 for t in tasks if any(turn.answer is not None for turn in t.turns))
        return (f"an answer that does not match the gold exactly is judged for equivalence by an LLM ({n} of "
                f"{len(tasks)} task(s) have gold)") if n else None

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        runner: JudgeRunner | None = None
        turns: list[Score] = []
        for n, turn in enumerate(task.turns):
            if turn.answer is None:
                continue
            if runner is None and ctx.judge is not None:
                runner = shared_runner(ctx, self.name, concurrency=self.concurrency)
            resp = responses[n] if n < len(responses) else ""
            turns.append(await self.score_turn(turn, resp, runner))
        return combine_turns(self.name, turns)

    async def score_turn(self, turn: Turn, response: str, runner: JudgeRunner | None) -> Score:
        assert turn.answer is not None
        try:
            gold = join_gold(turn.answer)
        except ValueError as exc:
            return Score(scorer=self.name, error=f"bad gold answer: {exc}")
        question = str(turn.meta.get("question", turn.prompt))
        official = self.mode == "official"
        gen = self.extract(response)
        details: dict[str, object] = {"gt_string": gold, "mode": self.mode, "llm_judge_called": False}
        if official:
            gen = NO_ANSWER if gen is None else gen
            details["gen"] = gen
            if gen == NO_ANSWER:
                details["judge"] = "no"
                return Score(value=0.0, passed=False, answer=None, scorer=self.name, details=details,
                             explanation="'No answer' sentinel: wrong without a judge call")
            if gen == gold:
                details["judge"] = "yes"
                return Score(value=1.0, passed=True, answer=gen, scorer=self.name, details=details,
                             explanation="exact match with the gold (no judge call)")
        else:
            gen = gen.strip() if gen is not None else None
            details["gen"] = gen
            if not gen:
                return Score(value=0.0, passed=False, answer=None, scorer=self.name, details=details,
                             explanation="no answer")
            if squash(gen) == squash(gold):
                details["judge"] = "yes"
                return Score(value=1.0, passed=True, answer=gen, scorer=self.name, details=details,
                             explanation="match with the gold after whitespace/case normalisation (no judge call)")
        if runner is None:
            return Score(scorer=self.name, answer=gen, details=details,
                         error=f"scorer {self.name!r} needs an LLM judge for this answer: pass --judge MODEL")
        prompt = semantic_prompt(question, gold, gen)
        outcome = await runner.ask(prompt, official_yes if official else parse_yes_no)
        details["llm_judge_called"] = True
        details["judge"] = outcome.reply
        if outcome.value is None:
            return Score(scorer=self.name, answer=gen, details=details, judge_calls=outcome.calls,
                         error=outcome.error)
        ok = outcome.value
        return Score(value=float(ok), passed=ok, answer=gen, scorer=self.name, details=details,
                     judge_calls=outcome.calls, explanation=f"judge replied {outcome.reply!r}")
