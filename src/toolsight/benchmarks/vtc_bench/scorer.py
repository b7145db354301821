"""VTC-Bench scoring: the official rule pass, the LLM judge for rule failures, final = rule OR judge.

Reference: `VTCBenchDataset` in `eval/eval/VLMEvalKit/vlmeval/dataset/image_vqa.py` of
zhuzil/VTC-Bench @ 484ef7c2 (`_evaluate_single_item` → `_evaluate_mcq` / `_evaluate_vqa`, and
`VTCBench_auxeval` inside `evaluate`). Pure rules on one official row (`index, id, category,
question, answer, A.., prediction`; None = an empty cell):
- `vtc_rule_score(row, mode)` → 0.0 / 1.0;
- `vtc_goes_to_judge(row, mode)` → whether the row is sent to the judge (rule score < 0.5);
- `vtc_judge_prompt_name(row)` → `"mcq_letter_extractor"` (any option A–G non-empty) or
  `"open_yes_no"`; `vtc_judge_prompt(row)` → the prompt text, verbatim;
- `vtc_judge_hit(name, reply, answer, mode)` → 1 / 0 / None (reply not usable: retry).
`official` reproduces the reference exactly; `corrected` fixes its plain bugs (docs/fidelity.md).

`VtcScorer` maps a Task onto a row: `question` ← `turn.meta["question"]` (the question without
the appended options) else `turn.prompt`; `A`–`G` ← `turn.options`; `answer` ← `turn.answer`;
`prediction` ← official: the driver's answer (text between the first `<answer>` and the first
`</answer>`, or a `<|answer|>` pair; none without tags) after its spreadsheet round trip (no answer
and NA-like strings → 'nan', a leading '=' → '0'); corrected: the last complete pair, else the
whole response stripped; `category` ← `task.tags["category"]`.
Without `ctx.judge` only the rules run (the reference's `exact_matching`).
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any, Literal

from toolsight.log.modes import ScorerMode
from toolsight.models.base import GenerateConfig
from toolsight.scoring import extract as _extract
from toolsight.scoring.base import JudgeCall, Score, ScoreContext
from toolsight.scoring.judge import JudgeRunner
from toolsight.tasks.schema import Task

Mode = ScorerMode
PromptName = Literal["mcq_letter_extractor", "open_yes_no"]

OPTION_LETTERS = ("A", "B", "C", "D", "E", "F", "G")
JUDGE_RETRIES = 5
JUDGE_MAX_TOKENS = 128
FAIL_MSG = "Failed to obtain answer via API."

MCQ_TEMPLATE = (
    "You are a information extractor that extracts multiple choice letter answer choices "
    "from a paragraph that contains the answer choice and sometimes explaination of why that "
    "choice is correct to the given question.\n"
    "What letter did the following answer choose? If the answer did not select a letter answer choice, "
    "first try to infer the answer based off the given choices.\n"
    "If it does not seem like the given answer corresponds to an answer choice OR if there is no selected answer, "
    "please just respond with Z.\n"
    "If the answer sentence is incomplete or partial,  simply make a mistake and respond with Z.\n"
    "Make sure you answer with ONLY the letters chosen.\n"
    "Example 1: \n"
    "Question: <start>\nWhat is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n<end>\n"
    "Answer: <start>\na cute teddy bear\n<end>\nYour output: A\n"
    "Example 2: \n"
    "Question: <start>\nWhat is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n<end>\n"
    "Answer: <start>\nSpider\n<end>\nYour output: Z\n"
    "Question: <start>\n{}\nOptions: {}<end>\nAnswer: <start>\n{}\n<end>\nYour output: "
)

OPEN_TEMPLATE = (
    "You are an answer evaluator. Your task is to determine if the predicted answer contains or conveys the same "
    "information as the ground truth answer.\n"
    "If the answer sentence is incomplete or partial, just response with 'no'\n"
    "The predicted answer may be:\n"
    "- An exact match (e.g., 'Paris' vs 'Paris')\n"
    "- A complete sentence containing the answer (e.g., 'The capital is Paris.' vs 'Paris')\n"
    "- Semantically equivalent (e.g., '3' vs 'three')\n"
    "- Ignore mathematical units (e.g., '180°' vs '180')\n"
    "- Equivalent mathematical forms (e.g., 'y=2x-6.5' vs '4x-2y-13=0', '2.0' vs '2', '26000' vs '26,000')\n"
    "\n"
    "Ground Truth: {}\n"
    "Predicted Answer: {}\n"
    "\n"
    "Does the predicted answer correctly contain or express the ground truth? Answer with ONLY 'yes' or 'no'.\n"
)


# --------------------------------------------------------------------------- cells


def _isna(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _cell(value: Any) -> str:
    """`str()` of a cell as pandas gives it: an empty cell (None/NaN) is the string 'nan'."""
    return "nan" if _isna(value) else str(value)


def _options(row: dict[str, Any]) -> dict[str, str]:
    return {k: str(row[k]) for k in OPTION_LETTERS if k in row and not _isna(row[k])}


# --------------------------------------------------------------------------- rules (official)


def _mcq_official(row: dict[str, Any], pred: str, ans: str) -> float:
    pred_first = pred[0] if pred else ""
    ans_first = ans[0] if ans else ""
    if len(ans) == 1 and ans in "abcdefg":
        if len(pred) == 1 and pred in "abcdefg":
            if pred == ans or ans_first == pred_first:
                return 1.0
        if pred_first == ans and (len(pred) == 1 or pred[1] in (".", " ", "-")):
            return 1.0
        return 0.0
    opts = _options(row)
    if len(pred_first) == 1 and pred_first in "abcdefg":
        letter = pred_first.upper()
        if letter in opts and opts[letter].lower().strip() == ans:
            return 1.0
        return 0.0
    for letter in OPTION_LETTERS:
        if letter in opts:
            text = opts[letter].lower().strip()
            if text in pred and text == ans:
                return 1.0
    return 0.0


def _vqa_official(pred: str, ans: str) -> float:
    if pred == ans:
        return 1.0
    pred_n, ans_n = " ".join(pred.split()), " ".join(ans.split())
    if pred_n == ans_n:
        return 1.0
    if len(ans_n.split()) < 5 and ans_n in pred_n:
        return 1.0
    return 0.0  # the reference's math_verify branch never sets the score (dead code)


def _is_mcq_official(row: dict[str, Any], ans: str) -> bool:
    return bool(_options(row)) or (len(ans) == 1 and ans in "abcd")


# --------------------------------------------------------------------------- rules (corrected)


def _gold_alternatives(answer: str) -> list[str]:
    """A Python-list gold (`"['a','b']"`) → its alternatives; otherwise the gold itself."""
    s = answer.strip()
    if s.startswith("[") and s.endswith("]"):
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError):
            return [s]
        if isinstance(value, list) and value and all(isinstance(v, (str, int, float)) for v in value):
            return [str(v) for v in value]
    return [s]


def _contains_token(hay: str, needle: str) -> bool:
    """`needle` occurs in `hay` not glued to other letters/digits (Latin or digits)."""
    return re.search(r"(?<![0-9a-z])" + re.escape(needle) + r"(?![0-9a-z])", hay) is not None


def _gold_letter(row: dict[str, Any], answer: str) -> str | None:
    opts = _options(row)
    a = answer.strip()
    if len(a) == 1 and a.upper() in OPTION_LETTERS and (not opts or a.upper() in opts):
        return a.upper()
    if opts:
        for k, v in opts.items():
            if _extract.normalize_text(v) == _extract.normalize_text(a):
                return k
    return None


def _same_text(a: str, b: str) -> bool:
    if _extract.normalize_text(a) == _extract.normalize_text(b):
        return True
    x, y = _extract.number(a), _extract.number(b)
    return x is not None and y is not None and x == y and bool(re.fullmatch(r"[\d\s.,%°$+-]+", a.strip()))


def _pred_letter(pred: str, opts: dict[str, str]) -> str | None:
    """The option letter a prediction names, or None (never the first letter of a word)."""
    allowed = "".join(opts) if opts else "".join(OPTION_LETTERS)
    bare = re.fullmatch(r"\W*([A-Ga-g])\W*", pred)
    if bare and bare.group(1).upper() in allowed:
        return bare.group(1).upper()
    label = re.match(r"^[\s(\[*]*([A-Ga-g])(\s*[.):\],\-]\s*|\s+)(.+)$", pred, re.S)
    if label and label.group(1).upper() in allowed:
        letter, sep, rest = label.group(1).upper(), label.group(2), label.group(3)
        # "C) ...", "C: ...", "C-..." label the letter (as the reference, the letter wins over the
        # text); "b ceramic" does too when the text is an option's, but "a dog" does not
        if sep.strip() or any(_same_text(rest, v) for v in opts.values()):
            return letter
    if opts:
        exact = [k for k, v in opts.items() if _same_text(pred, v)]
        if len(exact) == 1:
            return exact[0]
    letter = _extract.choice_letter(pred, opts or None, allowed)
    if letter is not None:
        return letter
    if opts:
        low = " ".join(pred.lower().split())
        named = [k for k, v in opts.items() if v.strip() and _contains_token(low, " ".join(v.lower().split()))]
        if len(named) == 1:
            return named[0]
    return None


def _rule_corrected(row: dict[str, Any]) -> float:
    pred = "" if _isna(row.get("prediction")) else str(row.get("prediction")).strip()
    answer = "" if _isna(row.get("answer")) else str(row.get("answer")).strip()
    if not pred or not answer:
        return 0.0
    opts = _options(row)
    gold = _gold_letter(row, answer)
    if gold is not None:
        return 1.0 if _pred_letter(pred, opts) == gold else 0.0
    pred_l = " ".join(pred.lower().split())
    for alt in _gold_alternatives(answer):
        alt_l = " ".join(alt.lower().split())
        if not alt_l:
            continue
        if pred_l == alt_l or _extract.normalize_text(pred) == _extract.normalize_text(alt):
            return 1.0
        if len(alt_l.split()) < 5 and _contains_token(pred_l, alt_l):
            return 1.0
    return 0.0


# --------------------------------------------------------------------------- public rule API


def vtc_rule_score(row: dict[str, Any], mode: Mode = "official") -> float:
    """The rule score (0.0 / 1.0) of one row (`_evaluate_single_item`)."""
    if mode == "corrected":
        return _rule_corrected(row)
    pred = _cell(row.get("prediction")).strip().lower()
    ans = _cell(row.get("answer")).strip().lower()
    if _is_mcq_official(row, ans):
        return _mcq_official(row, pred, ans)
    return _vqa_official(pred, ans)


def vtc_goes_to_judge(row: dict[str, Any], mode: Mode = "official") -> bool:
    """True when the judge would see the row: rule score < 0.5 (corrected: and a non-empty prediction)."""
    if vtc_rule_score(row, mode) >= 0.5:
        return False
    if mode == "corrected" and (_isna(row.get("prediction")) or not str(row.get("prediction")).strip()):
        return False
    return True


def vtc_judge_prompt_name(row: dict[str, Any]) -> PromptName:
    """`mcq_letter_extractor` if any option A–G is non-empty, else `open_yes_no` (`VTCBench_auxeval`)."""
    return "mcq_letter_extractor" if _options(row) else "open_yes_no"


def vtc_judge_prompt(row: dict[str, Any]) -> str:
    """The judge prompt for a row, exactly as `VTCBench_auxeval` builds it."""
    prediction, answer = _cell(row.get("prediction")), _cell(row.get("answer"))
    if vtc_judge_prompt_name(row) == "mcq_letter_extractor":
        options_text = "".join(f"{k}. {v} " for k, v in _options(row).items())
        return MCQ_TEMPLATE.format(_cell(row.get("question")), options_text, prediction)
    return OPEN_TEMPLATE.format(answer, prediction)


def vtc_judge_hit(name: PromptName, reply: str, answer: str, mode: Mode = "official",
                  gold_letter: str | None = None) -> int | None:
    """1 / 0 for a usable judge reply, None for one the reference would retry.

    Official MCQ: the reply must be all upper-case letters (`isupper() and isalpha()`); hit iff its
    sorted lower-cased letters equal the gold split on ', ' (so option-text golds never hit).
    Official open: `reply.lower().strip()` must be 'yes' or 'no'. Corrected MCQ: letters separated
    by commas/spaces are read too, 'Z' means no choice, and an option-text gold is compared by its
    letter (`gold_letter`).
    """
    if FAIL_MSG in reply:
        return None
    if name == "open_yes_no":
        word = reply.lower().strip()
        if mode == "corrected":
            word = word.strip(" .!'\"*")
        if word not in ("yes", "no"):
            return None
        return 1 if word == "yes" else 0
    if mode == "official":
        if not reply.isupper() or not reply.isalpha():
            return None
        gold = "".join(sorted(part.lower() for part in answer.split(", ")))
        return 1 if "".join(sorted(c.lower() for c in reply)) == gold else 0
    packed = re.sub(r"[\s,;.*'\"]+|\band\b", "", reply.strip())
    if not packed or not re.fullmatch(r"[A-Za-z]+", packed) or not packed.isupper():
        return None
    if packed == "Z" or packed == "ZZZZZ":
        return 0
    want = gold_letter or answer.strip().upper()
    gold_set = set(re.sub(r"[\s,]+", "", want.upper()))
    return 1 if set(packed) == gold_set else 0


# --------------------------------------------------------------------------- scorer

# what pandas reads back as NaN from the driver's results spreadsheet (read_excel's default NA strings)
SPREADSHEET_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                            "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


def driver_answer(response: str | None) -> str | None:
    """The driver's `agent_answer` from a final text: between the first `<answer>` and the first
    `</answer>`, overridden by a `<|answer|>…<|answer|>` pair; None without tags."""
    answer: str | None = None
    if response and "<answer>" in response and "</answer>" in response:
        start = response.find("<answer>") + len("<answer>")
        answer = response[start:response.find("</answer>")].strip()
    if response and response.count("<|answer|>") >= 2:
        start = response.find("<|answer|>") + len("<|answer|>")
        answer = response[start:response.find("<|answer|>", start)].strip()
    return answer


def spreadsheet_roundtrip(answer: str | None) -> str:
    """The prediction after the driver's JSONL → xlsx → pandas trip: no answer and NA-like strings
    come back as 'nan', a formula (text starting with '=') as '0'."""
    if answer is None or answer in SPREADSHEET_NA:
        return "nan"
    if answer.startswith("="):
        return "0"
    return answer


def official_prediction(response: str) -> str:
    """The prediction the reference pipeline scores: the driver's answer after the spreadsheet trip."""
    return spreadsheet_roundtrip(driver_answer(response))


