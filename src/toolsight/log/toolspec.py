"""What a model is told about a tool: name, description, JSON schema of its arguments (layer 1)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ToolSpec(BaseModel):
    """What a model is told about a tool."""

    name: str
    description: str
    parameters: dict[str, Any]
