"""The batch collector and its journal (`toolsight.calls.batching`, `batch_journal`), in one process.

The provider side is `Ledger`, a small in-memory `BatchAPI` that answers every body with a reply
naming its custom id and keeps what it was asked (submissions, finds, polls). The tests assert what
the collector does with it: when it submits, what it writes to `batches.jsonl` and in which order,
that a resumed collector polls the submission it finds in the journal instead of submitting again,
and that failed or expired items are answered on-line while the good ones are kept. The providers'
real clients against the scripted server are in tests/engine/test_batch_runs.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest

from toolsight.calls.batch_journal import BATCHES, BatchJournal, read_journal
from toolsight.calls.batching import BatchCollector, BatchTuning, _NoResult, describe_batches
from toolsight.models.batch.base import BatchAPI, BatchItem, BatchResult, BatchState


class Ledger(BatchAPI):
    """An in-memory provider: `hold` keeps batches in progress (`hold_from` N: the Nth batch and later
    ones); `fail` (a bad request), `flaky` (a server error, worth asking again) and `expire` name
    custom ids."""

    provider = "ledger"

    def __init__(self, hold: bool = False, fail: set[str] | None = None, expire: set[str] | None = None,
                 submit_error: Exception | None = None, flaky: set[str] | None = None,
                 hold_from: int | None = None) -> None:
        self.batches: dict[str, tuple[str, list[BatchItem]]] = {}
        self.submits: list[str] = []  # tags, in order
        self.finds: list[str] = []
        self.polls: list[str] = []
        self.hold = hold
        self.fail = fail or set()
        self.expire = expire or set()
        self.flaky = flaky or set()
        self.hold_from = hold_from
        self.submit_error = submit_error
        self.journal_at_submit: list[dict[str, Any]] = []
        self.known: list[set[str]] = []
        self.find_errors = 0
        self.run_dir: Path | None = None

    async def submit(self, items: list[BatchItem], *, tag: str) -> str:
        if self.run_dir is not None:
            self.journal_at_submit = read_journal(self.run_dir)
        if self.submit_error is not None:
            raise self.submit_error
        self.submits.append(tag)
        bid = f"batch_{len(self.batches)}"
        self.batches[bid] = (tag, items)
        return bid

    async def find(self, tag: str, *, known: Collection[str] = ()) -> str | None:
        self.finds.append(tag)
        self.known.append(set(known))
        if self.find_errors:
            self.find_errors -= 1
            raise RuntimeError("cannot tell yet")
        return next((bid for bid, (t, _) in self.batches.items() if t == tag), None)

    async def poll(self, batch_id: str) -> BatchState:
        self.polls.append(batch_id)
        n = len(self.batches[batch_id][1])
        held = self.hold or (self.hold_from is not None and int(batch_id.split("_")[1]) + 1 >= self.hold_from)
        return BatchState(id=batch_id, status="in_progress" if held else "ended", total=n)

    async def results(self, batch_id: str) -> list[BatchResult]:
        out = []
        for it in self.batches[batch_id][1]:
            if it.custom_id in self.fail:
                out.append(BatchResult(custom_id=it.custom_id, error="invalid_request"))
            elif it.custom_id in self.flaky:
                out.append(BatchResult(custom_id=it.custom_id, error="server_error", retryable=True))
            elif it.custom_id in self.expire:
                out.append(BatchResult(custom_id=it.custom_id, expired=True, error="expired"))
            else:
                out.append(BatchResult(custom_id=it.custom_id, reply={"answer": it.body["q"]}))
        return out


FAST = BatchTuning(max_size=3, idle_s=0.05, poll_s=0.01, poll_max_s=0.02)
ONLINE = FAST.model_copy(update={"rebatch": False})  # --batch-retry online


def collector(run_dir: Path, api: Ledger, tuning: BatchTuning = FAST) -> BatchCollector:
    api.run_dir = run_dir
    return BatchCollector(api, BatchJournal(run_dir / BATCHES), tuning)


async def ask(col: BatchCollector, ids: list[str]) -> list[Any]:
    async def one(cid: str) -> Any:
        try:
            return await col.request(cid, {"q": cid})
        except _NoResult as exc:
            return f"on-line ({exc})"
    try:
        return await asyncio.gather(*(one(c) for c in ids))
    finally:
        await col.aclose()


def kill_when(run_dir: Path, api: Ledger, ids: list[str], until: Callable[[], bool]) -> None:
    """A collector asks for `ids` and is closed (the process dies) as soon as `until()` holds."""
    async def first() -> None:
        col = collector(run_dir, api)
        jobs = [asyncio.ensure_future(col.request(c, {"q": c})) for c in ids]
        for _ in range(4000):
            if until():
                break
            await asyncio.sleep(0.005)
        assert until(), "the collector never got there"
        await col.aclose()
        await asyncio.gather(*jobs, return_exceptions=True)

    asyncio.run(first())


def test_a_full_queue_is_one_batch_and_the_journal_holds_the_ids_before_submitting(tmp_path: Path) -> None:
    api = Ledger()
    out = asyncio.run(ask(collector(tmp_path, api), ["a", "b", "c"]))
    assert out == [{"answer": "a"}, {"answer": "b"}, {"answer": "c"}]
    assert len(api.submits) == 1
    # written (and fsynced) before submit was called: the tag and every custom id
    assert [e["kind"] for e in api.journal_at_submit] == ["submit"]
    assert {i["custom_id"] for i in api.journal_at_submit[0]["items"]} == {"a", "b", "c"}
    assert api.journal_at_submit[0]["tag"] == api.submits[0]
    kinds = [e["kind"] for e in read_journal(tmp_path)]
    assert kinds == ["submit", "batch", "result", "result", "result", "closed"]


def test_the_idle_interval_submits_a_part_queue_and_a_full_one_goes_at_once(tmp_path: Path) -> None:
    api = Ledger()
    out = asyncio.run(ask(collector(tmp_path, api), ["a", "b", "c", "d", "e"]))
    assert [o["answer"] for o in out] == ["a", "b", "c", "d", "e"]
    sizes = [len(items) for _, items in api.batches.values()]
    assert sizes == [3, 2]  # 3 at once (max_size), the last 2 after the idle interval


def test_partial_failure_keeps_good_results_and_counts_the_rest(tmp_path: Path) -> None:
    api = Ledger(fail={"b"}, expire={"c"})
    col = collector(tmp_path, api, ONLINE)
    out = asyncio.run(ask(col, ["a", "b", "c"]))
    assert out[0] == {"answer": "a"}
    assert out[1].startswith("on-line (invalid_request")
    assert out[2].startswith("on-line (expired")
    results = {e["custom_id"]: e for e in read_journal(tmp_path) if e["kind"] == "result"}
    assert results["a"]["reply"] == {"answer": "a"} and results["c"]["expired"] is True
    assert results["b"]["reply"] is None and results["b"]["error"] == "invalid_request"


def test_expired_and_retryable_items_are_asked_once_more_in_a_new_batch(tmp_path: Path) -> None:
    api = Ledger(fail={"a"}, flaky={"b"}, expire={"c"})
    col = collector(tmp_path, api)
    out = asyncio.run(ask(col, ["a", "b", "c"]))
    assert out[0].startswith("on-line (invalid_request")  # a bad request would fail again: on-line at once
    assert out[1:] == [{"answer": "b"}, {"answer": "c"}]
    assert [sorted(i.custom_id for i in items) for _, items in api.batches.values()] == [
        ["a", "b", "c"], ["b-r", "c-r"]]
    assert col.stats.rebatched == 2 and col.stats.submitted == 2
    journal = BatchJournal(tmp_path / BATCHES)
    assert journal.results["b"].retryable and not journal.results["a"].retryable
    assert journal.results["b-r"].reply == {"answer": "b"}
    journal.close()


def test_an_item_that_fails_again_in_its_second_batch_goes_on_line(tmp_path: Path) -> None:
    api = Ledger(flaky={"b", "b-r"}, expire={"c", "c-r"})
    col = collector(tmp_path, api)
    out = asyncio.run(ask(col, ["b", "c"]))
    assert out[0].startswith("on-line (server_error") and out[1].startswith("on-line (expired")
    assert len(api.submits) == 2 and col.stats.rebatched == 2  # asked again once, not twice


def test_a_kill_before_the_second_batch_is_collected_resumes_it_without_a_new_submission(tmp_path: Path) -> None:
    api = Ledger(flaky={"b"}, hold_from=2)
    # the process dies once the retry batch is submitted and polled once
    kill_when(tmp_path, api, ["a", "b", "c"], lambda: "batch_1" in api.polls)
    assert len(api.submits) == 2
    api.hold_from = None
    col = collector(tmp_path, api)
    out = asyncio.run(ask(col, ["a", "b", "c"]))
    assert out == [{"answer": "a"}, {"answer": "b"}, {"answer": "c"}]
    assert len(api.submits) == 2 and col.stats.resumed == 1 and col.stats.submitted == 0
    results = [e["custom_id"] for e in read_journal(tmp_path) if e["kind"] == "result"]
    assert sorted(results) == ["a", "b", "b-r", "c"]  # every result written once


def test_a_kill_after_collecting_a_failed_item_submits_its_retry_once_on_resume(tmp_path: Path) -> None:
    api = Ledger(flaky={"b"})
    asyncio.run(ask(collector(tmp_path, api, ONLINE), ["a", "b"]))  # b failed, went on-line
    assert len(api.submits) == 1
    col = collector(tmp_path, api)  # resumed with --batch-retry batch: b's retry goes in a new batch
    assert asyncio.run(ask(col, ["a", "b"])) == [{"answer": "a"}, {"answer": "b"}]
    assert len(api.submits) == 2 and [i.custom_id for i in api.batches["batch_1"][1]] == ["b-r"]
    assert asyncio.run(ask(collector(tmp_path, api), ["a", "b"])) == [{"answer": "a"}, {"answer": "b"}]
    assert len(api.submits) == 2  # a third invocation answers both from the journal


def test_forgetting_a_result_answered_by_the_second_batch_forgets_both_tries(tmp_path: Path) -> None:
    api = Ledger(flaky={"b"})
    col = collector(tmp_path, api)
    assert asyncio.run(ask(col, ["a", "b"])) == [{"answer": "a"}, {"answer": "b"}]
    col.forget(["b"])  # its caller could not use the reply (e.g. a judge reply that does not parse)
    col.journal.close()
    journal = BatchJournal(tmp_path / BATCHES)
    assert set(journal.results) == {"a"}  # neither "b" nor "b-r" answers again
    journal.close()


def test_a_killed_collector_resumes_by_polling_the_same_batch(tmp_path: Path) -> None:
    held = Ledger(hold=True)
    kill_when(tmp_path, held, ["a", "b", "c"], lambda: bool(held.polls))  # submitted and polled once
    assert len(held.submits) == 1
    held.hold = False
    out = asyncio.run(ask(collector(tmp_path, held), ["a", "b", "c"]))
    assert out == [{"answer": "a"}, {"answer": "b"}, {"answer": "c"}]
    assert len(held.submits) == 1  # never submitted again
    assert set(held.polls) == {"batch_0"}
    # every result written once
    assert sorted(e["custom_id"] for e in read_journal(tmp_path) if e["kind"] == "result") == ["a", "b", "c"]
    # a third invocation answers from the journal alone
    polls = len(held.polls)
    out = asyncio.run(ask(collector(tmp_path, held), ["b"]))
    assert out == [{"answer": "b"}] and len(held.polls) == polls


def test_a_kill_between_submit_and_writing_the_id_is_found_by_its_tag(tmp_path: Path) -> None:
    api = Ledger(hold=True)
    kill_when(tmp_path, api, ["a", "b", "c"], lambda: bool(api.polls))
    # as if the process died before the `batch` line was written
    lines = [x for x in (tmp_path / BATCHES).read_text().splitlines() if json.loads(x)["kind"] != "batch"]
    (tmp_path / BATCHES).write_text("\n".join(lines) + "\n")
    api.hold = False
    out = asyncio.run(ask(collector(tmp_path, api), ["a", "b", "c"]))
    assert [o["answer"] for o in out] == ["a", "b", "c"]
    assert api.finds == [api.submits[0]] and len(api.submits) == 1


def test_a_lookup_that_cannot_answer_yet_is_asked_again_not_submitted_twice(tmp_path: Path) -> None:
    from toolsight.calls.batch_journal import JournalItem, Submitted

    api = Ledger()
    asyncio.run(ask(collector(tmp_path, api), ["x"]))  # an earlier, collected batch: batch_0
    journal = BatchJournal(tmp_path / BATCHES)
    journal.write(Submitted(tag="toolsight-lost", provider="ledger", items=[JournalItem(custom_id="a", hash="x")]))
    journal.close()
    api.batches["batch_1"] = ("toolsight-lost", [BatchItem(custom_id="a", body={"q": "a"})])  # it did land
    api.find_errors = 2
    out = asyncio.run(ask(collector(tmp_path, api), ["a"]))
    assert out == [{"answer": "a"}]
    assert api.finds == ["toolsight-lost"] * 3 and len(api.submits) == 1  # found on the third try
    assert api.known[-1] == {"batch_0"}  # the journal's own batches are passed as known


def test_a_submission_that_never_reached_the_provider_is_submitted_on_resume(tmp_path: Path) -> None:
    from toolsight.calls.batch_journal import JournalItem, Submitted

    journal = BatchJournal(tmp_path / BATCHES)
    journal.write(Submitted(tag="toolsight-lost", provider="ledger", items=[JournalItem(custom_id="a", hash="x")]))
    journal.close()
    api = Ledger()
    out = asyncio.run(ask(collector(tmp_path, api), ["a"]))
    assert out == [{"answer": "a"}]
    assert api.finds == ["toolsight-lost"] and len(api.submits) == 1 and api.submits[0] != "toolsight-lost"


def test_a_failed_submit_sends_its_calls_on_line(tmp_path: Path) -> None:
    api = Ledger(submit_error=RuntimeError("upload refused"))
    out = asyncio.run(ask(collector(tmp_path, api), ["a", "b"]))
    assert all(o.startswith("on-line (not submitted: upload refused") for o in out)
    closed = [e for e in read_journal(tmp_path) if e["kind"] == "closed"]
    assert closed and closed[0]["status"] == "not_submitted"


def test_a_torn_last_line_is_cut_off(tmp_path: Path) -> None:
    api = Ledger()
    asyncio.run(ask(collector(tmp_path, api), ["a"]))
    with (tmp_path / BATCHES).open("a") as fh:
        fh.write('{"kind": "result", "tag": "t", "custom_')
    journal = BatchJournal(tmp_path / BATCHES)
    assert set(journal.results) == {"a"}
    journal.close()
    assert (tmp_path / BATCHES).read_text().endswith("}\n")


@pytest.mark.parametrize("stats,text", [
    ({}, ""),
    ({"model": {"batched": 3, "submitted": 1}}, "model: 3 call(s) batched in 1 new batch(es)"),
    ({"judge": {"batched": 1, "submitted": 0, "resumed": 1, "fallbacks": 2, "expired": 1}},
     "judge: 1 call(s) batched in 0 new batch(es) and 1 resumed, 2 sent on-line after their batch item failed "
     "(1 expired)"),
    ({"model": {"batched": 3, "submitted": 2, "rebatched": 2, "fallbacks": 1}},
     "model: 3 call(s) batched in 2 new batch(es), 2 asked again in a new batch after their item failed or "
     "expired, 1 sent on-line after their batch item failed"),
])
def test_the_summary_text(stats: dict[str, dict[str, int]], text: str) -> None:
    from toolsight.calls.batching import BatchStats

    assert describe_batches({k: BatchStats(**v) for k, v in stats.items()}) == text