def corrected_prediction(response: str) -> str:
    """The last complete `<answer>` pair's content — empty when the model answered with an empty
    pair (not the whole response, which would send its reasoning to the judge) — else the response."""
    tag = _extract.tag_content(response)
    return (response if tag is None else tag).strip()


def task_to_row(task: Task, prediction: str) -> dict[str, Any]:
    """The official row for a toolsight Task (see the module docstring)."""
    turn = task.turns[0]
    answer = turn.answer
    if isinstance(answer, list):
        answer = str(answer)
    row: dict[str, Any] = {
        "index": turn.meta.get("index", task.id), "id": turn.meta.get("official_id", task.id),
        "category": task.tags.get("category", ""), "question": turn.meta.get("question", turn.prompt),
        "answer": answer, "prediction": prediction,
    }
    for k, v in (turn.options or {}).items():
        if k.strip().upper() in OPTION_LETTERS:
            row[k.strip().upper()] = v
    return row


class VtcScorer:
    """VTC-Bench scorer: rules, then the judge (when `ctx.judge` is set) for rule failures."""

    def __init__(self, mode: Mode = "official") -> None:
        if mode not in ("official", "corrected"):
            raise ValueError(f"unknown scoring mode {mode!r}: use 'official' or 'corrected'")
        self.mode: Mode = mode
        self.name = "vtc-bench"

    async def _judge(self, row: dict[str, Any], ctx: ScoreContext) -> tuple[int | None, list[JudgeCall], str | None]:
        assert ctx.judge is not None
        name = vtc_judge_prompt_name(row)
        prompt = vtc_judge_prompt(row)
        answer = _cell(row.get("answer"))
        gold_letter = _gold_letter(row, answer) if self.mode == "corrected" else None
        calls: list[JudgeCall] = []
        attempts = JUDGE_RETRIES if self.mode == "official" else max(1, ctx.judge_retries)
        step = 0.1 if name == "mcq_letter_extractor" else 0.5
        for i in range(attempts):
            if self.mode == "official":
                config = GenerateConfig(temperature=i * step, max_tokens=JUDGE_MAX_TOKENS, seed=ctx.judge_config.seed)
            else:
                config = ctx.judge_config
            call = await JudgeRunner(ctx.judge, config, retries=1).call(prompt)
            calls.append(call)
            if call.error is not None:
                continue
            hit = vtc_judge_hit(name, call.reply or "", answer, self.mode, gold_letter)
            if hit is not None:
                return hit, calls, None
        return None, calls, f"the judge gave no usable reply in {attempts} attempt(s)"

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        response = responses[0] if responses else ""
        pred = official_prediction(response) if self.mode == "official" else corrected_prediction(response)
        row = task_to_row(task, pred)
        if row["answer"] is None:
            return Score(scorer=self.name, error=f"task {task.id}: no gold answer")
        rule = vtc_rule_score(row, self.mode)
        to_judge = vtc_goes_to_judge(row, self.mode)
        details: dict[str, Any] = {"rule_score": rule, "goes_to_llm_judge": to_judge,
                                   "llm_judge_prompt": vtc_judge_prompt_name(row) if to_judge else None,
                                   "mode": self.mode}
        value = rule
        calls: list[JudgeCall] = []
        error: str | None = None
        if to_judge and ctx.judge is not None:
            hit, calls, why = await self._judge(row, ctx)
            details["llm_hit"] = hit
            if hit is None and self.mode == "corrected":
                error = why
            value = float(hit or 0)
        how = "rule" if value >= 0.5 and rule >= 0.5 else ("judge" if calls else "rule")
        return Score(value=value, passed=value >= 0.5, answer=pred or None, scorer=self.name, error=error,
                     explanation=f"{self.mode}: {how} → {value:g}", details=details, judge_calls=calls)


def make_scorer(mode: Mode = "official") -> VtcScorer:
    return VtcScorer(mode)


#: the scorers this module provides, registered by `toolsight.scoring.registry`
SCORERS = {"vtc-bench": make_scorer}
