"""The scripted server's OpenAI Batch API and the part of the Files API it needs.

`POST /v1/files` (multipart, `purpose=batch`), `GET /v1/files/{id}`, `GET /v1/files/{id}/content`,
`DELETE /v1/files/{id}`; `POST /v1/batches` (`input_file_id`, `endpoint` `/v1/chat/completions` or
`/v1/responses`, `completion_window`, `metadata`), `GET /v1/batches/{id}`, `GET /v1/batches`
(newest first, `limit` and `after` as the SDK's cursor pages send them), `POST /v1/batches/{id}/cancel`.
An ended batch has an `output_file_id` (the items answered 200) and an `error_file_id` (the others:
error statuses, and `batch_expired` / `batch_cancelled` for items never run), JSONL as OpenAI writes them.
"""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web

from toolsight.models.scripted.batches import Batch, Batches, Item, bad_request

ENDPOINTS = ("/v1/chat/completions", "/v1/responses")
_STATUS = {"in_progress": "in_progress", "ended": "completed", "expired": "expired", "cancelled": "cancelled",
           "failed": "failed"}


def register(app: web.Application, book: Batches) -> None:
    api = _OpenAIBatches(book)
    app.router.add_post("/v1/files", api.upload)
    app.router.add_get("/v1/files/{id}", api.file)
    app.router.add_get("/v1/files/{id}/content", api.content)
    app.router.add_delete("/v1/files/{id}", api.delete_file)
    app.router.add_post("/v1/batches", api.create)
    app.router.add_get("/v1/batches", api.listing)
    app.router.add_get("/v1/batches/{id}", api.retrieve)
    app.router.add_post("/v1/batches/{id}/cancel", api.cancel)


