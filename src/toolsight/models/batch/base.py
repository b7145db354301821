"""The shape every provider's batch API takes in toolsight: submit request bodies, poll, collect.

A provider's batch client (`openai.py`, `anthropic.py`, `google.py` beside this file) implements
`BatchAPI`; a model that has one returns it from `Model.batch_api()`. Bodies are exactly what the
model's on-line call would send (`Model.batch_body`, wire profiles included) and replies are read by
the same parser (`Model.batch_parse`), so a batched call and an on-line call give the same
`ModelOutput` for the same reply.

Crash safety rests on `tag`: every submission carries a caller-chosen tag (OpenAI batch metadata,
Anthropic request ids, Gemini display name). The engine writes the tag and the request ids to the
run directory *before* submitting; after a crash it asks `find(tag)` whether the provider already
holds that submission and polls it instead of submitting again.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection
from typing import Any, Literal

from pydantic import BaseModel, Field

#: where a batch is: still running, ended (results can be read; some items may have failed),
#: expired (not finished within the provider's window; finished items can still be read),
#: cancelled, or failed as a whole (e.g. its input was refused)
BatchStatus = Literal["in_progress", "ended", "expired", "cancelled", "failed"]


class BatchItem(BaseModel):
    """One request of a batch: an id unique within the batch and the provider request body."""

    custom_id: str
    body: dict[str, Any]


class BatchState(BaseModel):
    id: str
    status: BatchStatus
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    error: str | None = Field(default=None, description="why the whole batch failed, when it did")


class BatchResult(BaseModel):
    """One item's outcome: the provider's reply body (as the on-line endpoint would return it) or an
    error. `expired`: the item was not run before the batch expired (worth sending again);
    `retryable`: it failed with an error worth asking again (5xx, 429, overload), not one that would
    fail again (a bad request)."""

    custom_id: str
    reply: dict[str, Any] | None = None
    error: str | None = None
    expired: bool = False
    retryable: bool = False


class BatchAPI(ABC):
    """A provider's batch endpoint, reached with its official SDK."""

    #: "openai" | "anthropic" | "google"
    provider: str = ""

    @abstractmethod
    async def submit(self, items: list[BatchItem], *, tag: str) -> str:
        """Submit `items` as one batch tagged `tag`; return the provider's batch id."""

    @abstractmethod
    async def find(self, tag: str, *, known: Collection[str] = ()) -> str | None:
        """The id of a batch submitted earlier with `tag`, or None (never submitted). `known`: ids of
        batches the caller already holds (from its journal) — `find` need not look into them (the
        Anthropic client cannot look into a batch before it has ended, see `anthropic.py`)."""

    @abstractmethod
    async def poll(self, batch_id: str) -> BatchState:
        """Where the batch is now."""

    @abstractmethod
    async def results(self, batch_id: str) -> list[BatchResult]:
        """Every item's outcome of an ended, expired or cancelled batch (items never run: `expired`)."""

    def for_endpoint(self, endpoint: str) -> BatchAPI:
        """This provider's batch API for items sent to `endpoint` (a raw call's own endpoint, e.g.
        OpenAI's `/v1/responses`): a new client whose batches carry only that endpoint's items.
        A provider whose batches take one kind of request refuses (ValueError)."""
        raise ValueError(f"{self.provider or type(self).__name__} batches take one kind of request; "
                         f"{endpoint!r} cannot be batched")

    async def cancel(self, batch_id: str) -> None:  # noqa: B027 - optional
        """Ask the provider to stop the batch (results so far stay readable)."""

    async def aclose(self) -> None:  # noqa: B027 - optional
        """Close HTTP clients."""
