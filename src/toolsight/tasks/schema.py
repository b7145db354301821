"""The task schema: what one benchmark item is (tasks, turns, rubrics, reference tool steps)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

AnswerType = Literal["text", "choice", "number", "integer", "list", "set", "open"]


class _Strict(BaseModel):
    """Base for schema models: unknown fields are an error, so typos in a dataset are caught."""

    model_config = ConfigDict(extra="forbid")


class ImageRef(_Strict):
    """An image of a turn, by path relative to the dataset folder."""

    path: str
    role: str | None = Field(default=None, description="optional label, e.g. 'left', 'right', 'template'")

    @field_validator("path")
    @classmethod
    def _relative(cls, v: str) -> str:
        if not v or v.startswith("/") or "\\" in v or any(part == ".." for part in v.split("/")):
            raise ValueError("must be a relative path inside the dataset folder (no '/', '..' or '\\')")
        return v


class Rubric(_Strict):
    """One rubric criterion judged separately (VisualToolBench style)."""

    id: str | None = None
    text: str
    weight: int = Field(default=1, ge=1, le=5)
    critical: bool | None = Field(default=None, description="explicit flag; None means weight >= 4")
    kind: Literal["objective", "subjective"] = "objective"
    explicit: bool | None = Field(default=None, description="explicit (True) or implicit (False) criterion, if known")
    categories: list[str] = Field(default_factory=list)

    @property
    def is_critical(self) -> bool:
        return self.critical if self.critical is not None else self.weight >= 4


class ToolStep(_Strict):
    """One step of a reference tool trajectory (a tool name, or a tool group, plus free text)."""

    tool: str
    arguments: dict[str, Any] | None = None
    note: str | None = None


class Turn(_Strict):
    """One user turn: prompt, images, gold answer, options, rubrics, reference trajectory."""

    prompt: str
    images: list[ImageRef] = Field(default_factory=list)
    answer: str | list[str] | None = None
    options: dict[str, str] | None = Field(default=None, description="letter -> option text")
    answer_type: AnswerType = "text"
    rubrics: list[Rubric] = Field(default_factory=list)
    reference_steps: list[ToolStep] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("options")
    @classmethod
    def _options_nonempty(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if v is not None and not v:
            raise ValueError("options, when given, must not be empty (omit the field instead)")
        return v


class Task(_Strict):
    """One benchmark item. Breakdown fields (category, domain, difficulty, ...) live in `tags`."""

    id: str
    benchmark: str = "custom"
    turns: list[Turn] = Field(min_length=1)
    tags: dict[str, str] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id_ok(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must be a non-empty string")
        return v

    @model_validator(mode="before")
    @classmethod
    def _coerce_tags(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("tags"), dict):
            data = dict(data)
            data["tags"] = {
                str(k): (v if isinstance(v, str) else str(v)) for k, v in data["tags"].items()
            }
        return data

    @property
    def is_multi_turn(self) -> bool:
        return len(self.turns) > 1

    def image_paths(self) -> list[str]:
        seen: list[str] = []
        for turn in self.turns:
            for img in turn.images:
                if img.path not in seen:
                    seen.append(img.path)
        return seen
