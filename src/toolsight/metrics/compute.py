"""Run metrics: accuracy / APR / ARS overall and by group, tool use, effective chain, usage, cost.

`compute_run_metrics` streams a run directory once (see `views`), keeping only a few numbers per
task, and returns a `RunMetrics` (pydantic, JSON-ready). Every formula is in docs/metrics.md.
Image-operation counts are kept per vocabulary name, for the vocabularies the caller passes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from toolsight.log.files import read_manifest
from toolsight.log.manifest import Manifest
from toolsight.log.trajectory import LOOP_CRASH
from toolsight.metrics.agreement import Agreement, AgreementCounter, HumanGrade, Key, load_human_grades
from toolsight.metrics.cost import Costing, PriceTable, cost_of
from toolsight.metrics.epochs import DEFAULT_REDUCER, EpochStats, Sample, epoch_stats, reduce_task
from toolsight.metrics.stats import Estimate, bootstrap_multi, mean_or_none
from toolsight.metrics.views import TaskView, iter_views
from toolsight.tools.operations import Vocabulary


class GroupScore(BaseModel):
    """Accuracy of one group (or of the whole run)."""

    n: int = 0
    score: Estimate = Field(default_factory=Estimate, description="mean score value (accuracy / ARS)")
    pass_rate: Estimate = Field(default_factory=Estimate, description="share passed (APR)")


class ToolUse(BaseModel):
    """Tool-use metrics over the tasks that ran without a run error."""

    tasks: int = 0
    calls: int = 0
    ok_calls: int = 0
    proactivity: Estimate = Field(default_factory=Estimate, description="share of tasks with >= 1 call (TCR)")
    success_rate: Estimate = Field(default_factory=Estimate, description="ok calls / calls")
    volume: Estimate = Field(default_factory=Estimate, description="calls per task")
    unique_tools: int = 0
    unique_tools_per_task: float | None = None
    tool_counts: dict[str, int] = Field(default_factory=dict)
    tool_share: dict[str, float] = Field(default_factory=dict)
    operation_counts: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="per vocabulary name: label -> occurrences in the calls' image operations")
    operation_share: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="per vocabulary name: label -> occurrences / all of its occurrences")
    effective_calls: int = 0
    effective_volume: Estimate = Field(default_factory=Estimate, description="effective calls per task")
    effective_unique_tools: int = 0
    eff_tool: Estimate = Field(default_factory=Estimate, description="Σ effective / Σ total calls")
    with_reference: int = 0
    mae_all: Estimate = Field(default_factory=Estimate, description="mean |L_G - L_T|")
    mae_effective: Estimate = Field(default_factory=Estimate, description="mean |L_G - L_e|")
    turns_per_task: float | None = None
    rounds_per_task: float | None = None
    model_calls_per_task: float | None = None
    stop_reasons: dict[str, int] = Field(default_factory=dict)


class ToolUseGroup(BaseModel):
    """Tool use of one group of tasks (VisualToolBench Table 7: proactivity, success rate, volume)."""

    tasks: int = 0
    calls: int = 0
    proactivity: float | None = None
    success_rate: float | None = None
    volume: float | None = None


class UsageMetrics(BaseModel):
    """Tokens of the tasks' model calls and, with a price table, the cost of every call (judge calls
    included) and what the prompt cache and batch APIs saved (metrics/cost.py; docs/cost.md)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = Field(default=0, description="input tokens read from the provider's prompt cache")
    cache_write_tokens: int = Field(default=0, description="input tokens written to the provider's prompt cache")
    tokens_per_task: float | None = None
    cost_usd: float | None = Field(default=None, description="what every priced call cost, judge calls included")
    cost_per_task_usd: float | None = None
    judge_cost_usd: float | None = Field(default=None, description="the judge calls' share of cost_usd")
    list_cost_usd: float | None = Field(default=None, description="the same tokens on-line without any cache")
    cache_saving_usd: float | None = None
    batch_saving_usd: float | None = None
    saving_usd: float | None = Field(default=None, description="list cost − cost (cache and batch)")
    batch_calls: int = 0
    replayed_calls: int = Field(default=0, description="calls served by toolsight's response cache (cost 0)")
    unpriced_models: list[str] = Field(default_factory=list, description="models whose calls have no price")


class Distributions(BaseModel):
    """Per-task numbers kept for plots (chain lengths; small ints)."""

    effective_lengths: list[int] = Field(default_factory=list)
    total_lengths: list[int] = Field(default_factory=list)
    reference_lengths: list[int] = Field(default_factory=list)
    scores: list[float] = Field(default_factory=list)


