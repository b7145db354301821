"""A generated mini-web and VisBrowse-style multi-hop tasks over it, for offline runs and tests.

`generate_browse(n, seed, out_dir)` writes a toolsight dataset folder:

    out_dir/tasks.jsonl      tasks (benchmark "visbrowse-bench"), images/ (the query pictures)
    out_dir/corpus/          manifest.json, pages/, images/ — an offline web for `--web offline`

The web has three fictional domains — paintings (Art), films and their posters (Media), devices
(Technology) — with one page per work (picture, facts, links), one page per painter, director or
maker, and unrelated gallery pictures. Pictures are drawn procedurally (seeded), pages come from
one template, URLs use `.test` domains. Each query picture is a 2×2 grid of four works; a task
asks about one of them by its position, so a solver must crop it, find it by reverse image
search, read its page, and for longer tasks search for a person or company (text or image
search) and read that page too.

Each task carries a reference solution, `turn.meta["reference_program"]`: the tool calls in order
(`$input` = the query picture; `{name}` = a value captured by a regex from an earlier call's
result) and the answer template. The `reference` baseline replays it through the real tools; it
never sees the gold answer. Generation replays every program against the corpus and refuses to
write a task its program does not solve.
"""

from __future__ import annotations

import asyncio
import html
import json
import random
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from toolsight.tasks.dataset import write_dataset
from toolsight.tasks.schema import ImageRef, Task, ToolStep, Turn

GENERATOR_VERSION = 1
BENCHMARK = "visbrowse-bench"
QUERY_HOST = "https://uploads.miniweb.test/q/"
POSITIONS = {"top left": (0, 0), "top right": (1, 0), "bottom left": (0, 1), "bottom right": (1, 1)}
CELL = 320  # grid cell (px); each picture is fitted into the central 240 px: a wide plain margin
FIT = 240
BG = (236, 236, 236)

ADJ = ["Red", "Quiet", "Golden", "Hollow", "Silver", "Northern", "Drowned", "Burning", "Patient", "Lonely",
       "Crooked", "Last", "Amber", "Winter", "Sleeping", "Hidden", "Distant", "Copper", "Velvet", "Broken"]
NOUN = ["Heron", "Harbour", "Orchard", "Lantern", "Comet", "Bridge", "Tower", "Fox", "Garden", "River",
        "Mill", "Meadow", "Mirror", "Island", "Station", "Cathedral", "Signal", "Tide", "Forge", "Market"]
MOTIFS = ["a lighthouse", "a red fox", "a stone bridge", "an apple orchard", "a comet", "a windmill",
          "a paper lantern", "a sailing ship", "a clock tower", "a heron", "a glass greenhouse", "a mountain pass"]
FIRST = ["Ines", "Tomas", "Mira", "Oskar", "Lena", "Bruno", "Alma", "Viktor", "Nadia", "Emil", "Rosa", "Felix",
         "Ida", "Karel", "Sonja", "Anton", "Greta", "Jonas", "Vera", "Milo"]
LAST = ["Varga", "Lindqvist", "Okafor", "Marchetti", "Halloran", "Dubrow", "Sato", "Kovalenko", "Ferreira",
        "Novak", "Castell", "Brannigan", "Weiss", "Moreau", "Albescu", "Tanaka", "Holm", "Quintero", "Rusk", "Petrov"]
CITIES = ["Kestrel Bay", "Vell Harbor", "Ostrava Nova", "Port Alder", "Marrow Falls", "Lindenau", "Saltmere",
          "Corvin Hill", "Eastwick Reach", "Bramblegate", "Thornwick", "Cobalt Springs"]
BRANDS = ["Quillon", "Vantor", "Lumeq", "Brightfold", "Nordvik", "Axiom Works", "Halcyon", "Tessel"]
DEVICES = ["Pocket Radio", "Field Camera", "Desk Phone", "Travel Clock", "Audio Player", "Handheld Scanner",
           "Smart Lamp", "Pocket Calculator", "Weather Station", "Label Printer"]
MUSEUMS = ["Kestrel Bay Museum of Art", "Lindenau Gallery", "Saltmere Collection", "Port Alder Kunsthalle"]
STUDIOS = ["Northlight Pictures", "Harbor Films", "Cinder Studio", "Gull & Crane"]


@dataclass(frozen=True)
class DomainSpec:
    domain: str
    sub_domain: str
    site: str
    host: str
    work: str  # "painting"
    ref: str  # how a question names the picture: "the painting in the {pos} of this image"
    made: str  # "painted"
    year_label: str
    creator_label: str
    creator_role: str  # "painter"
    creator_is_company: bool
    origin_q: str  # the birthplace/founding question


