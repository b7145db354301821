"""OpenAI's Batch API through the official SDK: items go up as a JSONL file (`purpose=batch`), the
batch carries the tag in its `metadata`, and results come back from its output and error files.

SDK retries are off (`max_retries=0`), as in the on-line adapter: a failed request is a classified
`ModelError` the caller retries. Works with any server that speaks the Batch and Files APIs at the
model's base URL (the scripted server does).
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from toolsight.models._common import is_retryable_status, stainless_call
from toolsight.models.base import ModelError
from toolsight.models.batch.base import BatchAPI, BatchItem, BatchResult, BatchState, BatchStatus

if TYPE_CHECKING:
    from openai import AsyncOpenAI

#: the metadata key that holds the submission's tag
TAG_KEY = "toolsight_tag"
_KEY_VAR = "OPENAI_API_KEY"
_STATUS: dict[str, BatchStatus] = {
    "validating": "in_progress", "in_progress": "in_progress", "finalizing": "in_progress",
    "cancelling": "in_progress", "completed": "ended", "expired": "expired", "cancelled": "cancelled",
    "failed": "failed",
}
#: error codes OpenAI gives items it never ran
_NOT_RUN = ("batch_expired", "batch_cancelled")


class OpenAIBatchAPI(BatchAPI):
    """`endpoint`: what every item is sent to — `/v1/chat/completions` (the bodies `OpenAIModel.batch_body`
    makes) or `/v1/responses`. `lookback_days`: how far back `find` looks through the batch list (read
    `page_size` batches a request)."""

    provider = "openai"

    def __init__(self, name: str, *, api_key: str, base_url: str | None = None,
                 default_headers: dict[str, str] | None = None, endpoint: str = "/v1/chat/completions",
                 timeout: float = 120.0, lookback_days: float = 30.0, page_size: int = 100) -> None:
        self.name = name
        self.page_size = page_size
        self.endpoint = endpoint
        self.timeout = timeout
        self.lookback = lookback_days * 86400
        self._args: dict[str, Any] = {"api_key": api_key, "base_url": base_url, "default_headers": default_headers}
        self._client: AsyncOpenAI | None = None

    def for_endpoint(self, endpoint: str) -> OpenAIBatchAPI:
        """The same Batch API (key, base URL, headers, tuning) for items sent to `endpoint`: OpenAI
        takes one endpoint per batch, so each endpoint's items go up in batches of their own."""
        if not endpoint.startswith("/v1/"):
            raise ValueError(f"{self.name}: batch endpoint {endpoint!r} is not an OpenAI API path (e.g. /v1/responses)")
        return OpenAIBatchAPI(self.name, **self._args, endpoint=endpoint, timeout=self.timeout,
                              lookback_days=self.lookback / 86400, page_size=self.page_size)

    def client(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(**self._args, max_retries=0, timeout=self.timeout)
        return self._client

    async def _call(self, request: Any) -> Any:
        import openai

        return await stainless_call(self.name, openai, request, self.timeout, _KEY_VAR)

    async def submit(self, items: list[BatchItem], *, tag: str) -> str:
        if not items:
            raise ValueError("a batch needs at least one item")
        lines = [json.dumps({"custom_id": i.custom_id, "method": "POST", "url": self.endpoint, "body": i.body})
                 for i in items]
        data = ("\n".join(lines) + "\n").encode()
        client = self.client()
        file = await self._call(client.files.create(file=("toolsight-batch.jsonl", data, "application/jsonl"),
                                                    purpose="batch"))
        batch = await self._call(client.batches.create(input_file_id=file.id, endpoint=self.endpoint,  # type: ignore[arg-type]
                                                       completion_window="24h", metadata={TAG_KEY: tag}))
        return str(batch.id)

    async def find(self, tag: str, *, known: Collection[str] = ()) -> str | None:
        """The newest batch whose metadata carries `tag`, among those created in the last `lookback_days`
        (`known` is not needed: the list shows every batch's metadata)."""
        oldest = time.time() - self.lookback
        page = await self._call(self.client().batches.list(limit=self.page_size))
        while True:
            for b in page.data:
                if b.created_at < oldest:
                    return None
                if (b.metadata or {}).get(TAG_KEY) == tag:
                    return str(b.id)
            if not page.has_next_page():
                return None
            page = await self._call(page.get_next_page())

    async def poll(self, batch_id: str) -> BatchState:
        b = await self._call(self.client().batches.retrieve(batch_id))
        counts = b.request_counts
        errors = "; ".join(f"line {e.line}: {e.message}" if e.line else str(e.message)
                           for e in (b.errors.data or [] if b.errors else []))
        return BatchState(id=b.id, status=_STATUS.get(b.status, "in_progress"),
                          total=counts.total if counts else 0, succeeded=counts.completed if counts else 0,
                          failed=counts.failed if counts else 0,
                          error=(errors or "the batch failed") if b.status == "failed" else None)

    async def _lines(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        content = await self._call(self.client().files.content(file_id))
        return [json.loads(line) for line in content.text.splitlines() if line.strip()]

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Every item of the batch, in input order: the output file's replies, the error file's
        failures, and `expired` for items the provider never ran (or never reported)."""
        b = await self._call(self.client().batches.retrieve(batch_id))
        if _STATUS.get(b.status) == "in_progress":
            raise ModelError(f"{self.name}: batch {batch_id} is still {b.status}; poll until it has ended",
                             retryable=True)
        found: dict[str, BatchResult] = {}
        for row in await self._lines(b.output_file_id) + await self._lines(b.error_file_id):
            found[str(row.get("custom_id"))] = _result(row)
        order = [str(r.get("custom_id")) for r in await self._lines(b.input_file_id)]
        out = [found.pop(c) if c in found else
               BatchResult(custom_id=c, error="not run: the batch ended without it", expired=True) for c in order]
        return out + list(found.values())

    async def cancel(self, batch_id: str) -> None:
        await self._call(self.client().batches.cancel(batch_id))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def _result(row: dict[str, Any]) -> BatchResult:
    cid = str(row.get("custom_id"))
    resp = row.get("response") or {}
    err = row.get("error") or {}
    if resp and resp.get("status_code") == 200 and isinstance(resp.get("body"), dict):
        return BatchResult(custom_id=cid, reply=resp["body"])
    if err:
        code = str(err.get("code") or "error")
        return BatchResult(custom_id=cid, error=f"{code}: {err.get('message') or ''}".rstrip(": "),
                           expired=code in _NOT_RUN)
    body = resp.get("body") or {}
    detail = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
    status = resp.get("status_code")
    return BatchResult(custom_id=cid, error=f"HTTP {status}: {detail or json.dumps(body)[:300]}",
                       retryable=isinstance(status, int) and is_retryable_status(status))
