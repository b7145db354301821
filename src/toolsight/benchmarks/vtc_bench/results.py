"""How the VTC-Bench driver turns a tool's text result into content items (its image handling).

`FnCallAgent._process_tool_result_with_images` of the driver's Qwen-Agent fork: image paths named
in a text result — markdown images `![fig-001](/abs/x.png)` (the code interpreter's displayed
images) and bare absolute paths ending in .png/.jpg/.jpeg/.webp (a printed `os.path.abspath`) — are
attached after the text as "The saved image path is: <path>" and the image. Used by the official
loop for every text result and by the official `code_interpreter` itself (so it can register the
images it returns as artifacts). The workspace plays the driver's working folder; a path outside it
is treated as a file that does not exist.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from toolsight.benchmarks.vtc_bench.qwen import Item, basename
from toolsight.benchmarks.vtc_bench.tools.interface import inside

_MD_IMAGE = re.compile(r"!\[[^\]]*\]\(([^\)]+)\)")
_PATH = re.compile(r"(?:(?:file://)?(?:/[^\s\)]+\.(?:png|jpg|jpeg|webp))|(?:https?://[^\s\)]+\.(?:png|jpg|jpeg|webp)))",
                   re.IGNORECASE)


def _is_image_name(path: str) -> bool:
    name = basename(path).lower()
    return any(name.endswith(ext) for ext in ("jpg", "jpeg", "png", "webp"))


def images_in_text(result: str, ws: Path) -> str | list[Item]:
    """`_process_tool_result_with_images`: image paths named in a text result become image items."""
    paths = _MD_IMAGE.findall(result)
    paths += [m for m in _PATH.findall(result) if m not in paths]
    paths = [p for p in paths if _is_image_name(p)]
    if not paths:
        return result
    items: list[Item] = []
    if result.strip():
        text = _MD_IMAGE.sub("", result).strip()
        if text:
            items.append(Item(text=text))
    for p in paths:
        if p.startswith(("http://", "https://", "data:")):
            items.append(Item(image=p))
            continue
        full = Path(p) if os.path.isabs(p) else ws / p
        if not full.exists() or not inside(full, ws):  # files outside the workspace do not exist here
            continue
        items.append(Item(text=f"The saved image path is: {os.path.abspath(full)}"))
        items.append(Item(image=os.path.abspath(full)))
    if not items or (len(items) == 1 and items[0].text):
        return result
    return items


__all__ = ["images_in_text"]
