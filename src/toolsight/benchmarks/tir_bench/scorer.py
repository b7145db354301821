"""TIR-Bench scoring: the official `calculate_score.py` rules (`official`) and a `corrected` mode.

Pure rules: `tir_score_item(item, mode)` scores one item in the official result-file format
(`task, prompt, answer, image_1, meta_data, model_response, extracted_answer`); the helpers
(`judge_choice`, `judge_int`, `judge_float`, `extract_two_numbers`, `extract_consecutive_n_squared`,
`list_iou`, `position_accuracy`, `jigsaw_iou`) are the per-task branches. `official` reproduces the
reference code at commit f79c7562 exactly, quirks included (see docs/fidelity.md); `corrected`
fixes the rules that are plainly bugs and leaves the rest alone.

`TirScorer` maps a toolsight Task onto an official item:
- `task`     ← `task.tags["task"]` (else `task.tags["category"]`)
- `prompt`   ← `turn.prompt`;  `answer` ← `turn.answer` (a list → its first element)
- `image_1`  ← `turn.images[0].path` (the OCR overrides test this path)
- `meta_data`← `turn.meta["meta_data"]`, with `turn.meta["difficulty"]` filled in when present
- `model_response` ← the turn's final response
- `extracted_answer` ← the extractor: rule-based by default (`toolsight.scoring.extract`: answer
  tag, `### Answer` section, `\\boxed{}`, 'Final answer:' line, a short plain reply; for a
  single-letter gold reduced to the option letter it names, as the GPT extractor's demos do), or
  a custom `extractor(response, task)`; the optional LLM extractor (`llm=True`,
  registered as `tir-bench-llm`, uses `ctx.judge`) sends the official `extract_answer.py`
  messages (`extraction_prompt`; the per-task demos are read from the user's copy of the official
  `demo_prompts.py` with `load_demo_prompts`) and uses the reply verbatim.
Jigsaw partial credit: `jigsaw_rule="position"` (code, default) or `"iou"` (paper; see
`jigsaw_iou`).
"""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from toolsight.log.modes import ScorerMode
from toolsight.models.base import GenerateConfig, Message, Model
from toolsight.scoring import extract as _extract
from toolsight.scoring._levenshtein import most_similar
from toolsight.scoring.base import JudgeCall, Score, ScoreContext
from toolsight.tasks.schema import Task

Mode = ScorerMode
JigsawRule = Literal["position", "iou"]

BENCHMARK = "tir-bench"
CHOICES = ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "H"]  # the official list ('H' twice)
TASKS = ("maze", "color", "word_search", "jigsaw", "rotation_game", "ocr", "refcoco", "spot_difference",
         "visual_search", "symbolic", "math", "contrast", "instrument")

_STRIP_INT = re.compile(r"[A-Za-z*:\s]+")
_STRIP_INT_KEEP_SPACE = re.compile(r"[A-Za-z*:]+")


class TirOfficialCrash(ValueError):
    """An item on which the official script crashes the whole run (reported, never a silent 0)."""


# --------------------------------------------------------------------------- official helpers


def classify_string(s: str) -> int:
    """1 alphabetic, 2 int, 3 float, 4 anything else (Python's own `isalpha`/`int`/`float`)."""
    if s.isalpha():
        return 1
    try:
        int(s)
        return 2
    except ValueError:
        pass
    try:
        float(s)
        return 3
    except ValueError:
        pass
    return 4


def _math_verify(extracted: str, answer: str) -> bool:
    """`float(verify(parse(extracted), parse(answer))) > 0`, any exception → False (as the reference).

    math_verify times out with SIGALRM, which only works in the main thread; elsewhere the
    timeouts are switched off rather than failing every item.
    """
    try:
        from math_verify import parse, verify
    except ImportError:  # pragma: no cover - declared dependency
        return False
    main = threading.current_thread() is threading.main_thread()
    try:
        if main:
            gold = parse(extracted)
            target = parse(str(answer))
            return float(verify(gold, target)) > 0
        gold = parse(extracted, parsing_timeout=None)
        target = parse(str(answer), parsing_timeout=None)
        return float(verify(gold, target, timeout_seconds=None)) > 0
    except Exception:
        return False


