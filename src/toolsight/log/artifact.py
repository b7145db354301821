"""An image a task can refer to: an input or a tool's output, content-addressed, with provenance (layer 1)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Artifact(BaseModel):
    """An image the task can refer to: an input image or one a tool produced."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="short content hash, e.g. 'img-3fa9c2d1e0b4'")
    sha256: str
    file: str = Field(description="file name inside the task workspace")
    width: int
    height: int
    parents: tuple[str, ...] = Field(default=(), description="ids of the artifacts it was derived from")
    source: Literal["input", "tool"] = "tool"
    tool_call_id: str | None = None
    tool: str | None = None
    converted_from: str | None = Field(
        default=None, description="for an input the provider could not take: what the dataset file was"
    )
