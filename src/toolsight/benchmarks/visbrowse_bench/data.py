"""VisBrowse-Bench data: the official JSONL (decrypted with its canary), its images, dataset folders.

Data (`--data PATH`): the repository folder (`data/VisBrowse-Bench.jsonl` + `VisBrowse_Bench_images/`),
the JSONL file itself (encrypted as released, or decrypted with the reference `decrypt_data.py`), or a
toolsight dataset folder such as one written by `toolsight generate browse` (tasks.jsonl + a
`corpus/` folder that becomes the default offline web). Images come from the repository folder;
missing ones are downloaded once from the record's URLs into the cache
(`$TOOLSIGHT_CACHE/visbrowse-bench/`) — by a run, only for the tasks it selects (`open_visbrowse`). Each task keeps its image URLs (`meta.image_urls`): the
prompt names them and toolsight's image host serves them, so the tools work on them offline too.
Domains and sub-domains become the tags `domain` and `sub_domain`; tasks with two answers keep
them as a list (the judge joins them with "; ").
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolsight.benchmarks.base import BenchmarkError
from toolsight.benchmarks.visbrowse_bench.scorer import VisBrowseDataError, decrypt_record
from toolsight.tasks.dataset import cache_root as dataset_cache_root
from toolsight.tasks.schema import ImageRef, Task, Turn

BENCHMARK = "visbrowse-bench"
JSONL = "VisBrowse-Bench.jsonl"
IMAGES = "VisBrowse_Bench_images"
REPO = "https://github.com/ZhengboZhang/VisBrowse-Bench"

#: paper Table 2 column order
DOMAINS = ["Media", "Life", "Art", "Geography", "Technology", "Sport", "Finance"]
SUB_DOMAINS = [
    "Cartoon", "Film", "TV",
    "Diet", "Entertainment", "Fashion", "News",
    "Artist", "Handicrafts", "Music", "Painting",
    "Historical Geography", "Human Geography", "Political Geography",
    "Academic achievement", "Electronic product", "Technology company", "Vehicle",
    "Esports", "Sports events", "Sports stars",
    "Financial institutions", "Investment and Market", "People & Social",
]


class VisBrowseError(BenchmarkError):
    """A user-fixable problem with VisBrowse-Bench data (names the file, line and fix)."""




def cache_root() -> Path:
    return dataset_cache_root() / BENCHMARK


def find_jsonl(path: Path) -> Path:
    if path.is_file():
        return path
    for c in (path / JSONL, path / "data" / JSONL):
        if c.is_file():
            return c
    found = sorted([*path.glob("*.jsonl"), *path.glob("data/*.jsonl")])
    if len(found) == 1:
        return found[0]
    if not found:
        raise VisBrowseError(f"no {JSONL} in {path} or {path / 'data'}; --data must be the VisBrowse-Bench folder "
                             f"(git clone {REPO}), its JSONL file, or a dataset folder with tasks.jsonl")
    raise VisBrowseError(f"{path} holds several JSONL files ({', '.join(p.name for p in found)}); pass one with --data")


def _image_dirs(jsonl: Path) -> list[Path]:
    return [d / IMAGES for d in (jsonl.parent, jsonl.parent.parent)] + [cache_root() / IMAGES]


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _is_encrypted(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _str_list(rec: dict[str, Any], key: str, where: str) -> list[str]:
    v = rec.get(key)
    if not isinstance(v, list) or not v or not all(isinstance(x, str) and x for x in v):
        raise VisBrowseError(f"{where}: '{key}' must be a non-empty list of strings, got {v!r:.80}")
    return list(v)


def read_records(jsonl: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, decrypted record) for every line; a bad line is one error naming file, line and id.

    A file is encrypted when its first record's question is strict base64 (as released); then every
    record must decrypt with its canary to UTF-8 text.
    """
    rows: list[tuple[int, dict[str, Any]]] = []
    encrypted: bool | None = None
    seen: dict[str, int] = {}
    with jsonl.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{jsonl}:{n}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise VisBrowseError(f"{where}: not JSON ({exc.msg} at column {exc.colno}); the line is damaged — "
                                     f"re-download {JSONL}") from None
            if not isinstance(rec, dict):
                raise VisBrowseError(f"{where}: expected a JSON object")
            for key in ("id", "question", "image", "answer", "domain", "sub_domain"):
                if key not in rec:
                    raise VisBrowseError(f"{where}: missing field {key!r}")
            where = f"{where} (id {rec['id']})"
            if not isinstance(rec["question"], str) or not rec["question"]:
                raise VisBrowseError(f"{where}: 'question' must be a non-empty string")
            _str_list(rec, "answer", where)
            _str_list(rec, "image", where)
            if encrypted is None:
                encrypted = _is_encrypted(rec["question"])
            if encrypted:
                if "canary" not in rec:
                    raise VisBrowseError(f"{where}: encrypted record without a 'canary' to decrypt it")
                for field_name, value in [("question", rec["question"]), *[("answer", a) for a in rec["answer"]]]:
                    if not _is_encrypted(value):  # the reference decoder would silently drop bad characters
                        raise VisBrowseError(f"{where}: {field_name} is not valid base64; the record is damaged — "
                                             f"re-download {JSONL}")
                try:
                    rec = decrypt_record(rec, where)
                except VisBrowseDataError as exc:
                    raise VisBrowseError(f"{exc}; the record is damaged or its canary is wrong — re-download "
                                         f"{JSONL}") from None
                if _CONTROL.search(rec["question"]) or any(_CONTROL.search(a) for a in rec["answer"]):
                    raise VisBrowseError(f"{where}: the question or answer decrypts to control characters; the "
                                         "record is damaged or its canary is wrong")
            key = str(rec["id"])
            if key in seen:
                raise VisBrowseError(f"{where}: duplicate id {key} (first on line {seen[key]})")
            seen[key] = n
            rows.append((n, rec))
    if not rows:
        raise VisBrowseError(f"{jsonl}: no records")
    return rows


