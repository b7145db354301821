"""Browsing tools on the web layer: text_search, image_search, reverse_image_search, visit, image_crop.

Names and output text are the VisBrowse-Bench reference's (`tool_util.py`, `tools/tool_*.py` @
10b95c0c), byte for byte — including its quirks (an image search hit without an image URL prints an
empty block; reverse search without hits prints Python list reprs). The descriptions and schemas
(`SCHEMAS`) and the page summariser's prompt are toolsight's; a benchmark that shows its reference's
texts builds these tools with its own (`WebTool(description, parameters)`, `Visit(summary_prompt=)`)
in a tool set it declares. The paper's names `crop_image` and `webpage_visit` are accepted as aliases. Every tool goes through
the run's `WebSession` (live, offline corpus or replay), so the same calls work on the real web,
on a local corpus, and from a recording.

Each result also carries `extra["parts"]`: the reference agent loop's tool-message content — text
parts and images (by artifact id) in its order — so a loop that reproduces the reference can send
it as is, while the generic loop uses the text and the image artifacts.

Where toolsight differs (docs/fidelity.md): `image_crop` uploads the crop only in live mode with an
upload backend (`TOOLSIGHT_UPLOAD`: a Hugging Face dataset repository as the reference, or an
S3-compatible bucket), else hosts it on toolsight's local image host
(`https://img.toolsight.test/<sha>.jpg`, which offline and replayed reverse searches read); it also
accepts an image id or workspace file name; failures come back as a failed call the model can read,
never as a crash of the task. A live reverse search of a hosted crop without an upload backend says
why it cannot search instead of returning no hits.
"""

from __future__ import annotations

import io
import re
from typing import Any

from PIL import Image

from toolsight import imaging
from toolsight.tools.base import Artifact, Tool, ToolContext, ToolError, ToolResult
from toolsight.web import current_session
from toolsight.web.summarise import GOAL_SUMMARY_PROMPT, summarise_for_goal
from toolsight.web.types import BudgetExceeded, ImageHit, NotPublic, UrlRefused, WebCallError

#: the tools' descriptions and JSON schemas (toolsight's wording), in the order `browse_tools` offers them;
#: a benchmark that shows its reference's texts passes its own (`WebTool(description, parameters)`)
SCHEMAS: dict[str, dict[str, Any]] = {
    "text_search": {
        "description": "Search the web. Returns the top 5 results, each with title, URL and snippet.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "What to search for."}},
                       "required": ["query"]},
    },
    "reverse_image_search": {
        "description": "Find web pages that show an image: give the image's URL (or an image id from this task); "
                       "returns matching images with their titles and page URLs.",
        "parameters": {"type": "object",
                       "properties": {"image_url": {"type": "string", "description": "The URL or id of the image."}},
                       "required": ["image_url"]},
    },
    "visit": {
        "description": "Read a web page for a goal. Returns evidence from the page and a summary of what it says "
                       "about the goal.",
        "parameters": {"type": "object", "properties": {
            "url": {"type": "string", "description": "The URL of the page."},
            "goal": {"type": "string", "description": "What you want to learn from the page."}},
            "required": ["url", "goal"]},
    },
    "image_search": {
        "description": "Search the web for images. Returns images with their titles, image URLs and page URLs.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "What to search for."}},
                       "required": ["query"]},
    },
    "image_crop": {
        "description": "Crop a region of an image (with a small margin) to look at it closer. Returns the crop and "
                       "its URL, which the other tools accept.",
        "parameters": {"type": "object", "properties": {
            "image_url": {"type": "string", "description": "The URL or id of the image."},
            "bbox": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4,
                     "description": "The region [xmin, ymin, xmax, ymax] in coordinates relative to the image size "
                                    "(0 to 1), (xmin, ymin) the top-left corner."}},
            "required": ["image_url", "bbox"]},
    },
}

