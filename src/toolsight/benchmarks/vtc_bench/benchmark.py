"""VTC-Bench: loader for the official TSV release, and the evaluation settings as data.

The release (github.com/zhuzil/VTC-Bench `data/`, images on HF `zzzhu/VTC-Bench`) has two TSV files
with columns `index, id, category, image, question, answer, A-D`: `VTC-Bench.tsv` and
`VTC-Bench_GTToolChain.tsv` (+ `model_tools_gt`, the reference tool-group chain). They disagree:
ids are shifted in some categories and some rows exist in only one file. `load_vtc_bench` joins them
by (question, options) text, never by id, and takes ids, images and answers from `VTC-Bench.tsv`
(the file the official scorer keys its answers on); the join is reported in a `LoadReport`.

The settings (`base`, `code`, `interface`, `weak`, `strong`, `strong+gt`) are `VTCSetting` values
holding the official prompts (`vtc_prompts`) and loop parameters; `to_agent_settings` maps one onto
the generic `AgentSettings` the agent loop runs.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from toolsight.agents.registry import Generate, Solver
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import Benchmark, BenchmarkError, LoadedTasks, ScorerFactory
from toolsight.benchmarks.vtc_bench import prompts as P
from toolsight.benchmarks.vtc_bench.taxonomy import (  # noqa: F401 - re-exported
    CATEGORIES,
    CATEGORY_ORDER,
    CATEGORY_SHORT,
    TOOL_GROUP_VOCABULARY,
    question_with_options,
)
from toolsight.log.modes import scorer_mode as check_mode
from toolsight.models.base import GenerateConfig, Model
from toolsight.scoring.base import Scorer
from toolsight.tasks.schema import ImageRef, Task, ToolStep, Turn
from toolsight.tools.base import Tool
from toolsight.tools.operations import Vocabulary
from toolsight.tools.registry import ToolSet as ToolSetEntry

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
            f"https://huggingface.co/datasets/{HF_REPO} must sit next to {MAIN_TSV} (or pass image_root)"
        )
    for rows in gt_by_key.values():
        for gline, grow in rows:
            report.unmatched_gt.append(
                RowRef(file=gt.name if gt else "", line=gline, id=grow["id"].strip(),
                       index=grow.get("index", "").strip(), question=grow["question"][:100])
            )
    return tasks, report


# --------------------------------------------------------------------------- settings as data

ToolSet = Literal["none", "code", "interface"]


class VTCSetting(BaseModel):
    """One VTC-Bench setting: prompts, tools and the reference loop's parameters (fncall_agent.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    system_prompt: str
    user_template: str = Field(description="fields: question, image_path, image_size[, reference_trajectory]")
    tool_set: ToolSet
    include_gt_toolchain: bool = False
    max_model_calls: int = 20
    no_tools_on_last_call: bool = True
    remaining_note: str = P.REMAINING_NOTE
    remaining_note_max: int = Field(default=5, description="note when 1 < calls left <= this")
    last_call_note: str = P.LAST_CALL_NOTE
    continue_nudge: str = P.CONTINUE_NUDGE
    final_nudge: str = P.FINAL_NUDGE
    no_answer_retry: str = P.NO_ANSWER_RETRY
    max_nudges: int = Field(default=5, description="retries of the no-answer prompt on the last call")
    tool_image_note: str = P.TOOL_IMAGE_NOTE
    task_attempts: int = Field(default=3, description="whole-task reruns on an empty/refusing answer")
    retry_answer_keywords: tuple[str, ...] = P.RETRY_ANSWER_KEYWORDS
    temperature: float = 0.6
    top_p: float = 0.95
    top_k: int = 20
    max_tokens: int = 40960
    seed: int = 1234
    repetition_penalty: float = 1.0
    presence_penalty: float = 0


def _setting(name: str, desc: str, system: str, tools: ToolSet, gt: bool = False) -> VTCSetting:
    return VTCSetting(
        name=name, description=desc, system_prompt=system,
        user_template=P.USER_TEMPLATE_GT if gt else P.USER_TEMPLATE, tool_set=tools, include_gt_toolchain=gt,
    )