def _file_name(url: str, where: str) -> str:
    name = Path(urlsplit(url).path).name
    if not name or not re.fullmatch(r"[\w.-]+", name):
        raise VisBrowseError(f"{where}: cannot take an image file name from {url!r}")
    return name


class _Offline(Exception):
    """The image host could not be reached at all (no network, refused, no DNS, timed out): stop trying."""


def _download(url: str, dest: Path) -> bool:
    """Fetch one image URL (http/https only) into `dest`; False when it fails, `_Offline` when its host
    cannot be reached (the other downloads would only wait for the same time-outs)."""
    import httpx

    from toolsight.web.policy import check_syntax
    from toolsight.web.types import UrlRefused

    try:
        check_syntax(url)
        resp = httpx.get(url, timeout=30.0, follow_redirects=True)
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise _Offline(f"{urlsplit(url).netloc} unreachable ({' '.join(str(exc).split()) or type(exc).__name__})") from None
    except (UrlRefused, httpx.HTTPError):
        return False
    if resp.status_code != 200 or not resp.content:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".part")
    tmp.write_bytes(resp.content)
    os.replace(tmp, dest)
    return True


def _needed(rows: list[tuple[int, dict[str, Any]]], jsonl: Path) -> dict[str, str]:
    """image file name -> URL, for every image the records name (in record order)."""
    needed: dict[str, str] = {}
    for n, rec in rows:
        for url in rec["image"]:
            needed.setdefault(_file_name(url, f"{jsonl}:{n}"), url)
    return needed


def image_root(needed: dict[str, str], jsonl: Path) -> tuple[Path, bool]:
    """(the folder that holds `VisBrowse_Bench_images/`, whether its images must be fetched first):
    the repository folder when it holds every image, else the cache (filled by `fetch_images`)."""
    dirs = _image_dirs(jsonl)
    local = next((d for d in dirs[:2] if d.is_dir() and all((d / f).is_file() for f in needed)), None)
    if local is not None:
        return local.parent, False
    return dirs[2].parent, True