SEARCH_BAD_REQUEST = "[Search] Invalid request format: Input must be a JSON object containing 'queries' field"
VISIT_BAD_REQUEST = "[Visit] Invalid request format: Input must be a JSON object containing 'url' and 'goal' fields"
CROP_BAD_REQUEST = "[Crop] Invalid request format: Input must be a JSON object containing 'image_url' and 'bbox'"
SEARCH_TIMEOUT = "Google search Timeout, return None, Please try again later."
PAGE_UNREADABLE_EVIDENCE = "The provided webpage content could not be accessed. Please check the URL or file format."
PAGE_UNREADABLE_SUMMARY = "The webpage content could not be processed, and therefore, no information is available."
NO_SUMMARY_MODEL = ("No summary model is configured (--summary-model), so the evidence above is the page's main "
                    "text as read.")
TEXT_RESULTS = 5
IMAGE_RESULTS = 3
CROP_PADDING = 0.1
CROP_JPEG_QUALITY = 95
MAX_PAGE_CHARS = 150_000  # the reference's WEBCONTENT_MAXLENGTH
MAX_EVIDENCE_CHARS = 20_000  # without a summariser the page text is the evidence; keep the context sane


def _fail(text: str, error: BaseException | str | None = None, **extra: Any) -> ToolResult:
    detail = str(error) if error is not None else text
    return ToolResult(text=text, ok=False, error=detail, extra={"parts": [{"type": "text", "text": text}], **extra})


def _ok(text: str, **extra: Any) -> ToolResult:
    return ToolResult(text=text, extra={"parts": [{"type": "text", "text": text}], **extra})


class WebTool(Tool):
    """A browsing tool; subclasses implement `call`. `description` and `parameters` replace the texts of
    `SCHEMAS` (a schema given must keep the tool's argument names)."""

    tool_name = ""

    def __init__(self, description: str | None = None, parameters: dict[str, Any] | None = None) -> None:
        spec = SCHEMAS[self.tool_name]
        super().__init__(self.tool_name, description or spec["description"], parameters or spec["parameters"])

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            return await self.call(args, ctx)
        except BudgetExceeded as exc:
            return _fail(str(exc), exc)

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


# ---------------------------------------------------------------------------------------- search


def format_text_results(query: str, hits: list[Any]) -> str:
    """`tool_text_search.google_search`'s text for a list of SearchHit."""
    snippets: list[str] = []
    for idx, page in enumerate(hits, 1):
        date = f"\nDate published: {page.date}" if page.date is not None else ""
        source = f"\nSource: {page.source}" if page.source is not None else ""
        snippet = f"\n{page.snippet}" if page.snippet is not None else ""
        line = f"{idx}. [{page.title}]({page.link}){date}{source}\n{snippet}"
        snippets.append(line.replace("Your browser can't play this video.", ""))
    return (f"A Google search for '{query}' found {len(snippets)} results:\n\n## Web Results\n"
            + "\n\n".join(snippets))


def no_text_results(query: str) -> str:
    return f"No results found for '{query}'. Try with a more general query, or remove the year filter."


def _query(args: dict[str, Any], tool_name: str) -> str | ToolResult:
    """A search tool's `query` argument, or the error result the model reads."""
    if "query" not in args:
        return _fail(SEARCH_BAD_REQUEST)
    query = args["query"]
    if not isinstance(query, str):
        return _fail(f"Error in {tool_name}: 'query' must be a string, got {type(query).__name__}")
    return query


class TextSearch(WebTool):
    tool_name = "text_search"

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = _query(args, self.tool_name)
        if isinstance(query, ToolResult):
            return query
        try:
            hits = await current_session().text_search(query, TEXT_RESULTS)
        except BudgetExceeded:
            raise
        except UrlRefused as exc:
            return _fail(str(exc), exc)
        except WebCallError as exc:
            return _fail(SEARCH_TIMEOUT, exc)
        if not hits:
            return _ok(no_text_results(query), hits=0)
        return _ok(format_text_results(query, hits), hits=len(hits))


def parse_image_search_result(hits: list[dict[str, str]]) -> tuple[list[str], list[str], list[str]]:
    """The reference's `parse_image_search_result`, quirk included: without image URLs it returns
    ([], titles, urls), which its callers unpack as (titles, urls, images)."""
    images = [h.get("image_url", "") for h in hits]
    texts = [h.get("title", "") for h in hits]
    urls = [h.get("url", "") for h in hits]
    if all(img == "" for img in images) or images[0] is None:
        if all(t == "" for t in texts) or texts[0] is None:
            return [], [], []
        return [], texts, urls
    return texts, urls, images


