"""Any toolsight dataset folder as a benchmark: generic settings and its scorer.

The scorer matches the extracted answer against the gold answer; a task that carries rubrics is judged
by them instead (the rubric scorer, `toolsight.scoring.rubric`) when a judge is given (`--judge`), and
without one it is matched as before, its score saying how many rubrics were not judged.
"""

from __future__ import annotations

import re
from pathlib import Path

from toolsight.agents.answer import extract_answer
from toolsight.agents.prompts import ANSWER_TAG_SYSTEM, TOOLS_NOTE
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import Benchmark, BenchmarkError, LoadedTasks
from toolsight.benchmarks.offline import GENERATED_FILE, GeneratedSet
from toolsight.scoring.base import Score, ScoreContext, Scorer
from toolsight.scoring.rubric import RubricScorer
from toolsight.tasks.dataset import DatasetError, load_dataset
from toolsight.tasks.schema import Task, Turn


def _norm(s: str) -> str:
    s = s.strip().lower()
    s = re.sub(r"\s+", " ", s)
    return s.strip(" .'\"`*")


def _golds(turn: Turn) -> list[str]:
    if turn.answer is None:
        return []
    return [turn.answer] if isinstance(turn.answer, str) else list(turn.answer)


def match_turn(turn: Turn, response: str) -> tuple[bool, str | None]:
    """Exact (normalised) match of the extracted answer; choices also accept the option text."""
    ans = extract_answer(response, "answer_tag")
    if ans is None:
        ans = response.strip() or None
    if ans is None:
        return False, None
    golds = [_norm(g) for g in _golds(turn)]
    got = _norm(ans)
    if turn.options:
        m = re.fullmatch(r"\(?([a-z])\)?[.:)]?(?:\s.*)?", got)
        if m and m.group(1).upper() in turn.options:
            got = m.group(1)
        else:
            for letter, text in turn.options.items():
                if _norm(text) == got:
                    got = letter.lower()
    return got in golds, ans


class AnswerMatchScorer:
    """Answer-only scorer: normalised exact match of the extracted answer, per turn, averaged."""

    name = "answer_match"

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        turns: list[Score] = []
        for turn, resp in zip(task.turns, [*responses, *[""] * len(task.turns)], strict=False):
            ok, ans = match_turn(turn, resp)
            turns.append(Score(value=1.0 if ok else 0.0, passed=ok, answer=ans, scorer=self.name,
                               explanation="match" if ok else ("no answer" if ans is None else "mismatch")))
        value = sum(t.value for t in turns) / len(turns)
        return Score(value=value, passed=all(t.passed for t in turns), answer=turns[-1].answer,
                     scorer=self.name, explanation=turns[-1].explanation, turns=turns if len(turns) > 1 else [])


def rubric_count(task: Task) -> int:
    return sum(len(t.rubrics) for t in task.turns)


class DatasetScorer:
    """A dataset folder's scorer: answer match, or the task's rubrics when it has some and a judge is given.

    Rubrics are judged by the corrected rubric scorer (a dataset folder has no reference judge script
    to follow): the explicit critical flag counts, a judge reply that never parses is a score error.
    Without a judge a task with rubrics is matched against its gold answer (0 when it has none) and
    its score says so: `details["rubrics_not_judged"]` holds the number of rubrics, and the
    explanation ends in "rubrics not judged (no --judge)".
    """

    name = "answer_match"

    def __init__(self) -> None:
        self.match = AnswerMatchScorer()
        self.rubrics = RubricScorer("corrected")

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        n = rubric_count(task)
        if n and ctx.judge is not None:
            return await self.rubrics.score(task, responses, ctx)
        score = await self.match.score(task, responses, ctx)
        if not n:
            return score
        note = f"{n} rubric(s) not judged (no --judge)"
        return score.model_copy(update={
            "details": {**score.details, "rubrics_not_judged": n},
            "explanation": f"{score.explanation}; {note}" if score.explanation else note,
        })


def generic_settings() -> dict[str, AgentSettings]:
    def make(name: str, tools: list[str]) -> AgentSettings:
        note = TOOLS_NOTE if tools else ""
        return AgentSettings(
            name=name, system_prompt=ANSWER_TAG_SYSTEM.format(tools=note), tools=tools, answer_format="answer_tag",
            # a tool call must name its image: say what the input is called (the first OpenCV call
            # otherwise cannot name it)
            user_template="{prompt}{image_note}" if tools else "{prompt}",
        )

    return {
        "direct": make("direct", []),
        "crop": make("crop", ["crop"]),
        "code": make("code", ["python"]),
        "opencv": make("opencv", ["opencv"]),
    }


def _generated_setting(folder: Path) -> str | None:
    """The default setting a generated folder's `generated.json` names (None: not generated, or unreadable)."""
    try:
        return GeneratedSet.model_validate_json((folder / GENERATED_FILE).read_text(encoding="utf-8")).setting
    except (OSError, ValueError):
        return None


class DatasetBenchmark(Benchmark):
    """A toolsight dataset folder (tasks.jsonl + images)."""

    name = "dataset"
    description = "any toolsight dataset folder (tasks.jsonl + images): generic settings, answer-match scoring"
    default_setting = "direct"

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.path = path
        if path is not None:  # a generated set runs by default under the setting its reference solutions need
            made = _generated_setting(path)
            if made in generic_settings():
                self.default_setting = made

    def settings(self) -> dict[str, AgentSettings]:
        return generic_settings()

    def target_name(self) -> str:
        return str(self.path) if self.path is not None else self.name

    def load(self, data: Path | None) -> LoadedTasks:
        root = data or self.path
        if root is None:
            raise BenchmarkError("no dataset folder given: pass a folder with tasks.jsonl")
        try:
            ds = load_dataset(root)
        except DatasetError as exc:
            raise BenchmarkError(str(exc) + "\n(run `toolsight validate DIR` for the full list)") from None
        return LoadedTasks(tasks=ds.tasks, root=ds.root, source=str(ds.root.resolve()),
                           fingerprint=ds.fingerprint())

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        return DatasetScorer()