SPECS = [
    DomainSpec("Art", "Painting", "ArtVault", "www.artvault.test", "painting", "the painting in the {pos} of this image",
               "painted", "Year", "Artist", "painter", False,
               "In which city was the painter of {ref} born?"),
    DomainSpec("Media", "Film", "ReelArchive", "www.reelarchive.test", "film",
               "the film whose poster is in the {pos} of this image", "released", "Released", "Director", "director",
               False, "In which city was the director of {ref} born?"),
    DomainSpec("Technology", "Electronic product", "GadgetLedger", "www.gadgetledger.test", "device",
               "the device in the {pos} of this image", "released", "Released", "Maker", "maker", True,
               "In which city was the company that makes {ref} founded?"),
]


@dataclass
class Creator:
    name: str
    slug: str
    year: int
    city: str
    url: str
    works: list[Work] = field(default_factory=list)


@dataclass
class Work:
    spec: DomainSpec
    title: str
    slug: str
    year: int
    motif: str
    creator: Creator
    extra: tuple[str, str]
    url: str
    image_url: str
    image_file: str
    date: str


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# --------------------------------------------------------------------------- pictures


def _palette(rng: np.random.Generator, n: int) -> list[tuple[int, int, int]]:
    return [tuple(int(x) for x in rng.integers(20, 236, 3)) for _ in range(n)]  # type: ignore[misc]


def draw_painting(rng: np.random.Generator) -> np.ndarray:
    h, w = 240, 300
    top, bottom = _palette(rng, 2)
    t = np.linspace(0, 1, h)[:, None, None]
    grad = (np.array(top)[None, None, :] * (1 - t) + np.array(bottom)[None, None, :] * t).repeat(w, axis=1)
    img = np.ascontiguousarray(grad.astype(np.uint8))
    for _ in range(int(rng.integers(6, 11))):
        c = _palette(rng, 1)[0]
        kind = int(rng.integers(0, 3))
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        if kind == 0:
            cv2.circle(img, (x, y), int(rng.integers(12, 70)), c, -1, cv2.LINE_AA)
        elif kind == 1:
            cv2.rectangle(img, (x, y), (x + int(rng.integers(20, 120)), y + int(rng.integers(20, 100))), c, -1)
        else:
            pts = rng.integers(0, [w, h], size=(3, 2)).astype(np.int32)
            cv2.fillPoly(img, [pts], c, cv2.LINE_AA)
    return img


def draw_poster(rng: np.random.Generator, title: str) -> np.ndarray:
    h, w = 320, 230
    bg, band, accent = _palette(rng, 3)
    img = np.full((h, w, 3), bg, np.uint8)
    for _ in range(int(rng.integers(2, 5))):
        y = int(rng.integers(0, h))
        cv2.rectangle(img, (0, y), (w, y + int(rng.integers(6, 30))), band, -1)
    cx, cy = int(rng.integers(60, w - 60)), int(rng.integers(90, h - 110))
    if rng.integers(0, 2):
        cv2.circle(img, (cx, cy), int(rng.integers(35, 75)), accent, -1, cv2.LINE_AA)
    else:
        pts = np.array([[cx, cy - 70], [cx - 60, cy + 50], [cx + 60, cy + 50]], np.int32)
        cv2.fillPoly(img, [pts], accent, cv2.LINE_AA)
    words = title.upper().split()
    for i, word in enumerate(words[-2:]):
        cv2.putText(img, word, (12, h - 48 + 24 * i), cv2.FONT_HERSHEY_DUPLEX, 0.7, (250, 250, 250), 2, cv2.LINE_AA)
    return img


