"""The scripted server's Anthropic Message Batches API.

`POST /v1/messages/batches` (`requests: [{custom_id, params}]`), `GET /v1/messages/batches/{id}`,
`GET /v1/messages/batches` (newest first; `limit`, `after_id`, `before_id`, `has_more`, `first_id`,
`last_id` as the SDK's pages read them), `GET /v1/messages/batches/{id}/results` (JSONL of
`succeeded` / `errored` / `expired` / `canceled` results, once the batch has ended; `results_url`
points at it) and `POST /v1/messages/batches/{id}/cancel`. Each item is played on `POST /v1/messages`.
A batch's tags are its custom ids' prefixes before the first `_` (the Anthropic client embeds its tag there).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from toolsight.models.scripted.batches import Batch, Batches, Item, bad_request

_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def register(app: web.Application, book: Batches) -> None:
    api = _AnthropicBatches(book)
    app.router.add_post("/v1/messages/batches", api.create)
    app.router.add_get("/v1/messages/batches", api.listing)
    app.router.add_get("/v1/messages/batches/{id}", api.retrieve)
    app.router.add_get("/v1/messages/batches/{id}/results", api.results)
    app.router.add_post("/v1/messages/batches/{id}/cancel", api.cancel)


def _when(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


class _AnthropicBatches:
    def __init__(self, book: Batches) -> None:
        self.book = book

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return bad_request("anthropic", "requests: a batch needs a non-empty list of {custom_id, params}")
        seen: set[str] = set()
        items: list[Item] = []
        for n, r in enumerate(requests):
            cid = r.get("custom_id") if isinstance(r, dict) else None
            params = r.get("params") if isinstance(r, dict) else None
            if not isinstance(cid, str) or not _CUSTOM_ID.match(cid):
                return bad_request("anthropic", f"requests.{n}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$")
            if cid in seen:
                return bad_request("anthropic", f"requests.{n}.custom_id: {cid!r} is used twice")
            if not isinstance(params, dict) or params.get("stream"):
                return bad_request("anthropic", f"requests.{n}.params: an object, without `stream`")
            seen.add(cid)
            items.append(Item(custom_id=cid, path="/v1/messages", body=params))
        tags = sorted({i.custom_id.split("_", 1)[0] for i in items if "_" in i.custom_id})
        batch = self.book.add(Batch(id=self.book.new_id("msgbatch_"), provider="anthropic", tags=tags, items=items))
        return web.json_response(self._object(batch, request))

    async def retrieve(self, request: web.Request) -> web.Response:
        batch = self.book.get(request.match_info["id"], "anthropic")
        await self.book.advance(batch)
        return web.json_response(self._object(batch, request))

    async def listing(self, request: web.Request) -> web.Response:
        batches = sorted((b for b in self.book.batches.values() if b.provider == "anthropic"),
                         key=lambda b: b.id, reverse=True)
        if request.query.get("after_id"):
            batches = [b for b in batches if b.id < request.query["after_id"]]
        if request.query.get("before_id"):
            batches = [b for b in batches if b.id > request.query["before_id"]]
        limit = int(request.query.get("limit") or 20)
        page = batches[:limit]
        return web.json_response({"data": [self._object(b, request) for b in page], "has_more": len(batches) > limit,
                                  "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None})

    async def cancel(self, request: web.Request) -> web.Response:
        batch = self.book.get(request.match_info["id"], "anthropic")
        running = batch.state == "in_progress"
        self.book.cancel(batch)
        obj = self._object(batch, request)
        if running:  # the API answers "canceling"; later reads show the batch ended
            obj |= {"processing_status": "canceling", "ended_at": None, "results_url": None}
        return web.json_response(obj)

    async def results(self, request: web.Request) -> web.Response:
        batch = self.book.get(request.match_info["id"], "anthropic")
        if batch.state == "in_progress":
            return bad_request("anthropic", f"batch {batch.id} has not ended; its results are not ready")
        lines = [json.dumps({"custom_id": i.custom_id, "result": self._result(batch, i)}) for i in batch.items]
        return web.Response(body=("\n".join(lines) + "\n").encode(), content_type="application/binary")

    @staticmethod
    def _result(batch: Batch, item: Item) -> dict[str, Any]:
        o = item.outcome
        if o is None or o.expired:
            return {"type": "canceled" if batch.state == "cancelled" else "expired"}
        if o.error is None and o.status == 200 and o.body is not None:
            return {"type": "succeeded", "message": o.body}
        err = o.body if o.body is not None and o.body.get("type") == "error" else \
            {"type": "error", "error": {"type": "api_error", "message": o.error or f"HTTP {o.status}"}}
        return {"type": "errored", "error": err}

    def _object(self, batch: Batch, request: web.Request) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for i in batch.items:
            kind = "processing" if batch.state == "in_progress" else self._result(batch, i)["type"]
            counts[kind] += 1
        over = batch.state != "in_progress"
        return {
            "id": batch.id, "type": "message_batch", "processing_status": "ended" if over else "in_progress",
            "request_counts": counts, "created_at": _when(batch.created), "expires_at": _when(batch.created + 86400),
            "ended_at": _when(batch.ended_at), "archived_at": None,
            "cancel_initiated_at": _when(batch.ended_at) if batch.state == "cancelled" else None,
            "results_url": f"{request.url.origin()}/v1/messages/batches/{batch.id}/results" if over else None,
        }