SETTINGS: dict[str, VTCSetting] = {
    s.name: s
    for s in (
        _setting("base", "direct answer, no tools (paper's Base; not in the official code)", P.SYSTEM_DEFAULT, "none"),
        _setting("code", "code_interpreter with the Allowed Capabilities description", P.SYSTEM_STRONG, "code"),
        _setting("interface", "the 35 OpenCV interface tools, strong system prompt", P.SYSTEM_STRONG, "interface"),
        _setting("weak", "interface tools, weak system prompt (prompt ablation)", P.SYSTEM_WEAK, "interface"),
        _setting("strong", "interface tools, strong system prompt (= interface)", P.SYSTEM_STRONG, "interface"),
        _setting("strong+gt", "strong prompt + the reference toolchain in the user prompt", P.SYSTEM_STRONG,
                 "interface", gt=True),
    )
}
DEFAULT_SETTING = "interface"


def render_user_prompt(task: Task, image_path: str, width: int, height: int, setting: VTCSetting) -> str:
    """The first user message's text exactly as the reference builds it (`format_user_prompt`).

    `image_path` is what the model should pass to tools: in toolsight the workspace file name.
    """
    turn = task.turns[0]
    fields: dict[str, str] = {
        "question": turn.prompt,
        "image_path": image_path,
        "image_size": f"{width}x{height}",
    }
    if setting.include_gt_toolchain:
        raw = turn.meta.get("model_tools_gt")
        if not isinstance(raw, str) or not raw:
            raw = json.dumps([s.tool for s in turn.reference_steps], ensure_ascii=False)
        fields["reference_trajectory"] = raw
    return setting.user_template.format(**fields)


def last_call_note(question: str, setting: VTCSetting) -> str:
    """The note appended to the tool result when exactly one model call remains."""
    return setting.last_call_note.format(question=question)


TOOLSETS: dict[ToolSet, list[str]] = {"none": [], "code": ["vtc_code"], "interface": ["opencv"]}
# the official loop offers the reference's own schemas and result texts: the 35 interface tools
# (benchmarks/vtc/interface.py) and the code interpreter on the kernel (benchmarks/vtc/code.py)
OFFICIAL_TOOLSETS: dict[ToolSet, list[str]] = {"none": [], "code": ["vtc_code_official"],
                                               "interface": ["vtc_interface_official"]}


def _vtc_code_tools() -> list[Tool]:
    from toolsight.benchmarks.vtc_bench.tools.code import toolsight_code_tools

    return toolsight_code_tools()


def _vtc_code_official() -> list[Tool]:
    from toolsight.benchmarks.vtc_bench.tools.code import official_code_tools

    return official_code_tools()


def _vtc_interface_official() -> list[Tool]:
    from toolsight.benchmarks.vtc_bench.tools.interface import official_interface_tools

    return official_interface_tools()


VTC_TOOLSETS = {
    "vtc_code": ToolSetEntry("vtc_code", _vtc_code_tools,
                             "VTC-Bench code_interpreter (reasoning, code) on the sandbox kernel; images by file name",
                             needs_sandbox=True),
    "vtc_code_official": ToolSetEntry(
        "vtc_code_official", _vtc_code_official,
        "VTC-Bench's code_interpreter as the driver runs it: Jupyter output blocks, served images, 30 s alarm "
        "(official loop)", needs_sandbox=True),
    "vtc_interface_official": ToolSetEntry(
        "vtc_interface_official", _vtc_interface_official,
        "the 35 opencv_* tools exactly as VTC-Bench's driver offers them (paths, reference texts; official loop)"),
}


def official_task_timeout(setting: VTCSetting) -> float:
    """The driver's longest task: 3600 s per attempt (its SIGALRM) times the attempts, plus the waits
    between them. The runner's default --task-timeout for the official loop, so it never ends a task
    the driver would still be running (an explicit --task-timeout wins)."""
    from toolsight.benchmarks.vtc_bench.loop import ATTEMPT_TIMEOUT_S
    from toolsight.benchmarks.vtc_bench.loop import DRIVER_RERUN_WAITS as W

    waits = sum(W[min(i, len(W) - 1)] for i in range(setting.task_attempts - 1))
    return setting.task_attempts * ATTEMPT_TIMEOUT_S + waits


