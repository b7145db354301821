"""The billed tokens of a record's calls (`CallTokens`), for pricing (metrics/cost.py).

Kept apart from the metrics views, and light to import: the run summary prices every record as it
finishes, and a run that calls no tools must not import the image libraries the views pull in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from toolsight.log.record import Record
from toolsight.log.score import JudgeCall, Score
from toolsight.log.trajectory import Trajectory
from toolsight.metrics.cost import CallTokens


def judge_tokens(score: Score) -> list[CallTokens]:
    """The billed tokens of a score's judge calls that recorded usage."""
    return [_judge_tokens(c) for c in _judge_calls(score) if c.usage is not None]


def _judge_calls(score: Score) -> list[JudgeCall]:
    """A score's judge calls, each once: a scorer that keeps per-turn scores may also list their
    calls on the task's score, so the turns are read only when the task lists none."""
    if score.judge_calls:
        return list(score.judge_calls)
    return [c for t in score.turns for c in _judge_calls(t)]


def _judge_tokens(c: JudgeCall) -> CallTokens:
    u = c.usage
    assert u is not None
    return CallTokens(c.model, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens,
                      batch=c.batch, replayed=c.cached)


def model_tokens(model: str, traj: Trajectory) -> list[CallTokens]:
    """The billed tokens of a trajectory's model calls: one per logged call that got a reply, or the
    trajectory's usage as one call when the runner logged none (an older run, a baseline). The hosted
    containers its tool calls name go with its first call (`with_containers`)."""
    if not traj.model_call_log:
        u = traj.usage
        calls = [CallTokens(model, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens)] \
            if u.total_tokens else []
    else:
        calls = [CallTokens(model, c.input_tokens, c.output_tokens, c.cache_read_tokens, c.cache_write_tokens,
                            batch=c.batch, replayed=c.cached) for c in traj.model_call_log if c.error is None]
    return with_containers(calls, (t.extra for t in traj.tool_calls))


def with_containers(calls: list[CallTokens], extras: Iterable[Mapping[str, Any] | None]) -> list[CallTokens]:
    """`calls` with the distinct hosted containers the tool calls' `extra` name (`hosted`,
    `container_id`: OpenAI's code interpreter, billed per container) counted on the first one."""
    ids = {str(e["container_id"]) for e in extras
           if isinstance(e, Mapping) and e.get("hosted") and e.get("container_id")}
    if not ids or not calls:
        return calls
    return [dataclasses.replace(calls[0], containers=len(ids)), *calls[1:]]


def billed(rec: Record) -> list[CallTokens]:
    """Every call one record paid for: its model calls, then its score's judge calls."""
    return [*model_tokens(rec.model, rec.trajectory), *(judge_tokens(rec.score) if rec.score is not None else [])]


def billed_dict(d: Mapping[str, Any]) -> list[CallTokens]:
    """`billed` of a record as read from records.jsonl (a dict; no model built: run summaries)."""
    model = str(d.get("model") or "")
    traj = d.get("trajectory") or {}
    log = [c for c in traj.get("model_call_log") or [] if isinstance(c, dict) and c.get("error") is None]
    u = traj.get("usage") or {}

    def tokens(name: str, c: Mapping[str, Any], batch: bool = False, replayed: bool = False) -> CallTokens:
        return CallTokens(name, int(c.get("input_tokens") or 0), int(c.get("output_tokens") or 0),
                          int(c.get("cache_read_tokens") or 0), int(c.get("cache_write_tokens") or 0), batch, replayed)

    calls = [tokens(model, c, bool(c.get("batch")), bool(c.get("cached"))) for c in log] if log else \
        ([tokens(model, u)] if u.get("input_tokens") or u.get("output_tokens") else [])
    calls = with_containers(calls, (t.get("extra") for t in traj.get("tool_calls") or [] if isinstance(t, dict)))
    score = d.get("score")
    if isinstance(score, dict):
        calls += [tokens(str(j.get("model") or ""), j["usage"], bool(j.get("batch")), bool(j.get("cached")))
                  for j in _judge_dicts(score) if isinstance(j.get("usage"), dict)]
    return calls


def _judge_dicts(score: Mapping[str, Any]) -> list[dict[str, Any]]:
    own = [j for j in score.get("judge_calls") or [] if isinstance(j, dict)]
    if own:
        return own
    return [j for t in score.get("turns") or [] if isinstance(t, dict) for j in _judge_dicts(t)]
