"""Generic scorers on hand-made cases, and the scorer registry."""

from __future__ import annotations

import asyncio

import pytest

from toolsight.benchmarks.registry import get_scorer, scorer_names
from toolsight.scoring.base import Score, ScoreContext
from toolsight.scoring.generic import ExactMatchScorer, NumericScorer
from toolsight.scoring.registry import register_scorer
from toolsight.tasks.schema import Task, Turn


def one(answer: str | list[str] | None, **turn: object) -> Task:
    return Task(id="t", turns=[Turn(prompt="q", answer=answer, **turn)])  # type: ignore[arg-type]


def score(name: str, task: Task, *responses: str) -> Score:
    return asyncio.run(get_scorer(name).score(task, list(responses), ScoreContext()))


def test_exact_and_normalised_match() -> None:
    t = one(["Paris", "paris, france"])
    assert score("exact", t, "<answer> PARIS. </answer>").passed is True
    assert score("exact", t, "Paris, France").passed is True  # short plain response
    assert score("exact_strict", t, "<answer>paris</answer>").passed is False
    assert score("exact_strict", t, "<answer> Paris </answer>").passed is True
    s = score("exact", t, "Let me think.\nIt is probably Paris\nor Lyon")
    assert (s.value, s.passed, s.answer, s.explanation) == (0.0, False, None, "no answer")


def test_choice() -> None:
    opts = {"A": "cat", "B": "dog", "C": "bird"}
    t = one("B", options=opts, answer_type="choice")
    assert score("choice", t, "<answer>(B) dog</answer>").passed is True
    assert score("choice", t, "<answer>dog</answer>").passed is True  # option text -> letter
    assert score("choice", t, "<answer>C</answer>").passed is False
    s = score("choice", t, "<answer>B or C</answer>")
    assert s.answer is None and s.passed is False  # ambiguous: no answer, not a guess
    assert score("choice", one("dog", options=opts), "<answer>B</answer>").passed is True  # gold as text
    bad = score("choice", one("zebra", options=opts), "<answer>B</answer>")
    assert bad.error is not None and "not an option" in bad.error


def test_numeric_tolerance() -> None:
    assert score("numeric", one("16"), "<answer>$16.00</answer>").passed is True
    assert score("numeric", one("1,280"), "<answer>1280</answer>").passed is True
    assert score("numeric", one("0.5"), "<answer>0.51</answer>").passed is False
    assert score("numeric", one("0.5", meta={"abs_tol": 0.02}), "<answer>0.51</answer>").passed is True
    s = asyncio.run(NumericScorer(rel_tol=0.05).score(one("100"), ["<answer>104</answer>"], ScoreContext()))
    assert s.passed is True
    assert score("numeric", one("3"), "<answer>three</answer>").answer is None
    assert score("numeric", one("abc"), "<answer>3</answer>").error is not None


def test_set_iou_and_position() -> None:
    t = one("[2, 6, 7, 11]")
    s = score("set_iou", t, "<answer>[2, 6, 7]</answer>")
    assert s.value == pytest.approx(0.75) and s.passed is False
    assert score("set_iou", t, "<answer>11, 7, 6, 2</answer>").passed is True
    assert score("set_iou", t, "<answer>[2-7, 11]</answer>").answer is None  # ranges are not parsed
    assert score("set_iou", one(["1", "2"]), "<answer>[1, 2]</answer>").passed is True
    assert score("set_iou", one("[]"), "<answer>None</answer>").value == 1.0

    p = one("[1, 2, 3, 4]")
    assert score("position", p, "<answer>[1, 2, 4, 3]</answer>").value == pytest.approx(0.5)
    assert score("position", p, "<answer>1 2 3 4</answer>").passed is True
    s = score("position", p, "<answer>[1, 2, 3]</answer>")
    assert s.value == pytest.approx(0.75) and s.passed is False and "3 items given" in s.explanation


def test_label_sets() -> None:
    assert score("label_set", one("1, 2"), "<answer>2,1</answer>").passed is True
    assert score("label_set", one("None"), "<answer>none</answer>").passed is True
    assert score("label_set", one("None"), "<answer>3</answer>").passed is False
    assert score("label_set", one("2"), "<answer>2, 3</answer>").passed is False


def test_multi_turn_tasks_average_their_turns() -> None:
    t = Task(id="m", turns=[Turn(prompt="a", answer="x"), Turn(prompt="b", answer="y"), Turn(prompt="c")])
    s = score("exact", t, "<answer>x</answer>", "<answer>z</answer>")
    assert s.value == 0.5 and s.passed is False and len(s.turns) == 2
    assert score("exact", Task(id="n", turns=[Turn(prompt="a")]), "x").error is not None


def test_registry() -> None:
    names = scorer_names()
    for name in ("exact", "choice", "numeric", "set_iou", "position", "label_set", "semantic_judge", "rubric",
                 "visualtoolbench", "visbrowse"):
        assert name in names
        for mode in ("official", "corrected"):
            assert getattr(get_scorer(name, mode), "name", None)
    assert get_scorer("visualtoolbench", "official").mode == "official"  # type: ignore[attr-defined]
    with pytest.raises(KeyError, match=r"unknown scorer 'nope'; known scorers: .*choice"):
        get_scorer("nope")
    with pytest.raises(ValueError, match="unknown scoring mode"):
        get_scorer("exact", mode="strict")

    def factory(mode: str) -> ExactMatchScorer:
        return ExactMatchScorer()

    register_scorer("test-extra-scorer", factory)
    assert isinstance(get_scorer("test-extra-scorer", "corrected"), ExactMatchScorer)
    with pytest.raises(ValueError, match="already registered"):
        register_scorer("test-extra-scorer", lambda mode: ExactMatchScorer())
    register_scorer("test-extra-scorer", lambda mode: ExactMatchScorer(normalize=False), replace=True)
    assert get_scorer("test-extra-scorer").name == "exact_strict"  # type: ignore[attr-defined]
