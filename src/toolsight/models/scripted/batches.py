"""The scripted server's batch endpoints: OpenAI Batch (with its Files API), Anthropic Message Batches
and Gemini batch mode (inline requests), in the shapes the official SDKs send and read.

A batch's items are played when the batch ends (`Script.batch`: after some status reads and/or
seconds): each item is POSTed, in order, to the server's own on-line endpoint (`/v1/chat/completions`,
`/v1/responses`, `/v1/messages`, `.../{model}:generateContent`) with the `X-Toolsight-Batch` header
(`BATCH_ID/CUSTOM_ID`), so it plays the script exactly as an on-line call would and is recorded in
`ScriptedServer.requests` with `RecordedRequest.batch` set. Items the script makes fail
(`fail`, `fail_every`; a listed id matches with or without the Anthropic client's tag prefix) report the
provider's error shape without playing a step; with `expire_after`
the batch expires and the remaining items are never run; with `hold_after` N, batches after the first
N stay in progress (a test lets them end by setting it back). `Batches.submissions(tag)` counts how often
a tag was submitted (OpenAI metadata value, Gemini display name, or the `ts<hash>` custom-id prefix
the Anthropic client uses), so a test can assert that a resumed run did not submit again.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import aiohttp
from aiohttp import web

from toolsight.models.scripted.errors import error_body
from toolsight.models.scripted.script import Script


class Host(Protocol):
    """What the batch endpoints need of their server: its script and where its on-line routes are."""

    script: Script

    @property
    def base_url(self) -> str: ...


#: marks a request the batch machinery sent on a batch item's behalf: `BATCH_ID/CUSTOM_ID`
BATCH_HEADER = "X-Toolsight-Batch"

State = Literal["in_progress", "ended", "expired", "cancelled", "failed"]


@dataclass
class Outcome:
    """What playing one item gave: the on-line endpoint's status and JSON body, or why it has none."""

    status: int = 0
    body: dict[str, Any] | None = None
    error: str | None = None  # the connection was dropped, the reply was not JSON
    expired: bool = False  # never run (the batch expired or was cancelled first)


@dataclass
class Item:
    custom_id: str
    path: str  # the on-line endpoint the item is played on
    body: dict[str, Any]
    outcome: Outcome | None = None


@dataclass
class Batch:
    id: str
    provider: str  # "openai" | "anthropic" | "google"
    tags: list[str]
    items: list[Item]
    created: float = field(default_factory=time.time)
    state: State = "in_progress"
    reads: int = 0
    ended_at: float | None = None
    seq: int = 0  # 1 for the server's first batch, 2 for its second, ... (`Script.batch.hold_after`)
    extra: dict[str, Any] = field(default_factory=dict)  # provider fields echoed back (metadata, ...)
    errors: list[dict[str, Any]] = field(default_factory=list)  # why a batch failed as a whole
    #: held while the items are played: a second status read waits instead of playing them again
    playing: asyncio.Lock = field(default_factory=asyncio.Lock)


class Batches:
    """The batch state of one ScriptedServer (each provider's routes: `batch_openai.register` and the
    like, added by the server)."""

    def __init__(self, server: Host) -> None:
        self.server = server
        self.batches: dict[str, Batch] = {}
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}  # OpenAI Files: object, content
        self._ids = itertools.count(1)

    # --- what tests read ------------------------------------------------------------------------

    def submissions(self, tag: str) -> int:
        """How many batches were submitted carrying `tag` (for Anthropic: its custom-id prefix)."""
        from toolsight.models.batch.anthropic import tag_prefix

        return sum(1 for b in self.batches.values() if tag in b.tags or tag_prefix(tag) in b.tags)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"

    # --- the shared life cycle ------------------------------------------------------------------

    def page(self, provider: str, after: str | None, size: int) -> tuple[list[Batch], bool]:
        """One page of a provider's batches, newest first, after the cursor `after` (a batch id); and
        whether more follow."""
        batches = sorted((b for b in self.batches.values() if b.provider == provider), key=lambda b: b.id,
                         reverse=True)
        if after:
            batches = [b for b in batches if b.id < after]
        return batches[:size], len(batches) > size

    def add(self, batch: Batch) -> Batch:
        batch.seq = len(self.batches) + 1
        self.batches[batch.id] = batch
        return batch

    async def advance(self, batch: Batch) -> None:
        """A status read: ends the batch (playing its items) once the script's delay has passed."""
        if batch.state != "in_progress":
            return
        batch.reads += 1
        cfg = self.server.script.batch
        if batch.reads <= cfg.polls or time.time() - batch.created < cfg.seconds:
            return
        if cfg.hold_after is not None and batch.seq > cfg.hold_after:
            return
        async with batch.playing:
            if batch.state == "in_progress":  # not ended by a read that held the lock before this one
                await self._play(batch)

    async def _play(self, batch: Batch) -> None:
        from toolsight.models.batch.anthropic import caller_id

        cfg = self.server.script.batch
        fail = set(cfg.fail)
        async with aiohttp.ClientSession() as http:
            for n, item in enumerate(batch.items, start=1):
                if cfg.expire_after is not None and n > cfg.expire_after:
                    item.outcome = Outcome(expired=True)
                elif fail & {item.custom_id, caller_id(item.custom_id)} or (cfg.fail_every and n % cfg.fail_every == 0):
                    item.outcome = Outcome(status=cfg.fail_status, body=self.error_body(batch.provider, cfg.fail_status))
                else:
                    item.outcome = await self._post(http, batch, item)
        batch.state = "expired" if cfg.expire_after is not None and cfg.expire_after < len(batch.items) else "ended"
        batch.ended_at = time.time()

    async def _post(self, http: aiohttp.ClientSession, batch: Batch, item: Item) -> Outcome:
        name = f"batches/{batch.id}" if batch.provider == "google" else batch.id  # the id its client knows
        headers = {BATCH_HEADER: f"{name}/{item.custom_id}"}
        try:
            async with http.post(self.server.base_url + item.path, json=item.body, headers=headers) as resp:
                raw = await resp.read()
                status = resp.status
        except aiohttp.ClientError as exc:
            return Outcome(error=f"connection failed: {type(exc).__name__}")
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return Outcome(status=status, error="the reply was not JSON")
        return Outcome(status=status, body=body if isinstance(body, dict) else {"value": body})

    def cancel(self, batch: Batch) -> None:
        if batch.state != "in_progress" or batch.playing.locked():  # over, or finishing now
            return
        for item in batch.items:
            item.outcome = Outcome(expired=True)
        batch.state = "cancelled"
        batch.ended_at = time.time()

    @staticmethod
    def error_body(provider: str, status: int) -> dict[str, Any]:
        return error_body(provider, status)

    def get(self, batch_id: str, provider: str) -> Batch:
        batch = self.batches.get(batch_id)
        if batch is None or batch.provider != provider:
            raise web.HTTPNotFound(text=json.dumps(self.error_body(provider, 404)), content_type="application/json")
        return batch

def bad_request(provider: str, message: str) -> web.Response:
    """A 400 in the provider's error shape, with `message`."""
    body = Batches.error_body(provider, 400)
    err = body.get("error")
    if isinstance(err, dict):
        err["message"] = message
    return web.json_response(body, status=400)