class ChainGroup(BaseModel):
    """Mean chain lengths of one group's tasks that have a reference chain (VTC-Bench Fig. 7/10)."""

    n: int = 0
    effective: float | None = None
    total: float | None = None
    reference: float | None = None
    mae_effective: float | None = None


class RunMetrics(BaseModel):
    run_dir: str
    run_id: str | None = None
    benchmark: str = ""
    model: str = ""
    setting: str = ""
    scores_source: str = "records"
    n_records: int = 0
    n_scored: int = 0
    n_errors: int = 0
    n_score_errors: int = 0
    n_unscored: int = 0
    error_kinds: dict[str, int] = Field(default_factory=dict)
    overall: GroupScore = Field(default_factory=GroupScore)
    groups: dict[str, dict[str, GroupScore]] = Field(default_factory=dict)
    tool_use: ToolUse = Field(default_factory=ToolUse)
    usage: UsageMetrics = Field(default_factory=UsageMetrics)
    agreement: Agreement | None = None
    tool_groups: dict[str, dict[str, ToolUseGroup]] = Field(
        default_factory=dict, description="per grouping key and value: proactivity, success rate, volume")
    error_categories: dict[str, int] = Field(
        default_factory=dict, description="failed scored tasks by the judge's error category (App. B.6)")
    random_guess: float | None = Field(default=None, description="expected score of a uniform guess (mean)")
    random_guess_groups: dict[str, dict[str, float]] = Field(default_factory=dict)
    chain_groups: dict[str, dict[str, ChainGroup]] = Field(
        default_factory=dict, description="per grouping key and value: effective vs reference chain length"
    )
    distributions: Distributions = Field(default_factory=Distributions)
    epochs: EpochStats | None = Field(
        default=None, description="a run with --epochs K > 1: mean@k, pass@k, pass^k, per-epoch scores (epochs.py)")
    tag_keys: list[str] = Field(default_factory=list, description="every tag key the run's tasks carry, sorted")
    tools_offered: list[str] = Field(
        default_factory=list, description="the tools the run's setting offered (manifest), by name")

    @property
    def label(self) -> str:
        return f"{self.model} · {self.setting}"

    @property
    def has_tools(self) -> bool:
        """Whether tool metrics mean anything for this run: its setting offered tools, or the model
        called some (a provider's hosted tools, or a run directory older than the tools' record)."""
        return bool(self.tools_offered) or self.tool_use.calls > 0


def error_kind(message: str) -> str:
    m = message.lower()
    for prefix, kind in (("model error", "model"), ("time limit", "time limit"), ("scoring", "scoring"),
                         ("harness", "harness")):
        if m.startswith(prefix):
            return kind
    return "other"


def group_score(views: Sequence[tuple[float, bool | float]], seed: int = 0, resamples: int = 1000) -> GroupScore:
    """Score and pass rate of (value, passed) pairs; `passed` may be a share (a task reduced over epochs)."""
    vals = [v for v, _ in views]
    passes = [float(p) for _, p in views]
    est = bootstrap_multi({"score": vals, "pass_rate": passes}, resamples=resamples, seed=seed)
    return GroupScore(n=len(vals), score=est["score"], pass_rate=est["pass_rate"])


