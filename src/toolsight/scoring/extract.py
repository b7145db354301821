"""Rule-based answer extraction: find the answer in a model's final response, or say there is none.

Every function returns None when its rule does not apply — extraction never guesses. The rules:

- `answer_tag`: the content of the **last complete** `<answer>…</answer>` pair (the last closing
  tag and the nearest opening tag before it; case-insensitive), stripped. Empty → None.
- `answer_section`: the text under the last `### Answer` heading (any level, optional colon)
  up to the next heading.
- `boxed`: the content of the last `\\boxed{…}` (balanced braces).
- `final_answer`: the first rule that finds something, in the order answer tag (a `\\boxed{}`
  inside it is unwrapped), `### Answer` section, `\\boxed{}`, a `Final answer:` line, and — only
  when `allow_plain=True` — a short single-line response taken as is.
- `choice_letter`: a multiple-choice letter (see its docstring for the patterns, the option-text
  → letter mapping and the nearest-match rule).
- `number`, `int_list`, `label_set`, `is_none_answer`: numbers, lists of integers, label sets
  (`"1, 2"` == `"2,1"`, `"None"` = the empty set).

An optional LLM extractor (`llm_extract`) handles what rules cannot parse; its prompt has a
per-benchmark few-shot slot (`FEW_SHOT`, `register_few_shot`).
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from dataclasses import dataclass

from toolsight.models.base import GenerateConfig, Model
from toolsight.scoring.base import JudgeCall

_OPEN = re.compile(r"<answer\s*>", re.IGNORECASE)
_CLOSE = re.compile(r"</answer\s*>", re.IGNORECASE)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]*(?:final[ \t]+)?answer[ \t]*:?[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_ANY_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]", re.MULTILINE)
_FINAL_LINE = re.compile(r"^[ \t*_]*final[ \t]+answer[ \t*_]*[:：][ \t*_]*(.+?)[ \t*_]*$", re.IGNORECASE | re.MULTILINE)

PLAIN_MAX_CHARS = 100


@dataclass(frozen=True)
class Extracted:
    """An extracted answer and the rule that found it (for the score's explanation)."""

    text: str
    rule: str


def tag_content(text: str) -> str | None:
    """The stripped content of the last complete `<answer>…</answer>` pair — `""` when the pair is
    empty — or None when there is no complete pair."""
    closes = list(_CLOSE.finditer(text))
    if not closes:
        return None
    end = closes[-1]
    opens = [m for m in _OPEN.finditer(text, 0, end.start())]
    if not opens:
        return None
    return text[opens[-1].end():end.start()].strip()


def answer_tag(text: str) -> str | None:
    """The stripped content of the last complete `<answer>…</answer>` pair, or None (also when empty)."""
    return tag_content(text) or None


def answer_section(text: str) -> str | None:
    """The text under the last `### Answer` heading (to the next heading), stripped, or None."""
    heads = list(_HEADING.finditer(text))
    if not heads:
        return None
    head = heads[-1]
    rest = text[head.end():]
    nxt = _ANY_HEADING.search(rest)
    body = (head.group(1) + "\n" + (rest[:nxt.start()] if nxt else rest)).strip()
    return body or None


def boxed(text: str) -> str | None:
    """The content of the last `\\boxed{…}` with balanced braces, or None."""
    if "\\boxed{" not in text:
        return None
    closing: dict[int, int] = {}
    stack: list[int] = []
    for j, ch in enumerate(text):  # one pass: match every brace pair
        if ch == "{":
            stack.append(j)
        elif ch == "}" and stack:
            closing[stack.pop()] = j
    idx = text.rfind("\\boxed{")
    while idx >= 0:
        brace = idx + len("\\boxed")
        if brace in closing:
            inner = text[brace + 1:closing[brace]].strip()
            return inner or None
        idx = text.rfind("\\boxed{", 0, idx)  # unbalanced: try an earlier one
    return None


def final_answer(text: str, *, allow_plain: bool = False) -> Extracted | None:
    """The answer by the first rule that applies (tag, section, boxed, 'Final answer:' line, plain)."""
    tag = answer_tag(text)
    if tag is not None:
        inner = boxed(tag)
        return Extracted(inner, "answer tag + boxed") if inner else Extracted(tag, "answer tag")
    section = answer_section(text)
    if section is not None:
        inner = boxed(section)
        return Extracted(inner, "answer section + boxed") if inner else Extracted(section, "answer section")
    box = boxed(text)
    if box is not None:
        return Extracted(box, "boxed")
    lines = _FINAL_LINE.findall(text)
    if lines:
        return Extracted(lines[-1].strip(), "final answer line")
    plain = text.strip()
    if allow_plain and plain and "\n" not in plain and len(plain) <= PLAIN_MAX_CHARS:
        return Extracted(plain, "plain response")
    return None


# --------------------------------------------------------------------------- normalisation

_WRAP = " \t\r\n.,;:!?'\"`*_()[]{}"


def normalize_text(text: str) -> str:
    """Casefold, NFKC, collapse whitespace, drop surrounding punctuation/markdown."""
    s = unicodedata.normalize("NFKC", text).casefold()
    s = re.sub(r"\s+", " ", s).strip()
    prev = None
    while prev != s:
        prev = s
        s = s.strip(_WRAP)
    return s


# --------------------------------------------------------------------------- multiple choice

DEFAULT_LETTERS = "ABCDEFG"
NEAREST_MIN_RATIO = 0.8
NEAREST_MIN_MARGIN = 0.1

_LETTER_PATTERNS = [
    # "B", "(B)", "B.", "B)", "B:", "**B**", "[B]"
    re.compile(r"^\W*([A-Za-z])\W*$"),
    # "B. text", "(B) text", "B) text", "B: text", "B - text"
    re.compile(r"^[\s*_\[(]*([A-Z])\s*(?:[.):\]]|\s-\s)\s*\S"),
    # "answer is B", "answer: (B)", "option B", "choice (C)"
    re.compile(r"\b(?i:answer|option|choice)(?:\s+(?i:is))?\s*[:：]?\s*[*_\[(]*([A-Z])\b(?![-'’])"),
]


def choice_letter(text: str, options: dict[str, str] | None = None, letters: str | None = None) -> str | None:
    """A multiple-choice letter, upper case, or None.

    Rules, in order (the first that gives exactly one allowed letter wins):
    1. the whole answer is a letter, possibly wrapped: `B`, `(b)`, `B.`, `**B**`;
    2. it starts with a letter label: `B. text`, `(B) text`, `B) text`, `B: text`;
    3. a phrase names it: `answer is B`, `Answer: (B)`, `option B` — if several different letters
       are named this way the answer is ambiguous → None;
    4. with `options` (letter → text): the normalised answer equals one option's text;
    5. nearest match: the answer's similarity (difflib ratio on normalised text) to one option's
       text is at least 0.8 and at least 0.1 above every other option → that letter.
    Allowed letters: the keys of `options`, else `letters`, else A–G.
    """
    allowed = {k.strip().upper() for k in options} if options else set((letters or DEFAULT_LETTERS).upper())
    s = text.strip()
    if not s:
        return None
    for i, pat in enumerate(_LETTER_PATTERNS):
        found = {m.group(1).upper() for m in pat.finditer(s)} if i == 2 else (
            {m.group(1).upper()} if (m := pat.search(s)) else set())
        found &= allowed
        if len(found) == 1:
            return found.pop()
        if len(found) > 1:
            return None
    if not options:
        return None
    got = normalize_text(s)
    exact = [k.strip().upper() for k, v in options.items() if normalize_text(v) == got]
    if len(set(exact)) == 1:
        return exact[0]
    ratios = sorted(
        ((difflib.SequenceMatcher(None, got, normalize_text(v)).ratio(), k.strip().upper()) for k, v in options.items()),
        reverse=True,
    )
    best, letter = ratios[0]
    second = ratios[1][0] if len(ratios) > 1 else 0.0
    if best >= NEAREST_MIN_RATIO and best - second >= NEAREST_MIN_MARGIN:
        return letter
    return None


def gold_letter(gold: str, options: dict[str, str] | None) -> str | None:
    """The letter a gold answer stands for: a letter, or an option's exact (normalised) text."""
    g = gold.strip()
    if options:
        keys = {k.strip().upper(): k for k in options}
        if g.upper() in keys:
            return g.upper()
        for k, v in options.items():
            if normalize_text(v) == normalize_text(g):
                return k.strip().upper()
        return None
    return g.upper() if len(g) == 1 and g.isalpha() else None


# --------------------------------------------------------------------------- numbers and lists

_NUM = r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+−]?\.\d+(?:[eE][-+]?\d+)?"
_NUM_RE = re.compile(_NUM)
_FRACTION = re.compile(rf"^({_NUM})\s*/\s*({_NUM})$")
_UNIT_STRIP = re.compile(r"^[\s$€£¥₹~≈]*|[\s%°]*$")