class _OpenAIBatches:
    def __init__(self, book: Batches) -> None:
        self.book = book

    # --- files ----------------------------------------------------------------------------------

    def _store(self, name: str, purpose: str, data: bytes) -> dict[str, Any]:
        fid = self.book.new_id("file-")
        obj = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()), "filename": name,
               "purpose": purpose, "status": "processed"}
        self.book.files[fid] = (obj, data)
        return obj

    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        purpose = form.get("purpose")
        upload = form.get("file")
        if not isinstance(purpose, str) or not isinstance(upload, web.FileField):
            return bad_request("openai", "a file upload needs the multipart fields `file` and `purpose`")
        return web.json_response(self._store(upload.filename, purpose, upload.file.read()))

    def _file(self, request: web.Request) -> tuple[dict[str, Any], bytes]:
        found = self.book.files.get(request.match_info["id"])
        if found is None:
            raise web.HTTPNotFound(text=json.dumps(Batches.error_body("openai", 404)), content_type="application/json")
        return found

    async def file(self, request: web.Request) -> web.Response:
        return web.json_response(self._file(request)[0])

    async def content(self, request: web.Request) -> web.Response:
        return web.Response(body=self._file(request)[1], content_type="application/octet-stream")

    async def delete_file(self, request: web.Request) -> web.Response:
        obj, _ = self._file(request)
        del self.book.files[obj["id"]]
        return web.json_response({"id": obj["id"], "object": "file", "deleted": True})

    # --- batches --------------------------------------------------------------------------------

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        endpoint = body.get("endpoint")
        if endpoint not in ENDPOINTS:
            return bad_request("openai", f"endpoint {endpoint!r} is not served here; use one of {', '.join(ENDPOINTS)}")
        found = self.book.files.get(str(body.get("input_file_id")))
        if found is None:
            return bad_request("openai", f"no file with id {body.get('input_file_id')!r}")
        metadata = body.get("metadata") or {}
        batch = Batch(id=self.book.new_id("batch_"), provider="openai", tags=[str(v) for v in metadata.values()],
                      items=[], extra={"endpoint": endpoint, "input_file_id": body["input_file_id"],
                                       "completion_window": body.get("completion_window") or "24h",
                                       "metadata": metadata or None})
        seen: set[str] = set()
        for n, line in enumerate(found[1].decode("utf-8", "replace").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                cid, url, item = str(row["custom_id"]), row["url"], row["body"]
            except (json.JSONDecodeError, KeyError, TypeError):
                batch.errors.append({"code": "invalid_json_line", "line": n, "message": "not a batch request line"})
                continue
            if url != endpoint:
                batch.errors.append({"code": "mismatched_endpoint", "line": n, "param": "url",
                                     "message": f"url {url!r} is not the batch's endpoint {endpoint!r}"})
            elif cid in seen:
                batch.errors.append({"code": "duplicate_custom_id", "line": n, "param": "custom_id",
                                     "message": f"custom_id {cid!r} appears twice"})
            elif item.get("stream"):
                batch.errors.append({"code": "invalid_request", "line": n, "param": "body.stream",
                                     "message": "streaming is not supported in a batch"})
            seen.add(cid)
            batch.items.append(Item(custom_id=cid, path=url, body=item))
        if batch.errors:
            batch.state = "failed"
            batch.ended_at = time.time()
        return web.json_response(self._object(self.book.add(batch)))

    async def retrieve(self, request: web.Request) -> web.Response:
        batch = self.book.get(request.match_info["id"], "openai")
        await self.book.advance(batch)
        return web.json_response(self._object(batch))

    async def listing(self, request: web.Request) -> web.Response:
        page, more = self.book.page("openai", request.query.get("after"), int(request.query.get("limit") or 20))
        return web.json_response({"object": "list", "data": [self._object(b) for b in page],
                                  "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None,
                                  "has_more": more})

    async def cancel(self, request: web.Request) -> web.Response:
        batch = self.book.get(request.match_info["id"], "openai")
        self.book.cancel(batch)
        return web.json_response(self._object(batch))

    # --- what a batch looks like ----------------------------------------------------------------

    def _object(self, batch: Batch) -> dict[str, Any]:
        done = [i.outcome for i in batch.items if i.outcome is not None and not i.outcome.expired]
        ok = sum(1 for o in done if o.status == 200)
        obj: dict[str, Any] = {
            "id": batch.id, "object": "batch", "status": _STATUS[batch.state], "created_at": int(batch.created),
            "expires_at": int(batch.created) + 86400, "request_counts": {"total": len(batch.items), "completed": ok,
                                                                         "failed": len(done) - ok},
            "output_file_id": None, "error_file_id": None,
            "errors": {"object": "list", "data": batch.errors} if batch.errors else None,
            **batch.extra,
        }
        if batch.state == "in_progress":
            obj["in_progress_at"] = int(batch.created)
            return obj
        when = int(batch.ended_at or time.time())
        obj[{"ended": "completed_at", "expired": "expired_at", "cancelled": "cancelled_at",
             "failed": "failed_at"}[batch.state]] = when
        if batch.state != "failed":
            if "files" not in batch.extra:  # written once, when the batch first reads as over
                batch.extra["files"] = self._write_files(batch)
            out_id, err_id = batch.extra["files"]
            obj["output_file_id"], obj["error_file_id"] = out_id, err_id
        obj.pop("files", None)
        return obj

    def _write_files(self, batch: Batch) -> tuple[str | None, str | None]:
        good: list[str] = []
        bad: list[str] = []
        for n, item in enumerate(batch.items, start=1):
            o = item.outcome
            row: dict[str, Any] = {"id": f"batch_req_{batch.id}_{n}", "custom_id": item.custom_id}
            if o is None or o.expired:
                code = "batch_cancelled" if batch.state == "cancelled" else "batch_expired"
                row |= {"response": None, "error": {"code": code, "message": "This request was not executed "
                                                    "before the batch " + ("was cancelled." if batch.state == "cancelled"
                                                                           else "expired.")}}
            elif o.error is not None:
                row |= {"response": None, "error": {"code": "server_error", "message": o.error}}
            else:
                row |= {"response": {"status_code": o.status, "request_id": f"req_{batch.id}_{n}", "body": o.body},
                        "error": None}
            (good if o is not None and o.status == 200 and o.error is None else bad).append(json.dumps(row))
        out = self._store("batch_output.jsonl", "batch_output", "\n".join(good).encode() + b"\n")["id"] if good else None
        err = self._store("batch_errors.jsonl", "batch_output", "\n".join(bad).encode() + b"\n")["id"] if bad else None
        return out, err
