"""The effective-chain walk on hand-built provenance graphs: branches, dead ends, several inputs."""

from __future__ import annotations

from toolsight.log.trajectory import ToolCallRecord, Trajectory, TurnResult
from toolsight.metrics.chain import task_chain, turn_chain
from toolsight.tools.base import Artifact


def art(aid: str, *parents: str, call: str | None = None) -> Artifact:
    return Artifact(id=aid, sha256=aid, file=f"{aid}.png", width=8, height=8, parents=parents,
                    source="tool" if call else "input", tool_call_id=call)


def call(cid: str, name: str, out: list[str], inputs: list[str], turn: int = 0, rnd: int = 1,
         ok: bool = True) -> ToolCallRecord:
    return ToolCallRecord(id=cid, turn=turn, round=rnd, name=name, arguments="{}", ok=ok, artifacts=out,
                          inputs=inputs)


def traj(arts: list[Artifact], calls: list[ToolCallRecord], seen: list[list[str]]) -> Trajectory:
    return Trajectory(artifacts=arts, tool_calls=calls,
                      turns=[TurnResult(index=i, seen_images=s) for i, s in enumerate(seen)])


def test_linear_chain_with_dead_end_branch() -> None:
    # in -> c1(crop) -> a1 -> c3(rotate) -> a3 (seen last); in -> c2(resize) -> a2 is a dead end
    t = traj(
        [art("in"), art("a1", "in", call="c1"), art("a2", "in", call="c2"), art("a3", "a1", call="c3")],
        [call("c1", "crop", ["a1"], ["in"], rnd=1), call("c2", "resize", ["a2"], ["in"], rnd=2),
         call("c3", "rotate", ["a3"], ["a1"], rnd=3)],
        [["in", "a1", "a2", "a3"]],
    )
    ch = task_chain(t)
    assert ch.effective_calls == ["c1", "c3"]
    assert ch.total_calls == 3
    assert ch.turns[0].reaches_input
    assert ch.turns[0].final_images == ["a3"]


def test_last_seen_image_decides_not_the_last_call() -> None:
    # the model last looked at a2 (from c2); c3 ran after but its image was never shown
    t = traj(
        [art("in"), art("a1", "in", call="c1"), art("a2", "a1", call="c2"), art("a3", "a2", call="c3")],
        [call("c1", "crop", ["a1"], ["in"], rnd=1), call("c2", "zoom", ["a2"], ["a1"], rnd=2),
         call("c3", "blur", ["a3"], ["a2"], rnd=3)],
        [["in", "a1", "a2"]],
    )
    assert task_chain(t).effective_calls == ["c1", "c2"]


def test_several_inputs_merge() -> None:
    # two input images, each cropped, then combined by one call: all three calls are effective
    t = traj(
        [art("inA"), art("inB"), art("a1", "inA", call="c1"), art("b1", "inB", call="c2"),
         art("m", "a1", "b1", call="c3"), art("x", "inA", call="c4")],
        [call("c1", "crop", ["a1"], ["inA"]), call("c2", "crop", ["b1"], ["inB"], rnd=2),
         call("c4", "flip", ["x"], ["inA"], rnd=3), call("c3", "stack", ["m"], ["a1", "b1"], rnd=4)],
        [["inA", "inB", "a1", "b1", "x", "m"]],
    )
    ch = task_chain(t)
    assert ch.effective_calls == ["c1", "c2", "c3"]
    assert ch.length == 3


def test_same_round_outputs_are_all_final() -> None:
    # one code call produced two images shown together; the last one alone would miss c1's output
    t = traj(
        [art("in"), art("p", "in", call="c1"), art("q", "in", call="c2"), art("r", "q", call="c3")],
        [call("c1", "crop", ["p"], ["in"], rnd=1), call("c2", "crop", ["q"], ["in"], rnd=2),
         call("c3", "rotate", ["r"], ["q"], rnd=2)],
        [["in", "p", "q", "r"]],
    )
    ch = turn_chain(t, 0)
    assert ch.final_images == ["q", "r"]
    assert ch.calls == ["c2", "c3"]


