"""Re-exports the trajectory types, which live in the run log (`toolsight.log.trajectory`)."""

from toolsight.log.trajectory import StageRecord, StopReason, ToolCallRecord, Trajectory, TurnResult

__all__ = ["StageRecord", "StopReason", "ToolCallRecord", "Trajectory", "TurnResult"]
