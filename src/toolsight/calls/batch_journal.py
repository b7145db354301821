"""The batch journal (`batches.jsonl` in the run directory): what batch mode submitted and collected.

One JSON object per line, appended and fsynced:

- `submit` — a submission's `tag`, its provider and its items (`custom_id`, a hash of the body),
  written **before** the batch is submitted;
- `batch` — the provider's batch id for `tag`, written when `submit` returned;
- `result` — one item's outcome (`reply`, or `error`; `expired` when the batch ran out of time before
  it, `retryable` when its error is worth asking again: a 5xx, a 429, an overload), written once when
  the batch is collected;
- `closed` — every item of `tag` is resolved (`status`: ended, expired, failed, not_submitted);
- `forget` — a result its caller could not use (a judge reply that does not parse): not replayed.

A run killed at any moment resumes from it (`toolsight.calls.batching`): an item with a `result`
is answered from the journal; an item of a submission that is not `closed` is answered by polling
that batch (by its id, or found by its tag when the kill came between submitting and writing the
id) — never submitted again. A torn last line (a kill mid-write) is cut off when the journal opens.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

BATCHES = "batches.jsonl"


class JournalItem(BaseModel):
    custom_id: str
    hash: str
    #: who asked (a task id and epoch), for a person reading the journal
    scope: str = ""


class Submitted(BaseModel):
    kind: Literal["submit"] = "submit"
    tag: str
    provider: str
    label: str = ""
    items: list[JournalItem]


class Accepted(BaseModel):
    kind: Literal["batch"] = "batch"
    tag: str
    batch_id: str


class Collected(BaseModel):
    kind: Literal["result"] = "result"
    tag: str
    custom_id: str
    reply: dict[str, Any] | None = None
    error: str | None = None
    expired: bool = False
    #: the error is worth asking again (5xx, 429, overload), not one that would fail again (a 400)
    retryable: bool = False


class Forgotten(BaseModel):
    """A result its caller could not use (a judge reply that does not parse): never answered again."""

    kind: Literal["forget"] = "forget"
    custom_id: str


class Closed(BaseModel):
    kind: Literal["closed"] = "closed"
    tag: str
    status: str


Entry = Submitted | Accepted | Collected | Closed | Forgotten
_KINDS: dict[str, type[BaseModel]] = {"submit": Submitted, "batch": Accepted, "result": Collected, "closed": Closed,
                                      "forget": Forgotten}


@dataclass
class Submission:
    """What the journal knows about one submission."""

    tag: str
    provider: str
    items: dict[str, JournalItem]
    batch_id: str | None = None
    closed: bool = False
    collected: set[str] = field(default_factory=set)


class BatchJournal:
    """Reads the journal when opened, and appends to it (each write fsynced before it returns)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.submissions: dict[str, Submission] = {}
        self.results: dict[str, Collected] = {}
        self._load()
        self._fh = path.open("a", encoding="utf-8")

    def _load(self) -> None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        end = raw.rfind(b"\n") + 1
        if end < len(raw):  # a torn last line: cut off, so the next entry starts on a line of its own
            with self.path.open("r+b") as fh:
                fh.truncate(end)
                os.fsync(fh.fileno())
        for line in raw[:end].decode("utf-8", errors="replace").splitlines():
            try:
                data = json.loads(line)
                entry = _KINDS[data["kind"]].model_validate(data)
            except (ValueError, KeyError, TypeError, ValidationError):
                continue  # not ours (or damaged): a journal line never stops a run
            self._apply(entry)  # type: ignore[arg-type]

    def _apply(self, entry: Entry) -> None:
        if isinstance(entry, Forgotten):
            self.results.pop(entry.custom_id, None)
            return
        if isinstance(entry, Submitted):
            self.submissions[entry.tag] = Submission(entry.tag, entry.provider, {i.custom_id: i for i in entry.items})
            return
        sub = self.submissions.get(entry.tag)
        if isinstance(entry, Accepted):
            if sub is not None:
                sub.batch_id = entry.batch_id
        elif isinstance(entry, Collected):
            self.results[entry.custom_id] = entry
            if sub is not None:
                sub.collected.add(entry.custom_id)
        elif sub is not None:
            sub.closed = True

    def write(self, *entries: Entry) -> None:
        """Append `entries` and fsync once (a batch's results are written together)."""
        if not entries:
            return
        self._fh.write("".join(e.model_dump_json() + "\n" for e in entries))
        self._fh.flush()
        os.fsync(self._fh.fileno())
        for e in entries:
            self._apply(e)

    def open_submission(self, custom_id: str) -> Submission | None:
        """The submission not yet closed that holds `custom_id` (its result is still to be collected)."""
        for sub in self.submissions.values():
            if not sub.closed and custom_id in sub.items and custom_id not in sub.collected:
                return sub
        return None

    def close(self) -> None:
        self._fh.close()


def read_journal(run_dir: Path) -> list[dict[str, Any]]:
    """The journal's entries as dicts (for reports and tests); [] when there is none."""
    path = run_dir / BATCHES
    out: list[dict[str, Any]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return out
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