def _to_float(token: str) -> float | None:
    try:
        value = float(token.replace(",", "").replace("−", "-"))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def number(text: str) -> float | None:
    """The number an answer states, or None.

    The whole answer is a number (currency signs, `%`, `°`, thousands commas and `~` allowed), or a
    fraction `a/b`; otherwise, the answer must contain exactly one number. Percent signs are
    dropped, not divided (`60%` → 60.0).
    """
    s = boxed(text) or text
    s = s.strip().strip("*_`'\" .")
    core = _UNIT_STRIP.sub("", s)
    if re.fullmatch(_NUM, core):
        return _to_float(core)
    frac = _FRACTION.match(core)
    if frac:
        num, den = _to_float(frac.group(1)), _to_float(frac.group(2))
        if num is not None and den:
            return num / den
        return None
    found = _NUM_RE.findall(s)
    if len(found) == 1:
        return _to_float(found[0])
    return None


_INT_LIST = re.compile(r"^[\[\](){}\s]*[-+]?\d+(?:(?:\s*[,;，、]\s*|\s+and\s+|\s+)[-+]?\d+)*[\s\[\](){}.]*$", re.IGNORECASE)
_INT = re.compile(r"[-+]?\d+")


def int_list(text: str) -> list[int] | None:
    """A list of integers written as a list (`[1, 2, 3]`, `1,2,3`, `1 2 3`, `1, 2 and 3`), or None.

    The answer must consist of integers and separators only; `none`/`[]` give the empty list.
    """
    s = (boxed(text) or text).strip().strip("*_`")
    if is_none_answer(s) or re.fullmatch(r"\[\s*\]", s):
        return []
    if not _INT_LIST.match(s):
        return None
    return [int(x) for x in _INT.findall(s)]


