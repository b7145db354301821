"""What a tool call returns (ToolResult) and the error a tool raises for a problem the model can fix."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from toolsight.log.artifact import Artifact


class ToolResult(BaseModel):
    """What a tool call returns to the model: text, image artifacts, ok flag, error text."""

    text: str = ""
    artifacts: list[Artifact] = Field(default_factory=list)
    ok: bool = True
    error: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict, description="trace details: code, files, limits")

    @classmethod
    def fail(cls, message: str, **extra: Any) -> ToolResult:
        return cls(text=message, ok=False, error=message, extra=dict(extra))

    def model_text(self) -> str:
        """The text the model sees, with the ids of produced images listed."""
        parts = [self.text] if self.text else []
        if self.artifacts:
            ids = ", ".join(f"{a.id} ({a.width}x{a.height})" for a in self.artifacts)
            parts.append(f"Produced image(s): {ids}")
        if not parts:
            parts.append("Tool executed successfully." if self.ok else "Tool failed.")
        return "\n".join(parts)


class ToolError(Exception):
    """Raised inside a tool for a problem the model can fix; becomes a failed ToolResult."""
