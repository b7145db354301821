"""How the agent frameworks read a benchmark's turn (`QuestionView`, `agents/framework.py`): the
options taken out of a prompt that lists them, the templates, and each benchmark's declaration
reaching every setting it runs."""

from __future__ import annotations

import pytest

from toolsight.agents.framework import (
    QuestionViewError,
    option_texts,
    question_only,
    question_text,
    strip_options,
)
from toolsight.agents.settings import AgentSettings, QuestionView
from toolsight.benchmarks.registry import builtin_names, get_benchmark
from toolsight.tasks.schema import Turn

MAZE = ("Please complete a maze game shown in the figure. Which of the following options can lead out?\n"
        "A. UDRR\nB. DDRR\nC. No answer")


def test_strip_options_takes_out_the_listing() -> None:
    opts = {"A": "UDRR", "B": "DDRR", "C": "No answer"}
    assert strip_options(MAZE, opts) == MAZE.split("\nA.")[0]
    # VTC-Bench's layout: a blank line between options and an "Options:" header above them
    vtc = "How many discs?\n\nOptions:\nA. 8\n\nB. 13\n"
    assert strip_options(vtc, {"A": "8", "B": "13"}) == "How many discs?"
    # other letterings, and text after the options stays
    assert strip_options("Q?\n(A) red\n(B) blue\nAnswer with a letter.", {"A": "red", "B": "blue"}) == \
        "Q?\nAnswer with a letter."
    assert strip_options("Q?\nA: 65%\nB: 73%", {"A": "65%", "B": "73%"}) == "Q?"
    # unchanged unless every option has its own line (inline options, or none)
    inline = "Is it (A) red (B) blue?"
    assert strip_options(inline, {"A": "red", "B": "blue"}) == inline
    assert strip_options(MAZE, None) == MAZE


def test_templates_read_the_turn() -> None:
    turn = Turn(prompt=MAZE, options={"A": "UDRR", "B": "DDRR", "C": "No answer"}, meta={"question": "Which way?"})
    default = AgentSettings()
    assert question_text(default, turn) == MAZE
    assert question_only(default, turn) == MAZE.split("\nA.")[0]
    assert option_texts(turn) == ["UDRR", "DDRR", "No answer"]
    own = AgentSettings(question_view=QuestionView(text="{question}\n{options}", question="{question}"))
    assert question_text(own, turn) == "Which way?\nA. UDRR\nB. DDRR\nC. No answer"
    assert question_only(own, turn) == "Which way?"
    with pytest.raises(QuestionViewError, match=r"names 'cot_prompt'.*\{prompt\}"):
        question_text(AgentSettings(question_view=QuestionView(text="{cot_prompt}")), turn)


@pytest.mark.parametrize("name", [n for n in builtin_names() if n != "starter"])
def test_every_benchmark_declares_its_view_for_every_setting(name: str) -> None:
    bench = get_benchmark(name)
    declared = type(bench).question_view
    assert "question_view" in type(bench).__dict__, f"{name} declares no question_view"
    for setting in bench.settings():
        for loop in ("official", "toolsight"):
            assert bench.setting(setting, loop).question_view == declared, (name, setting, loop)


def test_a_setting_of_its_own_keeps_its_view() -> None:
    bench = type(get_benchmark("tir-bench"))()  # an instance of its own: its settings are replaced below
    own = QuestionView(text="{prompt}\n(own)")
    assert bench.question_view.question == "{prompt_without_options}"
    original = bench.settings

    def settings() -> dict[str, AgentSettings]:
        return {k: v.model_copy(update={"question_view": own}) for k, v in original().items()}

    bench.settings = settings  # type: ignore[method-assign]
    assert bench.setting("direct").question_view == own
