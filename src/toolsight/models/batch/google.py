"""Gemini batch mode (Gemini Developer API, inline requests) through google-genai
(`client.aio.batches.create / get / list / cancel`).

Each item goes up as an inline request `{request: BODY, metadata: {key: CUSTOM_ID}}`, BODY being
the REST `generateContent` body the on-line call sends; the batch's `display_name` is the tag. The
bodies travel in the SDK's `http_options.extra_body` (as the on-line adapter sends its contents), so
the SDK does not re-encode them. Replies come back as the SDK's `GenerateContentResponse` and are
handed on as the REST JSON (`model_dump(by_alias=True)`), which is what `GoogleModel.batch_parse` reads.

SDK retries are off (`HttpRetryOptions(attempts=1)`), as in the on-line adapter.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from toolsight.models._common import connection_error, is_retryable_status, status_error, timeout_error
from toolsight.models.base import ModelError
from toolsight.models.batch.base import BatchAPI, BatchItem, BatchResult, BatchState, BatchStatus

if TYPE_CHECKING:
    from google import genai

_KEY_VARS = "GEMINI_API_KEY or GOOGLE_API_KEY"
_STATUS: dict[str, BatchStatus] = {
    "JOB_STATE_PENDING": "in_progress", "JOB_STATE_QUEUED": "in_progress", "JOB_STATE_RUNNING": "in_progress",
    "JOB_STATE_CANCELLING": "in_progress", "JOB_STATE_UPDATING": "in_progress", "JOB_STATE_PAUSED": "in_progress",
    "JOB_STATE_SUCCEEDED": "ended", "JOB_STATE_PARTIALLY_SUCCEEDED": "ended", "JOB_STATE_EXPIRED": "expired",
    "JOB_STATE_CANCELLED": "cancelled", "JOB_STATE_FAILED": "failed",
}
#: error codes of inline responses for requests the batch never ran (CANCELLED, DEADLINE_EXCEEDED)
_NOT_RUN = (499, 504)
_OVER_EARLY = ("JOB_STATE_EXPIRED", "JOB_STATE_CANCELLED")


class GoogleBatchAPI(BatchAPI):
    """`model_id`: the model every item is sent to. `lookback_days`, `page_size`: how far back, and how
    many a page, `find` reads the batch list."""

    provider = "google"

    def __init__(self, name: str, model_id: str, *, api_key: str, base_url: str | None = None,
                 timeout: float = 120.0, lookback_days: float = 30.0, page_size: int = 100) -> None:
        self.name = name
        self.model_id = model_id
        self.timeout = timeout
        self.lookback = lookback_days * 86400
        self.page_size = page_size
        self._key = api_key
        self.base_url = base_url
        self._client: genai.Client | None = None

    def client(self) -> genai.Client:
        if self._client is None:
            from google import genai
            from google.genai import types

            opts = types.HttpOptions(base_url=self.base_url, api_version="v1beta",
                                     retry_options=types.HttpRetryOptions(attempts=1))
            self._client = genai.Client(vertexai=False, api_key=self._key, http_options=opts)
        return self._client

    def _http(self) -> dict[str, Any]:
        return {"timeout": int(self.timeout * 1000), "retry_options": {"attempts": 1}}

    def _options(self) -> Any:
        """The per-request config of get / cancel: the timeout, no SDK retries."""
        return {"http_options": self._http()}

    async def _call(self, request: Any) -> Any:
        """Await a google-genai request, its errors turned into classified ModelErrors."""
        import httpx
        from google.genai import errors as genai_errors

        try:
            return await request
        except genai_errors.APIError as exc:
            raise status_error(self.name, int(exc.code or 0), str(exc.message or exc),
                               getattr(exc.response, "headers", None), _KEY_VARS) from None
        except httpx.TimeoutException:
            raise timeout_error(self.name, self.timeout) from None
        except httpx.HTTPError as exc:
            raise connection_error(self.name, f"{type(exc).__name__}: {exc}") from None

    async def submit(self, items: list[BatchItem], *, tag: str) -> str:
        if not items:
            raise ValueError("a batch needs at least one item")
        rows = [{"request": i.body, "metadata": {"key": i.custom_id}} for i in items]
        extra = {"batch": {"inputConfig": {"requests": {"requests": rows}}}}
        config: Any = {"display_name": tag, "http_options": {**self._http(), "extra_body": extra}}
        # the placeholder request is replaced by `rows` (extra_body lists replace, see the module docstring)
        placeholder: Any = [{"contents": "-"}]
        job = await self._call(self.client().aio.batches.create(model=self.model_id, src=placeholder, config=config))
        return str(job.name)

    async def find(self, tag: str, *, known: Collection[str] = ()) -> str | None:
        """The newest batch whose display name is `tag`, among those created in the last `lookback_days`
        (`known` is not needed: the list shows every batch's display name)."""
        oldest = time.time() - self.lookback
        listing: Any = {"page_size": self.page_size, "http_options": self._http()}
        pager = await self._call(self.client().aio.batches.list(config=listing))
        while True:
            for job in pager.page:
                if job.create_time is not None and job.create_time.timestamp() < oldest:
                    return None
                if job.display_name == tag:
                    return str(job.name)
            if not pager.config.get("page_token"):
                return None
            await self._call(pager.next_page())

    async def poll(self, batch_id: str) -> BatchState:
        job = await self._call(self.client().aio.batches.get(name=batch_id, config=self._options()))
        state = str(getattr(job.state, "value", job.state))
        status = _STATUS.get(state, "in_progress")
        done = job.dest.inlined_responses if job.dest is not None and job.dest.inlined_responses else []
        ok = sum(1 for r in done if r.response is not None)
        failed = sum(1 for r in done if r.error is not None and not (r.error.code in _NOT_RUN and state in _OVER_EARLY))
        error = (job.error.message if job.error is not None else None) or "the batch failed"
        return BatchState(id=str(job.name), status=status, total=len(done), succeeded=ok, failed=failed,
                          error=error if status == "failed" else None)

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Every inline response, in input order. Items the batch never ran are `expired` — reported by
        the scripted server as CANCELLED / DEADLINE_EXCEEDED errors; a batch that reports no responses
        at all gives none, and the caller treats its items as not run."""
        job = await self._call(self.client().aio.batches.get(name=batch_id, config=self._options()))
        state = str(getattr(job.state, "value", job.state))
        if _STATUS.get(state, "in_progress") == "in_progress":
            raise ModelError(f"{self.name}: batch {batch_id} is still {state}; poll until it has ended", retryable=True)
        out: list[BatchResult] = []
        for n, r in enumerate(job.dest.inlined_responses or [] if job.dest is not None else []):
            cid = str((r.metadata or {}).get("key", n))
            if r.response is not None:
                reply = r.response.model_dump(mode="json", by_alias=True, exclude_none=True,
                                              exclude={"sdk_http_response"})
                out.append(BatchResult(custom_id=cid, reply=reply))
            else:
                code = r.error.code if r.error is not None else None
                message = r.error.message if r.error is not None else "no response"
                expired = code in _NOT_RUN and state in _OVER_EARLY
                out.append(BatchResult(custom_id=cid, error=f"HTTP {code}: {message}" if code else str(message),
                                       expired=expired, retryable=not expired and is_retryable_status(int(code or 0))))
        return out

    async def cancel(self, batch_id: str) -> None:
        await self._call(self.client().aio.batches.cancel(name=batch_id, config=self._options()))

    async def aclose(self) -> None:
        if self._client is not None:
            try:
                await self._client.aio.aclose()
            except (AttributeError, RuntimeError):
                pass
            self._client = None