def _judge_number(extracted_answer: str, answer: str, mode: Mode, parse: Callable[[str], float]) -> float:
    extraction = extracted_answer.replace("Extracted answer:", "").strip()
    strip = _STRIP_INT if mode == "official" else _STRIP_INT_KEEP_SPACE
    extraction = strip.sub("", extraction).strip()
    try:
        if parse(extraction) == parse(answer):
            return 1.0
    except ValueError:
        pass
    return 1.0 if _math_verify(extracted_answer, answer) else 0.0


def judge_int(extracted_answer: str, answer: str, mode: Mode = "official") -> float:
    """Integer gold: letters, `*`, `:` and whitespace removed, `int` equality; else math_verify.

    `corrected` keeps whitespace between digits (so `'1 0'` is not 10).
    """
    return _judge_number(extracted_answer, answer, mode, int)


def judge_float(extracted_answer: str, answer: str, mode: Mode = "official") -> float:
    """Float gold: as `judge_int` with `float` equality, then math_verify."""
    return _judge_number(extracted_answer, answer, mode, float)


def judge_choice(extracted_answer: str, answer: str, prompt: str, mode: Mode = "official",
                 options: dict[str, str] | None = None) -> float:
    """Alphabetic gold. Official: single letter → option text mapped through the prompt (the loop
    overwrites the extraction as it goes), then the nearest letter by Levenshtein distance;
    longer gold → sorted-character equality. See `_judge_choice_corrected` for `corrected`."""
    if mode == "corrected":
        return _judge_choice_corrected(extracted_answer, answer, prompt, options)
    if len(answer) == 1:
        if answer in CHOICES:
            extraction = extracted_answer.replace("Extracted answer:", "").strip()
            if extraction not in CHOICES:
                for x in CHOICES:
                    if (x + ". " + extraction in prompt or x + "." + extraction in prompt
                            or x + " " + extraction in prompt or x + extraction in prompt):
                        extraction = x
                extraction = most_similar(extraction, CHOICES)
            if extraction == answer:
                return 1.0
        return 0.0
    return 1.0 if "".join(sorted(answer)) == "".join(sorted(extracted_answer)) else 0.0