def draw_device(rng: np.random.Generator) -> np.ndarray:
    h, w = 280, 280
    img = np.full((h, w, 3), _palette(rng, 1)[0], np.uint8)
    body, screen, knob = _palette(rng, 3)
    bw, bh = int(rng.integers(120, 200)), int(rng.integers(90, 200))
    x0, y0 = (w - bw) // 2, (h - bh) // 2
    cv2.rectangle(img, (x0, y0), (x0 + bw, y0 + bh), body, -1)
    cv2.rectangle(img, (x0 + 12, y0 + 12), (x0 + bw - 12, y0 + bh // 2), screen, -1)
    for _ in range(int(rng.integers(2, 6))):
        cv2.circle(img, (int(rng.integers(x0 + 15, x0 + bw - 15)), int(rng.integers(y0 + bh // 2 + 15, y0 + bh - 10))),
                   int(rng.integers(5, 14)), knob, -1, cv2.LINE_AA)
    return img


def _fit(img: np.ndarray, box: int) -> np.ndarray:
    h, w = img.shape[:2]
    s = box / max(h, w)
    return cv2.resize(img, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)


def compose(pictures: list[np.ndarray], rng: np.random.Generator) -> tuple[np.ndarray, dict[str, list[float]]]:
    """The 2×2 query picture (BGR) and each position's relative box [x1, y1, x2, y2] (3 decimals)."""
    size = 2 * CELL
    canvas = np.full((size, size, 3), BG, np.uint8)
    noise = rng.integers(-2, 3, size=canvas.shape)
    canvas = np.clip(canvas.astype(np.int16) + noise, 0, 255).astype(np.uint8)
    boxes: dict[str, list[float]] = {}
    for (pos, (cx, cy)), pic in zip(POSITIONS.items(), pictures, strict=True):
        fitted = _fit(pic, FIT)
        ph, pw = fitted.shape[:2]
        x0 = cx * CELL + (CELL - pw) // 2
        y0 = cy * CELL + (CELL - ph) // 2
        canvas[y0:y0 + ph, x0:x0 + pw] = fitted
        boxes[pos] = [round(x0 / size, 3), round(y0 / size, 3), round((x0 + pw) / size, 3), round((y0 + ph) / size, 3)]
    return canvas, boxes


def _read(path: Path) -> np.ndarray:
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise RuntimeError(f"could not read the generated picture {path}")
    return img


def _png(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return buf.tobytes()


# --------------------------------------------------------------------------- pages

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} — {site}</title></head>
<body>
<header><nav><a href="https://{host}/">{site}</a> · <a href="https://{host}/index">Index</a> · <a href="https://{host}/about">About</a></nav></header>
<article>
<h1>{h1}</h1>
{figure}<p>{intro}</p>
<ul>
{facts}
</ul>
{body}
</article>
<footer><p>© {site}. All pages on this site are fictional and generated by toolsight.</p></footer>
</body></html>
"""

FILLER = [
    "Archivists catalogued the entry from contemporary notes, exhibition lists and the accounts of people who "
    "worked with it, and the record is revised whenever a new source comes to light.",
    "Visitors often remark on the composition, which rewards a close look: details at the edges carry as much of "
    "the story as the centre does, and several of them are only visible up close.",
    "The entry is part of a larger survey of the period that links each work to the people and places connected "
    "with it, so that readers can follow a thread from one page to the next.",
]


def _li(label: str, value: str, link: str | None = None) -> str:
    v = f'<a href="{link}">{html.escape(value)}</a>' if link else html.escape(value)
    return f"<li>{label}: {v}</li>"


def work_page(w: Work) -> str:
    s = w.spec
    facts = [_li("Title", w.title), _li(s.year_label, str(w.year)),
             _li(s.creator_label, w.creator.name, w.creator.url), _li(w.extra[0], w.extra[1])]
    alt = f"{w.title}: {s.work} showing {w.motif}, by {w.creator.name}"
    figure = (f'<figure><img src="{w.image_url}" alt="{html.escape(alt)}"><figcaption>{html.escape(w.title)} '
              f"({w.year})</figcaption></figure>\n")
    intro = (f"{html.escape(w.title)} is a {s.work} {s.made} in {w.year}. It shows {html.escape(w.motif)}. "
             f"Its {s.creator_role} is <a href=\"{w.creator.url}\">{html.escape(w.creator.name)}</a>.")
    body = "\n".join(f"<p>{p}</p>" for p in FILLER)
    return PAGE.format(title=html.escape(w.title), site=s.site, host=s.host, h1=html.escape(w.title), figure=figure,
                       intro=intro, facts="\n".join(facts), body=body)


def creator_page(c: Creator, s: DomainSpec) -> str:
    label = "Founded" if s.creator_is_company else "Born"
    facts = [_li(label, f"{c.year} in {c.city}")]
    facts += [f'<li>{s.work.capitalize()}: <a href="{w.url}">{html.escape(w.title)}</a> ({w.year})</li>' for w in c.works]
    what = "company" if s.creator_is_company else s.creator_role
    intro = (f"{html.escape(c.name)} is a {what} {'founded' if s.creator_is_company else 'born'} in {c.year} in "
             f"{html.escape(c.city)}. Works listed on {s.site}: {len(c.works)}.")
    body = "\n".join(f"<p>{p}</p>" for p in FILLER[1:])
    return PAGE.format(title=html.escape(c.name), site=s.site, host=s.host, h1=html.escape(c.name), figure="",
                       intro=intro, facts="\n".join(facts), body=body)


# --------------------------------------------------------------------------- the web


@dataclass
class MiniWeb:
    works: dict[str, list[Work]]  # by domain
    creators: list[tuple[Creator, DomainSpec]]
    pages: list[dict[str, Any]]
    images: list[dict[str, Any]]


def build_web(root: Path, seed: int, works_per_domain: int = 10, creators_per_domain: int = 4,
              gallery: int = 8) -> MiniWeb:
    """Write the corpus (pages, pictures, manifest) under `root` and return what it holds."""
    rnd = random.Random(seed)
    nrng = np.random.default_rng(seed)
    (root / "pages").mkdir(parents=True, exist_ok=True)
    (root / "images").mkdir(parents=True, exist_ok=True)
    names = rnd.sample([f"{f} {last}" for f in FIRST for last in LAST], creators_per_domain * 3)
    brands = rnd.sample(BRANDS, creators_per_domain)
    titles = rnd.sample([f"The {a} {n}" for a in ADJ for n in NOUN], works_per_domain * 3)
    devices = rnd.sample([f"{d} {m}" for d in DEVICES for m in ("Mk I", "Mk II", "One", "S", "Pro")], works_per_domain)
    works: dict[str, list[Work]] = {}
    creators: list[tuple[Creator, DomainSpec]] = []
    pages: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for di, s in enumerate(SPECS):
        cs: list[Creator] = []
        for ci in range(creators_per_domain):
            name = brands[ci] if s.creator_is_company else names[di * creators_per_domain + ci]
            slug = slugify(name)
            cs.append(Creator(name=name, slug=slug, year=rnd.randint(1890, 1975), city=rnd.choice(CITIES),
                              url=f"https://{s.host}/{'companies' if s.creator_is_company else 'people'}/{slug}"))
        ws: list[Work] = []
        for wi in range(works_per_domain):
            creator = cs[wi % creators_per_domain]
            used = {w.motif for w in creator.works}
            motif = rnd.choice([m for m in MOTIFS if m not in used])
            title = f"{creator.name} {devices[wi]}" if s.creator_is_company else titles[di * works_per_domain + wi]
            slug = slugify(title)
            extra = (("Collection", rnd.choice(MUSEUMS)) if s.domain == "Art" else ("Studio", rnd.choice(STUDIOS))
                     if s.domain == "Media" else ("Price at launch", f"${rnd.randint(19, 899)}"))
            w = Work(spec=s, title=title, slug=slug, year=rnd.randint(1900, 2020), motif=motif, creator=creator,
                     extra=extra, url=f"https://{s.host}/works/{slug}",
                     image_url=f"https://img.{s.host.removeprefix('www.')}/{slug}.png",
                     image_file=f"images/{s.domain.lower()}-{slug}.png",
                     date=f"{rnd.randint(2015, 2024)}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}")
            creator.works.append(w)
            ws.append(w)
            pic = (draw_painting(nrng) if s.domain == "Art" else draw_poster(nrng, title) if s.domain == "Media"
                   else draw_device(nrng))
            (root / w.image_file).write_bytes(_png(pic))
            images.append({"url": w.image_url, "file": w.image_file, "page": w.url, "title": w.title,
                           "caption": f"{w.title} ({w.year}), a {s.work} showing {w.motif}"})
        works[s.domain] = ws
        for c in cs:
            creators.append((c, s))
        for g in range(gallery):
            slug = f"gallery-{g + 1}"
            f = f"images/{s.domain.lower()}-{slug}.png"
            (root / f).write_bytes(_png(draw_painting(nrng) if g % 2 else draw_device(nrng)))
            images.append({"url": f"https://img.{s.host.removeprefix('www.')}/{slug}.png", "file": f,
                           "page": f"https://{s.host}/index", "title": f"{s.site} gallery picture {g + 1}",
                           "caption": f"Untitled study {g + 1} from the {s.site} archive"})
    for s in SPECS:
        for w in works[s.domain]:
            file = f"pages/{s.domain.lower()}/works/{w.slug}.html"
            (root / file).parent.mkdir(parents=True, exist_ok=True)
            (root / file).write_text(work_page(w), encoding="utf-8")
            pages.append({"url": w.url, "file": file, "date": w.date})
    for c, s in creators:
        file = f"pages/{s.domain.lower()}/{'companies' if s.creator_is_company else 'people'}/{c.slug}.html"
        (root / file).parent.mkdir(parents=True, exist_ok=True)
        (root / file).write_text(creator_page(c, s), encoding="utf-8")
        pages.append({"url": c.url, "file": file})
    for s in SPECS:
        file = f"pages/{s.domain.lower()}/index.html"
        links = "\n".join(f'<li><a href="{w.url}">{html.escape(w.title)}</a></li>' for w in works[s.domain])
        (root / file).write_text(PAGE.format(title="Index", site=s.site, host=s.host, h1=f"{s.site} index", figure="",
                                             intro=f"Every entry on {s.site}.", facts=links, body=""), encoding="utf-8")
        pages.append({"url": f"https://{s.host}/index", "file": file})
    manifest = {"format": "toolsight-corpus/1", "name": f"miniweb-{seed}", "pages": pages, "images": images}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return MiniWeb(works, creators, pages, images)


# --------------------------------------------------------------------------- tasks

CROP = r"The url of cropped image: (\S+)"
PAGE_URL = r"(?:Webpage Url|The url of webpage): (\S+)"
FIRST_LINK = r"\]\((\S+?)\)"


def _program(kind: str, s: DomainSpec, box: list[float], w: Work) -> tuple[list[dict[str, Any]], str]:
    steps: list[dict[str, Any]] = [
        {"tool": "image_crop", "arguments": {"image_url": "$input", "bbox": box}, "capture": {"crop": CROP}},
        {"tool": "reverse_image_search", "arguments": {"image_url": "{crop}"}, "capture": {"page": PAGE_URL}},
    ]
    goal = f"the facts of this {s.work}: title, {s.year_label.lower()} and {s.creator_label.lower()}"
    year = re.escape(s.year_label) + r": (\d{4})"
    who = re.escape(s.creator_label) + r": \[([^\]]+)\]"
    visit_work = {"tool": "visit", "arguments": {"url": "{page}", "goal": goal}}
    if kind == "year":
        steps.append({**visit_work, "capture": {"year": year}})
        return steps, "{year}"
    if kind == "title_year":
        steps.append({**visit_work, "capture": {"title": r"^- Title: ([^\n]+)", "year": year}})
        return steps, "{title}; {year}"
    steps.append({**visit_work, "capture": {"who": who}})
    if kind == "origin":
        label = "Founded" if s.creator_is_company else "Born"
        steps += [
            {"tool": "text_search", "arguments": {"query": "{who}"}, "capture": {"person": FIRST_LINK}},
            {"tool": "visit", "arguments": {"url": "{person}", "goal": f"where {{who}} was {label.lower()}"},
             "capture": {"city": label + r": \d{4} in ([^\n]+)"}},
        ]
        return steps, "{city}"
    # "sibling": another work of the same creator, found by image search on the creator and a motif
    steps.append({"tool": "image_search", "arguments": {"query": "{who} " + _motif_words(w.motif)},
                  "capture": {"other": r"(?:Title: |The title of webpage: )(.*?)(?:, Webpage Url:| \n Image:)"}})
    return steps, "{other}"


def _motif_words(motif: str) -> str:
    return re.sub(r"^(a|an) ", "", motif)


def _question(kind: str, s: DomainSpec, pos: str, w: Work, other: Work | None) -> str:
    ref = s.ref.format(pos=pos)
    if kind == "year":
        return f"In what year was {ref} {s.made}? Answer with the year."
    if kind == "title_year":
        return f"What is the title of {ref}, and in what year was it {s.made}? Give the title and the year."
    if kind == "origin":
        return s.origin_q.format(ref=ref)
    assert other is not None
    return (f"The {s.creator_role} of {ref} also has a {s.work} that shows {other.motif}. "
            f"What is the title of that {s.work}?")


def build_tasks(root: Path, web: MiniWeb, n: int, seed: int,
                progress: Callable[[int], None] | None = None) -> list[Task]:
    rnd = random.Random(seed * 7919 + 1)
    nrng = np.random.default_rng(seed + 1000)
    kinds = ["year", "origin", "sibling", "title_year"]
    (root / "images").mkdir(parents=True, exist_ok=True)
    tasks: list[Task] = []
    for i in range(n):
        kind = kinds[i % len(kinds)]  # any four consecutive tasks cover every kind
        s = SPECS[(i + i // len(kinds)) % len(SPECS)]
        pool = web.works[s.domain]
        for _ in range(200):  # pick four works; for "sibling" the target's creator needs another work
            four = rnd.sample(pool, 4)
            pos = rnd.choice(list(POSITIONS))
            target = four[list(POSITIONS).index(pos)]
            others = [w for w in target.creator.works if w is not target]
            if kind != "sibling" or others:
                break
        other = rnd.choice(others) if kind == "sibling" else None
        pics = [_read(root / "corpus" / w.image_file) for w in four]
        canvas, boxes = compose(pics, nrng)
        task_id = f"browse-{seed}-{i + 1:03d}"
        rel = f"images/{task_id}.png"
        (root / rel).write_bytes(_png(canvas))
        steps, answer = _program(kind, s, boxes[pos], other or target)
        question = _question(kind, s, pos, target, other)
        gold: str | list[str]
        if kind == "year":
            gold = str(target.year)
        elif kind == "title_year":
            gold = [target.title, str(target.year)]
        elif kind == "origin":
            gold = target.creator.city
        else:
            assert other is not None
            gold = other.title
        turn = Turn(prompt=question, images=[ImageRef(path=rel)], answer=gold,
                    reference_steps=[ToolStep(tool=st["tool"]) for st in steps],
                    meta={"question": question, "image_urls": [f"{QUERY_HOST}{task_id}.png"],
                          "reference_program": {"steps": steps, "answer": answer}, "target": target.url})
        tasks.append(Task(id=task_id, benchmark=BENCHMARK, turns=[turn], tags={
            "domain": s.domain, "sub_domain": s.sub_domain, "kind": kind, "hops": str(len(steps))}))
        if progress is not None:
            progress(len(tasks))
    return tasks


def generate_browse(n: int, seed: int, out_dir: Path | str, verify: bool = True,
                    progress: Callable[[int], None] | None = None) -> list[Task]:
    """Write the mini-web and `n` tasks to `out_dir` (replaced atomically); see the module docstring."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".browse-", dir=out.parent))
    try:
        web = build_web(tmp / "corpus", seed)
        tasks = build_tasks(tmp, web, n, seed, progress=progress)
        write_dataset(tmp, tasks)
        if verify:
            bad = asyncio.run(verify_browse(tmp, tasks))
            if bad:
                raise RuntimeError("generated browse tasks not solved by their reference programs: " + "; ".join(bad[:5]))
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return tasks


async def verify_browse(root: Path, tasks: list[Task]) -> list[str]:
    """Run every task's reference program through the real tools on the offline corpus; the problems."""
    from toolsight.benchmarks.visbrowse_bench.tools import reference_tools
    from toolsight.tools.base import ArtifactStore, Toolbox
    from toolsight.web import use_session
    from toolsight.web.offline import CorpusBackend
    from toolsight.web.server import LocalServer
    from toolsight.web.session import WebSession

    problems: list[str] = []
    with tempfile.TemporaryDirectory() as td:
        server = LocalServer(root / "corpus")
        async with WebSession("offline", CorpusBackend(root / "corpus", server), server=server) as session:
            with use_session(session):
                for t in tasks:
                    store = ArtifactStore(Path(td) / t.id)
                    box = Toolbox(reference_tools(), store, t.id)
                    turn = t.turns[0]
                    src = root / turn.images[0].path
                    inp = store.add_file(src, source="input")
                    got = await run_program(turn.meta["reference_program"], box, inp.file)
                    gold = turn.answer if isinstance(turn.answer, str) else "; ".join(turn.answer or [])
                    if got != gold:
                        problems.append(f"{t.id}: got {got!r}, gold {gold!r}")
    return problems


async def run_program(program: dict[str, Any], toolbox: Any, input_ref: str) -> str | None:
    """Execute a reference program directly (no model): the answer it reads, or None."""
    from toolsight.models.baselines import fill_program_args, program_captures

    values: dict[str, str] = {}
    for i, step in enumerate(program["steps"]):
        args = fill_program_args(step.get("arguments", {}), values, input_ref)
        if args is None:
            return None
        res = await toolbox.call(step["tool"], json.dumps(args), call_id=f"verify-{i}")
        caught = program_captures(step, res.model_text())
        if caught is None:
            return None
        values.update(caught)
    try:
        return str(program["answer"]).format(**values)
    except (KeyError, IndexError):
        return None
