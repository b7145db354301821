"""VTC-Bench data: the loader for the official TSV release.

The release (github.com/zhuzil/VTC-Bench `data/`, images on HF `zzzhu/VTC-Bench`) has two TSV files
with columns `index, id, category, image, question, answer, A-D`: `VTC-Bench.tsv` and
`VTC-Bench_GTToolChain.tsv` (+ `model_tools_gt`, the reference tool-group chain). They disagree:
ids are shifted in some categories and some rows exist in only one file. `load_vtc_bench` joins them
by (question, options) text, never by id, and takes ids, images and answers from `VTC-Bench.tsv`
(the file the official scorer keys its answers on); the join is reported in a `LoadReport`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import BaseModel, Field

from toolsight.benchmarks.base import BenchmarkError
from toolsight.benchmarks.vtc_bench.taxonomy import CATEGORIES, question_with_options
from toolsight.tasks.schema import ImageRef, Task, ToolStep, Turn

BENCHMARK = "vtc-bench"
MAIN_TSV = "VTC-Bench.tsv"
GT_TSV = "VTC-Bench_GTToolChain.tsv"
HF_REPO = "zzzhu/VTC-Bench"
OPTION_KEYS = ("A", "B", "C", "D", "E")
REQUIRED_COLUMNS = ("id", "category", "image", "question", "answer")

class VTCBenchError(BenchmarkError):
    """A user-fixable problem with VTC-Bench data (names the file, row and fix)."""


# --------------------------------------------------------------------------- toolchain column

_CURLY = str.maketrans({"“": '"', "”": '"', "„": '"', "″": '"', "‘": "'", "’": "'"})
_QUOTED = re.compile(r'"([^"]+)"')


def parse_toolchain(raw: str) -> list[str]:
    """The tool-group names of a `model_tools_gt` cell (curly quotes and all); [] for an empty cell.

    Raises ValueError when the cell holds no quoted names at all.
    """
    text = (raw or "").strip()
    if not text:
        return []
    norm = text.translate(_CURLY)
    try:
        val = json.loads(norm)
        if isinstance(val, list) and all(isinstance(v, str) for v in val):
            return [v.strip() for v in val if v.strip()]
    except json.JSONDecodeError:
        pass
    names = [m.strip() for m in _QUOTED.findall(norm) if m.strip(" ,")]
    if not names:
        raise ValueError(f"not a list of tool names: {raw!r}")
    return names


# --------------------------------------------------------------------------- load report


class RowRef(BaseModel):
    """One TSV row, named so a person can find it."""

    file: str
    line: int
    id: str
    index: str = ""
    question: str = ""


class AnswerDisagreement(BaseModel):
    id: str
    gt_id: str
    answer: str
    gt_answer: str


class LoadReport(BaseModel):
    """How the two files were joined: counts, rows without a partner, and disagreements."""

    main_file: str
    gt_file: str | None
    main_rows: int = 0
    gt_rows: int = 0
    matched: int = 0
    unmatched_main: list[RowRef] = Field(default_factory=list)
    unmatched_gt: list[RowRef] = Field(default_factory=list)
    answer_disagreements: list[AnswerDisagreement] = Field(default_factory=list)
    id_shifts: list[tuple[str, str]] = Field(default_factory=list, description="(main id, gt id) pairs that differ")
    bad_toolchains: list[RowRef] = Field(default_factory=list)
    chain_tasks: int = Field(default=0, description="tasks with a reference toolchain (chain metrics cover these)")
    chain_steps: int = Field(default=0, description="their reference steps in all")
    letter_without_options: list[str] = Field(
        default_factory=list, description="ids whose gold is a single option letter but whose row has no options")

    def summary(self) -> str:
        lines = [f"VTC-Bench: {self.main_rows} rows in {Path(self.main_file).name}"]
        if self.gt_file is None:
            lines.append(f"  no {GT_TSV}: tasks have no reference toolchain (strong+gt unavailable)")
            return "\n".join(lines)
        lines.append(
            f"  joined with {Path(self.gt_file).name} ({self.gt_rows} rows) by question+options: "
            f"{self.matched} matched, {len(self.id_shifts)} of them under a different id"
        )
        if self.unmatched_main:
            ids = ", ".join(r.id for r in self.unmatched_main[:10])
            more = " ..." if len(self.unmatched_main) > 10 else ""
            lines.append(f"  {len(self.unmatched_main)} main rows without a toolchain: {ids}{more}")
        if self.unmatched_gt:
            ids = ", ".join(r.id for r in self.unmatched_gt[:10])
            more = " ..." if len(self.unmatched_gt) > 10 else ""
            lines.append(f"  {len(self.unmatched_gt)} toolchain rows matching no question (ignored): {ids}{more}")
        for d in self.answer_disagreements:
            lines.append(f"  answer differs for {d.id} (gt file {d.gt_id}): {d.answer!r} kept, {d.gt_answer!r} ignored")
        for r in self.bad_toolchains:
            lines.append(f"  {r.file} line {r.line} ({r.id}): unreadable model_tools_gt, no reference steps")
        lines.append(f"  chain metrics cover {self.chain_tasks} of {self.main_rows} task(s), {self.chain_steps} "
                     "reference step(s) (the rows above without a toolchain are left out of them)")
        if self.letter_without_options:
            ids = ", ".join(self.letter_without_options[:10])
            lines.append(f"  {len(self.letter_without_options)} row(s) with an option-letter gold but no options load "
                         f"as open questions (scored against the letter): {ids}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- loader


def _read_tsv(path: Path, extra: tuple[str, ...] = ()) -> list[tuple[int, dict[str, str]]]:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t")
            header = reader.fieldnames or []
            missing = [c for c in (*REQUIRED_COLUMNS, *extra) if c not in header]
            if missing:
                raise VTCBenchError(
                    f"{path}: missing column(s) {', '.join(missing)}; expected a VTC-Bench TSV with columns "
                    f"index, id, category, image, question, answer, A-D{', ' + ', '.join(extra) if extra else ''}"
                )
            rows = []
            for row in reader:
                rows.append((reader.line_num, {k: (v or "") for k, v in row.items() if k is not None}))
            return rows
    except UnicodeDecodeError as exc:
        raise VTCBenchError(f"{path}: not UTF-8 text ({exc}); re-download the file") from None


def _options(row: dict[str, str]) -> dict[str, str]:
    return {k: row[k] for k in OPTION_KEYS if row.get(k, "") and row[k].strip()}


_TRAILING_OPTIONS = re.compile(r"\s*options:\s*$", re.IGNORECASE)


def _norm_text(s: str) -> str:
    return " ".join(s.split())


def _key(row: dict[str, str]) -> tuple[str, ...]:
    """Join key: question + options, whitespace-collapsed, without a trailing "Options:" (the main file
    has it in some questions where the GT file dropped it)."""
    q = _TRAILING_OPTIONS.sub("", _norm_text(row["question"]))
    return (q, *(_norm_text(row.get(k, "")) for k in OPTION_KEYS))


def find_files(path: Path) -> tuple[Path, Path | None, Path]:
    """(main TSV, GT TSV or None, image root) for a folder, or for the main TSV itself."""
    if not path.exists():
        raise VTCBenchError(
            f"VTC-Bench data not found: {path} does not exist; pass --data with the folder holding "
            f"{MAIN_TSV} (and {GT_TSV}, images/) — download from https://huggingface.co/datasets/{HF_REPO}"
        )
    if path.is_file():
        main = path
        folder = path.parent
    else:
        folder = path
        cands = [path / MAIN_TSV, path / "data" / MAIN_TSV]
        found = [c for c in cands if c.is_file()]
        if not found:
            raise VTCBenchError(
                f"no {MAIN_TSV} in {path} or {path / 'data'}; --data must be the folder holding it and images/"
            )
        main = found[0]
    gt_cands = [main.parent / GT_TSV, folder / GT_TSV, folder / "data" / GT_TSV]
    gt = next((c for c in gt_cands if c.is_file()), None)
    roots = [folder, main.parent, main.parent.parent]
    root = next((r for r in roots if (r / "images").is_dir()), folder)
    return main, gt, root


def _image_size(path: Path) -> tuple[int, int]:
    with Image.open(path) as im:
        return im.size


def load_vtc_bench(
    path: Path | str,
    gt_file: Path | str | None = None,
    image_root: Path | str | None = None,
    check_images: bool = True,
) -> tuple[list[Task], LoadReport]:
    """Tasks from the official files; `path` is the data folder or `VTC-Bench.tsv` itself.

    `gt_file` overrides the GT-toolchain file found next to it; `image_root` the folder that holds
    `images/`. With `check_images`, every image must exist (its size goes into the prompt).
    """
    main, gt, root = find_files(Path(path))
    if gt_file is not None:
        gt = Path(gt_file)
        if not gt.is_file():
            raise VTCBenchError(f"GT toolchain file not found: {gt}")
    if image_root is not None:
        root = Path(image_root)
    main_rows = _read_tsv(main)
    report = LoadReport(main_file=str(main), gt_file=str(gt) if gt else None, main_rows=len(main_rows))

    gt_by_key: dict[tuple[str, ...], list[tuple[int, dict[str, str]]]] = defaultdict(list)
    if gt is not None:
        gt_rows = _read_tsv(gt, extra=("model_tools_gt",))
        report.gt_rows = len(gt_rows)
        for line, row in gt_rows:
            gt_by_key[_key(row)].append((line, row))

    tasks: list[Task] = []
    seen_ids: set[str] = set()
    missing_images: list[str] = []
    for line, row in main_rows:
        rid = row["id"].strip()
        where = f"{main.name} line {line}"
        if not rid or not row["question"].strip() or not row["image"].strip():
            raise VTCBenchError(f"{where}: empty id, question or image; fix or remove the row")
        if rid in seen_ids:
            raise VTCBenchError(f"{where}: duplicate id {rid!r}")
        seen_ids.add(rid)
        category = row["category"].strip()
        options = _options(row)
        answer = row["answer"].strip()
        meta: dict[str, Any] = {"index": row.get("index", "").strip(), "question": row["question"]}
        steps: list[ToolStep] = []
        raw_chain = ""
        partners = gt_by_key.get(_key(row))
        if partners:
            gline, grow = partners.pop(0)
            report.matched += 1
            gid = grow["id"].strip()
            raw_chain = grow.get("model_tools_gt", "")
            meta["gt_file_id"] = gid
            if gid != rid:
                report.id_shifts.append((rid, gid))
                meta["gt_file_image"] = grow["image"].strip()
            if grow["answer"].strip() != answer:
                report.answer_disagreements.append(
                    AnswerDisagreement(id=rid, gt_id=gid, answer=answer, gt_answer=grow["answer"].strip())
                )
                meta["gt_file_answer"] = grow["answer"].strip()
            try:
                steps = [ToolStep(tool=name) for name in parse_toolchain(raw_chain)]
            except ValueError:
                report.bad_toolchains.append(RowRef(file=gt.name if gt else "", line=gline, id=gid))
        elif gt is not None:
            report.unmatched_main.append(
                RowRef(file=main.name, line=line, id=rid, index=meta["index"], question=row["question"][:100])
            )
        meta["model_tools_gt"] = raw_chain
        meta["reference_trajectory"] = raw_chain  # the user-template field (strong+gt)
        image = row["image"].strip().replace("\\", "/").removeprefix("./")
        img_path = root / image
        if img_path.is_file():
            w, h = _image_size(img_path)
            meta["image_size"] = f"{w}x{h}"
            meta["width"], meta["height"] = w, h
        elif check_images:
            missing_images.append(image)
        else:
            meta["image_size"] = "Unknown"
        name, tier, tier_name = CATEGORIES.get(category, (category, 0, "unknown"))
        try:
            turn = Turn(
                prompt=question_with_options(row["question"], options),
                images=[ImageRef(path=image)],
                answer=answer,
                options=options or None,
                answer_type="choice" if options else "text",
                reference_steps=steps,
                meta=meta,
            )
        except ValueError as exc:
            raise VTCBenchError(f"{where} ({rid}): {exc}") from None
        tags = {"category": category, "task": name, "tier": str(tier), "tier_name": tier_name}
        tasks.append(Task(id=rid, benchmark=BENCHMARK, turns=[turn], tags=tags))
    if missing_images:
        shown = ", ".join(missing_images[:5])
        raise VTCBenchError(
            f"{len(missing_images)} image(s) missing under {root} (e.g. {shown}); the images/ folder from "
            f"https://huggingface.co/datasets/{HF_REPO} must sit next to {MAIN_TSV}; pass that folder with --data PATH"
        )
    for rows in gt_by_key.values():
        for gline, grow in rows:
            report.unmatched_gt.append(
                RowRef(file=gt.name if gt else "", line=gline, id=grow["id"].strip(),
                       index=grow.get("index", "").strip(), question=grow["question"][:100])
            )
    report.chain_tasks = sum(1 for t in tasks if t.turns[0].reference_steps)
    report.chain_steps = sum(len(t.turns[0].reference_steps or []) for t in tasks)
    report.letter_without_options = [t.id for t in tasks if not t.turns[0].options
                                     and isinstance(t.turns[0].answer, str)
                                     and re.fullmatch(r"[A-H]", t.turns[0].answer.strip())]
    return tasks, report


def fingerprint(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:16]
