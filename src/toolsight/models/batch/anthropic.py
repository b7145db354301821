"""Anthropic's Message Batches API through the official SDK.

A Message Batch carries no metadata, so the tag travels in the request ids: each item is sent with
`custom_id = ts<12 hex digits of sha256(tag)>_<the caller's custom id>` and read back without the
prefix. `find(tag)` walks the batch list (newest first) and reads the first result line of each
ended batch to see whose prefix it carries. Its limit: Anthropic shows a batch's request ids only
once the batch has ended, so a batch still in progress cannot be looked into. `find` skips the ids
the caller passes as `known`; any other batch in progress makes it raise a retryable `ModelError`
naming those batches (ask again once they have ended), instead of answering None and having the
caller pay for a second submission. Custom ids must therefore be at most 49 characters of
`[A-Za-z0-9_-]` (Anthropic allows 64; the prefix takes 15).

SDK retries are off (`max_retries=0`), as in the on-line adapter.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from toolsight.models._common import stainless_call
from toolsight.models.base import ModelError
from toolsight.models.batch.base import BatchAPI, BatchItem, BatchResult, BatchState

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

_KEY_VAR = "ANTHROPIC_API_KEY"
_CALLER_ID = re.compile(r"^[A-Za-z0-9_-]{1,49}$")
_SENT_ID = re.compile(r"^ts[0-9a-f]{12}_(.+)$")
#: error types of an item worth asking again (Anthropic's 500, 429 and 529 errors)
_RETRYABLE = ("api_error", "rate_limit_error", "overloaded_error")


def tag_prefix(tag: str) -> str:
    """What every custom id of a batch tagged `tag` starts with (before its `_`)."""
    return "ts" + hashlib.sha256(tag.encode()).hexdigest()[:12]


def caller_id(sent: str) -> str:
    """The caller's custom id inside one this client sent."""
    m = _SENT_ID.match(sent)
    return m.group(1) if m else sent


class AnthropicBatchAPI(BatchAPI):
    """`lookback_days`: how far back `find` looks (Anthropic keeps results 29 days); `page_size`
    batches a list request."""

    provider = "anthropic"

    def __init__(self, name: str, *, api_key: str, base_url: str | None = None, timeout: float = 120.0,
                 lookback_days: float = 29.0, page_size: int = 100) -> None:
        self.name = name
        self.timeout = timeout
        self.lookback = timedelta(days=lookback_days)
        self.page_size = page_size
        self._args: dict[str, Any] = {"api_key": api_key, "base_url": base_url}
        self._client: AsyncAnthropic | None = None

    def client(self) -> AsyncAnthropic:
        if self._client is None:
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(**self._args, max_retries=0, timeout=self.timeout)
        return self._client

    async def _call(self, request: Any) -> Any:
        import anthropic

        return await stainless_call(self.name, anthropic, request, self.timeout, _KEY_VAR)

    async def submit(self, items: list[BatchItem], *, tag: str) -> str:
        if not items:
            raise ValueError("a batch needs at least one item")
        bad = [i.custom_id for i in items if not _CALLER_ID.match(i.custom_id)]
        if bad:
            raise ValueError(f"{self.name}: batch custom ids must be 1-49 characters of [A-Za-z0-9_-] (the "
                             f"Anthropic client prefixes them with the tag's hash); not: {', '.join(bad[:5])}")
        prefix = tag_prefix(tag)
        requests: Any = [{"custom_id": f"{prefix}_{i.custom_id}", "params": i.body} for i in items]
        batch = await self._call(self.client().messages.batches.create(requests=requests))
        return str(batch.id)

    async def find(self, tag: str, *, known: Collection[str] = ()) -> str | None:
        """The newest ended batch whose request ids carry `tag`'s prefix; None when there is none and
        no batch in progress (other than `known` ones) could hold it. Raises a retryable ModelError
        when such a batch is in progress: it cannot be looked into before it ends."""
        prefix = tag_prefix(tag) + "_"
        oldest = datetime.now(UTC) - self.lookback
        pending: list[str] = []
        client = self.client()
        page = await self._call(client.messages.batches.list(limit=self.page_size))
        while True:
            for b in page.data:
                if b.created_at < oldest:
                    return self._none_unless_pending(tag, pending)
                if b.id in known:
                    continue
                if b.processing_status != "ended":
                    pending.append(b.id)
                elif (await self._first_id(b.id) or "").startswith(prefix):
                    return str(b.id)
            if not page.has_next_page():
                return self._none_unless_pending(tag, pending)
            page = await self._call(page.get_next_page())

    def _none_unless_pending(self, tag: str, pending: list[str]) -> str | None:
        if pending:
            raise ModelError(f"{self.name}: cannot tell yet whether batch {tag!r} was submitted: Anthropic shows a "
                             f"batch's request ids only after it has ended, and {len(pending)} batch(es) are in "
                             f"progress ({', '.join(pending[:5])}); ask again once they have ended",
                             retryable=True, retry_after=60.0)
        return None

    async def _first_id(self, batch_id: str) -> str | None:
        results = await self._call(self.client().messages.batches.results(batch_id))
        try:
            async for r in results:
                return str(r.custom_id)
        finally:
            await results.close()
        return None

    async def poll(self, batch_id: str) -> BatchState:
        b = await self._call(self.client().messages.batches.retrieve(batch_id))
        c = b.request_counts
        status: Any = "in_progress"
        if b.processing_status == "ended":
            status = "cancelled" if b.cancel_initiated_at is not None else "expired" if c.expired else "ended"
        return BatchState(id=b.id, status=status, total=c.processing + c.succeeded + c.errored + c.canceled + c.expired,
                          succeeded=c.succeeded, failed=c.errored)

    async def results(self, batch_id: str) -> list[BatchResult]:
        b = await self._call(self.client().messages.batches.retrieve(batch_id))
        if b.processing_status != "ended":
            raise ModelError(f"{self.name}: batch {batch_id} is still {b.processing_status}; poll until it has ended",
                             retryable=True)
        decoder = await self._call(self.client().messages.batches.results(batch_id))
        out: list[BatchResult] = []
        async for r in decoder:
            out.append(_result(caller_id(r.custom_id), r.result.to_dict(warnings=False)))
        return out

    async def cancel(self, batch_id: str) -> None:
        await self._call(self.client().messages.batches.cancel(batch_id))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def _result(cid: str, result: dict[str, Any]) -> BatchResult:
    kind = result.get("type")
    if kind == "succeeded" and isinstance(result.get("message"), dict):
        return BatchResult(custom_id=cid, reply=result["message"])
    if kind in ("expired", "canceled"):
        return BatchResult(custom_id=cid, error=f"{kind}: the batch ended before this request ran", expired=True)
    err = (result.get("error") or {}).get("error") or {}
    return BatchResult(custom_id=cid, error=f"{err.get('type') or 'error'}: {err.get('message') or kind}",
                       retryable=err.get("type") in _RETRYABLE)