def _as_reference_items(hits: list[ImageHit]) -> list[dict[str, str]]:
    return [{"title": h.title, "url": h.page_url, "image_url": h.image_url} for h in hits]


def image_lines(search_images: list[str], search_texts: list[str], search_urls: list[str]) -> str:
    lines = [f"Image: {img}, Title: {txt}, Webpage Url: {url}"
             for img, txt, url in zip(search_images, search_texts, search_urls, strict=False)]
    return "```\n" + "\n\n".join(lines) + "\n```"


def format_image_results(query: str, hits: list[ImageHit]) -> str:
    """`tool_image_search.image_search`'s text."""
    search_texts, search_urls, search_images = parse_image_search_result(_as_reference_items(hits))
    if len(search_images) > 0:
        return image_lines(search_images, search_texts, search_urls)
    return f"[SearchImage] No image found: {query}"


def format_reverse_results(hits: list[ImageHit]) -> str:
    """`tool_reverse_image_search.reverse_image_search`'s text."""
    items = _as_reference_items(hits)
    search_texts, search_urls, search_images = parse_image_search_result(items)
    if len(search_images) > 0:
        return image_lines(search_images, search_texts, search_urls)
    if len(search_images) == 0 and len(search_texts) > 0:  # unreachable in the reference too (see above)
        lines = [f"Title: {t}, Webpage Url: {u}" for t, u in zip(search_texts, search_urls, strict=False)]
        return "```\n" + "\n\n".join(lines) + "\n```"
    return f"No image found: {search_images}, {search_texts}, {items}"


_IMG = re.compile(r"Image: (.*?), Title:")
_TITLE = re.compile(r"Title: (.*?), Webpage Url:")
_WEB = re.compile(r"Webpage Url: (.+?)(?:\n|$)", re.MULTILINE)


async def image_parts(response: str, ctx: ToolContext, tool: str) -> tuple[list[dict[str, Any]], list[Artifact]]:
    """The reference loop's tool message for an image search: per hit a title, the image (downloaded;
    a hit whose image cannot be loaded is left out), its URL and the page URL; the whole text when no
    hit has an image."""
    session = current_session()
    parts: list[dict[str, Any]] = []
    arts: list[Artifact] = []
    images, titles, pages = _IMG.findall(response), _TITLE.findall(response), _WEB.findall(response)
    if images:
        for title, image_url, web_url in zip(titles, images, pages, strict=False):
            try:
                got = await session.fetch(image_url, kind="image")
            except (WebCallError, BudgetExceeded):
                continue
            if not got.ok:
                continue
            try:
                art = ctx.store.add_bytes(got.body, _suffix(got.body), tool_call_id=ctx.call_id, tool=tool)
            except (OSError, ValueError, Image.DecompressionBombError):
                continue  # not an image: the reference skips it too
            arts.append(art)
            parts += [{"type": "text", "text": f"The title of webpage: {title} \n Image:"},
                      {"type": "image", "artifact": art.id},
                      {"type": "text", "text": f"The url of image: {image_url} \n"},
                      {"type": "text", "text": f"The url of webpage: {web_url}"}]
    if not parts:
        parts = [{"type": "text", "text": response}]
    return parts, arts


def _suffix(data: bytes) -> str:
    try:
        fmt = (imaging.check(data).format or "png").lower()
    except imaging.ImageRejected:
        return ".bin"
    return ".jpg" if fmt == "jpeg" else f".{fmt}"


class ImageSearch(WebTool):
    tool_name = "image_search"

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = _query(args, self.tool_name)
        if isinstance(query, ToolResult):
            return query
        error: WebCallError | None = None
        try:
            hits = await current_session().image_search(query, IMAGE_RESULTS)
        except BudgetExceeded:
            raise
        except WebCallError as exc:  # the reference retries, then returns no results
            hits, error = [], exc
        text = format_image_results(query, hits[:IMAGE_RESULTS])
        parts, arts = await image_parts(text, ctx, self.name)
        return ToolResult(text=text, artifacts=arts, ok=error is None, error=str(error) if error else None,
                          extra={"parts": parts, "hits": len(hits)})


