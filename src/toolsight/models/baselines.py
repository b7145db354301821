"""Built-in baseline "models": `reference` and `random`.

`reference` answers each generated task by running the task's reference solution through the real
tools — Python code through the sandboxed `python_interpreter`, a recorded sequence of OpenCV
interface calls, or a browsing program (tool calls whose arguments are filled from values captured
out of earlier results) — and reading the answer from the tool output. It never sees the gold answer: its
score says which generated tasks are solvable from the pixels with tools, and a task it fails is a
generator or solution bug. `random` guesses uniformly over a task's options (TIR-Bench's random row), seeded per task and epoch.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolCall
from toolsight.tasks.schema import Task, Turn

_ANSWER_LINE = re.compile(r"^ANSWER:\s*(.*?)\s*$", re.MULTILINE)
_INFO = re.compile(r"INFO:\s*(\{.*\})", re.DOTALL)
_IMAGE_ID = re.compile(r"\bimg-[0-9a-f]{12}\b")
# the image a call produced, as its text names it: an artifact id, or a path (VTC-Bench's official tools)
_PRODUCED = re.compile(r"Edited Image Path: (\S+)")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_INPUT_URL = re.compile(r"Input image_url: (\S+?),")


def _reply(text: str) -> ModelOutput:
    return ModelOutput(message=Message(role="assistant", content=[TextPart(text=text)]), model="baseline")


def _call(name: str, args: dict[str, Any], cid: str) -> ModelOutput:
    msg = Message(role="assistant", tool_calls=[ToolCall(id=cid, name=name, arguments=json.dumps(args))])
    return ModelOutput(message=msg, finish_reason="tool_calls", model="baseline")


def _current_turn(task: Task, messages: list[Message]) -> tuple[int, list[Message]]:
    """Which turn the conversation is in, and the messages after that turn's prompt."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role != "user":
            continue
        for ti in range(len(task.turns) - 1, -1, -1):
            if task.turns[ti].prompt and task.turns[ti].prompt in m.text:
                return ti, messages[i + 1:]
    return 0, []


def solution_code(turn: Turn, dataset_root: Path | None = None) -> str | None:
    code = turn.meta.get("reference_solution")
    if isinstance(code, str) and code.strip():
        return code
    rel = turn.meta.get("reference_solution_file")
    if isinstance(rel, str) and dataset_root is not None:
        p = dataset_root / rel
        if p.is_file():
            return p.read_text(encoding="utf-8")
    return None


def read_answer(text: str, rule: dict[str, Any]) -> str | None:
    """The answer in a tool's `INFO: {json}` text, by a field path and optional len/map."""
    m = _INFO.search(text)
    if not m:
        return None
    try:
        val: Any = json.loads(m.group(1))
    except json.JSONDecodeError:
        return None
    for key in str(rule.get("field", "")).split("."):
        if not key:
            continue
        if isinstance(val, dict) and key in val:
            val = val[key]
        elif isinstance(val, list) and key.isdigit() and int(key) < len(val):
            val = val[int(key)]
        else:
            return None
    if rule.get("op") == "len" and isinstance(val, list):
        val = len(val)
    mapping = rule.get("map")
    if isinstance(mapping, dict):
        return str(mapping[str(val)]) if str(val) in mapping else None
    return str(val)


def _answer_from_info(text: str, rule: dict[str, Any]) -> str | None:
    """Read an answer out of a tool's `INFO: {json}` text by a small rule (see docs/generators.md)."""
    return read_answer(text, rule)


CODE_LIMIT = 5000  # the python tools' schema limit (VisualToolBench: 1-5000 characters)


def _fit(code: str) -> str:
    """Drop comments and blank lines when a solution is longer than the tools accept."""
    if len(code) <= CODE_LIMIT:
        return code
    import ast

    try:
        return ast.unparse(ast.parse(code))
    except SyntaxError:
        return code


