"""Layer 1: the typed, versioned run log — manifest, records, scores — and the value types they hold.

Metrics and reports read runs only through this package (never through the runner's store).
"""

from toolsight.log.artifact import Artifact
from toolsight.log.files import (
    MANIFEST,
    RECORDS,
    RunLogError,
    atomic_write_text,
    atomic_writer,
    finished_ids,
    iter_latest_records,
    iter_record_dicts,
    iter_records,
    latest_offsets,
    latest_records,
    latest_status,
    read_manifest,
    read_record_at,
    write_manifest,
)
from toolsight.log.manifest import MANIFEST_SCHEMA_VERSION, DatasetInfo, Manifest
from toolsight.log.messages import ImagePart, Message, TextPart, ToolCall, Usage
from toolsight.log.record import RECORD_SCHEMA_VERSION, Record
from toolsight.log.score import JudgeCall, Score
from toolsight.log.toolspec import ToolSpec
from toolsight.log.trajectory import ModelCallRecord, StopReason, ToolCallRecord, Trajectory, TurnResult

__all__ = [
    "MANIFEST",
    "MANIFEST_SCHEMA_VERSION",
    "RECORDS",
    "RECORD_SCHEMA_VERSION",
    "Artifact",
    "DatasetInfo",
    "ImagePart",
    "JudgeCall",
    "Manifest",
    "Message",
    "ModelCallRecord",
    "Record",
    "RunLogError",
    "Score",
    "StopReason",
    "TextPart",
    "ToolCall",
    "ToolCallRecord",
    "ToolSpec",
    "Trajectory",
    "TurnResult",
    "Usage",
    "atomic_write_text",
    "atomic_writer",
    "finished_ids",
    "iter_latest_records",
    "iter_record_dicts",
    "iter_records",
    "latest_offsets",
    "latest_records",
    "latest_status",
    "read_manifest",
    "read_record_at",
    "write_manifest",
]
