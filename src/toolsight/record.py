"""Re-exports `Record`, which lives in the run log (`toolsight.log.record`)."""

from toolsight.log.record import Record

__all__ = ["Record"]
