"""Turning what a user typed (CLI flags, `evaluate(...)` keywords) into validated `RunOptions`.

One set of rules for both front ends: provider arguments (`-M top_p=0.9`, `-M
chat_template_kwargs='{"enable_thinking": false}'`, `--extra-body JSON`), agent caps (`--cap
max_tool_calls=10`, checked against the cap names), tag filters, and every other run option.
Every mistake is one `OptionsError` line naming the flag or keyword and the fix.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolsight.agents.settings import AgentSettings
from toolsight.engine.options import FLAT_KEYS, RunOptions
from toolsight.errors import ToolsightError, one_line
from toolsight.models.base import GenerateConfig


class OptionsError(ToolsightError):
    """A bad option (flag or keyword): one line naming it and the fix."""


#: generation settings every provider maps itself (docs/models.md); any other -M key is sent in the body.
#: `tool_choice` is not one: `-M tool_choice=…` goes in the body as it is (any provider's value), as it
#: always has; `GenerateConfig.tool_choice` is the loops' own (auto / none, mapped per provider)
GENERATE_FIELDS = tuple(k for k in GenerateConfig.model_fields if k not in ("extra_body", "tool_choice"))


def _near(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6)
    return f"did you mean {' or '.join(close)}? " if close else ""


def parse_value(text: str) -> Any:
    """A flag value: JSON when it parses (numbers, true/false/null, lists, objects), else the text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_assignments(items: Iterable[str], flag: str, example: str, form: str = "KEY=VALUE") -> dict[str, Any]:
    """`KEY=VALUE` strings (values parsed by `parse_value`) to a dict; later keys win."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise OptionsError(f"{flag} {item!r}: expected {form}, e.g. {flag} {example}")
        out[key.strip()] = parse_value(value)
    return out


def parse_json_object(text: str, flag: str) -> dict[str, Any]:
    """A JSON object given inline or as the path of a .json file (`--extra-body`)."""
    source = text
    if not text.lstrip().startswith("{") and Path(text).is_file():
        try:
            source = Path(text).read_text(encoding="utf-8")
        except OSError as exc:
            raise OptionsError(f"{flag} {text}: cannot read the file ({exc})") from None
    try:
        value = json.loads(source)
    except json.JSONDecodeError as exc:
        if source is text and not text.lstrip().startswith(("{", "[", '"')):  # meant as a file name
            raise OptionsError(f"{flag} {text}: no such file, and not inline JSON; pass an existing .json file or "
                               f"""a JSON object, e.g. {flag} '{{"service_tier": "flex"}}'""") from None
        raise OptionsError(f"{flag}: not valid JSON ({exc.msg} at character {exc.pos}); "
                           f"""e.g. {flag} '{{"chat_template_kwargs": {{"enable_thinking": false}}}}'""") from None
    if not isinstance(value, dict):
        raise OptionsError(f"{flag}: expected a JSON object {{...}}, got {type(value).__name__}")
    return value


def parse_run_limits(limit: str | int | None, fail_on_error: float | None) -> dict[str, Any]:
    """`--limit N|A-B` and `--fail-on-error N|FRACTION`, checked: the RunControl fields `limit`, `fail_on_error`."""
    from toolsight.engine.options import RunControl

    try:
        checked = RunControl(limit=limit, fail_on_error=fail_on_error)
    except ValidationError as exc:
        first = exc.errors()[0]
        flag, value = ("--limit", limit) if first["loc"][:1] == ("limit",) else ("--fail-on-error", fail_on_error)
        raise OptionsError(f"{flag} {value}: {str(first['msg']).removeprefix('Value error, ')}") from None
    return {"limit": checked.limit, "fail_on_error": checked.fail_on_error}


def generation(base: GenerateConfig | Mapping[str, Any] | None = None, model_args: Mapping[str, Any] | None = None,
               extra_body: Mapping[str, Any] | None = None, flag: str = "-M") -> GenerateConfig:
    """`base` with the provider arguments applied.

    A `model_args` key that is a generation setting (temperature, top_p, max_tokens, seed, stop,
    reasoning_effort, thinking_budget, timeout) sets it; any other key (top_k, repetition_penalty,
    chat_template_kwargs, …) goes into the request body (`extra_body`), as does `extra_body`.
    """
    data = base.model_dump() if isinstance(base, GenerateConfig) else dict(base or {})
    body: dict[str, Any] = dict(data.get("extra_body") or {})
    for key, value in (model_args or {}).items():
        if key in GENERATE_FIELDS:
            data[key] = [value] if key == "stop" and isinstance(value, str) else value
        elif key == "extra_body":
            if not isinstance(value, dict):
                raise OptionsError(f"{flag} extra_body=...: expected a JSON object")
            body.update(value)
        else:
            body[key] = value
    body.update(extra_body or {})
    data["extra_body"] = body
    try:
        return GenerateConfig.model_validate(data)
    except ValidationError as exc:
        raise OptionsError(f"{flag}: {one_line(exc)}") from None


def cap_names() -> dict[str, str]:
    """Every cap (an AgentSettings field) with its type, default and description (`toolsight list caps`)."""
    out: dict[str, str] = {}
    for name, f in AgentSettings.model_fields.items():
        kind = getattr(f.annotation, "__name__", None) or str(f.annotation).replace("typing.", "")
        default = f.get_default(call_default_factory=True)
        shown = json.dumps(default.model_dump(exclude_defaults=True) if isinstance(default, GenerateConfig) else default,
                           default=str)
        desc = f" — {f.description}" if f.description else ""
        out[name] = f"{kind}, default {shown[:60]}{desc}"
    return out


def check_caps(caps: Mapping[str, Any], flag: str = "--cap") -> dict[str, Any]:
    """`caps` if every name is a cap and every value fits it; else one line naming the cap."""
    fields = AgentSettings.model_fields
    for name, value in caps.items():
        if name not in fields:
            raise OptionsError(f"{flag} {name}: unknown cap; {_near(name, fields)}caps: {', '.join(fields)} "
                               "(`toolsight list caps` describes them)")
        if name == "generate":
            if not isinstance(value, dict):
                raise OptionsError(f"""{flag} generate=...: expected a JSON object, e.g. {flag} 'generate={{"top_p": 0.9}}'""")
            generation(value, flag=f"{flag} generate")
            continue
        try:
            AgentSettings.model_validate({name: value})
        except ValidationError as exc:
            raise OptionsError(f"{flag} {name}={json.dumps(value, default=str)}: {one_line(exc)}") from None
    return dict(caps)


#: defaults from the environment, as Inspect's INSPECT_EVAL_MODEL (the runs folder: engine.options.RUNS_DIR_ENV)
MODEL_ENV = "TOOLSIGHT_MODEL"
JUDGE_ENV = "TOOLSIGHT_JUDGE"


def run_options(target: str, model: str | None = None, **options: Any) -> RunOptions:
    """`RunOptions` from keywords, as `evaluate(...)` takes them.

    Besides the RunOptions fields: generation settings as keywords (`temperature=0`, `top_p=0.9`,
    `max_tokens=...`, …), `model_args={...}` (the CLI's -M), `extra_body={...}`, and `tags` as
    `{"category": "maze"}` or `{"category": ["maze", "jigsaw"]}`.
    """
    import os

    model = model or os.environ.get(MODEL_ENV)
    if not model:
        raise OptionsError(f"no model: pass model=... (e.g. 'openai/gpt-4o', 'reference') or set {MODEL_ENV}")
    if "judge" not in options and os.environ.get(JUDGE_ENV):
        options["judge"] = os.environ[JUDGE_ENV]
    gen_kw = {k: options.pop(k) for k in list(options) if k in GENERATE_FIELDS}
    model_args = options.pop("model_args", None) or {}
    extra_body = options.pop("extra_body", None) or {}
    base = options.pop("generate", None)
    if gen_kw or model_args or extra_body or base is not None:
        options["generate"] = generation(base, {**gen_kw, **model_args}, extra_body, flag="model_args")
    if "caps" in options and options["caps"] is not None:
        options["caps"] = check_caps(options["caps"], flag="caps")
    tags = options.get("tags")
    if isinstance(tags, Mapping):
        options["tags"] = {str(k): [v] if isinstance(v, str) else [str(x) for x in v] for k, v in tags.items()}
    if isinstance(options.get("task_ids"), str):
        options["task_ids"] = [options["task_ids"]]
    fields = {*FLAT_KEYS, "setting", "loop", "data", "agent", "caps", "benchmark_options"}
    for key in options:
        if key not in fields:
            known = fields | set(GENERATE_FIELDS) | {"model_args", "extra_body"}
            raise OptionsError(f"unknown option {key!r}; {_near(key, known)}options: {', '.join(sorted(known))}")
    try:
        return RunOptions(benchmark=target, model=model, **options)
    except ValidationError as exc:
        raise OptionsError(one_line(exc)) from None