_NONE = re.compile(r"^\W*(?:none|none of (?:the above|them)|no (?:suitable )?(?:tool|option|answer) (?:fits|applies))\W*$",
                   re.IGNORECASE)


def is_none_answer(text: str) -> bool:
    """True when the answer says "none" (`None`, `none.`, `**None**`, `None of the above`)."""
    return bool(_NONE.match(text.strip()))


def label_set(text: str) -> frozenset[str] | None:
    """A set of labels: `"1, 2"` == `"2,1"`; `"None"` → the empty set; None when not a label list.

    Labels are separated by commas, semicolons, `and` or whitespace and compared case-insensitively
    after stripping brackets; each label is a short token (letters, digits, `-`, `_`).
    """
    s = (boxed(text) or text).strip().strip("*_`")
    if is_none_answer(s):
        return frozenset()
    s = s.strip("[](){}. ")
    if not s:
        return None
    parts = [p.strip().strip("'\"") for p in re.split(r"\s*(?:[,;，、]|\band\b)\s*|\s+", s, flags=re.IGNORECASE)]
    parts = [p for p in parts if p]
    if not parts or not all(re.fullmatch(r"[\w\-]{1,20}", p) for p in parts):
        return None
    return frozenset(p.casefold() for p in parts)


# --------------------------------------------------------------------------- LLM extractor

DEFAULT_EXTRACT_PROMPT = """You extract the final answer from a model's response to a question.
Reply with the final answer only, copied from the response without changing it. If the response
gives no final answer, reply exactly: NO ANSWER
{examples}
Question: {question}

Response: {response}

Final answer:"""

FEW_SHOT: dict[str, str] = {
    "generic": (
        "\nExamples:\n"
        "Question: Which option shows a cat? (A) dog (B) cat\nResponse: The second picture is a cat, so B.\n"
        "Final answer: B\n\n"
        "Question: How many apples are there?\nResponse: I count seven apples in total.\nFinal answer: 7\n\n"
        "Question: What colour is the car?\nResponse: I cannot tell from this image.\nFinal answer: NO ANSWER\n"
    ),
}


def register_few_shot(benchmark: str, examples: str) -> None:
    """Add or replace the few-shot examples used by `llm_extract` for one benchmark."""
    FEW_SHOT[benchmark] = examples


_NO_ANSWER = re.compile(r"^\W*no[\s_-]*answer\W*$", re.IGNORECASE)


async def llm_extract(model: Model, prompt_template: str, question: str, response: str, *,
                      benchmark: str = "generic", config: GenerateConfig | None = None) -> tuple[str | None, JudgeCall]:
    """Ask `model` for the final answer in `response`. None when it says there is none (or fails).

    `prompt_template` has the slots `{question}`, `{response}` and `{examples}` (the few-shot text
    registered for `benchmark`). Returns the answer and the recorded call.
    """
    from toolsight.scoring.judge import JudgeRunner  # local: judge imports nothing from here

    prompt = prompt_template.format(question=question, response=response,
                                    examples=FEW_SHOT.get(benchmark, FEW_SHOT["generic"]))
    runner = JudgeRunner(model, config, retries=1)
    call = await runner.call(prompt)
    reply = (call.reply or "").strip()
    if call.error is not None or not reply or _NO_ANSWER.match(reply):
        return None, call
    reply = re.sub(r"^final answer\s*:\s*", "", reply, flags=re.IGNORECASE).strip()
    return (reply or None), call
