"""TIR-Bench: the official mode reproduces every line of ../shared/fidelity/tir-bench.jsonl; corrected
mode fixes the listed bugs; the Task-level scorer maps tasks onto official items."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from fidelitykit import vectors
from toolsight.benchmarks.base import BenchmarkError
from toolsight.benchmarks.registry import get_scorer
from toolsight.benchmarks.tir_bench import scorer as tir
from toolsight.benchmarks.tir_bench.benchmark import TIRBenchmark
from toolsight.benchmarks.tir_bench.data import load_tir_bench
from toolsight.benchmarks.tir_bench.scorer import (
    TirOfficialCrash,
    TirScorer,
    extract_consecutive_n_squared,
    jigsaw_iou,
    judge_choice,
    parse_prompt_options,
    position_accuracy,
    random_guess_accuracy,
    tir_score_item,
)
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolSpec
from toolsight.scoring._levenshtein import distance, most_similar
from toolsight.scoring.base import Score, ScoreContext
from toolsight.scoring.extract import answer_tag
from toolsight.tasks.schema import ImageRef, Task, Turn


def _vectors() -> list[dict[str, Any]]:
    return vectors("tir-bench")


def test_official_reproduces_every_vector() -> None:
    rows = _vectors()
    assert len(rows) >= 100
    wrong = []
    for r in rows:
        got = tir_score_item(r["input"], "official")
        if float(got) != float(r["output"]["true_false"]):
            wrong.append((r["vector_id"], r["case"], got, r["output"]["true_false"]))
    assert wrong == []



def _item(task: str, answer: str, extracted: str | None, prompt: str = "", **extra: Any) -> dict[str, Any]:
    return {"id": 1, "task": task, "prompt": prompt, "answer": answer, "image_1": f"data/{task}/1.jpg",
            "model_response": extracted or "", "extracted_answer": extracted, **extra}


RGB = "Which channel dominates in this RGB image? A. red B. blue C. green"


def test_rgb_overwrite_bug_and_its_fix() -> None:
    # official: 'blue' maps to B, then the loop tests 'G'+'B' against the prompt and 'RGB' matches
    assert tir_score_item(_item("color", "B", "blue", RGB), "official") == 0.0
    assert tir_score_item(_item("color", "B", "blue", RGB), "corrected") == 1.0
    assert tir_score_item(_item("color", "C", "blue", RGB), "corrected") == 0.0


@pytest.mark.parametrize(("gold", "extracted", "official", "corrected"), [
    ("A", "", 1.0, 0.0),             # empty extraction becomes 'A'
    ("A", None, 1.0, 0.0),
    ("B", "b", 0.0, 1.0),            # lowercase letter → Levenshtein tie → 'A'
    ("D", "Answer: D", 0.0, 1.0),    # 'A' comes first in the text
    ("B", "The answer is B, not C", 1.0, 1.0),
    ("C", "(C)", 1.0, 1.0),
    ("C", "C) 31%", 1.0, 1.0),
    ("B", "39%", 0.0, 1.0),          # option text with 'A: x' prompt style
    ("A", "no idea", 1.0, 0.0),      # unmapped text without a capital → 'A'
    ("A", "A D", 1.0, 0.0),          # two letters named: official takes the first, corrected none
    ("D", "D, A", 0.0, 0.0),         # official: the first choice letter found in the text (A)
    ("B", "B 39%", 1.0, 1.0),        # a label followed by its own option's text
])
def test_choice_quirks(gold: str, extracted: str | None, official: float, corrected: float) -> None:
    prompt = "Proportion occupied by the dog?\nA: 23%\nB: 39%\nC: 31%\nD: 15%\n"
    assert tir_score_item(_item("refcoco", gold, extracted, prompt), "official") == official
    assert tir_score_item(_item("refcoco", gold, extracted, prompt), "corrected") == corrected


def test_word_gold_anagram_and_case() -> None:
    assert judge_choice("kcalb", "black", "") == 1.0  # sorted characters equal
    assert judge_choice("Black", "black", "") == 0.0
    assert judge_choice("kcalb", "black", "", "corrected") == 0.0
    assert judge_choice("Black", "black", "", "corrected") == 1.0
    assert judge_choice("C, D", "CD", "", "corrected") == 1.0
    assert judge_choice("C, D", "CD", "") == 0.0


def test_ocr_substring_and_overrides() -> None:
    item = _item("ocr", "12", None, model_response="the number is 120")
    assert tir_score_item(item, "official") == 1.0
    assert tir_score_item(item, "corrected") == 0.0
    over = _item("ocr", "Hotel", None, image_1="data/ocr/160.jpg", model_response="mobile")
    assert tir_score_item(over, "official") == 1.0   # '60.jpg' in '160.jpg'
    assert tir_score_item(over, "corrected") == 0.0
    real = _item("ocr", "x", None, image_1="data/ocr/60.jpg", model_response="MOBILE")
    assert tir_score_item(real, "corrected") == 1.0


def test_word_search_spot_difference_and_jigsaw() -> None:
    assert tir_score_item(_item("word_search", "36, 69", "[36, 69, 70]"), "official") == 1.0
    assert tir_score_item(_item("word_search", "36, 69", "[36, 69, 70]"), "corrected") == 0.0
    assert tir_score_item(_item("word_search", "36, 69", "36，69"), "corrected") == 1.0
    assert tir_score_item(_item("spot_difference", "2, 6, 7, 11", "[2, 6, 7, 11] (4 patches)"), "official") == 0.8
    assert tir_score_item(_item("spot_difference", "2, 6, 7, 11", "[2, 6, 7, 11] (4 patches)"), "corrected") == 1.0
    assert tir_score_item(_item("spot_difference", "5", "[5]"), "official") == 0.0
    jig = _item("jigsaw", "[4, 1, 8, 9, 3, 6, 2, 7, 5]", "[4, 1, 8, 9, 3, 6, 2, 5, 7]",
                meta_data={"difficulty": 3})
    assert tir_score_item(jig, "official") == pytest.approx(7 / 9)
    assert tir_score_item(jig, "official", jigsaw_rule="iou") == pytest.approx(7 / 11)
    nested = dict(jig, extracted_answer="[[4, 1, 8], [9, 3, 6], [2, 7, 5]]")
    assert tir_score_item(nested, "official") == 0.0
    assert tir_score_item(nested, "corrected") == 1.0


def test_helpers() -> None:
    assert extract_consecutive_n_squared("First 1 2 3 then 4 1 8 9 3 6 2 7 5", 3) == [4, 1, 8, 9, 3, 6, 2, 7, 5]
    assert position_accuracy([1, 2, 3, 4], [1, 2, 4, 3]) == 0.5
    assert jigsaw_iou([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert (distance("kitten", "sitting"), distance("", "abc"), distance("B", "B")) == (3, 3, 0)
    assert most_similar("xyz", ["A", "B"]) == "A"
    assert parse_prompt_options("Pick (A) #E50444 (B) #040D44 (C) #E50048") == {
        "A": "#E50444", "B": "#040D44", "C": "#E50048"}
    assert parse_prompt_options("How many?\nA 1 2 3\nB 2 3 4") == {"A": "1 2 3", "B": "2 3 4"}


def test_number_golds_and_math_verify_fallback() -> None:
    assert tir_score_item(_item("math", "0.6", "60%"), "official") == 1.0
    assert tir_score_item(_item("math", "3.5", "$3.50"), "official") == 1.0
    assert tir_score_item(_item("math", "10", "1 0"), "official") == 1.0
    assert tir_score_item(_item("math", "10", "1 0"), "corrected") == 0.0
    assert tir_score_item(_item("math", "3", "three"), "official") == 0.0


def test_type_four_gold_crashes_official_only() -> None:
    with pytest.raises(TirOfficialCrash, match="question_id"):
        tir_score_item(_item("math", "[3, 6]", "[3, 6]"), "official")
    assert tir_score_item(_item("math", "[3, 6]", "[3, 6]"), "corrected") == 1.0


# --------------------------------------------------------------------------- Task-level scorer


def _task(key: str, answer: str, prompt: str, **meta: Any) -> Task:
    opts = parse_prompt_options(prompt)
    return Task(id=f"tir-{key}", benchmark="tir-bench", tags={"task": key},
                turns=[Turn(prompt=prompt, answer=answer, options=opts, images=[ImageRef(path=f"data/{key}/7.jpg")],
                            meta=meta)])


def _score(scorer: TirScorer, task: Task, response: str) -> Score:
    return asyncio.run(scorer.score(task, [response], ScoreContext()))


def test_scorer_maps_tasks_onto_official_items() -> None:
    t = _task("refcoco", "B", "Proportion?\nA: 23%\nB: 39%\nC: 31%")
    s = _score(TirScorer("official"), t, "I measured it.\n<answer>B</answer>")
    assert (s.value, s.passed, s.answer, s.scorer) == (1.0, True, "B", "tir-bench")
    # the default extractor reduces option text to its letter, as the GPT extractor does ...
    assert _score(TirScorer("official"), t, "<answer>39%</answer>").answer == "B"
    # ... kept verbatim, the official rule does not map text in the 'A: x' style; corrected does
    verbatim = {"extractor": lambda response, task: answer_tag(response)}
    assert _score(TirScorer("official", **verbatim), t, "<answer>39%</answer>").value == 0.0  # type: ignore[arg-type]
    assert _score(TirScorer("corrected", **verbatim), t, "<answer>39%</answer>").value == 1.0  # type: ignore[arg-type]
    jig = _task("jigsaw", "[2, 1, 4, 3]", "Order the pieces (n = 2).", difficulty=2)
    assert _score(TirScorer("official"), jig, "<answer>[2, 1, 3, 4]</answer>").value == 0.5
    ocr = _task("ocr", "EXIT", "What is written?")
    assert _score(TirScorer("official"), ocr, "The sign says EXIT.").value == 1.0
    s = _score(TirScorer("official"), t, "After looking closely, the answer is B.")
    assert (s.answer, s.value) == ("B", 1.0)  # plain reply reduced to the letter it names
    s = _score(TirScorer("official"), t, "<answer>The answer is B</answer>")
    assert (s.answer, s.value) == ("B", 1.0)
    bad = _task("math", "[3, 6]", "Which?")
    s = _score(TirScorer("official"), bad, "<answer>[3, 6]</answer>")
    assert s.error is not None and "question_id" in s.error


def test_registry_and_random_guess() -> None:
    assert isinstance(get_scorer("tir-bench", "corrected"), TirScorer)
    assert get_scorer("tir-bench-iou").name == "tir-bench-iou"  # type: ignore[attr-defined]
    assert random_guess_accuracy(_task("color", "A", "Pick (A) x (B) y (C) z (D) w")) == 0.25
    assert random_guess_accuracy(_task("maze", "7", "How many turns?")) == 0.0
    with pytest.raises(ValueError, match="official"):
        TirScorer("strict")  # type: ignore[arg-type]


class Extractor(Model):
    """Replies with a fixed text; records the messages it got."""

    def __init__(self, reply: str) -> None:
        super().__init__("scripted/extractor")
        self.reply = reply
        self.messages: list[list[Message]] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.messages.append(messages)
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text=self.reply)]))


def test_llm_extractor_uses_official_prompt_and_demos(tmp_path: Path) -> None:
    demo_file = tmp_path / "demo_prompts.py"
    demo_file.write_text('demo_prompt_color = """\nHEADER\n\nQuestion: q\n\nExtracted answer: B\n"""\n'
                         "import os\nx = 1\n", encoding="utf-8")
    demos = tir.load_demo_prompts(demo_file)
    assert demos == {"color": '\nHEADER\n\nQuestion: q\n\nExtracted answer: B\n'}
    bench = TIRBenchmark()
    bench.configure({"demo_prompts": str(demo_file)})  # `-B demo_prompts=FILE`: the scorers get the demos
    t = _task("color", "A", "Pick (A) #E50444 (B) #040D44")
    ext = Extractor("A")
    llm = bench.scorers()["tir-bench-llm"]("official")
    s = asyncio.run(llm.score(t, ["It is the first one."], ScoreContext(judge=ext)))
    assert (s.value, s.answer, len(s.judge_calls)) == (1.0, "A", 1)
    system, user = ext.messages[0]
    assert (system.role, system.text) == ("system", " Assistant is a large language model trained by OpenAI.")
    assert user.text == ("HEADER\n\nQuestion: q\n\nExtracted answer: B\n\nQuestion: Pick (A) #E50444 (B) #040D44"
                         "\n\nModel response: It is the first one.\n\nExtracted answer: ")
    # without the option, the demo is only its header (and no scorer keeps another run's demos)
    plain = Extractor("A")
    asyncio.run(get_scorer("tir-bench-llm").score(t, ["It is the first one."], ScoreContext(judge=plain)))
    assert plain.messages[0][1].text.startswith(tir.DEMO_HEADER + "\n\nQuestion: Pick")
    assert tir.extraction_prompt("maze", "q", "r", demos).startswith(tir.DEMO_HEADER + "\n\nQuestion: q")
    s = asyncio.run(get_scorer("tir-bench-llm").score(t, ["x"], ScoreContext()))
    assert s.error is not None and "--judge" in s.error
    with pytest.raises(ValueError, match="No such file"):
        tir.load_demo_prompts(tmp_path / "missing.py")
    (tmp_path / "other.py").write_text("x = 'y'\n", encoding="utf-8")
    with pytest.raises(ValueError, match="demo_prompt_"):
        tir.load_demo_prompts(tmp_path / "other.py")
    with pytest.raises(BenchmarkError, match=r"-B demo_prompts: .*demo_prompt_"):
        bench.configure({"demo_prompts": str(tmp_path / "other.py")})
    with pytest.raises(BenchmarkError, match=r"-B demo_prompt: .*options of tir-bench: demo_prompts"):
        bench.configure({"demo_prompt": "x"})


def test_official_end_to_end_through_the_loader(tmp_path: Path) -> None:
    """Every vector as a dataset record → TIR-Bench loader → Task → TirScorer on a response whose
    `<answer>` tag holds the vector's extracted answer (taken verbatim by a custom extractor, as the
    GPT step wrote it): the same score as the official script."""
    rows = _vectors()
    records = [{k: v for k, v in r["input"].items() if k not in ("model_response", "extracted_answer")} | {"id": i}
               for i, r in enumerate(rows)]
    (tmp_path / "TIR-Bench.json").write_text(json.dumps(records), encoding="utf-8")
    _, tasks = load_tir_bench(tmp_path, check_images=False)
    scorer = TirScorer(extractor=lambda response, task: answer_tag(response))
    wrong = []
    for r, t in zip(rows, tasks, strict=True):
        inp = r["input"]
        if inp["task"] == "ocr":
            mr = inp["model_response"]
            response = mr[0] if isinstance(mr, list) else mr
        else:
            response = f"<answer>{inp['extracted_answer']}</answer>" if inp["extracted_answer"] else ""
        s = asyncio.run(scorer.score(t, [response], ScoreContext()))
        if s.error is not None or s.value != float(r["output"]["true_false"]):
            wrong.append((r["vector_id"], s.value, s.error))
    assert wrong == []
