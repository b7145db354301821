"""Per-model profiles of the VTC-Bench driver: the branches it takes on substrings of the model name.

The driver (Qwen-Agent fork, `fncall_agent.py` and `llm/oai.py`) changes its behaviour by looking
at the model name it sends:

| profile | name test (as the driver writes it) | what changes |
| --- | --- | --- |
| `qwen3-vl` (default; also Claude) | none of the below | tool images inside the tool message |
| `4o` | `'4o' in name.lower()` | tool text in the tool message ("Tool executed successfully." if none), images in a following user message "This is tool processed image(s):" |
| `gemini` | `'gemini' in name.lower()` | as `4o`; `gemini-2.5` (case-sensitive) adds `reasoning_effort: high`; `gemini-3` adds `extra_body.google.thinking_config.thinking_level: high` and sends thought signatures back |
| `o-series` | `o3` / `o4` / `5.2` in the name | "execution" instead of "processing" in the retry and last-call notes; `reasoning_effort: high` |

Claude has no branch of its own in the driver, so it gets the default behaviour; the profile
name is recorded so a run says which branches applied.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class DriverProfile(BaseModel):
    """The driver's model-dependent choices for one model name."""

    model_config = ConfigDict(frozen=True)

    name: str
    model: str
    images_in_user_message: bool = False
    execution_wording: bool = False
    reasoning_effort: str | None = None
    gemini3_thinking: bool = False

    @classmethod
    def for_model(cls, model: str) -> DriverProfile:
        low = model.lower()
        o_series_agent = "o3" in low or "o4" in low or "5.2" in low  # fncall_agent.py tests lower()
        o_series_client = "o3" in model or "o4" in model or "5.2" in model  # oai.py tests the name as is
        gemini_client = "gemini" in model
        effort = None
        if gemini_client and "gemini-2.5" in model:
            effort = "high"
        if o_series_client:
            effort = "high"
        if "gemini" in low:
            name = "gemini"
        elif "4o" in low:
            name = "4o"
        elif o_series_agent:
            name = "o-series"
        elif "claude" in low:
            name = "claude"
        else:
            name = "qwen3-vl"
        return cls(
            name=name, model=model,
            images_in_user_message="gemini" in low or "4o" in low,
            execution_wording=o_series_agent,
            reasoning_effort=effort,
            gemini3_thinking=gemini_client and "gemini-2.5" not in model and "gemini-3" in model,
        )

    def request_extras(self, kwargs: dict[str, Any]) -> None:
        """Add the client's model-specific parameters to `create(**kwargs)` as `oai.py` does."""
        if self.gemini3_thinking:
            body = kwargs.setdefault("extra_body", {})
            body["google"] = {"thinking_config": {"thinking_level": "high"}}
        if self.reasoning_effort is not None:
            kwargs["reasoning_effort"] = self.reasoning_effort
