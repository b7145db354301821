"""One small summary per record (`TaskView`), read from a run directory one record at a time.

Metrics never hold trajectories: each record is parsed, reduced to the numbers the metrics need
(score, tool calls, effective chain, tokens, rubric verdicts) and dropped, so a 10,000-record run
costs a few megabytes. Scores come from the records or from a `scores-NAME.jsonl` file written by
re-scoring. The image operations of the calls are labelled under the vocabularies the caller
passes (a report passes those the run's benchmark declares); with none, calls are not classified.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsight.errors import ToolsightError
from toolsight.log.files import RECORDS, dict_key, iter_latest_records
from toolsight.log.record import Record
from toolsight.metrics.billing import judge_tokens, model_tokens
from toolsight.metrics.chain import task_chain
from toolsight.metrics.cost import CallTokens
from toolsight.scoring.base import Score
from toolsight.tools.operations import Vocabulary, classify_call

PASS_EPS = 1e-9
#: grouping keys every task has besides its tags (`TaskView.group`)
BUILTIN_KEYS = ("turn_type", "setting", "model", "benchmark")


class ScoresFileError(ToolsightError, ValueError):
    """A scores file that is missing or unreadable (message names the file and line)."""


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def scores_file_name(name: str) -> str:
    """`scores-NAME.jsonl`, with NAME made file-system safe (the same rule for writing and reading)."""
    if name.startswith("scores-") and name.endswith(".jsonl"):
        return name
    safe = _SAFE.sub("_", name).strip("._")
    if not safe:
        raise ScoresFileError(f"scores name {name!r} has no usable characters; use letters, digits, '-', '_', '.'")
    return f"scores-{safe}.jsonl"


def scores_path(run_dir: Path, name: str) -> Path:
    """`scores-NAME.jsonl` beside the records (NAME may also be given as the file name)."""
    return run_dir / scores_file_name(name)


def available_scores(run_dir: Path) -> list[str]:
    return sorted(p.name[len("scores-") : -len(".jsonl")] for p in run_dir.glob("scores-*.jsonl"))


@dataclass
class RubricVerdict:
    turn: int
    rubric: str
    met: bool
    kind: str | None = None


@dataclass
class ScoreLite:
    """The parts of a Score the metrics use."""

    value: float | None
    passed: bool | None
    error: str | None
    rubrics: list[RubricVerdict] = field(default_factory=list)
    error_category: str | None = None  # a judge's failure category (VisualToolBench App. B.6 analysis)
    judge_tokens: list[CallTokens] = field(default_factory=list)  # the judge calls that recorded usage


def _verdict(d: Mapping[str, Any]) -> bool | None:
    for key in ("met", "passed", "verdict", "judge_result", "result"):
        if key not in d:
            continue
        v = d[key]
        if isinstance(v, bool):
            return v
        if isinstance(v, str):
            t = v.strip().lower().replace("_", " ")
            if t in ("met", "yes", "true", "pass", "1"):
                return True
            if t in ("not met", "no", "false", "fail", "0"):
                return False
    return None


def _rubrics_of(details: Mapping[str, Any], turn: int) -> list[RubricVerdict]:
    raw = details.get("rubrics")
    out: list[RubricVerdict] = []
    if isinstance(raw, dict):
        raw = [{"id": k, **v} if isinstance(v, dict) else {"id": k, "met": v} for k, v in raw.items()]
    if not isinstance(raw, list):
        return out
    position: dict[int, int] = {}
    for r in raw:
        if not isinstance(r, dict):
            continue
        t = int(r.get("turn", turn))
        pos = position.get(t, 0)  # a rubric without an id is named by its 0-based position in its turn
        position[t] = pos + 1
        met = _verdict(r)
        if met is None:
            continue
        rid = next((r[k] for k in ("id", "rubric_id", "rubric") if r.get(k) is not None), pos)
        kind = r.get("kind") if isinstance(r.get("kind"), str) else None
        out.append(RubricVerdict(turn=t, rubric=str(rid), met=met, kind=kind))
    return out


def lite(score: Score | None) -> ScoreLite | None:
    """Reduce a Score; rubric verdicts are read from `details['rubrics']` (task and per turn)."""
    if score is None:
        return None
    rubrics = _rubrics_of(score.details, 0)
    if not rubrics:
        for i, t in enumerate(score.turns):
            rubrics.extend(_rubrics_of(t.details, i))
    cat = score.details.get("error_category")
    return ScoreLite(value=score.value, passed=score.passed, error=score.error, rubrics=rubrics,
                     error_category=cat if isinstance(cat, str) else None,
                     judge_tokens=judge_tokens(score))


def load_full_scores(run_dir: Path, name: str) -> dict[str, Score | None]:
    """Record key (task id; `ID#N` for epoch N > 1) -> the whole score from a scores file (a task scored
    twice keeps its last line)."""
    p = scores_path(run_dir, name)
    if not p.is_file():
        have = ", ".join(available_scores(run_dir)) or "none"
        raise ScoresFileError(f"no scores file {p} (available in {run_dir}: {have}); run `toolsight score` first")
    out: dict[str, Score | None] = {}
    with p.open("r", encoding="utf-8") as fh:
        for no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                tid = dict_key(data) if "task_id" in data else str(data["task_id"])
                raw = data.get("score")
                out[tid] = Score.model_validate(raw) if raw is not None else None
            except (ValueError, KeyError, TypeError) as exc:
                raise ScoresFileError(f"{p}:{no}: not a scores line ({exc}); expected {{task_id, score}}") from None
    return out


def load_scores(run_dir: Path, name: str) -> dict[str, ScoreLite | None]:
    """As `load_full_scores`, each score reduced to what the metrics use."""
    return {k: lite(v) for k, v in load_full_scores(run_dir, name).items()}


@dataclass
class TaskView:
    """What the metrics need from one record."""

    task_id: str
    model: str
    setting: str
    benchmark: str
    tags: dict[str, str]
    epoch: int
    n_turns: int
    error: str | None
    score: ScoreLite | None
    calls: int
    ok_calls: int
    tool_names: list[str]
    effective_calls: int
    effective_tools: list[str]
    ref_len: int | None
    rounds: int
    model_calls: int
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    stop_reason: str
    #: the billed tokens of the task's model calls (metrics/cost.py prices them with its judge calls')
    model_tokens: list[CallTokens] = field(default_factory=list)
    #: vocabulary name -> the labels of the calls' image operations (each call's labels once, calls in order)
    labels: dict[str, list[str]] = field(default_factory=dict)
    chain_lengths: list[int] = field(default_factory=list)  # per turn
    ref_lengths: list[int] | None = None  # per turn
    random_guess: float | None = None  # expected score of a uniform guess over the options (record.extra)
    loop_error: str | None = None  # an official loop ended the task where its driver crashes (still scored)

    @property
    def turn_type(self) -> str:
        return "multi" if self.n_turns > 1 else "single"

    @property
    def billed(self) -> list[CallTokens]:
        """Every call the task paid for: its model calls, then its judge calls."""
        return [*self.model_tokens, *(self.score.judge_tokens if self.score is not None else [])]

    @property
    def scorable(self) -> bool:
        """True when the record counts for accuracy (no run error, a score without error)."""
        return self.error is None and self.score is not None and self.score.error is None

    @property
    def value(self) -> float:
        return float(self.score.value or 0.0) if self.score is not None else 0.0

    @property
    def passed(self) -> bool:
        if self.score is None:
            return False
        if self.score.passed is not None:
            return bool(self.score.passed)
        return (self.score.value or 0.0) >= 1.0 - PASS_EPS

    def group(self, key: str) -> str | None:
        """The value of a grouping key: a tag, or the built-ins turn_type / setting / model.

        `a+b` groups by both keys at once (e.g. `turn_type+domain` -> 'single / STEM').
        """
        if "+" in key and key not in self.tags:
            parts = [self.group(k.strip()) for k in key.split("+")]
            return None if any(p is None for p in parts) else " / ".join(str(p) for p in parts)
        if key in self.tags:
            return self.tags[key]
        if key in ("turn_type", "turns"):
            return self.turn_type
        if key in BUILTIN_KEYS:
            return str(getattr(self, key))
        return None


def _ref_lengths(rec: Record, task: Any | None) -> list[int] | None:
    """Per-turn reference chain lengths, or None when the task has no reference chain.

    Records store `[0]` for a turn without `reference_steps` (a task with no reference), so a
    task whose turns all have length 0 has no reference: it must not count as a reference of
    length 0 in the MAE and the chain tables.
    """
    lengths: list[int] | None = None
    if task is not None:
        lengths = [len(t.reference_steps) for t in task.turns]
    else:
        raw = rec.extra.get("reference_chain_lengths")
        if isinstance(raw, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in raw):
            lengths = [int(x) for x in raw]
    if not lengths or not any(lengths):
        return None
    return lengths


def view_of(rec: Record, score: ScoreLite | None, task: Any | None = None,
            vocabularies: Sequence[Vocabulary] = ()) -> TaskView:
    """Reduce one record (with the score to use) to a TaskView; its calls' operations are labelled
    under `vocabularies`."""
    traj = rec.trajectory
    chain = task_chain(traj)
    refs = _ref_lengths(rec, task)
    names_by_call = {c.id: c.name for c in traj.tool_calls}
    labels: dict[str, list[str]] = {v.name: [] for v in vocabularies}
    if vocabularies:
        for c in traj.tool_calls:
            for name, found in classify_call(c.name, c.arguments, vocabularies).items():
                labels[name].extend(found)
    n_turns = len(task.turns) if task is not None else 0
    if not n_turns:
        gold = rec.extra.get("gold")
        n_turns = len(refs) if refs else (len(gold) if isinstance(gold, list) else len(traj.turns))
    u = traj.usage
    return TaskView(
        task_id=rec.task_id, model=rec.model, setting=rec.setting, benchmark=rec.benchmark,
        tags=dict(rec.tags), epoch=rec.epoch, n_turns=max(1, n_turns), error=rec.error, score=score,
        loop_error=traj.loop_error,
        calls=len(traj.tool_calls), ok_calls=sum(1 for c in traj.tool_calls if c.ok),
        tool_names=[c.name for c in traj.tool_calls], labels=labels,
        effective_calls=chain.length, effective_tools=[names_by_call[c] for c in chain.effective_calls],
        ref_len=sum(refs) if refs is not None else None,
        rounds=sum(t.rounds for t in traj.turns), model_calls=traj.model_calls,
        input_tokens=u.input_tokens, output_tokens=u.output_tokens, reasoning_tokens=u.reasoning_tokens,
        model_tokens=model_tokens(rec.model, traj), stop_reason=traj.stop_reason, chain_lengths=[len(t.calls) for t in chain.turns], ref_lengths=refs,
        random_guess=_float_or_none(rec.extra.get("random_guess")),
    )


def _float_or_none(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def iter_views(
    run_dir: Path,
    scores: str | None = None,
    tasks: Mapping[str, Any] | None = None,
    file: str = RECORDS,
    vocabularies: Sequence[Vocabulary] = (),
) -> Iterator[TaskView]:
    """Stream TaskViews for a run (the last record of each task: a resumed run may have re-run one);
    `scores` names a scores file to use instead of record scores; the calls' operations are
    labelled under `vocabularies`."""
    table = load_scores(run_dir, scores) if scores else None
    for rec in iter_latest_records(run_dir, file):
        if table is not None:
            sc = table.get(rec.key)
        else:
            sc = lite(rec.score)
        task = tasks.get(rec.task_id) if tasks is not None else None
        yield view_of(rec, sc, task, vocabularies)
