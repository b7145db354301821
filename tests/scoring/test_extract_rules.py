"""Answer extraction: hand-made cases (including the odd ones) and hypothesis properties."""

from __future__ import annotations

import asyncio
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit import ScriptedJudge
from toolsight.scoring.extract import (
    DEFAULT_EXTRACT_PROMPT,
    answer_section,
    answer_tag,
    boxed,
    choice_letter,
    final_answer,
    int_list,
    is_none_answer,
    label_set,
    llm_extract,
    number,
    register_few_shot,
)

SAFE_TEXT = st.text(alphabet=string.ascii_letters + string.digits + " .,:;!?-()\n", min_size=0, max_size=60)
OPTIONS = {"A": "a red circle", "B": "two blue squares", "C": "a green triangle", "D": "none of these shapes"}


# ----------------------------------------------------------------------------- tags, sections, boxed

def test_answer_tag_takes_the_last_complete_pair() -> None:
    assert answer_tag("<answer>a</answer> later <answer> b </answer>") == "b"
    assert answer_tag("<answer>a</answer> then <answer>unfinished") == "a"
    assert answer_tag("<answer>x <answer>y</answer>") == "y"
    assert answer_tag("<ANSWER>Up</Answer>") == "Up"
    assert answer_tag("<answer>   </answer>") is None
    assert answer_tag("no tags") is None and answer_tag("</answer><answer>") is None


def test_sections_boxed_and_final_answer_order() -> None:
    text = "### Reasoning\nstuff\n### Answer\n2, 3\n### Notes\nignored"
    assert answer_section(text) == "2, 3"
    assert answer_section("## Final Answer: 42") == "42"
    assert boxed(r"so \boxed{\frac{1}{2}} and \boxed{7}") == "7"
    assert boxed(r"\boxed{a{b}c}") == "a{b}c" and boxed(r"\boxed{open") is None
    got = final_answer(r"<answer>\boxed{12}</answer>")
    assert got is not None and (got.text, got.rule) == ("12", "answer tag + boxed")
    got = final_answer("blah\nFinal Answer: **B**")
    assert got is not None and got.text == "B" and got.rule == "final answer line"
    assert final_answer("I think it is\nprobably 3") is None  # never a guess
    assert final_answer("probably 3") is None
    got = final_answer(" 3 ", allow_plain=True)
    assert got is not None and got.text == "3" and got.rule == "plain response"


@given(SAFE_TEXT.filter(lambda s: s.strip() != ""), SAFE_TEXT, SAFE_TEXT)
def test_answer_tag_round_trip(inner: str, before: str, after: str) -> None:
    assert answer_tag(f"{before}<answer>{inner}</answer>{after}") == inner.strip()


@given(SAFE_TEXT)
def test_text_without_markup_yields_nothing(text: str) -> None:
    if "final answer" not in text.lower() and "answer" not in text.lower():
        assert final_answer(text + "\nmore lines\n") is None


# ----------------------------------------------------------------------------- multiple choice

def test_choice_letter_patterns() -> None:
    for text in ("B", "(b)", "B.", "**B**", "[B]", "B. two blue squares", "(B) two", "B) two", "B: two",
                 "The answer is B", "Answer: (B)", "option B", "The answer is B, not C"):
        assert choice_letter(text, OPTIONS) == "B", text
    assert choice_letter("Two Blue Squares.", OPTIONS) == "B"  # option text -> letter
    assert choice_letter("two blue square", OPTIONS) == "B"  # nearest match, clearly closest
    assert choice_letter("a purple hexagon", OPTIONS) is None  # not close enough to any option
    assert choice_letter("option B or option C", OPTIONS) is None  # ambiguous: never a guess
    assert choice_letter("E", OPTIONS) is None  # not an option letter
    assert choice_letter("a dog", None) is None  # 'a dog' is not answer A
    assert choice_letter("I think so", None) is None
    assert choice_letter("", OPTIONS) is None


@given(st.sampled_from(sorted(OPTIONS)), st.sampled_from(["{L}", "({L})", "{L}. {T}", "({L}) {T}", "{L}) {T}",
                                                          "Answer: {L}", "{T}", "**{L}**"]))
def test_choice_letter_finds_the_option(letter: str, template: str) -> None:
    assert choice_letter(template.format(L=letter, T=OPTIONS[letter]), OPTIONS) == letter


