"""Re-exports the trajectory types, which live in the run log (`toolsight.log.trajectory`)."""

from toolsight.log.trajectory import StopReason, ToolCallRecord, Trajectory, TurnResult

__all__ = ["StopReason", "ToolCallRecord", "Trajectory", "TurnResult"]
