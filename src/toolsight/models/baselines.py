"""Built-in baseline "models": `reference` and `random`.

`reference` answers each generated task by running the task's reference solution through the real
tools — Python code through the sandboxed `python_interpreter`, a recorded sequence of OpenCV
interface calls, or a browsing program (tool calls whose arguments are filled from values captured
out of earlier results) — and reading the answer from the tool output. It never sees the gold answer: its
score says which generated tasks are solvable from the pixels with tools, and a task it fails is a
generator or solution bug. `random` guesses uniformly over a task's options (TIR-Bench's random row).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolCall
from toolsight.tasks.schema import Task, Turn
from toolsight.tools.base import ToolSpec

_ANSWER_LINE = re.compile(r"^ANSWER:\s*(.*?)\s*$", re.MULTILINE)
_INFO = re.compile(r"INFO:\s*(\{.*\})", re.DOTALL)
_IMAGE_ID = re.compile(r"\bimg-[0-9a-f]{12}\b")
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
        program = turn.meta.get("reference_program")
        if isinstance(program, dict):
            return self._program(turn, program, messages, tool_msgs)
        calls = turn.meta.get("reference_calls")
        if isinstance(calls, list) and calls:
            return self._replay(turn, calls, tool_msgs)
        code = solution_code(turn, self.root)
        if code is None:
            return _reply("The reference agent has no solution for this task.")
        if not tool_msgs:
            return _call("python_interpreter", {"code": _fit(code)}, f"ref-{ti}-0")
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
                ids = _IMAGE_ID.findall(m.text)
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


class ReferenceModel(Model):
    """`--model reference`: runs each task's reference solution through the real tools."""

    tool_image_mode = "user"

    def __init__(self, name: str = "reference", dataset_root: Path | None = None) -> None:
        super().__init__(name)
        self.dataset_root = dataset_root

    def bind_dataset(self, root: Path) -> None:
        """Where sidecar solution files live (the runner calls this with the dataset folder)."""
        self.dataset_root = root

    def for_task(self, task: Task) -> Model:
        return _TaskReference(task, self.dataset_root)

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return _reply("The reference agent needs a task (use it through `toolsight run`).")


class _TaskRandom(Model):
    def __init__(self, task: Task, seed: int) -> None:
        super().__init__("random")
        self.task = task
        digest = hashlib.sha256(f"{seed}:{task.id}".encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))

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

    def for_task(self, task: Task) -> Model:
        return _TaskRandom(task, self.seed)

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return _reply("<answer></answer>")


def make_random(spec: str) -> Model:
    """`random` or `random/SEED`."""
    _, _, seed = spec.partition("/")
    if seed and not seed.isdigit():
        from toolsight.models.base import ConfigurationError

        raise ConfigurationError(f"model {spec!r}: use 'random' or 'random/SEED' with an integer seed")
    return RandomModel(spec, seed=int(seed) if seed else 0)