@given(SAFE_TEXT)
def test_choice_letter_only_returns_allowed_letters(text: str) -> None:
    got = choice_letter(text, OPTIONS)
    assert got is None or got in OPTIONS


# ----------------------------------------------------------------------------- numbers, lists, sets

def test_numbers() -> None:
    cases = {"42": 42.0, "-3.5": -3.5, "1,280": 1280.0, "$3.50": 3.5, "60%": 60.0, "3/4": 0.75, "¥970": 970.0,
             "The answer is 17.": 17.0, r"\boxed{13}": 13.0, "1e3": 1000.0, "−2": -2.0, "**7**": 7.0}
    for text, want in cases.items():
        assert number(text) == want, text
    for text in ("three", "3 apples and 2 pears", "3,50", "", "n/a", "1/0"):
        assert number(text) is None, text


@given(st.one_of(st.integers(-10**9, 10**9), st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 4))))
def test_number_round_trip(x: float) -> None:
    assert number(str(x)) == float(x)
    assert number(f"The answer is {x}") == float(x)
    if float(x).is_integer() and x >= 0:
        assert number(f"{int(x):,}") == float(x)


def test_int_lists() -> None:
    assert int_list("[3, 1, 2]") == [3, 1, 2]
    assert int_list("3,1 ,2") == [3, 1, 2] and int_list("3 1 2") == [3, 1, 2]
    assert int_list("1, 2 and 3") == [1, 2, 3] and int_list("1，2") == [1, 2]
    assert int_list("None") == [] and int_list("[]") == []
    assert int_list("[2-7, 11]") is None and int_list("Row 1: 1 2") is None and int_list("[[1, 2], [3]]") is None


@given(st.lists(st.integers(-999, 10**6), min_size=1, max_size=30), st.sampled_from([", ", ",", " ", " , "]),
       st.booleans())
def test_int_list_round_trip(xs: list[int], sep: str, brackets: bool) -> None:
    body = sep.join(str(x) for x in xs)
    assert int_list(f"[{body}]" if brackets else body) == xs


@settings(max_examples=200)
@given(st.text(max_size=80))
def test_extractors_never_raise(text: str) -> None:
    for fn in (answer_tag, answer_section, boxed, number, int_list, label_set, is_none_answer):
        fn(text)
    choice_letter(text, OPTIONS)
    final_answer(text, allow_plain=True)


def test_label_sets() -> None:
    assert label_set("1, 2") == label_set("2,1") == frozenset({"1", "2"})
    assert label_set("None") == label_set("none.") == label_set("**None**") == frozenset()
    assert label_set("[3]") == frozenset({"3"}) and label_set("2 and 5") == frozenset({"2", "5"})
    assert label_set("the hammer, obviously!") is None and label_set("use tool 3") == frozenset({"use", "tool", "3"})
    assert label_set("") is None
    assert is_none_answer("None of the above") and not is_none_answer("None of them work, but 3 might")


@given(st.lists(st.integers(0, 99), min_size=1, max_size=8, unique=True), st.randoms())
def test_label_set_ignores_order_and_spacing(xs: list[int], rnd: object) -> None:
    shuffled = list(xs)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert label_set(", ".join(map(str, xs))) == label_set(",".join(map(str, shuffled)))


# ----------------------------------------------------------------------------- LLM extractor

def test_llm_extract_uses_the_few_shot_slot_and_never_guesses() -> None:
    register_few_shot("toy", "\nEXAMPLES-FOR-TOY\n")
    judge = ScriptedJudge({"Q-APPLES": ["Final answer: 7"], "Q-COLOUR": ["NO ANSWER"]})
    got, call = asyncio.run(llm_extract(judge, DEFAULT_EXTRACT_PROMPT, "Q-APPLES: how many?", "seven, i.e. 7",
                                        benchmark="toy"))
    assert got == "7" and "EXAMPLES-FOR-TOY" in call.prompt and "seven, i.e. 7" in call.prompt
    assert call.seed == 0 and call.temperature == 0.0
    got, call = asyncio.run(llm_extract(judge, DEFAULT_EXTRACT_PROMPT, "Q-COLOUR?", "no idea"))
    assert got is None and call.reply == "NO ANSWER"
    got, call = asyncio.run(llm_extract(ScriptedJudge({"x": ["RAISE"]}), DEFAULT_EXTRACT_PROMPT, "x", "y"))
    assert got is None and call.error is not None