def to_agent_settings(setting: VTCSetting, loop: Literal["official", "toolsight"] = "official") -> AgentSettings:
    """The generic loop settings for a VTC setting (user template fields renamed to the loop's).

    The loop fills `{prompt}` (question + options), `{image_names}` (workspace file names) and turn meta
    fields (`image_size`, `reference_trajectory`). The reference's different note when one call is
    left becomes the loop's `last_round_note`. `loop="official"` (the default) runs the driver's own
    loop (`benchmarks/vtc/loop.py`) with the reference tools and the driver's full request parameters;
    `"toolsight"` runs the generic loop with toolsight's tools, image budget and downscaling.
    """
    official = loop == "official"
    template = (
        setting.user_template.replace("{question}", "{prompt}").replace("{image_path}", "{image_names}")
    )
    extra: dict[str, Any] = {"top_k": setting.top_k}
    if official:
        extra.update(repetition_penalty=setting.repetition_penalty, presence_penalty=setting.presence_penalty)
    caps: dict[str, Any] = {"time_limit_s": None, "max_images_in_context": None, "max_image_pixels": None,
                            "task_timeout_s": official_task_timeout(setting)} if official else {}
    return AgentSettings(
        name=setting.name,
        loop=loop,
        system_prompt=setting.system_prompt,
        user_template=template,
        answer_format="answer_tag",
        tools=(OFFICIAL_TOOLSETS if official else TOOLSETS)[setting.tool_set],
        max_tool_calls=setting.max_model_calls * 5,
        max_rounds=setting.max_model_calls,
        no_tools_on_last_round=setting.no_tools_on_last_call,
        remaining_note=setting.remaining_note,
        remaining_note_from=setting.remaining_note_max,
        last_round_note=setting.last_call_note,
        nudge=setting.continue_nudge,
        final_nudge=setting.final_nudge,
        max_nudges=setting.max_nudges,
        tool_image_note=setting.tool_image_note,
        generate=GenerateConfig(
            temperature=setting.temperature, top_p=setting.top_p, max_tokens=setting.max_tokens,
            seed=setting.seed, extra_body=extra,
        ),
        **caps,
    )


# --------------------------------------------------------------------------- the benchmark


def _fingerprint(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


class VTCBenchmark(Benchmark):
    name = BENCHMARK
    description = "VTC-Bench (680 tasks, 9 categories): compositional OpenCV tool chaining"
    default_setting = DEFAULT_SETTING
    category_order = {"category": list(CATEGORY_ORDER)}  # noqa: RUF012 - the paper's Table 4 order

    def settings(self) -> dict[str, AgentSettings]:
        return {k: to_agent_settings(v) for k, v in SETTINGS.items()}

    def with_loop(self, settings: AgentSettings, loop: str) -> AgentSettings:
        return to_agent_settings(SETTINGS[settings.name], "official" if loop == "official" else "toolsight")

    def make_agent(self, settings: AgentSettings, model: Model, generate: Generate) -> Solver:
        if settings.loop == "official" and settings.name in SETTINGS:
            from toolsight.benchmarks.vtc_bench.loop import VTCOfficialAgent

            return VTCOfficialAgent(SETTINGS[settings.name], settings, model, generate)
        return super().make_agent(settings, model, generate)

    def vocabularies(self) -> list[Vocabulary]:
        """The tool groups of its tool-chain analysis (Fig. 6: Crop, Rotate, Zoom in, ...)."""
        return [TOOL_GROUP_VOCABULARY]

    def toolsets(self) -> dict[str, ToolSetEntry]:
        return dict(VTC_TOOLSETS)

    def load(self, data: Path | None) -> LoadedTasks:
        if data is None:
            raise VTCBenchError(
                f"vtc-bench needs --data PATH: the folder with {MAIN_TSV}, {GT_TSV} and images/ "
                f"(from https://huggingface.co/datasets/{HF_REPO})"
            )
        tasks, report = load_vtc_bench(data)
        summary = report.summary()  # the runner prints the notes
        files = [Path(report.main_file)] + ([Path(report.gt_file)] if report.gt_file else [])
        _, _, root = find_files(Path(data))
        return LoadedTasks(
            tasks=tasks, root=root, source=str(report.main_file), fingerprint=_fingerprint(files),
            notes=summary.splitlines(),
        )

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        from toolsight.benchmarks.vtc_bench.scorer import make_scorer

        return make_scorer(check_mode(mode))

    def scorers(self) -> dict[str, ScorerFactory]:
        from toolsight.benchmarks.vtc_bench.scorer import SCORERS

        return dict(SCORERS)

