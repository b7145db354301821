"""The `calculator` tool: arithmetic over an AST allowlist, never `eval`.

Supports + - * / // % and ^ (power; ** too), sqrt sin cos tan log exp, parentheses, and the names pi
and e. `×`, `÷` and `−` are accepted as *, / and -. Only numbers, those names and functions, and
those operators are accepted: no strings, attributes, subscripts, keywords or comprehensions. Every
intermediate integer is bounded in size (huge powers fall back to floats), so no expression can
take the harness's memory or time; the tool evaluates off the event loop. Bad expressions give a
failed ToolResult.
"""

from __future__ import annotations

import ast
import asyncio
import math
import operator
from typing import Any

from toolsight.tools.base import Tool, ToolContext, ToolError, ToolResult

MAX_EXPRESSION_CHARS = 1000

DESCRIPTION = (
    "Evaluate an arithmetic expression: + - * / // %, ^ or ** for powers, sqrt, sin, cos, tan, log, exp, "
    "the constants pi and e, and parentheses."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "expression": {"type": "string", "description": "The expression, e.g. \"(12.5 - 4) * 3 ^ 2\"."},
    },
    "required": ["expression"],
}


MAX_INT_BITS = 4096  # every integer, operand or result, stays below 2**4096
MAX_NODES = 400


def _check_int(v: Any) -> Any:
    if isinstance(v, int) and v.bit_length() > MAX_INT_BITS:
        return float(v) if v.bit_length() < 1024 else _too_large()
    return v


def _too_large() -> Any:
    raise ValueError("the number is too large")


def _power(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and b >= 0:
        if a in (0, 1, -1) or b * max(1, abs(a).bit_length()) <= MAX_INT_BITS:
            return a**b
    try:
        return math.pow(float(a), float(b))
    except (OverflowError, ValueError) as exc:
        raise ValueError(f"{a} ^ {b}: {exc}") from None


def _mul(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        return float(a) * float(b)
    return a * b


def _log(x: float, base: float | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


OPERATORS: dict[type, Any] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: _mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _power, ast.BitXor: _power,
}
UNARY: dict[type, Any] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
FUNCTIONS: dict[str, Any] = {
    "sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "log": _log, "exp": math.exp,
}
NAMES: dict[str, Any] = {"pi": math.pi, "e": math.e}


def _eval(node: ast.AST) -> Any:
    """Evaluate one allowed node; anything else is refused with the construct named."""
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ValueError(f"only numbers are allowed, not {type(node.value).__name__}")
        return _check_int(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return _check_int(OPERATORS[type(node.op)](_eval(node.left), _eval(node.right)))
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Name):
        if node.id not in NAMES:
            raise ValueError(f"unknown name {node.id!r}; use pi or e")
        return NAMES[node.id]
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise ValueError(f"unknown function; use {', '.join(FUNCTIONS)}")
        if node.keywords or not 1 <= len(node.args) <= 2 or any(isinstance(a, ast.Starred) for a in node.args):
            raise ValueError(f"{node.func.id}() takes one or two numbers")
        args = [_eval(a) for a in node.args]
        if len(args) == 2 and node.func.id != "log":
            raise ValueError(f"{node.func.id}() takes one number")
        return FUNCTIONS[node.func.id](*args)
    raise ValueError(f"{type(node).__name__} is not allowed in an arithmetic expression")


def evaluate(expression: str) -> float | int:
    """Evaluate an arithmetic expression; raises ToolError with a readable reason."""
    expr = expression.strip().replace("×", "*").replace("÷", "/").replace("−", "-")
    if not expr:
        raise ToolError("'expression' is empty; give an arithmetic expression such as \"2 * 3.14 * 5\"")
    if len(expr) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"the expression is {len(expr)} characters; the limit is {MAX_EXPRESSION_CHARS}")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"cannot parse {expression!r}: {exc.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ToolError(f"the expression has more than {MAX_NODES} parts")
    try:
        val = _eval(tree)
    except ZeroDivisionError:
        raise ToolError(f"division by zero in {expression!r}") from None
    except RecursionError:
        raise ToolError(f"cannot evaluate {expression!r}: it is nested too deeply") from None
    except Exception as exc:
        raise ToolError(f"cannot evaluate {expression!r}: {type(exc).__name__}: {exc}") from None
    if isinstance(val, bool) or not isinstance(val, int | float):
        raise ToolError(f"{expression!r} is not an arithmetic expression (got {type(val).__name__})")
    return val


def format_number(val: float | int) -> str:
    if isinstance(val, int):
        return str(val) if val.bit_length() < 13000 else format(float(val), ".15g")
    if math.isfinite(val) and val.is_integer() and abs(val) < 1e15:
        return str(int(val))
    return format(val, ".15g")


class Calculator(Tool):
    """The calculator; a benchmark may show it with its own description and schema texts (same arguments)."""

    def __init__(self, description: str = DESCRIPTION, parameters: dict[str, Any] | None = None) -> None:
        super().__init__("calculator", description, parameters or PARAMETERS)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        extra = sorted(set(args) - {"expression"})
        if extra:
            raise ToolError(f"unknown argument(s) {', '.join(extra)}; the only argument is 'expression'")
        expression = args.get("expression")
        if isinstance(expression, int | float) and not isinstance(expression, bool):
            expression = str(expression)
        if not isinstance(expression, str):
            raise ToolError("missing required argument 'expression': a string such as \"2 * 3.14 * 5\"")
        val = await asyncio.to_thread(evaluate, expression)  # bounded, but never on the event loop
        text = format_number(val)
        return ToolResult(text=text, extra={"expression": expression, "result": text})


def calculator_tools() -> list[Tool]:
    """The `calculator` tool set."""
    return [Calculator()]
