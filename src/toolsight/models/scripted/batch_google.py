"""The scripted server's Gemini batch mode (Gemini Developer API, inline requests).

`POST /v1beta/models/{model}:batchGenerateContent` (`batch: {displayName, inputConfig: {requests:
{requests: [{request, metadata}]}}}`), `GET /v1beta/batches/{id}`, `GET /v1beta/batches` (newest
first; `pageSize`, `pageToken`, `nextPageToken`), `POST /v1beta/batches/{id}:cancel`. A batch is a
long-running operation (`name`, `metadata` with `displayName`, `state` `BATCH_STATE_…`, `batchStats`,
and once over `output.inlinedResponses.inlinedResponses`, one per request in input order: `response`
or `error`, with the request's `metadata`). Each item is played on `POST
/v1beta/models/{model}:generateContent`; its custom id is its `metadata.key` (else its position).
Items never run are reported as errors with status `DEADLINE_EXCEEDED` (the batch expired) or
`CANCELLED`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from toolsight.models.scripted.batches import Batch, Batches, Item, bad_request

_STATE = {"in_progress": "BATCH_STATE_RUNNING", "ended": "BATCH_STATE_SUCCEEDED", "expired": "BATCH_STATE_EXPIRED",
          "cancelled": "BATCH_STATE_CANCELLED", "failed": "BATCH_STATE_FAILED"}


def register(app: web.Application, book: Batches) -> None:
    api = _GoogleBatches(book)
    app.router.add_post("/v1beta/models/{model}:batchGenerateContent", api.create)
    app.router.add_get("/v1beta/batches", api.listing)
    app.router.add_get("/v1beta/batches/{id}", api.retrieve)
    app.router.add_post("/v1beta/batches/{id}:cancel", api.cancel)


def _when(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


class _GoogleBatches:
    def __init__(self, book: Batches) -> None:
        self.book = book

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        model = request.match_info["model"]
        spec = body.get("batch") if isinstance(body, dict) else None
        rows = (((spec or {}).get("inputConfig") or {}).get("requests") or {}).get("requests")
        if not isinstance(rows, list) or not rows:
            return bad_request("google", "batch.inputConfig.requests.requests: a batch needs a non-empty list of "
                                         "inline requests")
        items: list[Item] = []
        for n, row in enumerate(rows):
            req = row.get("request") if isinstance(row, dict) else None
            if not isinstance(req, dict) or not req.get("contents"):
                return bad_request("google", f"batch.inputConfig.requests.requests[{n}].request: needs `contents`")
            meta = row.get("metadata") or {}
            cid = str(meta.get("key")) if isinstance(meta, dict) and meta.get("key") is not None else str(n)
            items.append(Item(custom_id=cid, path=f"/v1beta/models/{model}:generateContent", body=req))
        name = str((spec or {}).get("displayName") or "")
        batch = Batch(id=self.book.new_id(""), provider="google", tags=[name] if name else [], items=items,
                      extra={"model": f"models/{model}", "displayName": name,
                             "metadata": [r.get("metadata") for r in rows]})
        return web.json_response(self._object(self.book.add(batch)))

    async def retrieve(self, request: web.Request) -> web.Response:
        batch = self.book.get(request.match_info["id"], "google")
        await self.book.advance(batch)
        return web.json_response(self._object(batch))

    async def listing(self, request: web.Request) -> web.Response:
        page, more = self.book.page("google", request.query.get("pageToken"), int(request.query.get("pageSize") or 20))
        out: dict[str, Any] = {"operations": [self._object(b) for b in page]}
        if more:
            out["nextPageToken"] = page[-1].id
        return web.json_response(out)

    async def cancel(self, request: web.Request) -> web.Response:
        self.book.cancel(self.book.get(request.match_info["id"], "google"))
        return web.json_response({})

    def _object(self, batch: Batch) -> dict[str, Any]:
        over = batch.state != "in_progress"
        responses = [self._response(batch, i, meta) for i, meta in zip(batch.items, batch.extra["metadata"],
                                                                      strict=True)] if over else []
        ok = sum(1 for r in responses if "response" in r)
        meta: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "model": batch.extra["model"], "displayName": batch.extra["displayName"],
            "createTime": _when(batch.created), "updateTime": _when(batch.ended_at or batch.created),
            "state": _STATE[batch.state], "name": f"batches/{batch.id}",
            "batchStats": {"requestCount": str(len(batch.items)), "successfulRequestCount": str(ok),
                           "failedRequestCount": str(len(responses) - ok),
                           "pendingRequestCount": str(len(batch.items) - len(responses))},
        }
        if over:
            meta["endTime"] = _when(batch.ended_at)
            meta["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
        op: dict[str, Any] = {"name": f"batches/{batch.id}", "metadata": meta, "done": over}
        return op

    @staticmethod
    def _response(batch: Batch, item: Item, meta: Any) -> dict[str, Any]:
        o = item.outcome
        out: dict[str, Any]
        if o is None or o.expired:
            cancelled = batch.state == "cancelled"
            out = {"error": {"code": 499 if cancelled else 504, "status": "CANCELLED" if cancelled else
                             "DEADLINE_EXCEEDED", "message": "the batch was cancelled before this request ran"
                             if cancelled else "the batch expired before this request ran"}}
        elif o.error is None and o.status == 200 and o.body is not None:
            out = {"response": o.body}
        else:
            err = (o.body or {}).get("error")
            out = {"error": err if isinstance(err, dict) else {"code": o.status or 500, "status": "INTERNAL",
                                                                "message": o.error or f"HTTP {o.status}"}}
        if meta is not None:
            out["metadata"] = meta
        return out