def test_answer_from_input_means_empty_chain() -> None:
    t = traj([art("in"), art("a1", "in", call="c1")], [call("c1", "crop", ["a1"], ["in"])], [["a1", "in"]])
    ch = task_chain(t)
    assert ch.effective_calls == []
    assert ch.turns[0].reaches_input


def test_failed_and_textonly_calls_are_never_effective() -> None:
    t = traj(
        [art("in"), art("a1", "in", call="c2")],
        [call("c1", "crop", [], ["in"], ok=False), call("c2", "crop", ["a1"], ["in"], rnd=2),
         call("c3", "calculator", [], [], rnd=3)],
        [["in", "a1"]],
    )
    ch = task_chain(t)
    assert ch.effective_calls == ["c2"]
    assert ch.total_calls == 3


def test_parentless_artifact_falls_back_to_call_inputs() -> None:
    # code-made artifact recorded without parents: the producing call's inputs continue the walk
    t = traj(
        [art("in"), art("a1", "in", call="c1"), Artifact(id="a2", sha256="a2", file="a2.png", width=8, height=8,
                                                         source="tool", tool_call_id="c2")],
        [call("c1", "crop", ["a1"], ["in"]), call("c2", "python", ["a2"], ["a1"], rnd=2)],
        [["in", "a2"]],
    )
    assert task_chain(t).effective_calls == ["c1", "c2"]


def test_multi_turn_union_counts_each_call_once() -> None:
    # turn 1 builds on turn 0's crop; c1 is on both turns' paths but counted once
    t = traj(
        [art("in"), art("a1", "in", call="c1"), art("a2", "a1", call="c2"), art("z", "in", call="c3")],
        [call("c1", "crop", ["a1"], ["in"], turn=0), call("c3", "resize", ["z"], ["in"], turn=0, rnd=2),
         call("c2", "zoom", ["a2"], ["a1"], turn=1)],
        [["in", "z", "a1"], ["a2"]],
    )
    ch = task_chain(t)
    assert ch.turns[0].final_images == ["a1"]
    assert ch.turns[0].calls == ["c1"]
    assert ch.turns[1].calls == ["c1", "c2"]
    assert ch.effective_calls == ["c1", "c2"]


def test_cycle_in_bad_provenance_terminates() -> None:
    t = traj(
        [art("in"), art("a", "b", call="c1"), art("b", "a", call="c2")],
        [call("c1", "x", ["a"], ["b"]), call("c2", "y", ["b"], ["a"], rnd=2)],
        [["b"]],
    )
    ch = task_chain(t)
    assert ch.effective_calls == ["c1", "c2"]
    assert not ch.turns[0].reaches_input


def test_no_turns_or_nothing_seen() -> None:
    assert task_chain(Trajectory()).effective_calls == []
    t = traj([art("in")], [], [[]])
    assert task_chain(t).turns[0].final_images == []


def test_each_output_of_a_two_output_call_follows_its_own_parents() -> None:
    # c3 took a1 (crop) and b1 (rotate) and made p from a1 and q from b1; the model looked at p
    # only. Walking c3's inputs instead of p's parents would add the rotate (c2): a wrong step.
    t = traj(
        [art("in"), art("a1", "in", call="c1"), art("b1", "in", call="c2"),
         art("p", "a1", call="c3"), art("q", "b1", call="c3")],
        [call("c1", "crop", ["a1"], ["in"], rnd=1), call("c2", "rotate", ["b1"], ["in"], rnd=2),
         call("c3", "python", ["p", "q"], ["a1", "b1"], rnd=3)],
        [["in", "a1", "b1", "p"]],
    )
    ch = task_chain(t)
    assert ch.turns[0].final_images == ["p"]
    assert ch.effective_calls == ["c1", "c3"]


def test_an_input_image_ends_the_walk_even_when_a_call_returned_it() -> None:
    # The artifact store is content-addressed: a call whose output equals an input image (a
    # rotation by 0, a full-frame crop) returns the input's own id, so the input has a producing
    # call. The walk must still stop at an input image and never count that call.
    t = traj(
        [art("in"), art("a1", "in", call="c2")],
        [call("c1", "rotate", ["in"], ["in"], rnd=1), call("c2", "crop", ["a1"], ["in"], rnd=2)],
        [["in", "a1"]],
    )
    ch = task_chain(t)
    assert ch.effective_calls == ["c2"]
    assert ch.turns[0].reaches_input
    # answering from the input itself: no call is effective, even the one that "made" it
    t2 = traj([art("in")], [call("c1", "rotate", ["in"], ["in"])], [["in"]])
    assert task_chain(t2).effective_calls == []
    assert task_chain(t2).turns[0].reaches_input