class ReverseImageSearch(WebTool):
    tool_name = "reverse_image_search"

    def startup_warning(self, web: Any) -> str | None:
        if getattr(web, "mode", None) == "live" and getattr(web, "uploader", "") is None:
            return (f"{self.name}: live web without an upload backend: crops (images toolsight hosts) have no public "
                    "URL, so crop-then-reverse-search cannot follow the reference pipeline (it uploads each crop); "
                    "a search of a crop says so. Set TOOLSIGHT_UPLOAD=hf:OWNER/REPO or s3://BUCKET[/PREFIX] "
                    "(docs/web.md)")
        return None

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        image_url = args.get("image_url") or args.get("image")
        error: WebCallError | None = None
        hits: list[ImageHit] = []
        if isinstance(image_url, str) and image_url:
            try:
                url = _hosted_if_artifact(image_url, ctx)
                hits = await current_session().reverse_image_search(url, IMAGE_RESULTS)
            except BudgetExceeded:
                raise
            except NotPublic as exc:  # not the reference's empty result: say why there is none
                return _fail(str(exc), exc)
            except WebCallError as exc:
                error = exc
        text = format_reverse_results(hits[:IMAGE_RESULTS])
        parts, arts = await image_parts(text, ctx, self.name)
        return ToolResult(text=text, artifacts=arts, ok=error is None and bool(image_url),
                          error=str(error) if error else (None if image_url else "no image_url given"),
                          extra={"parts": parts, "hits": len(hits)})


def _hosted_if_artifact(ref: str, ctx: ToolContext) -> str:
    """An image id or workspace file name becomes the hosted URL of that image; a URL stays."""
    if "://" in ref:
        return ref
    try:
        art = ctx.store.resolve(ref)
    except ToolError:
        return ref
    return current_session().host_image(ctx.store.path(art).read_bytes())


# ---------------------------------------------------------------------------------------- visit


def visit_frame(url: str, goal: str, evidence: str, summary: str) -> str:
    out = f"The useful information in {url} for user goal {goal} as follows: \n\n"
    out += "Evidence in page: \n" + evidence + "\n\n"
    out += "Summary: \n" + summary + "\n\n"
    return out.strip()


class Visit(WebTool):
    """`summary_prompt` is the summariser's prompt (`{webpage_content}`, `{goal}`; see web/summarise.py)."""

    tool_name = "visit"
    aliases = ("webpage_visit",)

    def __init__(self, description: str | None = None, parameters: dict[str, Any] | None = None,
                 summary_prompt: str = GOAL_SUMMARY_PROMPT) -> None:
        super().__init__(description, parameters)
        self.summary_prompt = summary_prompt

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if "url" not in args or "goal" not in args:
            return _fail(VISIT_BAD_REQUEST)
        url, goal = args["url"], args["goal"]
        session = current_session()
        try:
            page = await session.read_page(str(url))
            content = page.text
        except BudgetExceeded:
            raise
        except WebCallError as exc:
            return _fail(visit_frame(url, goal, PAGE_UNREADABLE_EVIDENCE, PAGE_UNREADABLE_SUMMARY), exc)
        if not content or content.startswith("[visit] Failed to read page.") or content == "[visit] Empty content.":
            return _fail(visit_frame(url, goal, PAGE_UNREADABLE_EVIDENCE, PAGE_UNREADABLE_SUMMARY), "empty page")
        content = content[:MAX_PAGE_CHARS]
        if not session.has_summarizer:
            return _ok(visit_frame(url, goal, content[:MAX_EVIDENCE_CHARS], NO_SUMMARY_MODEL), summarized=False)
        parsed = await summarise_for_goal(session.complete, content, str(goal), self.summary_prompt)
        if parsed is None:
            return _fail(visit_frame(url, goal, PAGE_UNREADABLE_EVIDENCE, PAGE_UNREADABLE_SUMMARY),
                         "the summary model gave no usable JSON")
        return _ok(visit_frame(url, goal, str(parsed["evidence"]), str(parsed["summary"])), summarized=True)


# ---------------------------------------------------------------------------------------- crop


