"""Property tests for the effective-chain walk on random provenance DAGs (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolsight.log.trajectory import ToolCallRecord, Trajectory, TurnResult
from toolsight.metrics.chain import task_chain
from toolsight.tools.base import Artifact


@st.composite
def dags(draw: st.DrawFn) -> tuple[Trajectory, dict[str, list[str]], dict[str, str]]:
    """Inputs, then calls each consuming 1-2 earlier images and producing one image (a DAG)."""
    n_inputs = draw(st.integers(1, 3))
    n_calls = draw(st.integers(0, 12))
    images = [f"in{i}" for i in range(n_inputs)]
    arts = [Artifact(id=i, sha256=i, file=f"{i}.png", width=2, height=2, source="input") for i in images]
    calls: list[ToolCallRecord] = []
    parents: dict[str, list[str]] = {}
    producer: dict[str, str] = {}
    for c in range(n_calls):
        k = draw(st.integers(1, min(2, len(images))))
        ins = draw(st.lists(st.sampled_from(images), min_size=k, max_size=k, unique=True))
        out = f"a{c}"
        cid = f"c{c}"
        arts.append(Artifact(id=out, sha256=out, file=f"{out}.png", width=2, height=2, parents=tuple(ins),
                             source="tool", tool_call_id=cid))
        calls.append(ToolCallRecord(id=cid, turn=0, round=c + 1, name=f"t{c % 3}", arguments="{}", ok=True,
                                    artifacts=[out], inputs=ins))
        parents[out] = ins
        producer[out] = cid
        images.append(out)
    seen = draw(st.lists(st.sampled_from(images), min_size=1, max_size=6))
    return Trajectory(artifacts=arts, tool_calls=calls, turns=[TurnResult(index=0, seen_images=seen)]), parents, producer


def _ancestors(img: str, parents: dict[str, list[str]]) -> set[str]:
    out: set[str] = set()
    todo = [img]
    while todo:
        x = todo.pop()
        if x in out:
            continue
        out.add(x)
        todo.extend(parents.get(x, []))
    return out


@settings(max_examples=100, deadline=None)
@given(dags())
def test_effective_calls_are_exactly_the_producers_of_ancestors(
    case: tuple[Trajectory, dict[str, list[str]], dict[str, str]],
) -> None:
    traj, parents, producer = case
    ch = task_chain(traj)
    last = traj.turns[0].seen_images[-1]
    # independent oracle: the final image (one image per round here) and all its ancestors
    want = {producer[a] for a in _ancestors(last, parents) if a in producer}
    assert set(ch.effective_calls) == want
    assert ch.length <= ch.total_calls == len(traj.tool_calls)
    assert ch.turns[0].reaches_input  # every image in a DAG descends from an input
    order = [c.id for c in traj.tool_calls]
    assert ch.effective_calls == [c for c in order if c in want]  # call order kept


@settings(max_examples=100, deadline=None)
@given(dags())
def test_adding_a_dead_end_call_changes_nothing(case: tuple[Trajectory, dict[str, list[str]], dict[str, str]]) -> None:
    traj, _, _ = case
    before = task_chain(traj).effective_calls
    dead = Artifact(id="dead", sha256="dead", file="dead.png", width=2, height=2, parents=("in0",),
                    source="tool", tool_call_id="cdead")
    traj.artifacts.append(dead)
    traj.tool_calls.insert(0, ToolCallRecord(id="cdead", turn=0, round=0, name="x", arguments="{}", ok=True,
                                             artifacts=["dead"], inputs=["in0"]))
    after = task_chain(traj)
    assert after.effective_calls == before and after.total_calls == len(traj.tool_calls)