def extract_two_numbers(text: str) -> tuple[int, int] | None:
    """The first `\\b(\\d+)\\s*,\\s*(\\d+)\\b` pair, or None."""
    m = re.search(r"\b(\d+)\s*,\s*(\d+)\b", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def extract_integers(text: str) -> list[int]:
    """Every run of digits (the official `extract_consecutive_integers`)."""
    return [int(x) for x in re.findall(r"\d+", text)]


def list_iou(response: list[int], answer: list[int]) -> float:
    """Set IoU; two empty lists → 1.0."""
    a, b = set(response), set(answer)
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def extract_consecutive_n_squared(text: str, n: Any) -> list[int] | None:
    """The first run of digits/spaces/commas (ASCII or full-width) holding exactly n² numbers."""
    total = n * n
    for seq in re.findall(r"[\d\s,，]+", text):
        nums = re.findall(r"\d+", seq)
        if len(nums) == total:
            return [int(x) for x in nums]
    return None


def position_accuracy(gold: list[int], pred: list[int]) -> float:
    """Fraction of positions where the pieces agree (the code's jigsaw rule)."""
    return sum(1 for g, p in zip(gold, pred, strict=False) if g == p) / len(gold) if gold else 0.0


def jigsaw_iou(gold: list[int], pred: list[int]) -> float:
    """The paper's 'IoU' for jigsaw, read as IoU of the sets of (position, piece) pairs: c/(2n²-c).

    (IoU of the piece sets alone would be 1 for every permutation, so it cannot be what is meant.)
    """
    a = set(enumerate(gold))
    b = set(enumerate(pred))
    union = a | b
    return len(a & b) / len(union) if union else 1.0


# --------------------------------------------------------------------------- corrected helpers

_OPT_PATTERNS = [
    re.compile(r"\(([A-J])\)\s*(.*?)(?=\s*\([A-J]\)|\n|$)"),
    re.compile(r"^[ \t]*([A-J])[ \t]*[.:)][ \t]*(.+?)[ \t]*$", re.M),
    re.compile(r"(?:^|\s)([A-J])[.:)]\s*(.*?)(?=\s+[A-J][.:)]\s|\n|$)"),
    re.compile(r"^[ \t]*([A-J])[ \t]+(.+?)[ \t]*$", re.M),
]


def parse_prompt_options(prompt: str) -> dict[str, str] | None:
    """Options written in a TIR prompt (`(A) x`, `A. x`, `A: x`, `A) x`), lettered from A; else None."""
    for pat in _OPT_PATTERNS:
        out: dict[str, str] = {}
        for m in pat.finditer(prompt):
            letter, text = m.group(1), m.group(2).strip()
            if letter == chr(ord("A") + len(out)):
                out[letter] = text
            elif letter == "A":
                out = {"A": text}
        if len(out) >= 2:
            return out
    return None


def _is_letter_gold(answer: str) -> bool:
    return bool(re.fullmatch(r"[A-J]+", answer))


def _matches_option(text: str, option: str) -> bool:
    if _extract.normalize_text(text) == _extract.normalize_text(option):
        return True
    a, b = _extract.number(text), _extract.number(option)
    return a is not None and b is not None and a == b and bool(re.fullmatch(r"[\d\s.,%°$€£¥+-]+", text.strip()))


_OTHER_LETTER = re.compile(r"(?:[\s,;/&]|and|or)*([A-J])\W*")


def resolve_choice(e: str, opts: dict[str, str] | None, allowed: str) -> str | None:
    """The option letter an extracted answer names (corrected mode), or None when it names none
    or several. Order: a bare letter (any case, wrapped); an option's text; a letter label followed
    by that option's text (or by text naming no other option, and not by another option's letter:
    `A D` names two); a phrase naming one letter
    (`extract.choice_letter`); a number equal to exactly one option's number; a single standalone
    capital letter among the allowed ones."""
    bare = re.fullmatch(r"\W*([A-Ja-j])\W*", e)
    if bare and bare.group(1).upper() in allowed:
        return bare.group(1).upper()
    if opts:
        exact = [k for k, v in opts.items() if _extract.normalize_text(v) == _extract.normalize_text(e)]
        if len(exact) == 1:
            return exact[0]
        label = re.match(r"^[\s(\[*]*([A-J])(?:[\s.:)\]]+)(.+)$", e, re.S)
        if label and label.group(1) in allowed:
            rest = label.group(2)
            if label.group(1) in opts and _matches_option(rest, opts[label.group(1)]):
                return label.group(1)
            other = _OTHER_LETTER.fullmatch(rest)
            if other and other.group(1) in allowed and other.group(1) != label.group(1):
                return None  # "A D", "A, D", "A or D": two options named
            if not any(_matches_option(rest, v) for v in opts.values()):
                return label.group(1)
            return None
    letter = _extract.choice_letter(e, opts, allowed)
    if letter is not None and letter in allowed:
        return letter
    if opts:
        numeric = [k for k, v in opts.items() if _matches_option(e, v)]
        if len(numeric) == 1:
            return numeric[0]
    standalone = set(re.findall(r"(?<![A-Za-z])([A-J])(?![A-Za-z])", e)) & set(allowed)
    return standalone.pop() if len(standalone) == 1 else None


def _judge_choice_corrected(extracted: str, answer: str, prompt: str, options: dict[str, str] | None) -> float:
    """Empty → 0; a letter in any case or wrapping; option text in any prompt style; a phrase
    naming one letter ('the answer is B'); multi-letter gold → set of letters; a word gold →
    case-insensitive text equality (no anagrams)."""
    e = extracted.replace("Extracted answer:", "").replace("*", "").strip()
    if not e:
        return 0.0
    if not _is_letter_gold(answer):
        return 1.0 if _extract.normalize_text(e) == _extract.normalize_text(answer) else 0.0
    opts = options or parse_prompt_options(prompt)
    allowed = "".join(sorted(set(opts) | set(answer))) if opts else "ABCDEFGHIJ"
    if len(answer) > 1:
        packed = re.sub(r"[\s,;、，]+|\band\b", "", e.upper())
        got = set(packed) if re.fullmatch(r"[A-J]+", packed) else set(
            re.findall(r"(?<![A-Za-z])([A-J])(?![A-Za-z])", e.upper()))
        return 1.0 if got == set(answer) else 0.0
    return 1.0 if resolve_choice(e, opts, allowed) == answer else 0.0


_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_ROW_LABEL = re.compile(r"(?i)\b(?:row|line)\s*\d+\s*[:：.]")


def _spot_ints(text: str) -> list[int]:
    m = _BRACKET.search(text)
    return extract_integers(m.group(1) if m else text)


def _jigsaw_corrected(text: str, n: int) -> list[int] | None:
    found = extract_consecutive_n_squared(text, n)
    if found is not None:
        return found
    nums = extract_integers(_ROW_LABEL.sub(" ", text))
    return nums if len(nums) == n * n else None


_OCR_BOUNDARY = r"(?<![0-9a-z]){}(?![0-9a-z])"


# --------------------------------------------------------------------------- one item


def _difficulty(item: dict[str, Any]) -> Any:
    meta_key = "metadata" if "metadata" in item else "meta_data"
    meta = item.get(meta_key)
    if not isinstance(meta, dict) or "difficulty" not in meta:
        return None
    return meta["difficulty"]


def tir_score_item(item: dict[str, Any], mode: Mode = "official", jigsaw_rule: JigsawRule = "position",
                   options: dict[str, str] | None = None) -> float:
    """The score of one item in the official result format (`calculate_score.py`'s `true_false`).

    Raises `TirOfficialCrash` where the official script would crash the run (official mode only).
    `options` (letter → text) helps `corrected` choice matching; official reads only the prompt.
    """
    task = item.get("task", item.get("category"))
    if not isinstance(task, str):
        raise ValueError("TIR-Bench item has no 'task' (or 'category') key")
    raw = item.get("extracted_answer")
    extracted = raw.replace("*", "").strip() if isinstance(raw, str) and raw else ""
    answer = str(item.get("answer"))

    if task == "ocr":
        response = item.get("model_response")
        if isinstance(response, list):
            response = response[0] if response else ""
        if not isinstance(response, str):
            if mode == "official":
                raise TirOfficialCrash("ocr item without a string model_response (official: TypeError)")
            return 0.0
        image = str(item.get("image_1") or "")
        if mode == "official":
            if "60.jpg" in image:
                answer = "mobi"
            if "62.jpg" in image:
                answer = "aires"
            return 1.0 if answer in response else 0.0
        base = image.replace("\\", "/").rsplit("/", 1)[-1]
        override = {"60.jpg": "mobi", "62.jpg": "aires"}.get(base)
        if override is not None:  # the overrides are word stems meant to match as substrings
            return 1.0 if override in response.casefold() else 0.0
        pattern = _OCR_BOUNDARY.format(re.escape(answer.strip().casefold()))
        return 1.0 if answer.strip() and re.search(pattern, response.casefold()) else 0.0

    if task == "word_search":
        if classify_string(answer) == 2:
            return judge_int(extracted, answer, mode)
        if mode == "official":
            gold, got = extract_two_numbers(answer), extract_two_numbers(extracted)
            return 1.0 if gold is not None and got is not None and gold == got else 0.0
        gold_pair = extract_integers(answer)
        got_list = extract_integers(extracted.replace("，", ","))
        return 1.0 if len(gold_pair) == 2 and got_list == gold_pair else 0.0

    if task == "spot_difference":
        if mode == "official":
            if classify_string(answer) == 2:
                return judge_int(extracted, answer, mode)
            return list_iou(extract_integers(extracted), extract_integers(answer))
        if not extracted:
            return 0.0
        return list_iou(_spot_ints(extracted), extract_integers(answer))

    if task == "jigsaw":
        n = _difficulty(item)
        if isinstance(n, bool) or not isinstance(n, (int, float)):
            if mode == "official":
                return 0.0
            try:
                n = int(str(n))
            except ValueError:
                return 0.0
        if mode == "official":
            got_j = extract_consecutive_n_squared(extracted, n)
        else:
            got_j = _jigsaw_corrected(extracted, int(n))
        gold_j = extract_consecutive_n_squared(answer, n)
        if got_j is None or gold_j is None:
            return 0.0
        return jigsaw_iou(gold_j, got_j) if jigsaw_rule == "iou" else position_accuracy(gold_j, got_j)

    kind = classify_string(answer)
    if mode == "corrected" and _is_letter_gold(answer.strip()):
        return judge_choice(extracted, answer.strip(), str(item.get("prompt", "")), mode, options)
    if kind == 1:
        return judge_choice(extracted, answer, str(item.get("prompt", "")), mode, options)
    if kind == 2:
        return judge_int(extracted, answer, mode)
    if kind == 3:
        return judge_float(extracted, answer, mode)
    if mode == "official":
        raise TirOfficialCrash(
            f"gold {answer!r} of task {task!r} is neither alphabetic nor a number: the official script prints "
            "an error and crashes on item['question_id'] (KeyError); use the corrected scoring mode (--scorer-mode corrected)"
        )
    return 1.0 if extracted and _extract.normalize_text(extracted) == _extract.normalize_text(answer) else 0.0


# --------------------------------------------------------------------------- extraction


def rule_extract(response: str, task: str, answer: str, options: dict[str, str] | None) -> str | None:
    """The rule-based stand-in for the GPT extraction step (None = no answer found).

    The answer is the first of: `<answer>` tag, `### Answer` section, `\\boxed{}`, 'Final answer:'
    line, a short single-line reply. For a single-letter gold the answer is then reduced to the
    option letter it names (as the official extractor's demos do) when that is unambiguous.
    """
    found = _extract.final_answer(response, allow_plain=True)
    text = found.text if found is not None else None
    if re.fullmatch(r"[A-J]", answer.strip()):
        letters = "".join(sorted(options)) if options else "ABCDEFGHIJ"
        letter = _extract.choice_letter(text if text is not None else response, options, letters)
        if letter is not None:
            return letter
    return text


EXTRACT_SYSTEM = " Assistant is a large language model trained by OpenAI."
DEMO_HEADER = ("Please read the following example. Then extract the answer from the model response and type it "
               "at the end of the prompt.")
EXTRACT_RETRIES = 3


def load_demo_prompts(path: str | Path) -> dict[str, str]:
    """Read the per-task demos from a copy of the official `demo_prompts.py` (parsed, never run).

    Returns every top-level `demo_prompt_<task> = "..."` string by task key (the scorer's `few_shot`,
    from the benchmark option `-B demo_prompts=PATH`). The repository ships no licence, so toolsight
    does not bundle the texts.
    """
    file = Path(path)
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read TIR-Bench demo prompts from {file}: {exc}") from None
    found: dict[str, str] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.startswith("demo_prompt_") and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            found[node.targets[0].id.removeprefix("demo_prompt_")] = node.value.value
    if not found:
        raise ValueError(f"{file}: no `demo_prompt_<task> = \"...\"` strings found (is it TIR-Bench's demo_prompts.py?)")
    return found


def extraction_prompt(task: str, query: str, response: str, few_shot: Mapping[str, str] | None = None) -> str:
    """The official `create_test_prompt`: demo (stripped), question, response, 'Extracted answer: '.

    Without the task's demo (`few_shot`, read by `load_demo_prompts`) the demo is only its one-line
    instruction header.
    """
    demo = (few_shot or {}).get(task, DEMO_HEADER).strip()
    return f"{demo}\n\nQuestion: {query}\n\nModel response: {response}\n\nExtracted answer: "


async def llm_extract(model: Model, task: str, query: str, response: str, config: GenerateConfig,
                      retries: int = EXTRACT_RETRIES, few_shot: Mapping[str, str] | None = None,
                      ) -> tuple[str | None, list[JudgeCall]]:
    """The official extraction call: system + user message, the reply used verbatim.

    A call that raises is retried (the reference retries up to 100 times); None when all fail.
    """
    prompt = extraction_prompt(task, query, response, few_shot)
    calls: list[JudgeCall] = []
    for _ in range(max(1, retries)):
        call = JudgeCall(model=model.name, prompt=prompt, seed=config.seed, temperature=config.temperature)
        try:
            out = await model.generate([Message.system(EXTRACT_SYSTEM), Message.user(prompt)], [], config)
        except Exception as exc:  # any provider failure is one failed attempt
            call.error = f"{type(exc).__name__}: {exc}"
            calls.append(call)
            continue
        call.reply, call.cached, call.usage, call.batch = out.text, out.cached, out.usage, out.batch
        calls.append(call)
        return out.text, calls
    return None, calls


# --------------------------------------------------------------------------- task helpers


def task_options(task: Task) -> dict[str, str] | None:
    turn = task.turns[0]
    return turn.options or parse_prompt_options(turn.prompt)


def random_guess_accuracy(task: Task) -> float | None:
    """Expected score of the paper's random guess (Table 2's first row) on `task`.

    The paper's row is one draw of a random answer of the task's form, scored as a model's answer
    (every multiple-choice column is a whole number of hits: 28/100, 8/120, 7/50, …; docs/fidelity.md).
    This is its expectation: 1/k over k options; for a jigsaw of n×n pieces under the position rule
    the share of fixed points of a random permutation, 1/n²; None for Rotated OCR, which the paper
    leaves out ("-") — its "All" (13.5) and Table 4's synthetic/annotated means (8.0, 18.2) are over
    the other 1,155 tasks; 0.0 for any other free-form answer (no guess of its form is defined).
    """
    key = task.tags.get("task") or task.tags.get("category")
    if key == "ocr":
        return None
    opts = task_options(task)
    if opts:
        return 1.0 / len(opts)
    if key == "jigsaw":
        n = task.turns[0].meta.get("difficulty") or (task.turns[0].meta.get("meta_data") or {}).get("difficulty")
        if isinstance(n, int | float) and not isinstance(n, bool) and n >= 1:
            return 1.0 / (int(n) ** 2)
    return 0.0


def task_to_item(task: Task, response: str, extracted: str | None) -> dict[str, Any]:
    """The official result-file item for a toolsight Task (see the module docstring)."""
    turn = task.turns[0]
    key = task.tags.get("task") or task.tags.get("category")
    if not key:
        raise ValueError(f"task {task.id}: TIR-Bench scoring needs tags['task'] (e.g. 'maze')")
    answer = turn.answer[0] if isinstance(turn.answer, list) and turn.answer else turn.answer
    if answer is None:
        raise ValueError(f"task {task.id}: no gold answer")
    meta = dict(turn.meta.get("meta_data") or {})
    if "difficulty" in turn.meta and "difficulty" not in meta:
        meta["difficulty"] = turn.meta["difficulty"]
    return {
        "id": turn.meta.get("official_id", task.id), "task": key, "prompt": turn.prompt, "answer": str(answer),
        "image_1": turn.images[0].path if turn.images else "", "meta_data": meta,
        "model_response": response, "extracted_answer": extracted,
    }


class TirScorer:
    """TIR-Bench scorer (see the module docstring for the Task → item mapping)."""

    def __init__(self, mode: Mode = "official", *, jigsaw_rule: JigsawRule = "position", llm: bool = False,
                 extractor: Callable[[str, Task], str | None] | None = None,
                 few_shot: Mapping[str, str] | None = None) -> None:
        """`extractor(response, task)` replaces the rule-based extraction (None = no answer);
        `few_shot` holds the LLM extractor's demos by task key (`load_demo_prompts`)."""
        if mode not in ("official", "corrected"):
            raise ValueError(f"unknown scoring mode {mode!r}: use 'official' or 'corrected'")
        if jigsaw_rule not in ("position", "iou"):
            raise ValueError(f"unknown jigsaw rule {jigsaw_rule!r}: use 'position' (code) or 'iou' (paper)")
        self.mode: Mode = mode
        self.jigsaw_rule: JigsawRule = jigsaw_rule
        self.llm = llm
        self.extractor = extractor
        self.few_shot = dict(few_shot or {})
        self.name = "tir-bench" if jigsaw_rule == "position" else "tir-bench-iou"

    def judge_need(self, tasks: Sequence[Task]) -> str | None:
        """`tir-bench-llm` extracts every answer with an LLM (the rule-based scorers need none)."""
        return "scorer 'tir-bench-llm' extracts answers with an LLM" if self.llm and tasks else None

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        response = responses[0] if responses else ""
        key = task.tags.get("task") or task.tags.get("category") or ""
        answer = task.turns[0].answer
        gold = str(answer[0] if isinstance(answer, list) and answer else answer)
        options = task_options(task)
        calls: list[JudgeCall] = []
        extracted: str | None
        if key == "ocr":
            extracted = None
        elif self.llm:
            if ctx.judge is None:
                return Score(scorer=self.name, error="scorer 'tir-bench-llm' extracts answers with an LLM: pass "
                                                     "--judge MODEL (or use 'tir-bench' for rule-based extraction)")
            # official: extract_answer.py sends only model and messages (no temperature, no seed)
            config = (GenerateConfig(timeout=ctx.judge_config.timeout) if self.mode == "official"
                      else ctx.judge_config)
            extracted, calls = await llm_extract(ctx.judge, key, task.turns[0].prompt, response, config,
                                                 max(1, ctx.judge_retries), self.few_shot)
            if extracted is None:
                return Score(scorer=self.name, error="the answer extractor failed on every attempt", judge_calls=calls)
        elif self.extractor is not None:
            extracted = self.extractor(response, task)
        else:
            extracted = rule_extract(response, key, gold, options)
        try:
            item = task_to_item(task, response, extracted)
            value = tir_score_item(item, self.mode, self.jigsaw_rule, options)
        except (TirOfficialCrash, ValueError) as exc:
            return Score(scorer=self.name, answer=extracted, error=str(exc), judge_calls=calls)
        return Score(value=value, passed=value >= 1.0, answer=extracted if key != "ocr" else response,
                     scorer=self.name, judge_calls=calls,
                     explanation=f"{key}: {self.mode} rule → {value:g}",
                     details={"task": key, "mode": self.mode, "extracted_answer": extracted,
                              "jigsaw_rule": self.jigsaw_rule})


def make_scorer(mode: Mode = "official", few_shot: Mapping[str, str] | None = None) -> TirScorer:
    return TirScorer(mode, few_shot=few_shot)


def scorers(few_shot: Mapping[str, str] | None = None) -> dict[str, Callable[[Mode], TirScorer]]:
    """The named scorers of TIR-Bench (`toolsight score --scorer NAME`), with the extractor's demos."""
    return {
        "tir-bench": lambda mode: TirScorer(mode, few_shot=few_shot),
        "tir-bench-iou": lambda mode: TirScorer(mode, jigsaw_rule="iou", few_shot=few_shot),
        "tir-bench-llm": lambda mode: TirScorer(mode, llm=True, few_shot=few_shot),
    }