def padded_box(size: tuple[int, int], box: list[float], padding: float = CROP_PADDING) -> tuple[int, int, int, int]:
    """The reference's crop box: pad by `padding` of the box size per side, truncate to ints, clamp."""
    w, h = size
    xmin, ymin, xmax, ymax = box
    pad_w = (xmax - xmin) * w * padding
    pad_h = (ymax - ymin) * h * padding
    left = max(0, int(xmin * w - pad_w))
    top = max(0, int(ymin * h - pad_h))
    right = min(w, int(xmax * w + pad_w))
    bottom = min(h, int(ymax * h + pad_h))
    return left, top, right, bottom


#: the largest image `image_crop` decodes (pixels): the guarded decoder refuses more before decoding
CROP_MAX_PIXELS = 40_000_000


def crop_jpeg(data: bytes, box: list[float]) -> tuple[bytes, tuple[int, int, int, int]]:
    """Crop image bytes as the reference does (RGB, padded box, JPEG quality 95); the bytes go through
    the guarded decoder (`ImageRejected`, a ValueError, for a bomb or a format it does not accept)."""
    with imaging.open_image(data, max_pixels=CROP_MAX_PIXELS, what="the image") as im:
        img = im.convert("RGB")
    px = padded_box(img.size, box)
    if px[2] <= px[0] or px[3] <= px[1]:
        raise ToolError(f"bbox {box} gives an empty crop of the {img.size[0]}x{img.size[1]} image; use relative "
                        "coordinates [xmin, ymin, xmax, ymax] in 0..1 with xmin < xmax and ymin < ymax")
    buf = io.BytesIO()
    img.crop(px).save(buf, format="JPEG", quality=CROP_JPEG_QUALITY)
    return buf.getvalue(), px


class ImageCrop(WebTool):
    tool_name = "image_crop"
    aliases = ("crop_image",)

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if "image_url" not in args or "bbox" not in args:
            return _fail(CROP_BAD_REQUEST)
        ref, bbox = args["image_url"], args["bbox"]
        if not isinstance(bbox, list) or len(bbox) != 4 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in bbox):
            return _fail(f"[Crop] bbox must be four numbers [xmin, ymin, xmax, ymax] in 0..1, got {bbox!r}")
        if not isinstance(ref, str) or not ref:
            return _fail(CROP_BAD_REQUEST)
        session = current_session()
        parents: list[str] = []
        try:
            if "://" in ref:
                got = await session.fetch(ref, kind="image")
                if not got.ok:
                    return _fail(f"[Crop] could not download {ref} (HTTP {got.status})")
                data = got.body
            else:
                src = ctx.store.resolve(ref)
                data = imaging.read_capped(ctx.store.path(src))
            source = ctx.store.get("img-" + _sha(data)[:12])
            if source is not None:
                parents.append(source.id)
            jpeg, px = crop_jpeg(data, [float(v) for v in bbox])
        except BudgetExceeded:
            raise
        except WebCallError as exc:
            return _fail(f"[Crop] could not download {ref}: {exc}", exc)
        except ToolError as exc:
            return _fail(f"[Crop] {exc}", exc)
        except imaging.ImageRejected as exc:
            return _fail(f"[Crop] {ref}: {exc}", exc)
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            return _fail(f"[Crop] {ref} is not a readable image ({type(exc).__name__})", exc)
        try:
            url = await session.publish(jpeg, ".jpg")  # uploaded (live, with an upload backend) or hosted
        except BudgetExceeded:
            raise
        except WebCallError as exc:
            return _fail(f"[Crop] {exc}", exc)
        art = ctx.store.add_bytes(jpeg, ".jpg", parents=parents, tool_call_id=ctx.call_id, tool=self.name,
                                  size=(px[2] - px[0], px[3] - px[1]))
        text = f"The url of cropped image: {url}"
        return ToolResult(text=text, artifacts=[art], extra={
            "parts": [{"type": "image", "artifact": art.id, "url": url}, {"type": "text", "text": text}],
            "url": url, "box_px": list(px)})


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def browse_tools() -> list[Tool]:
    """The five tools, in the reference's order (the order its `tools` array is sent in)."""
    return [TextSearch(), ReverseImageSearch(), Visit(), ImageSearch(), ImageCrop()]


def browse_text_tools() -> list[Tool]:
    """`+TS`: text search and page visits only."""
    return [TextSearch(), Visit()]