def fill_program_args(args: Any, values: dict[str, str], input_ref: str) -> Any:
    """A program step's arguments with `$input` and `{name}` filled in; None if a value is missing."""
    missing = False

    def fill(v: Any) -> Any:
        nonlocal missing
        if isinstance(v, dict):
            return {k: fill(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fill(x) for x in v]
        if v == "$input":
            return input_ref
        if isinstance(v, str):
            def one(m: re.Match[str]) -> str:
                nonlocal missing
                if m.group(1) not in values:
                    missing = True
                    return m.group(0)
                return values[m.group(1)]

            return _PLACEHOLDER.sub(one, v)
        return v

    out = fill(args)
    return None if missing else out


def program_captures(step: dict[str, Any], text: str) -> dict[str, str] | None:
    """The values a step captures from its tool result (first match of each regex); None if one fails."""
    out: dict[str, str] = {}
    for name, pattern in (step.get("capture") or {}).items():
        m = re.search(str(pattern), text, re.MULTILINE)
        if m is None:
            return None
        out[str(name)] = m.group(1).strip()
    return out


class _TaskReference(Model):
    def __init__(self, task: Task, dataset_root: Path | None) -> None:
        super().__init__("reference")
        self.task = task
        self.root = dataset_root

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        ti, after = _current_turn(self.task, messages)
        turn = self.task.turns[ti]
        tool_msgs = [m for m in after if m.role == "tool"]
        plan = turn.meta.get("reference_plan")
        if isinstance(plan, dict) and plan.get("kind") == "detect_then_ocr":
            return _detect_then_ocr(turn, plan, tool_msgs, ti)
        program = turn.meta.get("reference_program")
        if isinstance(program, dict):
            return self._program(turn, program, messages, tool_msgs)
        calls = turn.meta.get("reference_calls")
        if isinstance(calls, list) and calls and isinstance(turn.meta.get("answer_template"), str):
            return _replay_template(ti, turn, calls, messages, after)
        if isinstance(calls, list) and calls:
            return self._replay(turn, calls, tool_msgs)
        code = solution_code(turn, self.root)
        if code is None:
            return _reply("The reference agent has no solution for this task.")
        if not tool_msgs:
            return _call(code_tool(tools) or CODE_TOOL, {"code": _fit(code)}, f"ref-{ti}-0")
        out = tool_msgs[-1].text
        found = _ANSWER_LINE.findall(out)
        if not found:
            return _reply(f"The reference solution printed no answer.\n{out[-500:]}")
        return _reply(f"<answer>{found[-1]}</answer>")

    def _program(self, turn: Turn, program: dict[str, Any], messages: list[Message],
                 tool_msgs: list[Message]) -> ModelOutput:
        """One step of a browsing program: the next call, or the answer once every step has run."""
        steps = list(program.get("steps") or [])
        values: dict[str, str] = {}
        for i, msg in enumerate(tool_msgs[: len(steps)]):
            text = "\n".join(p.text for p in msg.content if isinstance(p, TextPart))  # parts, one per line
            caught = program_captures(steps[i], text)
            if caught is None:
                names = ", ".join((steps[i].get("capture") or {}).keys())
                return _reply(f"The reference program could not read {names} from the {steps[i]['tool']} result.")
            values.update(caught)
        if len(tool_msgs) < len(steps):
            step = steps[len(tool_msgs)]
            first_user = next((m for m in messages if m.role == "user"), None)
            m = _INPUT_URL.search(first_user.text) if first_user is not None else None
            input_ref = m.group(1) if m else (turn.images[0].path.rsplit("/", 1)[-1] if turn.images else "")
            args = fill_program_args(step.get("arguments", {}), values, input_ref)
            if args is None:
                return _reply(f"The reference program has no value for a {step['tool']} argument.")
            text = f"Step {len(tool_msgs) + 1}: calling {step['tool']}."  # the reference loop wants text first
            out = _call(str(step["tool"]), args, f"ref-{len(tool_msgs)}")
            out.message.content = [TextPart(text=text)]
            return out
        try:
            return _reply(f"<answer>{str(program.get('answer', '')).format(**values)}</answer>")
        except (KeyError, IndexError):
            return _reply("The reference program's answer names a value it never captured.")

    def _replay(self, turn: Turn, calls: list[Any], tool_msgs: list[Message]) -> ModelOutput:
        step = len(tool_msgs)
        if step < len(calls):
            prev = None
            for m in reversed(tool_msgs):
                ids = _PRODUCED.findall(m.text) or _IMAGE_ID.findall(m.text)
                if ids:
                    prev = ids[-1]
                    break
            spec = calls[step]
            args = json.loads(json.dumps(spec.get("arguments", {})))
            first = turn.images[0].path.rsplit("/", 1)[-1] if turn.images else ""
            for k, v in list(args.items()):
                if v == "$prev":
                    args[k] = prev or first
                elif v == "$input":
                    args[k] = first
            return _call(str(spec["tool"]), args, f"ref-{step}")
        rule = turn.meta.get("answer_from") or {}
        ans = _answer_from_info(tool_msgs[-1].text if tool_msgs else "", rule if isinstance(rule, dict) else {})
        if ans is None:
            return _reply("The reference calls gave no readable answer.")
        return _reply(f"<answer>{ans}</answer>")


def _tool_json(text: str) -> dict[str, Any] | None:
    """The JSON object a perception tool returned (its text may be followed by a produced-images line)."""
    try:
        val, _ = json.JSONDecoder().raw_decode(text.strip())
    except json.JSONDecodeError:
        return None
    return val if isinstance(val, dict) else None


def shape_of(hints: dict[str, Any]) -> str:
    """The toy-workshop shape from the classical detector's contour measurements."""
    if float(hints.get("elongation", 1.0)) >= 2.5:
        return "bar"
    if float(hints.get("circularity", 0.0)) >= 0.8:
        return "disk"
    vertices = int(hints.get("vertices", 0))
    if vertices == 3:
        return "triangle"
    if vertices == 4:
        return "square"
    return "other"


def _detect_then_ocr(turn: Turn, plan: dict[str, Any], tool_msgs: list[Message], ti: int) -> ModelOutput:
    """Generated PhysToolBench-style scenes: detect (classical shape hints), then OCR the fitting crops.

    The plan holds the toy world's rules (which shapes a job needs, `all` or the `largest`), never the
    answer: the numbers come from OCR of the crops, the shapes and the broken (grey) ones from pixels.
    """
    need = [str(x) for x in plan.get("need", [])]
    if not tool_msgs:
        first = turn.images[0].path.rsplit("/", 1)[-1] if turn.images else ""
        return _call("detect_and_crop_objects", {"image": first, "terms": []}, f"ref-{ti}-detect")
    found = _tool_json(tool_msgs[0].text) or {}
    dets = [d for d in found.get("detections", []) if isinstance(d, dict) and isinstance(d.get("shape"), dict)]
    chosen: list[dict[str, Any]] = []
    lines: list[str] = []
    for shape in need:
        fits = [d for d in dets if shape_of(d["shape"]) == shape and int(d["shape"].get("saturation", 0)) >= 40]
        lines.append(f"{shape}: {len(fits)} working object(s) of that shape")
        if not fits:
            return _reply("### Thinking Process\n" + "; ".join(lines) + ": no usable tool.\n### Answer\nNone")
        if plan.get("pick") == "largest":
            fits = [max(fits, key=lambda d: float(d["shape"].get("area_px", 0)))]
        chosen.extend(fits)
    if len(tool_msgs) == 1:
        msg = Message(role="assistant", tool_calls=[
            ToolCall(id=f"ref-{ti}-ocr-{k}", name="ocr", arguments=json.dumps({"image": d["cropped_image"]}))
            for k, d in enumerate(chosen)])
        return ModelOutput(message=msg, finish_reason="tool_calls", model="baseline")
    read: dict[str, str] = {}
    for m in tool_msgs[1:]:
        got = _tool_json(m.text) or {}
        if isinstance(got.get("image"), str):
            read[got["image"]] = str(got.get("text", ""))
    numbers: list[int] = []
    for d in chosen:
        digits = re.findall(r"\d+", read.get(str(d.get("cropped_image")), ""))
        if not digits:
            return _reply("The reference agent could not read the number on " + str(d.get("cropped_image")))
        numbers.append(int(digits[0]))
    answer = ", ".join(str(n) for n in sorted(set(numbers)))
    return _reply("### Thinking Process\n" + "; ".join(lines) + "; numbers read by OCR.\n### Answer\n" + answer)
# ---- VisualToolBench-style solutions: calls whose arguments and final answer are templates -------------
# `{INFO.key}` = a value printed as `INFO: {json}` by an earlier call of the turn (later calls win), or
# captured from a call's result by the regexes of its `capture` ({name: pattern}, group 1),
# `{RESULT}` = the last calculator result, `{PREV_NUMBER}` = the first number in the previous assistant
# answer of the conversation (a gold or model answer of the earlier turn). Tool outputs are read both as
# toolsight writes them and as the reference's `str(dict)` observations (VisualToolBench's official loop).
_TOKEN = re.compile(r"\{(INFO\.[A-Za-z_]\w*|RESULT|PREV_NUMBER)\}")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _infos(text: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    dec = json.JSONDecoder()
    pos = text.find("INFO:")
    while pos >= 0:
        start = text.find("{", pos)
        if start < 0:
            break
        try:
            obj, _ = dec.raw_decode(text, start)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            found.update(obj)
        pos = text.find("INFO:", start)
    return found


def _calc_result(text: str) -> str | None:
    import ast

    try:
        obj = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        obj = None
    if isinstance(obj, dict):
        r = obj.get("result")
        return str(r) if r is not None and obj.get("status") != "error" else None
    return text.strip() or None


def _fill(template: str, values: dict[str, Any], result: str | None, prev: str | None) -> str | None:
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        key = m.group(1)
        val = values.get(key[5:]) if key.startswith("INFO.") else (result if key == "RESULT" else prev)
        if val is None:
            missing = True
            return m.group(0)
        return str(val)

    out = _TOKEN.sub(sub, template)
    return None if missing else out


def _replay_template(ti: int, turn: Turn, calls: list[Any], messages: list[Message],
                     after: list[Message]) -> ModelOutput:
    tool_msgs = [m for m in after if m.role == "tool"]
    values: dict[str, Any] = {}
    result: str | None = None
    names = {c.id: c.name for m in after for c in m.tool_calls}
    for i, m in enumerate(tool_msgs):
        values.update(_infos(m.text))
        if names.get(m.tool_call_id or "") == "calculator":
            result = _calc_result(m.text)
        spec_i = calls[i] if i < len(calls) and isinstance(calls[i], dict) else {}
        if spec_i.get("capture"):  # values read out of a result by regex (web pages, search hits, weather)
            caught = program_captures(spec_i, m.text)
            if caught is None:
                names_ = ", ".join(spec_i["capture"])
                return _reply(f"The reference solution could not read {names_} from the {spec_i['tool']} result.")
            values.update(caught)
    prev_answers = [m.text for m in messages[: len(messages) - len(after)] if m.role == "assistant" and m.text]
    prev_nums = _NUMBER.findall(prev_answers[-1]) if prev_answers else []
    prev = prev_nums[0] if prev_nums else None
    step = len(tool_msgs)
    if step < len(calls):
        spec = calls[step]
        args: dict[str, Any] = {}
        for k, v in dict(spec.get("arguments", {})).items():
            filled = _fill(v, values, result, prev) if isinstance(v, str) else v
            if filled is None:
                return _reply(f"The reference solution could not fill {k!r} of step {step + 1}: {v!r}")
            args[k] = filled
        return _call(str(spec["tool"]), args, f"ref-{ti}-{step}")
    answer = _fill(str(turn.meta["answer_template"]), values, result, prev)
    return _reply(answer if answer is not None else "The reference calls gave no readable answer.")


#: the tool a reference solution written in Python is run through, when the setting offers it
CODE_TOOL = "python_interpreter"


def code_tool(specs: Sequence[ToolSpec]) -> str | None:
    """The offered tool the reference runs a Python solution through: `python_interpreter`, else the
    first tool whose only required argument is a string `code` (a benchmark's own code interpreter,
    e.g. one named `code_interpreter`); None when the setting offers no such tool."""
    names = [s.name for s in specs]
    if CODE_TOOL in names:
        return CODE_TOOL
    for spec in specs:
        params = spec.parameters or {}
        code = (params.get("properties") or {}).get("code")
        if params.get("required") == ["code"] and isinstance(code, dict) and code.get("type") == "string":
            return spec.name
    return None


def reference_tools(turn: Turn, dataset_root: Path | None = None) -> list[str]:
    """The tools the reference agent calls to solve `turn` (as `_TaskReference.generate` decides)."""
    plan = turn.meta.get("reference_plan")
    if isinstance(plan, dict) and plan.get("kind") == "detect_then_ocr":
        return ["detect_and_crop_objects", "ocr"]
    program = turn.meta.get("reference_program")
    if isinstance(program, dict):
        return [str(s["tool"]) for s in program.get("steps") or [] if isinstance(s, dict) and "tool" in s]
    calls = turn.meta.get("reference_calls")
    if isinstance(calls, list) and calls:
        return [str(c["tool"]) for c in calls if isinstance(c, dict) and "tool" in c]
    return [CODE_TOOL] if solution_code(turn, dataset_root) is not None else []


#: how many tasks `ReferenceModel.setting_warning` looks at (reading every solution of a large set is slow)
SAMPLE = 200


class ReferenceModel(Model):
    """`--model reference`: runs each task's reference solution through the real tools."""

    tool_image_mode = "user"
    #: its answers are the gold ones (when its solution works), so exact match scores it: a run needs
    #: no judge (an answer that does not match becomes a score error, never a silent pass)
    answers_with_gold = True

    def __init__(self, name: str = "reference", dataset_root: Path | None = None) -> None:
        super().__init__(name)
        self.dataset_root = dataset_root

    def bind_dataset(self, root: Path) -> None:
        """Where sidecar solution files live (the runner calls this with the dataset folder)."""
        self.dataset_root = root

    def for_task(self, task: Task, epoch: int = 1) -> Model:
        return _TaskReference(task, self.dataset_root)

    def setting_warning(self, tools: Sequence[str], tasks: Sequence[Task],
                        specs: Sequence[ToolSpec] = ()) -> str | None:
        """Which tasks' reference solutions call a tool that `tools` (every name the setting's toolbox
        accepts, aliases included) lacks; None when every sampled task can be solved. A Python
        solution is run through any code tool `specs` offers (`code_tool`)."""
        sample = tasks[:SAMPLE]
        missing: list[str] = []
        lacking = 0
        offered = set(tools)
        if code_tool(specs) is not None:
            offered.add(CODE_TOOL)
        for task in sample:
            absent = [n for turn in task.turns for n in reference_tools(turn, self.dataset_root) if n not in offered]
            lacking += bool(absent)
            missing.extend(n for n in absent if n not in missing)
        if not lacking:
            return None
        of = "of the first " if len(tasks) > len(sample) else "of "
        expect = "expect a score of 0" if lacking == len(sample) else "expect those to score 0"
        return (f"--model reference solves {lacking} {of}{len(sample)} task(s) by calling "
                f"{', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}, which this setting does not offer "
                f"({', '.join(tools) or 'no tools'}): {expect}")

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return _reply("The reference agent needs a task (use it through `toolsight run`).")


def random_stream(seed: int, task_id: str, epoch: int = 1) -> random.Random:
    """The random baseline's generator for one task in one epoch: reproducible (the same seed, task and
    epoch give the same guesses, in any order or process) and independent across tasks and epochs.
    Epoch 1 keeps the stream runs made before epochs were seeded had."""
    key = f"{seed}:{task_id}" if epoch <= 1 else f"{seed}:{task_id}:epoch {epoch}"
    digest = hashlib.sha256(key.encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class _TaskRandom(Model):
    def __init__(self, task: Task, seed: int, epoch: int = 1) -> None:
        super().__init__("random")
        self.task = task
        self.rng = random_stream(seed, task.id, epoch)

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        ti, _ = _current_turn(self.task, messages)
        opts = self.task.turns[ti].options
        if not opts:
            return _reply("<answer></answer>")
        return _reply(f"<answer>{self.rng.choice(sorted(opts))}</answer>")


class RandomModel(Model):
    """`--model random`: a uniform random choice among the options (no answer for free-form tasks)."""

    def __init__(self, name: str = "random", seed: int = 0) -> None:
        super().__init__(name)
        self.seed = seed

    def for_task(self, task: Task, epoch: int = 1) -> Model:
        return _TaskRandom(task, self.seed, epoch)

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return _reply("<answer></answer>")


def make_random(spec: str) -> Model:
    """`random` or `random/SEED`."""
    _, _, seed = spec.partition("/")
    if seed and not seed.isdigit():
        from toolsight.models.base import ConfigurationError

        raise ConfigurationError(f"model {spec!r}: use 'random' or 'random/SEED' with an integer seed")
    return RandomModel(spec, seed=int(seed) if seed else 0)
