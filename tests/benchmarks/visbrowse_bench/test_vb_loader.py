"""VisBrowse-Bench loader on the real shared sample (read in place), damaged records, image downloads."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from sharedfiles import missing, shared_dir
from toolsight.benchmarks.registry import get_benchmark
from toolsight.benchmarks.visbrowse_bench.data import IMAGES, VisBrowseError, load_visbrowse, read_records

SHARED = shared_dir()
SAMPLE = SHARED / "data" / "visbrowse-bench"
JSONL = SAMPLE / "data" / "VisBrowse-Bench.sample.jsonl"


@pytest.fixture(autouse=True)
def _need_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIGHT_CACHE", str(tmp_path / "cache"))
    if not JSONL.is_file():
        missing(str(JSONL))


def _fidelity_plaintexts() -> dict[str, dict[str, object]]:
    out = {}
    for line in (SHARED / "fidelity" / "visbrowse-bench.jsonl").read_text().splitlines():
        v = json.loads(line)
        if v["vector_id"].startswith("vb-dec-"):
            out[str(v["input"]["id"])] = v["output"]
    return out


def test_sample_loads_decrypted_with_tags_lists_and_image_urls() -> None:
    tasks, root, jsonl = load_visbrowse(SAMPLE, download=False)
    assert jsonl == JSONL and root == SAMPLE and len(tasks) == 44
    by_id = {t.id: t for t in tasks}
    expected = _fidelity_plaintexts()
    assert expected  # the fidelity file has decryption vectors
    for tid, out in expected.items():
        turn = by_id[tid].turns[0]
        assert turn.prompt == out["question"]
        gold: list[str] = out["answer"]  # type: ignore[assignment]
        assert turn.answer == (gold if len(gold) > 1 else gold[0])  # type: ignore[arg-type]
    two = {t.id: t.turns[0].answer for t in tasks if isinstance(t.turns[0].answer, list)}
    assert set(two) == {"76", "79", "133"} and all(len(v) == 2 for v in two.values())
    t13 = by_id["13"].turns[0]
    assert [i.path for i in t13.images] == [f"{IMAGES}/13_1.png", f"{IMAGES}/13_2.png"]
    assert t13.meta["image_urls"][0].startswith("https://raw.githubusercontent.com/ZhengboZhang/VisBrowse-Bench/")
    assert by_id["1"].tags == {"domain": "Media", "sub_domain": "Film", "n_images": "1", "n_answers": "1"}
    assert all((root / i.path).is_file() for t in tasks for i in t.turns[0].images)
    assert {t.tags["domain"] for t in tasks} == {"Media", "Life", "Art", "Geography", "Technology", "Sport", "Finance"}


def test_benchmark_load_accepts_the_folder_or_the_file_and_fingerprints() -> None:
    bench = get_benchmark("visbrowse-bench")
    a = bench.load(SAMPLE)
    b = bench.load(JSONL)
    assert len(a.tasks) == 44 and a.fingerprint == b.fingerprint and a.web_corpus is None
    assert bench.category_order["domain"] == ["Media", "Life", "Art", "Geography", "Technology", "Sport", "Finance"]


def _copy_sample(tmp_path: Path, lines: list[str]) -> Path:
    d = tmp_path / "vb"
    (d / "data").mkdir(parents=True)
    (d / "data" / "VisBrowse-Bench.jsonl").write_text("".join(lines))
    os.symlink(SAMPLE / IMAGES, d / IMAGES)
    return d


def test_a_damaged_record_is_caught_with_file_line_and_id(tmp_path: Path) -> None:
    lines = JSONL.read_text().splitlines(keepends=True)
    rec = json.loads(lines[4])
    ct = rec["question"]
    rec["question"] = ct[:40] + ("A" if ct[40] != "A" else "B") + ct[41:]  # one flipped base64 character
    damaged = [*lines[:4], json.dumps(rec) + "\n", *lines[5:]]
    d = _copy_sample(tmp_path, damaged)
    with pytest.raises(VisBrowseError, match=rf"VisBrowse-Bench.jsonl:5 \(id {rec['id']}\).*damaged"):
        load_visbrowse(d, download=False)


@pytest.mark.parametrize("mutate, message", [
    (lambda r: {**r, "canary": "visbrowse-bench:wrong"}, r"damaged or its canary is wrong"),
    (lambda r: {**r, "answer": []}, r"'answer' must be a non-empty list of strings"),
    (lambda r: {k: v for k, v in r.items() if k != "domain"}, r"missing field 'domain'"),
    (lambda r: {**r, "question": r["question"][:-8] + "!!!!!!!!"}, r"not valid base64|damaged"),
])
def test_other_damage_is_caught(tmp_path: Path, mutate: object, message: str) -> None:
    lines = JSONL.read_text().splitlines(keepends=True)
    rec = json.loads(lines[2])
    bad = mutate(rec)  # type: ignore[operator]
    d = _copy_sample(tmp_path, [lines[0], json.dumps(bad) + "\n", *lines[3:]])
    with pytest.raises(VisBrowseError, match=message):
        read_records(d / "data" / "VisBrowse-Bench.jsonl")


def test_torn_line_and_duplicate_id(tmp_path: Path) -> None:
    lines = JSONL.read_text().splitlines(keepends=True)
    d = _copy_sample(tmp_path, [lines[0], lines[1][:50] + "\n"])
    with pytest.raises(VisBrowseError, match=r":2: not JSON"):
        read_records(d / "data" / "VisBrowse-Bench.jsonl")
    d2 = _copy_sample(tmp_path / "b", [lines[0], lines[0]])
    with pytest.raises(VisBrowseError, match=r":2 \(id 1\): duplicate id 1 \(first on line 1\)"):
        read_records(d2 / "data" / "VisBrowse-Bench.jsonl")


def test_decrypted_file_loads_too(tmp_path: Path) -> None:
    from toolsight.benchmarks.visbrowse_bench.scorer import load_decrypted

    rows = load_decrypted(JSONL)
    d = tmp_path / "dec"
    d.mkdir()
    (d / "VisBrowse-Bench_decrypted.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.symlink(SAMPLE / IMAGES, d / IMAGES)
    tasks, _, _ = load_visbrowse(d, download=False)
    assert tasks[0].turns[0].prompt == rows[0]["question"]


def test_missing_images_download_once_into_the_cache(tmp_path: Path) -> None:
    """The record's URLs point at a local server; images are fetched once, then read from the cache."""
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    served: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *a: object, **k: object) -> None:
            super().__init__(*a, directory=str(SAMPLE / IMAGES), **k)  # type: ignore[arg-type]

        def log_message(self, *a: object) -> None:
            served.append(self.path)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{srv.server_address[1]}"
        lines = JSONL.read_text().splitlines()[:3]
        out = []
        for line in lines:
            r = json.loads(line)
            r["image"] = [base + "/" + u.rsplit("/", 1)[1] for u in r["image"]]
            out.append(json.dumps(r) + "\n")
        d = tmp_path / "noimg"
        d.mkdir()
        (d / "VisBrowse-Bench.jsonl").write_text("".join(out))
        tasks, root, _ = load_visbrowse(d)
        assert root == tmp_path / "cache" / "visbrowse-bench"
        assert len(served) == 3
        for t in tasks:
            for i in t.turns[0].images:
                assert (root / i.path).read_bytes() == (SAMPLE / i.path).read_bytes()
        load_visbrowse(d)
        assert len(served) == 3  # second load: from the cache
        shutil.rmtree(root)
        srv.shutdown()
        srv.server_close()  # refused at once (a listening socket nobody serves would hang each download)
        with pytest.raises(VisBrowseError, match="not downloadable"):
            load_visbrowse(d)
    finally:
        srv.server_close()
