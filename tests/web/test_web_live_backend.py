"""The live backend's wire format against a scripted Serper- and Jina-compatible server on 127.0.0.1,
and the reference output formats of the tools on top of it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from webkit import FakeWeb, call, opened, picture, png, toolbox

from toolsight.benchmarks.visbrowse_bench.tools import reference_tools
from toolsight.tools.base import ArtifactStore, Toolbox
from toolsight.web import WebSession
from toolsight.web.live import LiveBackend
from toolsight.web.summarise import GOAL_SUMMARY_PROMPT

ORGANIC = [
    {"title": "Gull Rock Lighthouse - Wikipedia", "link": "https://en.example.org/wiki/Gull_Rock",
     "snippet": "Gull Rock is a lighthouse... Your browser can't play this video.", "date": "Mar 3, 2021",
     "source": "Wikipedia"},
    {"title": "Visiting Gull Rock", "link": "https://travel.example.com/gull", "snippet": "Open in summer."},
    {"title": "No snippet", "link": "https://x.example.net/"},
]


def _live(fw: FakeWeb, **kw: Any) -> WebSession:
    return WebSession("live", LiveBackend(env=fw.env(), allowed_origins=(fw.base,), **kw))


def test_text_search_request_and_output_are_the_references(tmp_path: Path) -> None:
    async def go(fw: FakeWeb) -> str:
        async with opened(_live(fw)):
            return (await call(toolbox(tmp_path), "text_search", query="gull rock lighthouse")).text

    with FakeWeb(organic=ORGANIC) as fw:
        text = asyncio.run(go(fw))
        req = next(s for s in fw.seen if s.path == "/search")
    assert req.body == {"q": "gull rock lighthouse", "num": 5, "extendParams": {"country": "en", "page": 1}}
    assert req.headers["X-API-KEY"] == "test-key" and req.headers["Content-Type"] == "application/json"
    assert text == (
        "A Google search for 'gull rock lighthouse' found 3 results:\n\n## Web Results\n"
        "1. [Gull Rock Lighthouse - Wikipedia](https://en.example.org/wiki/Gull_Rock)\nDate published: Mar 3, 2021"
        "\nSource: Wikipedia\n\nGull Rock is a lighthouse... \n\n"
        "2. [Visiting Gull Rock](https://travel.example.com/gull)\n\nOpen in summer.\n\n"
        "3. [No snippet](https://x.example.net/)\n"
    )


def test_no_text_results_and_throttling(tmp_path: Path) -> None:
    async def go(fw: FakeWeb) -> str:
        async with opened(_live(fw)):
            return (await call(toolbox(tmp_path), "text_search", query="nothing at all")).text

    with FakeWeb(throttle_first=2) as fw:  # two 429s (Retry-After: 0), then an empty result
        text = asyncio.run(go(fw))
        assert len([s for s in fw.seen if s.path == "/search"]) == 3
    assert text == "No results found for 'nothing at all'. Try with a more general query, or remove the year filter."


def test_image_search_inlines_downloaded_images_in_the_reference_layout(tmp_path: Path) -> None:
    async def go(fw: FakeWeb) -> Any:
        async with opened(_live(fw)):
            return await call(toolbox(tmp_path), "image_search", query="gull rock")

    with FakeWeb() as fw:
        fw.images = [
            {"title": "Gull Rock at dusk", "imageUrl": f"{fw.base}/img/a.png", "link": "https://p.example/a"},
            {"title": "Broken link", "imageUrl": f"{fw.base}/img/missing.png", "link": "https://p.example/b"},
            {"title": "Not an image", "imageUrl": f"{fw.base}/img/text.png", "link": "https://p.example/c"},
            {"title": "Fourth (dropped: top 3)", "imageUrl": f"{fw.base}/img/a.png", "link": "https://p.example/d"},
        ]
        fw.pages["/img/a.png"] = (200, "image/png", png(picture(5)), {})
        fw.pages["/img/text.png"] = (200, "image/png", b"<html>not a png</html>", {})
        res = asyncio.run(go(fw))
        assert [s.body for s in fw.seen if s.path == "/images"] == [{"q": "gull rock"}]
    assert res.text == (f"```\nImage: {fw.base}/img/a.png, Title: Gull Rock at dusk, Webpage Url: https://p.example/a\n\n"
                        f"Image: {fw.base}/img/missing.png, Title: Broken link, Webpage Url: https://p.example/b\n\n"
                        f"Image: {fw.base}/img/text.png, Title: Not an image, Webpage Url: https://p.example/c\n```")
    parts = res.extra["parts"]
    assert [p["type"] for p in parts] == ["text", "image", "text", "text"]  # only the loadable image
    assert parts[0]["text"] == "The title of webpage: Gull Rock at dusk \n Image:"
    assert parts[2]["text"] == f"The url of image: {fw.base}/img/a.png \n"
    assert parts[3]["text"] == "The url of webpage: https://p.example/a"
    assert len(res.artifacts) == 1 and res.artifacts[0].id == parts[1]["artifact"]


def test_reverse_search_request_and_the_reference_quirks(tmp_path: Path) -> None:
    async def go(fw: FakeWeb) -> list[str]:
        async with opened(_live(fw)):
            box = toolbox(tmp_path)
            out = [(await call(box, "reverse_image_search", image_url="https://img.example.org/q.jpg")).text]
            fw.lens = [{"title": "Only a title", "link": "https://p.example/x"}]
            out.append((await call(box, "reverse_image_search", image_url="https://img.example.org/q2.jpg")).text)
            fw.lens = []
            out.append((await call(box, "reverse_image_search", image_url="https://img.example.org/q3.jpg")).text)
            out.append((await call(box, "reverse_image_search", image_url="http://10.0.0.1/x.jpg")).text)
            return out

    with FakeWeb(lens=[{"title": "Hit", "link": "https://p.example/h", "imageUrl": "https://i.example/h.jpg"}]) as fw:
        texts = asyncio.run(go(fw))
        bodies = [s.body for s in fw.seen if s.path == "/lens"]
    assert bodies == [{"url": "https://img.example.org/q.jpg"}, {"url": "https://img.example.org/q2.jpg"},
                      {"url": "https://img.example.org/q3.jpg"}]  # the private URL never reached the API
    assert texts[0] == "```\nImage: https://i.example/h.jpg, Title: Hit, Webpage Url: https://p.example/h\n```"
    assert texts[1] == "```\n\n```"  # no imageUrl: the reference unpacks its parse in the wrong order
    assert texts[2] == "No image found: [], [], []"
    assert texts[3] == "No image found: [], [], []"


def test_visit_reads_through_jina_and_summarises_with_the_extractor_prompt(tmp_path: Path) -> None:
    """VisBrowse-Bench's visit (its own tool set) sends the reference's extractor prompt."""
    prompts: list[str] = []
    replies = iter(["", "ok", 'Sure! {"rational": "r", "evidence": ["lit in 1857"], "summary": "It was lit in 1857."}'])

    async def complete(prompt: str, attempt: int, parts: bool = False) -> str:
        prompts.append(prompt)
        return next(replies)

    async def go(fw: FakeWeb) -> str:
        s = WebSession("live", LiveBackend(env=fw.env()), summarizer=complete, summarizer_name="test/summ")
        async with opened(s):
            box = Toolbox(reference_tools(), ArtifactStore(tmp_path / "t"), "t")
            return (await call(box, "visit", url="https://lights.example.org/gull", goal="year lit")).text

    with FakeWeb(jina_text=lambda u: "Title: Gull\n\nURL Source: x\n\nMarkdown Content:\n" + "lit in 1857. " * 20) as fw:
        text = asyncio.run(go(fw))
        jina = [s for s in fw.seen if s.path.startswith("/r/")]
    assert [s.path for s in jina] == ["/r/https://lights.example.org/gull"]
    assert jina[0].headers["Authorization"] == "Bearer jina-key" and jina[0].headers["X-With-Generated-Alt"] == "true"
    # "" is retried inside call_server; "ok" (< 10 chars) triggers the 70 % truncation retry
    assert len(prompts) == 3 and len(prompts[2]) < len(prompts[0])
    assert prompts[0].startswith("Please process the following webpage content and user goal to extract relevant "
                                 "information:\n\n## **Webpage Content** \nTitle: Gull")
    assert prompts[0].endswith('## **User Goal**\nyear lit\n\n## **Task Guidelines**\n1. **Content Scanning for '
                               'Rational**: Locate the **specific sections/data** directly related to the user\'s goal '
                               'within the webpage content\n2. **Key Extraction for Evidence**: Identify and extract the '
                               '**most relevant information** from the content, you never miss any important '
                               'information, output the **full original context** of the content as far as possible, '
                               'it can be more than three paragraphs.\n3. **Summary Output for Summary**: Organize into '
                               'a concise paragraph with logical flow, prioritizing clarity and judge the contribution '
                               'of the information to the goal.\n\n**Final Output Format using JSON format has '
                               '"rational", "evidence", "summary" feilds**\n')
    assert text == ("The useful information in https://lights.example.org/gull for user goal year lit as follows: "
                    "\n\nEvidence in page: \n['lit in 1857']\n\nSummary: \nIt was lit in 1857.")


def test_the_generic_visit_summarises_with_its_own_prompt(tmp_path: Path) -> None:
    prompts: list[str] = []

    async def complete(prompt: str, attempt: int, parts: bool = False) -> str:
        prompts.append(prompt)
        return '{"evidence": "lit in 1857", "summary": "It was lit in 1857."}'

    async def go(fw: FakeWeb) -> str:
        s = WebSession("live", LiveBackend(env=fw.env()), summarizer=complete, summarizer_name="test/summ")
        async with opened(s):
            return (await call(toolbox(tmp_path), "visit", url="https://lights.example.org/gull", goal="year lit")).text

    with FakeWeb(jina_text=lambda u: "Title: Gull\n\nMarkdown Content:\nlit in 1857.") as fw:
        text = asyncio.run(go(fw))
    assert prompts == [GOAL_SUMMARY_PROMPT.format(webpage_content="Title: Gull\n\nMarkdown Content:\nlit in 1857.",
                                                  goal="year lit")]
    assert "Please process" not in prompts[0]
    assert text.endswith("Evidence in page: \nlit in 1857\n\nSummary: \nIt was lit in 1857.")


def test_summariser_without_json_gives_the_reference_failure_frame(tmp_path: Path) -> None:
    async def complete(prompt: str, attempt: int, parts: bool = False) -> str:
        return "I could not find it, sorry about that."

    async def go(fw: FakeWeb) -> tuple[str, bool]:
        s = WebSession("live", LiveBackend(env=fw.env()), summarizer=complete, summarizer_name="test/summ")
        async with opened(s):
            r = await call(toolbox(tmp_path), "visit", url="https://lights.example.org/gull", goal="g")
            return r.text, r.ok

    with FakeWeb() as fw:
        text, ok = asyncio.run(go(fw))
    assert not ok
    assert text == ("The useful information in https://lights.example.org/gull for user goal g as follows: \n\n"
                    "Evidence in page: \nThe provided webpage content could not be accessed. Please check the URL or "
                    "file format.\n\nSummary: \nThe webpage content could not be processed, and therefore, no "
                    "information is available.")


def test_keyless_live_backend_says_reverse_search_needs_a_key() -> None:
    async def go() -> str:
        b = LiveBackend(env={})  # ddgs for text/image search; no Serper key
        assert b.describe()["search"] == "ddgs" and b.describe()["reader"] == "direct+trafilatura"
        try:
            await b.reverse_image_search("https://img.example.org/a.jpg", 3, None)
        except Exception as exc:
            return str(exc)
        finally:
            await b.aclose()
        return ""

    assert "needs SERPER_API_KEY" in asyncio.run(go())


def test_manifest_description_names_the_backend(tmp_path: Path) -> None:
    with FakeWeb() as fw:
        d = _live(fw).describe()
    assert d["mode"] == "live" and d["backend"]["search"] == "serper" and d["backend"]["reader"] == "jina"
    assert json.dumps(d)  # JSON-able for the manifest


def test_live_reverse_search_sends_dataset_urls_but_not_local_crops(tmp_path: Path) -> None:
    dataset_url = "https://raw.example.org/repo/images/1.png"

    async def go(fw: FakeWeb) -> tuple[str, Any]:
        async with opened(_live(fw)) as s:
            s.alias(dataset_url, png(picture(3)))  # a task's input image, also served locally
            box = toolbox(tmp_path)
            first = (await call(box, "reverse_image_search", image_url=dataset_url)).text
            crop = await call(box, "image_crop", image_url=dataset_url, bbox=[0.1, 0.1, 0.6, 0.6])
            url = crop.text.removeprefix("The url of cropped image: ")
            return first, await call(box, "reverse_image_search", image_url=url)

    with FakeWeb(lens=[{"title": "Hit", "link": "https://p.example/h", "imageUrl": "https://i.example/h.jpg"}]) as fw:
        first, second = asyncio.run(go(fw))
        bodies = [s.body for s in fw.seen if s.path == "/lens"]
    assert bodies == [{"url": dataset_url}]  # the crop's local URL never went to the API
    assert first.startswith("```\nImage: https://i.example/h.jpg")
    # not the reference's empty hit list: the model is told why this search cannot run (issue 25 item 9)
    assert "img.toolsight.test" in second.text and "no upload backend is configured" in second.text and not second.ok
    assert "TOOLSIGHT_UPLOAD" in second.text and "No image found" not in second.text
