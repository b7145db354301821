"""The manifest: what defines a run and what it ran with (manifest.json of a run directory).

Typed, versioned. Unknown keys written by a newer toolsight are kept (`extra="allow"`), so reading
and re-writing a manifest never loses information.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: version of the manifest layout written by this toolsight; 1 = manifests written before versioning
MANIFEST_SCHEMA_VERSION = 2


class DatasetInfo(BaseModel):
    model_config = ConfigDict(extra="allow")

    path: str = ""
    source: str = ""
    hash: str = ""
    n_tasks: int = 0
    notes: list[str] = Field(default_factory=list)


class Manifest(BaseModel):
    """The run's identity (benchmark, setting, model, options, dataset hash) and environment."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = MANIFEST_SCHEMA_VERSION
    run_id: str = ""
    benchmark: str = ""
    target: str = ""
    setting: str = ""
    model: str = ""
    judge: str | None = None
    created: str = ""
    toolsight_version: str = ""
    python: str = ""
    platform: str = ""
    config_hash: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    dataset: DatasetInfo = Field(default_factory=DatasetInfo)
    agent_settings: dict[str, Any] = Field(default_factory=dict)
    tools: list[dict[str, Any]] = Field(default_factory=list, description="the setting's tools, as declared")
    sent: dict[str, Any] = Field(
        default_factory=dict, description="what the loop really sent: tool schemas, tool sets, system prompts and "
        "user prompt templates, distinct values over the whole run (toolsight.calls.sent)")
    model_info: dict[str, Any] = Field(default_factory=dict)
    isolation: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    backends: dict[str, Any] = Field(default_factory=dict, description="which backend ran per interface")
    history: list[dict[str, Any]] = Field(default_factory=list, description="resumes and accepted changes")
    identity: dict[str, Any] = Field(
        default_factory=dict, description="what --resume compares: model, setting, generation, scoring, dataset hash"
    )