class _Acc:
    """Running accumulator over TaskViews (a few numbers per task)."""

    def __init__(self, by: Sequence[str], human: dict[Key, HumanGrade] | None, prices: PriceTable | None,
                 reducer: str = DEFAULT_REDUCER) -> None:
        self.by = list(by)
        self.prices = prices
        self.reducer = reducer
        self.scored: list[tuple[float, bool]] = []
        # per task: its scored epochs, and its group under each key (a run with --epochs is
        # scored over tasks, each reduced over its epochs; see metrics/epochs.py)
        self.by_task: dict[str, list[Sample]] = {}
        self.task_group: dict[str, dict[str, str]] = {b: {} for b in self.by}
        self.max_epoch = 1
        self.grouped: dict[str, dict[str, list[tuple[float, bool]]]] = {b: defaultdict(list) for b in self.by}
        self.n = 0
        self.errors: Counter[str] = Counter()
        self.score_errors = 0
        self.unscored = 0
        self.calls: list[float] = []
        self.ok: list[float] = []
        self.eff: list[float] = []
        self.has_call: list[float] = []
        self.tools: Counter[str] = Counter()
        self.operations: dict[str, Counter[str]] = {}
        self.eff_tools: set[str] = set()
        self.uniq_per_task: list[float] = []
        self.mae_all: list[float] = []
        self.mae_eff: list[float] = []
        self.ref: list[int] = []
        self.eff_len: list[int] = []
        self.turns: list[float] = []
        self.rounds: list[float] = []
        self.model_calls: list[float] = []
        self.stops: Counter[str] = Counter()
        self.tok_in = self.tok_out = self.tok_reason = self.tok_read = self.tok_write = 0
        self.costing = Costing()
        self.judge_cost = 0.0
        self.costed = 0
        self.meta: dict[str, str] = {}
        self.agree = AgreementCounter(human) if human is not None else None
        self.rand: list[float] = []
        self.chain_grouped: dict[str, dict[str, list[tuple[int, int, int]]]] = defaultdict(lambda: defaultdict(list))
        self.rand_grouped: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        self.tool_grouped: dict[str, dict[str, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
        self.error_cats: Counter[str] = Counter()
        self.tag_keys: set[str] = set()

    def add(self, v: TaskView) -> None:
        self.n += 1
        self.tag_keys.update(v.tags)
        self.meta.setdefault("model", v.model)
        self.meta.setdefault("setting", v.setting)
        self.meta.setdefault("benchmark", v.benchmark)
        self.tok_in += v.input_tokens
        self.tok_out += v.output_tokens
        self.tok_reason += v.reasoning_tokens
        self.tok_read += sum(t.cache_read for t in v.model_tokens)
        self.tok_write += sum(t.cache_write for t in v.model_tokens)
        if self.prices:
            task = cost_of(v.billed, self.prices)
            self.costing.add(task)
            if v.score is not None:
                self.judge_cost += cost_of(v.score.judge_tokens, self.prices).cost_usd
            if task.priced_calls:
                self.costed += 1
        if v.random_guess is not None:
            self.rand.append(v.random_guess)
            for b in self.by:
                g = v.group(b)
                if g is not None:
                    self.rand_grouped[b][g].append(v.random_guess)
        if v.error is not None:
            self.errors[error_kind(v.error)] += 1
            return
        if v.loop_error is not None:  # a run error of its own kind, and scored as the driver scores it
            self.errors[LOOP_CRASH] += 1
        if v.score is None:
            self.unscored += 1
        elif v.score.error is not None:
            self.score_errors += 1
        else:
            pair = (v.value, v.passed)
            self.scored.append(pair)
            self.by_task.setdefault(v.task_id, []).append((v.epoch, v.value, v.passed))
            self.max_epoch = max(self.max_epoch, v.epoch)
            for b in self.by:
                g = v.group(b)
                if g is not None:
                    self.grouped[b][g].append(pair)
                    self.task_group[b][v.task_id] = g
            if self.agree is not None:
                self.agree.add(v.task_id, v.score.rubrics)
            if v.score.error_category and not v.passed:
                self.error_cats[v.score.error_category] += 1
        self._tool_use(v)

    def _tool_use(self, v: TaskView) -> None:
        self.calls.append(float(v.calls))
        self.ok.append(float(v.ok_calls))
        self.eff.append(float(v.effective_calls))
        self.has_call.append(1.0 if v.calls > 0 else 0.0)
        self.tools.update(v.tool_names)
        for vocabulary, labels in v.labels.items():
            self.operations.setdefault(vocabulary, Counter()).update(labels)
        self.eff_tools.update(v.effective_tools)
        self.uniq_per_task.append(float(len(set(v.tool_names))))
        self.eff_len.append(v.effective_calls)
        if v.ref_len is not None:
            for b in self.by:
                g = v.group(b)
                if g is not None:
                    self.chain_grouped[b][g].append((v.effective_calls, v.calls, v.ref_len))
            self.ref.append(v.ref_len)
            self.mae_all.append(float(abs(v.ref_len - v.calls)))
            self.mae_eff.append(float(abs(v.ref_len - v.effective_calls)))
        for b in self.by:
            g = v.group(b)
            if g is not None:
                self.tool_grouped[b][g].append((v.calls, v.ok_calls))
        self.turns.append(float(v.n_turns))
        self.rounds.append(float(v.rounds))
        self.model_calls.append(float(v.model_calls))
        self.stops[v.stop_reason] += 1

    def result(self, run_dir: Path, seed: int, resamples: int) -> RunMetrics:
        def share(c: Counter[str]) -> dict[str, float]:
            tot = sum(c.values())
            return {k: n / tot for k, n in c.most_common()} if tot else {}

        est = bootstrap_multi(
            {"proactivity": self.has_call, "volume": self.calls, "effective_volume": self.eff},
            {"success_rate": (self.ok, self.calls), "eff_tool": (self.eff, self.calls)},
            resamples=resamples, seed=seed,
        )
        mae = bootstrap_multi({"all": self.mae_all, "effective": self.mae_eff}, resamples=resamples, seed=seed)
        tu = ToolUse(
            tasks=len(self.calls), calls=int(sum(self.calls)), ok_calls=int(sum(self.ok)),
            proactivity=est["proactivity"], success_rate=est["success_rate"], volume=est["volume"],
            unique_tools=len(self.tools), unique_tools_per_task=mean_or_none(self.uniq_per_task),
            tool_counts=dict(self.tools.most_common()), tool_share=share(self.tools),
            operation_counts={k: dict(c.most_common()) for k, c in self.operations.items()},
            operation_share={k: share(c) for k, c in self.operations.items()},
            effective_calls=int(sum(self.eff)), effective_volume=est["effective_volume"],
            effective_unique_tools=len(self.eff_tools), eff_tool=est["eff_tool"],
            with_reference=len(self.ref), mae_all=mae["all"], mae_effective=mae["effective"],
            turns_per_task=mean_or_none(self.turns), rounds_per_task=mean_or_none(self.rounds),
            model_calls_per_task=mean_or_none(self.model_calls), stop_reasons=dict(self.stops.most_common()),
        )
        tokens = self.tok_in + self.tok_out
        c = self.costing
        priced = self.costed > 0

        def usd(x: float) -> float | None:
            return round(x, 6) if priced else None

        usage = UsageMetrics(
            input_tokens=self.tok_in, output_tokens=self.tok_out, reasoning_tokens=self.tok_reason,
            cache_read_tokens=self.tok_read, cache_write_tokens=self.tok_write,
            tokens_per_task=tokens / self.n if self.n else None,
            cost_usd=usd(c.cost_usd), cost_per_task_usd=c.cost_usd / self.costed if priced else None,
            judge_cost_usd=usd(self.judge_cost), list_cost_usd=usd(c.list_cost_usd),
            cache_saving_usd=usd(c.cache_saving_usd), batch_saving_usd=usd(c.batch_saving_usd),
            saving_usd=usd(c.saving_usd), batch_calls=c.batch_calls, replayed_calls=c.replayed_calls,
            unpriced_models=c.unpriced_models,
        )
        groups = {
            b: {g: group_score(vals, seed, resamples) for g, vals in sorted(d.items())}
            for b, d in self.grouped.items()
        }
        overall = group_score(self.scored, seed, resamples)
        epochs: EpochStats | None = None
        if self.max_epoch > 1:
            overall, groups, epochs = self._over_epochs(seed, resamples)
        return RunMetrics(
            run_dir=str(run_dir), benchmark=self.meta.get("benchmark", ""), model=self.meta.get("model", ""),
            setting=self.meta.get("setting", ""), n_records=self.n, n_scored=len(self.scored),
            n_errors=sum(self.errors.values()), n_score_errors=self.score_errors, n_unscored=self.unscored,
            error_kinds=dict(self.errors.most_common()), overall=overall, epochs=epochs,
            groups=groups, tool_use=tu, usage=usage,
            agreement=self.agree.result(seed) if self.agree is not None else None,
            random_guess=sum(self.rand) / len(self.rand) if self.rand else None,
            chain_groups={b: {g: _chain_group(x) for g, x in sorted(d.items())} for b, d in self.chain_grouped.items()},
            random_guess_groups={b: {g: sum(x) / len(x) for g, x in sorted(d.items())}
                                 for b, d in self.rand_grouped.items()},
            tool_groups={b: {g: _tool_group(x) for g, x in sorted(d.items())} for b, d in self.tool_grouped.items()},
            error_categories=dict(self.error_cats.most_common()), tag_keys=sorted(self.tag_keys),
            distributions=Distributions(
                effective_lengths=self.eff_len, total_lengths=[int(c) for c in self.calls],
                reference_lengths=self.ref, scores=[v for v, _ in self.scored],
            ),
        )


    def _over_epochs(self, seed: int, resamples: int) -> tuple[GroupScore, dict[str, dict[str, GroupScore]], EpochStats]:
        """Overall and group scores over tasks, each task reduced over its epochs."""
        reduced = {t: reduce_task(s, self.reducer) for t, s in self.by_task.items()}
        groups: dict[str, dict[str, GroupScore]] = {}
        for b, of in self.task_group.items():
            members: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for t, g in of.items():
                members[g].append(reduced[t])
            groups[b] = {g: group_score(pairs, seed, resamples) for g, pairs in sorted(members.items())}
        overall = group_score(list(reduced.values()), seed, resamples)
        return overall, groups, epoch_stats(self.by_task, self.max_epoch, self.reducer)


def _tool_group(rows: list[tuple[int, int]]) -> ToolUseGroup:
    n = len(rows)
    calls = sum(c for c, _ in rows)
    ok = sum(k for _, k in rows)
    return ToolUseGroup(tasks=n, calls=calls, proactivity=sum(1 for c, _ in rows if c > 0) / n if n else None,
                        success_rate=ok / calls if calls else None, volume=calls / n if n else None)


def _chain_group(rows: list[tuple[int, int, int]]) -> ChainGroup:
    n = len(rows)
    return ChainGroup(
        n=n, effective=sum(r[0] for r in rows) / n, total=sum(r[1] for r in rows) / n,
        reference=sum(r[2] for r in rows) / n, mae_effective=sum(abs(r[0] - r[2]) for r in rows) / n,
    )


def metrics_from_views(
    views: Iterable[TaskView],
    by: Sequence[str] = (),
    human: dict[Key, HumanGrade] | None = None,
    prices: PriceTable | None = None,
    seed: int = 0,
    resamples: int = 1000,
    run_dir: Path | None = None,
    sink: Callable[[TaskView], None] | None = None,
    reducer: str = DEFAULT_REDUCER,
) -> RunMetrics:
    """Metrics over any stream of TaskViews (used by `compute_run_metrics` and tests); `reducer`
    reduces a task's epochs to one score when the views hold several epochs (metrics/epochs.py)."""
    acc = _Acc(by, human, prices, reducer)
    for v in views:
        acc.add(v)
        if sink is not None:
            sink(v)
    return acc.result(run_dir or Path("."), seed, resamples)


def run_reducer(manifest: Manifest) -> str:
    """The epochs reducer a run was made with (its manifest options), `mean` when none is recorded."""
    raw = manifest.options.get("epochs_reducer")
    return raw if isinstance(raw, str) and raw else DEFAULT_REDUCER


def compute_run_metrics(
    run_dir: Path | str,
    by: Sequence[str] = (),
    scores: str | None = None,
    human_grades: Path | str | None = None,
    prices: PriceTable | None = None,
    tasks: Mapping[str, Any] | None = None,
    seed: int = 0,
    resamples: int = 1000,
    sink: Callable[[TaskView], None] | None = None,
    where: Callable[[TaskView], bool] | None = None,
    vocabularies: Sequence[Vocabulary] = (),
) -> RunMetrics:
    """Stream one run directory and compute every metric.

    `by` lists grouping keys (task tags, or `turn_type`); `scores` names a `scores-NAME.jsonl`
    to use instead of the records' own scores; `human_grades` is a JSONL of human rubric
    verdicts; `prices` a price table; `tasks` (task id -> Task) overrides the reference chains
    copied into the records; `sink` sees every TaskView as it streams by (e.g. a CSV export);
    `where` keeps only the records it accepts; `vocabularies` are the image-operation vocabularies
    whose counts and shares `tool_use` holds (none: calls are not classified).
    """
    rd = Path(run_dir)
    manifest = read_manifest(rd)
    human = load_human_grades(Path(human_grades)) if human_grades is not None else None
    views = iter_views(rd, scores, tasks, vocabularies=vocabularies)
    if where is not None:  # e.g. one prompt variant of a run reported as its own row
        views = (v for v in views if where(v))
    m = metrics_from_views(views, by, human, prices, seed, resamples, rd, sink, reducer=run_reducer(manifest))
    m.run_id = manifest.run_id or None
    m.benchmark = m.benchmark or manifest.benchmark
    m.model = m.model or manifest.model
    m.setting = m.setting or manifest.setting
    m.scores_source = f"scores-{scores}.jsonl" if scores else "records"
    m.tools_offered = [str(t["name"]) for t in manifest.tools if isinstance(t, dict) and t.get("name")]
    return m
