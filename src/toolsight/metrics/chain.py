"""The effective toolchain: the tool calls on the provenance path of the images the model last saw.

For each turn, take the last image shown to the model before it answered (and the other images
produced in that same round), then walk artifact provenance (`Artifact.parents`, or the
producing call's `inputs` when an artifact records no parents) back to the task's input images.
Every tool call that produced an artifact on that path is effective; calls whose images lead
nowhere (dead ends) or that produced no image are not. This is VTC-Bench's "minimal sequence of
tool calls that produces the final answer, found by backtracking from the output to the input".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolsight.log.trajectory import ToolCallRecord, Trajectory


@dataclass
class TurnChain:
    """The effective chain of one turn."""

    turn: int
    final_images: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # effective call ids, in call order
    reaches_input: bool = False


@dataclass
class TaskChain:
    """Per-turn chains plus the task-level effective call set (union over turns)."""

    turns: list[TurnChain]
    effective_calls: list[str]
    total_calls: int

    @property
    def length(self) -> int:
        return len(self.effective_calls)


def _producers(traj: Trajectory) -> dict[str, ToolCallRecord]:
    by_call = {c.id: c for c in traj.tool_calls}
    out: dict[str, ToolCallRecord] = {}
    for c in traj.tool_calls:
        for a in c.artifacts:
            out.setdefault(a, c)
    for art in traj.artifacts:
        if art.id not in out and art.tool_call_id and art.tool_call_id in by_call:
            out[art.id] = by_call[art.tool_call_id]
    return out


def _final_images(seen: list[str], producers: dict[str, ToolCallRecord]) -> list[str]:
    """The last image seen, plus every other seen image produced in the same turn and round."""
    seen = [s for s in seen if s]
    if not seen:
        return []
    last = seen[-1]
    call = producers.get(last)
    if call is None:
        return [last]
    key = (call.turn, call.round)
    out: list[str] = []
    for s in seen:
        c = producers.get(s)
        if c is not None and (c.turn, c.round) == key and s not in out:
            out.append(s)
    return out


def turn_chain(traj: Trajectory, turn_index: int, producers: dict[str, ToolCallRecord] | None = None) -> TurnChain:
    """The effective chain of one turn (see the module docstring)."""
    prod = producers if producers is not None else _producers(traj)
    arts = {a.id: a for a in traj.artifacts}
    order = {c.id: i for i, c in enumerate(traj.tool_calls)}
    seen = traj.turns[turn_index].seen_images if turn_index < len(traj.turns) else []
    finals = _final_images(seen, prod)
    res = TurnChain(turn=turn_index, final_images=finals)
    effective: set[str] = set()
    visited: set[str] = set()
    stack = list(finals)
    while stack:
        aid = stack.pop()
        if aid in visited:
            continue
        visited.add(aid)
        art = arts.get(aid)
        call = prod.get(aid)
        if call is None or (art is not None and art.source == "input"):
            res.reaches_input = True  # an input image (or one no call produced): the walk ends here
            continue
        effective.add(call.id)
        parents = list(art.parents) if art is not None and art.parents else list(call.inputs)
        stack.extend(p for p in parents if p not in visited)
    res.calls = sorted(effective, key=order.__getitem__)  # every effective call is in the trajectory
    return res


def task_chain(traj: Trajectory) -> TaskChain:
    """Per-turn chains and the task's effective calls (each call counted once across turns)."""
    prod = _producers(traj)
    order = {c.id: i for i, c in enumerate(traj.tool_calls)}
    turns = [turn_chain(traj, i, prod) for i in range(len(traj.turns))]
    union: set[str] = set()
    for t in turns:
        union.update(t.calls)
    return TaskChain(
        turns=turns,
        effective_calls=sorted(union, key=order.__getitem__),
        total_calls=len(traj.tool_calls),
    )