def fetch_images(needed: dict[str, str], jsonl: Path, download: bool = True) -> None:
    """Put the images `needed` (file name -> URL) into the cache: copied from the repository folder
    when there, else downloaded (when allowed); one error naming the missing ones."""
    dirs = _image_dirs(jsonl)
    cache = dirs[2]
    missing: list[str] = []
    offline: str | None = None
    for name, url in needed.items():
        dest = cache / name
        if dest.is_file():
            continue
        src = next((d / name for d in dirs[:2] if (d / name).is_file()), None)
        if src is not None:
            cache.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            continue
        try:
            if not (download and offline is None and _download(url, dest)):
                missing.append(name)
        except _Offline as exc:  # one unreachable host: the rest are not tried (each would wait as long)
            offline = str(exc)
            missing.append(name)
    if missing:
        why = (f"; downloading stopped at the first: {offline}, so {len(missing) - 1} were not tried"
               if offline else "")
        raise VisBrowseError(
            f"{len(missing)} image(s) not found next to {jsonl} ({IMAGES}/) or in the cache {cache} and not "
            f"downloadable (e.g. {', '.join(missing[:5])}){why}; clone {REPO} and pass its folder with --data")


def resolve_images(rows: list[tuple[int, dict[str, Any]]], jsonl: Path, download: bool = True) -> Path:
    """The folder that holds `VisBrowse_Bench_images/` with every referenced image (downloading the
    missing ones into the cache when allowed)."""
    needed = _needed(rows, jsonl)
    root, fetch = image_root(needed, jsonl)
    if fetch:
        fetch_images(needed, jsonl, download)
    return root


@dataclass
class VisBrowseData:
    """The official file's tasks, before any image is fetched: a run fetches only the images of
    the tasks it selects (`fetch`), so `--limit 2` waits for two tasks' images, not 169."""

    tasks: list[Task]
    root: Path
    jsonl: Path
    #: images to fetch into `root` before a task can run: path under the root -> URL (empty: all local)
    remote: dict[str, str] = field(default_factory=dict)

    def fetch(self, tasks: Sequence[Task]) -> None:
        """Copy or download the images of `tasks` that are not in the cache yet (VisBrowseError if some cannot be had)."""
        wanted = {rel: self.remote[rel] for t in tasks for rel in t.image_paths() if rel in self.remote}
        fetch_images({rel.removeprefix(f"{IMAGES}/"): url for rel, url in wanted.items()}, self.jsonl)


def open_visbrowse(path: Path | str) -> VisBrowseData:
    """The tasks of the official format, with the images they still need fetched (see `VisBrowseData`)."""
    jsonl = find_jsonl(Path(path))
    rows = read_records(jsonl)
    needed = _needed(rows, jsonl)
    root, remote = image_root(needed, jsonl)
    return VisBrowseData(_tasks(rows, jsonl), root, jsonl,
                         {f"{IMAGES}/{name}": url for name, url in needed.items()} if remote else {})


def load_visbrowse(path: Path | str, download: bool = True) -> tuple[list[Task], Path, Path]:
    """(tasks, image root, JSONL file) from the official format, with every image fetched."""
    jsonl = find_jsonl(Path(path))
    rows = read_records(jsonl)
    root = resolve_images(rows, jsonl, download)
    return _tasks(rows, jsonl), root, jsonl


def _tasks(rows: list[tuple[int, dict[str, Any]]], jsonl: Path) -> list[Task]:
    tasks: list[Task] = []
    for n, rec in rows:
        where = f"{jsonl}:{n} (id {rec['id']})"
        names = [_file_name(u, where) for u in rec["image"]]
        answers: list[str] = list(rec["answer"])
        try:
            turn = Turn(prompt=rec["question"], images=[ImageRef(path=f"{IMAGES}/{x}") for x in names],
                        answer=answers if len(answers) > 1 else answers[0],
                        meta={"question": rec["question"], "image_urls": list(rec["image"])})
            tasks.append(Task(id=str(rec["id"]), benchmark=BENCHMARK, turns=[turn], tags={
                "domain": str(rec["domain"]), "sub_domain": str(rec["sub_domain"]),
                "n_images": str(len(names)), "n_answers": str(len(answers))}))
        except ValueError as exc:
            raise VisBrowseError(f"{where}: {exc}") from None
    return tasks
