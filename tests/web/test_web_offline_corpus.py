"""The offline corpus backend on loopback: FTS5 text search, caption image search, pHash reverse search,
pages fetched over real HTTP from the local server, and the browsing tools on top."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from PIL import Image
from webkit import call, opened, picture, png, toolbox, write_corpus

from toolsight.tools.web_tools import crop_jpeg
from toolsight.web import WebError, WebSession
from toolsight.web.corpus import CorpusIndex, ensure_index, fts_query, read_manifest
from toolsight.web.offline import CorpusBackend
from toolsight.web.server import LocalServer


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, list[dict[str, object]]]:
    root = tmp_path / "corpus"
    return root, write_corpus(root)


def _session(root: Path) -> WebSession:
    server = LocalServer(root)
    return WebSession("offline", CorpusBackend(root, server), server=server)


def test_text_search_ranks_by_bm25_and_formats_like_the_reference(corpus: tuple[Path, list[dict[str, object]]],
                                                                  tmp_path: Path) -> None:
    root, _entries = corpus

    async def go() -> str:
        async with opened(_session(root)):
            return (await call(toolbox(tmp_path), "text_search", query="Heron Isle lighthouse")).text

    text = asyncio.run(go())
    assert text.startswith("A Google search for 'Heron Isle lighthouse' found 5 results:\n\n## Web Results\n1. "
                           "[Heron Isle Lighthouse](https://lights.example.test/heron-isle)\nDate published: 2020-01-04\n\n")
    assert text.count("\n\n## Web Results\n") == 1 and "\n\n5. [" in text


def test_fts_query_survives_search_syntax() -> None:
    assert fts_query('"AND" OR NEAR(x) -- col:val *') == '"and" OR "or" OR "near" OR "x" OR "col" OR "val"'
    assert fts_query("  ...  ") is None


def test_image_search_uses_alt_text_and_captions(corpus: tuple[Path, list[dict[str, object]]]) -> None:
    root, entries = corpus
    idx = CorpusIndex.open(root)
    hits = idx.image_search("Gull Rock dusk red lamp", 3)
    assert hits[0].image_url == entries[1]["image_url"] and hits[0].page_url == entries[1]["url"]
    assert hits[0].title == "Gull Rock Lighthouse"  # the page's <title>
    assert idx.image_search("zzzz nothing", 3) == []
    idx.close()


def test_reverse_search_finds_the_picture_after_the_crop_tool_and_rejects_strangers(
        corpus: tuple[Path, list[dict[str, object]]]) -> None:
    root, entries = corpus
    idx = CorpusIndex.open(root)
    target = entries[3]
    # the picture inside a larger photo (plain margin), cropped the way image_crop does (10 % pad, JPEG q95)
    photo = Image.new("RGB", (700, 500), (230, 228, 225))
    with Image.open(target["image"]) as im:  # type: ignore[arg-type]
        photo.paste(im.convert("RGB").resize((260, 208)), (380, 240))
    buf = io.BytesIO()
    photo.save(buf, format="PNG")
    box = [380 / 700, 240 / 500, 640 / 700, 448 / 500]
    for slack in (0.0, 0.04, -0.03):  # exact, loose and tight boxes
        b = [box[0] - slack, box[1] - slack, box[2] + slack, box[3] + slack]
        jpeg, _ = crop_jpeg(buf.getvalue(), [round(v, 3) for v in b])
        hits = idx.reverse_image_search(jpeg, 3)
        assert [h.image_url for h in hits][:1] == [target["image_url"]], slack
        assert hits[0].distance is not None and hits[0].distance <= 8
        assert all(h.image_url == target["image_url"] for h in hits)
    # a resized, recompressed copy is found; an unrelated picture is not
    small = Image.open(io.BytesIO(png(picture(103)))).resize((90, 72))
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=70)
    assert [h.image_url for h in idx.reverse_image_search(out.getvalue(), 3)] == [target["image_url"]]
    assert idx.reverse_image_search(png(picture(999)), 3) == []
    idx.close()


def test_pages_and_images_come_over_http_from_the_local_server(corpus: tuple[Path, list[dict[str, object]]],
                                                                 tmp_path: Path) -> None:
    root, entries = corpus

    async def go() -> tuple[str, str, int, int]:
        async with opened(_session(root)) as s:
            box = toolbox(tmp_path)
            visit = await call(box, "visit", url=entries[0]["url"], goal="when it was lit")
            missing = await call(box, "visit", url="https://lights.example.test/nowhere", goal="x")
            img = await s.fetch(str(entries[0]["image_url"]), kind="image")
            return visit.text, missing.text, img.status, s.server.requests

    visit, missing, status, served = asyncio.run(go())
    assert visit.startswith("The useful information in https://lights.example.test/north-cape for user goal when it "
                            "was lit as follows: \n\nEvidence in page: \nTitle: North Cape Lighthouse\n\nURL Source: ")
    assert "It was lit in 1850." in visit and "- Keeper: [Keeper0](https://people.example.test/Keeper0)" in visit
    assert visit.endswith("Summary: \nNo summary model is configured (--summary-model), so the evidence above is the "
                          "page's main text as read.")
    assert "could not be accessed" in missing
    assert status == 200 and served == 2  # the page and the picture went through the server


def test_crop_then_reverse_search_through_the_tools(corpus: tuple[Path, list[dict[str, object]]],
                                                    tmp_path: Path) -> None:
    root, entries = corpus

    async def go() -> tuple[str, str, list[str]]:
        async with opened(_session(root)):
            box = toolbox(tmp_path)
            photo = Image.new("RGB", (600, 400), (240, 240, 240))
            with Image.open(entries[2]["image"]) as im:  # type: ignore[arg-type]
                photo.paste(im.convert("RGB"), (50, 60))
            photo.save(box.store.workspace / "query.png")
            crop = await call(box, "image_crop", image_url="query.png",
                              bbox=[round(50 / 600, 3), round(60 / 400, 3), round(250 / 600, 3), round(220 / 400, 3)])
            url = crop.text.removeprefix("The url of cropped image: ")
            rev = await call(box, "reverse_image_search", image_url=url)
            return crop.text, rev.text, [p["type"] for p in rev.extra["parts"]]

    crop, rev, kinds = asyncio.run(go())
    assert crop.startswith("The url of cropped image: https://img.toolsight.test/") and crop.endswith(".jpg")
    assert rev == (f"```\nImage: {entries[2]['image_url']}, Title: Saltmere Point Lighthouse, Webpage Url: "
                   f"{entries[2]['url']}\n```")
    assert kinds == ["text", "image", "text", "text"]  # the reference loop's parts, the hit's image inlined


def test_index_is_cached_and_rebuilt_when_a_file_changes(corpus: tuple[Path, list[dict[str, object]]],
                                                         tmp_path: Path) -> None:
    root, _ = corpus
    first = ensure_index(root, tmp_path / "idx")
    assert ensure_index(root, tmp_path / "idx") == first
    page = root / "pages" / "gull-rock.html"
    page.write_text(page.read_text() + "<!-- edited -->")
    assert ensure_index(root, tmp_path / "idx") != first


def test_bad_corpus_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(WebError, match=r"no manifest\.json"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "toolsight-corpus/1", "pages": [
        {"url": "https://x.test/", "file": "../../etc/passwd"}]}))
    with pytest.raises(WebError, match=r"pages\[0\]\.file '\.\./\.\./etc/passwd' is not a file inside"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text('{"pages": [}')
    with pytest.raises(WebError, match=r"manifest\.json:1: not valid JSON"):
        read_manifest(tmp_path)


def test_local_server_serves_nothing_outside_the_corpus(corpus: tuple[Path, list[dict[str, object]]]) -> None:
    import httpx

    root, _ = corpus
    (root.parent / "secret.txt").write_text("do not serve")
    with LocalServer(root) as srv:
        ok = httpx.get(f"{srv.base_url}/c/pages/gull-rock.html")
        assert ok.status_code == 200 and "Gull Rock" in ok.text
        for path in ("/c/../secret.txt", "/c/%2e%2e/secret.txt", "/c/pages/../../secret.txt"):
            assert httpx.get(srv.base_url + path).status_code == 404
