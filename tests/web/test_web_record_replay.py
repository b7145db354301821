"""Record then replay: every live call lands in the run's cassette; a replay answers from it alone."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from webkit import FakeWeb, call, opened, picture, png, toolbox

from toolsight.errors import TaskAbort
from toolsight.web import ReplayMiss, WebError, open_session, parse_web_spec
from toolsight.web.cassette import CASSETTE, Cassette

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("text_search", {"query": "gull rock"}),
    ("image_search", {"query": "gull rock"}),
    ("reverse_image_search", {"image_url": "https://img.example.org/q.jpg"}),
    ("visit", {"url": "https://lights.example.org/gull", "goal": "year"}),
    ("visit", {"url": "http://192.168.0.1/", "goal": "blocked"}),
]


async def _run_all(spec: str, run_dir: Path, tmp: Path, env: dict[str, str] | None) -> list[tuple[str, bool, int]]:
    session = open_session(spec, run_dir, env=env)
    backend = session.backend
    if backend is not None:  # let the live backend fetch hit images from the test server
        backend.allowed_origins = (env["SERPER_BASE_URL"],) if env else ()  # type: ignore[attr-defined]
    out = []
    async with opened(session.start()):
        box = toolbox(tmp, "task")
        for name, args in CALLS:
            r = await call(box, name, **args)
            out.append((r.text, r.ok, len(r.artifacts)))
    return out


def test_replay_reproduces_every_result_with_zero_network_calls(tmp_path: Path) -> None:
    with FakeWeb(organic=[{"title": "Gull", "link": "https://g.example/"}],
                 lens=[{"title": "Lens hit", "link": "https://l.example/", "imageUrl": "https://i.example/l.jpg"}]) as fw:
        fw.images = [{"title": "Pic", "imageUrl": f"{fw.base}/img/a.png", "link": "https://p.example/a"}]
        fw.pages["/img/a.png"] = (200, "image/png", png(picture(9)), {})
        recorded = asyncio.run(_run_all("live", tmp_path / "run1", tmp_path / "w1", fw.env()))
        n_live = len(fw.seen)
    assert n_live == 5  # search, images, the hit's image, lens, jina (the private URL never left)
    # the server is gone: a single live call in the replay would now fail and change a result
    replayed = asyncio.run(_run_all(f"replay={tmp_path / 'run1'}", tmp_path / "run2", tmp_path / "w2", None))
    assert replayed == recorded
    assert recorded[1][2] == 1  # the image search hit's picture came back from the cassette's bytes
    assert len(fw.seen) == n_live
    ops = Cassette(tmp_path / "run1" / CASSETTE, readonly=True).ops()
    # failures are recorded too (the lens hit's image host does not resolve; the private page is refused)
    assert ops == {"fetch": 2, "image_search": 1, "read_page": 2, "reverse_image_search": 1, "text_search": 1}
    # the replay run's own cassette holds the same calls, so it can be replayed in turn
    assert Cassette(tmp_path / "run2" / CASSETTE, readonly=True).ops() == ops


def test_a_call_missing_from_the_cassette_ends_the_task_not_a_live_call(tmp_path: Path) -> None:
    with FakeWeb(organic=[{"title": "Gull", "link": "https://g.example/"}]) as fw:
        async def record() -> None:
            async with opened(open_session("live", tmp_path / "run1", env=fw.env()).start()):
                await call(toolbox(tmp_path), "text_search", query="gull rock")

        asyncio.run(record())
        before = len(fw.seen)

        async def replay() -> None:
            async with opened(open_session(f"replay={tmp_path / 'run1'}", tmp_path / "run2").start()):
                box = toolbox(tmp_path, "t2")
                assert (await call(box, "text_search", query="gull rock")).text.startswith("A Google search")
                await call(box, "text_search", query="a query never recorded")

        with pytest.raises(ReplayMiss) as info:
            asyncio.run(replay())
        assert len(fw.seen) == before
    assert isinstance(info.value, TaskAbort)
    msg = str(info.value)
    assert "has no recorded text_search call" in msg and "a query never recorded" in msg and "Re-record" in msg


def test_web_spec_errors_are_clear(tmp_path: Path) -> None:
    assert parse_web_spec("offline=/x") == ("offline", Path("/x"))
    assert parse_web_spec(None) == (None, None)
    for bad, msg in (("cloud", "use live, offline"), ("replay", "needs the recorded run"), ("live=/x", "no path")):
        with pytest.raises(WebError, match=msg):
            parse_web_spec(bad)
    with pytest.raises(WebError, match="web cassette not found"):
        open_session(f"replay={tmp_path / 'nothing'}", tmp_path / "out")
    with pytest.raises(WebError, match="needs a corpus"):
        open_session("offline", tmp_path / "out")
    (tmp_path / "run").mkdir()
    Cassette(tmp_path / "run" / CASSETTE).close()
    with pytest.raises(WebError, match="into a new --out"):
        open_session(f"replay={tmp_path / 'run'}", tmp_path / "run")