def test_chain_is_in_call_order_not_id_order() -> None:
    # ids that sort the other way round ("z-crop" ran first): the chain lists calls as they ran
    t = traj(
        [art("in"), art("a1", "in", call="z-crop"), art("a2", "a1", call="a-rotate")],
        [call("z-crop", "crop", ["a1"], ["in"], rnd=1), call("a-rotate", "rotate", ["a2"], ["a1"], rnd=2)],
        [["in", "a2"]],
    )
    assert turn_chain(t, 0).calls == ["z-crop", "a-rotate"]
    assert task_chain(t).effective_calls == ["z-crop", "a-rotate"]


def test_producer_found_from_either_side_of_the_record() -> None:
    # a1 is listed in its call's artifacts but its record has no tool_call_id; a2's call lists no
    # artifacts but a2's record names the call: both producers are found
    t = traj(
        [art("in"), Artifact(id="a1", sha256="a1", file="a1.png", width=8, height=8, parents=("in",), source="tool"),
         art("a2", "a1", call="c2")],
        [call("c1", "crop", ["a1"], ["in"], rnd=1), call("c2", "python", [], ["a1"], rnd=2)],
        [["in", "a2"]],
    )
    assert task_chain(t).effective_calls == ["c1", "c2"]
    # a record naming a call that is not in the trajectory has no producer: the walk ends there
    t2 = traj([art("in"), art("a1", "in", call="gone")], [], [["a1"]])
    ch = task_chain(t2)
    assert ch.effective_calls == [] and ch.turns[0].reaches_input


def test_every_branch_is_walked_after_one_reaches_an_input() -> None:
    # c2 combined the input itself with c1's crop: reaching the input on one branch must not stop
    # the walk of the other
    t = traj(
        [art("in"), art("a1", "in", call="c1"), art("m", "a1", "in", call="c2")],
        [call("c1", "crop", ["a1"], ["in"], rnd=1), call("c2", "paste", ["m"], ["a1", "in"], rnd=2)],
        [["in", "m"]],
    )
    assert task_chain(t).effective_calls == ["c1", "c2"]
    t_rev = traj(
        [art("in"), art("a1", "in", call="c1"), art("m", "in", "a1", call="c2")],
        [call("c1", "crop", ["a1"], ["in"], rnd=1), call("c2", "paste", ["m"], ["in", "a1"], rnd=2)],
        [["in", "m"]],
    )
    assert task_chain(t_rev).effective_calls == ["c1", "c2"]


def test_turn_numbers_and_a_turn_past_the_end() -> None:
    t = traj([art("in"), art("a1", "in", call="c1")], [call("c1", "crop", ["a1"], ["in"])], [["a1"], ["in"]])
    ch = task_chain(t)
    assert [tc.turn for tc in ch.turns] == [0, 1]
    past = turn_chain(t, 2)
    assert (past.turn, past.calls, past.final_images, past.reaches_input) == (2, [], [], False)


def test_an_image_reached_twice_does_not_end_the_walk() -> None:
    # m was made from z, x and y, and y from x: x is queued twice; meeting it the second time must
    # skip it, not stop the walk before z (and so c2) is visited
    t = traj(
        [art("in"), art("x", "in", call="c1"), art("z", "in", call="c2"), art("y", "x", call="c3"),
         art("m", "z", "x", "y", call="c4")],
        [call("c1", "crop", ["x"], ["in"], rnd=1), call("c2", "crop", ["z"], ["in"], rnd=2),
         call("c3", "rotate", ["y"], ["x"], rnd=3), call("c4", "stack", ["m"], ["z", "x", "y"], rnd=4)],
        [["in", "m"]],
    )
    assert task_chain(t).effective_calls == ["c1", "c2", "c3", "c4"]
