"""What a benchmark is to the rest of toolsight: one class that answers for all of its extensions.

A `Benchmark` loads its tasks, names its settings (prompts, tool sets, caps, loop mode), builds its
official loop and its scorers, lays out its report tables, takes its own run options
(`toolsight run BENCH -B KEY=VALUE`), and offers its generators and its share of the starter suite
(`toolsight.benchmarks.offline`). Registries (`toolsight.benchmarks.registry`) read these
declarations; the runner, the CLI, sweeps, reports and metrics only ask the object and never name
a benchmark.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from toolsight.agents.registry import Solver, make_agent
from toolsight.agents.settings import AgentSettings, QuestionView
from toolsight.benchmarks.offline import Generator, StarterPart
from toolsight.errors import ToolsightError
from toolsight.log.modes import ScorerMode
from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import Generate, Model
from toolsight.scoring.base import Scorer
from toolsight.tasks.schema import Task
from toolsight.tasks.taskset import TaskSet
from toolsight.tools.base import Tool
from toolsight.tools.operations import Vocabulary
from toolsight.tools.registry import ToolSet

#: a named scorer: the mode in, a Scorer out (the generic ones are in `toolsight.scoring.registry`)
ScorerFactory = Callable[[ScorerMode], Scorer]


class BenchmarkError(ToolsightError):
    """A user-fixable problem loading or configuring a benchmark (one clear message)."""


@dataclass
class LoadedTasks:
    """A benchmark's tasks as loaded. A list given as `tasks` is kept as a compact `TaskSet`
    (each task as its JSON, built when used), so a run's memory does not grow with its dataset."""

    tasks: Sequence[Task]
    root: Path
    source: str
    fingerprint: str
    notes: list[str] = field(default_factory=list)
    #: an offline web corpus that belongs to the data (the default for `--web`; see toolsight.web)
    web_corpus: Path | None = None
    #: images a run fetches into `root` before its tasks run (path under the root -> URL, e.g. a
    #: benchmark that downloads its images); hashed by URL, so a task's hash does not depend on
    #: whether its images are fetched yet
    remote_images: dict[str, str] = field(default_factory=dict)
    #: fetches the remote images of the tasks a run selects (a BenchmarkError names what is missing);
    #: None: every image is in `root` already
    fetch: Callable[[Sequence[Task]], None] | None = None

    def __post_init__(self) -> None:
        self.tasks = TaskSet.from_tasks(self.tasks)


class BenchmarkOptions(BaseModel):
    """Options a benchmark takes beside the generic run options (`-B KEY=VALUE`); a benchmark with
    options of its own subclasses this and names the subclass in `Benchmark.Options`."""

    model_config = ConfigDict(extra="forbid")


class Benchmark(ABC):
    name: str = ""
    description: str = ""
    default_setting: str = ""
    #: the `Task.benchmark` values this benchmark scores besides its own name (its generated sets)
    task_kinds: tuple[str, ...] = ()
    #: the benchmark's own run options (`toolsight list options BENCH`)
    Options: ClassVar[type[BenchmarkOptions]] = BenchmarkOptions
    #: report layout: for a tag, the order its values are shown in (the paper's column order)
    category_order: dict[str, list[str]] = {}  # noqa: RUF012 - read-only class default
    #: report layout: the tags `toolsight report` groups by when no --by is given (its paper's tables)
    report_tags: list[str] = []  # noqa: RUF012 - read-only class default
    #: report layout: show 95% CIs in the grouped tables too (not only in the score table)
    group_cis: bool = False
    #: report layout: a tag whose values are shown as separate rows of one run (e.g. a prompt variant)
    row_tag: str | None = None
    #: report layout: reference rows (e.g. human testers) per grouping tag: label -> column -> percent
    reference_rows: dict[str, dict[str, dict[str, float]]] = {}  # noqa: RUF012 - read-only class default
    #: report layout: (grouping tag, metric) tables shown when the user gives no --by; metric is
    #: "score", "pass_rate" or "tool_use" (the paper's tables, e.g. APR by turn type x domain)
    report_tables: list[tuple[str, str]] = []  # noqa: RUF012 - read-only class default
    #: how agents that bring their own prompt template (pyvision, deepeyes) read this benchmark's turns:
    #: the question with its options, and without them (docs/agents.md); every setting gets it
    question_view: ClassVar[QuestionView] = QuestionView()

    def __init__(self) -> None:
        self.options: BenchmarkOptions = self.Options()

    def configure(self, options: dict[str, Any]) -> None:
        """Take the benchmark's own run options (`-B KEY=VALUE`); a bad one is a BenchmarkError that
        names it and lists the options there are."""
        try:
            self.options = self.Options.model_validate(options)
        except ValidationError as exc:
            known = ", ".join(self.Options.model_fields) or "none"
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "options"
            raise BenchmarkError(f"-B {where}: {' '.join(str(first['msg']).split())} (options of {self.target_name()}: {known}; "
                                 f"see `toolsight list options {self.target_name()}`)") from None

    def owns(self, task: Task) -> bool:
        """Whether this benchmark scores `task` (its `Task.benchmark` is this benchmark or one of its kinds)."""
        return task.benchmark == self.name or task.benchmark in self.task_kinds

    def generators(self) -> dict[str, Generator]:
        """The kinds of offline task this benchmark can generate (`toolsight generate KIND`), by kind."""
        return {}

    def starter_parts(self) -> list[StarterPart]:
        """What this benchmark adds to the built-in starter suite (`toolsight run starter`)."""
        return []

    @abstractmethod
    def settings(self) -> dict[str, AgentSettings]:
        """Named settings; each says which tools, prompts and caps the agent gets."""

    @abstractmethod
    def load(self, data: Path | None) -> LoadedTasks:
        """Load tasks from `data` (a path, or the benchmark's default source)."""

    @abstractmethod
    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        """The scorer for a setting; `mode` is 'official' or 'corrected' where that differs."""

    def setting(self, name: str | None, loop: str | None = None) -> AgentSettings:
        """Setting `name` (default: the benchmark's), in loop mode `loop` when given (`--loop`)."""
        name = name or self.default_setting
        s = self.settings()
        if name not in s:
            import difflib
            import shlex

            close = difflib.get_close_matches(name, list(s), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise BenchmarkError(
                f"unknown setting {name!r} for {self.target_name()}; {hint}choose one of: {', '.join(s)} "
                f"(see `toolsight list settings {shlex.quote(self.target_name())}`)"
            )
        chosen = s[name]
        if loop is not None and loop != chosen.loop:
            if loop not in ("official", "toolsight"):
                raise BenchmarkError(f"unknown loop mode {loop!r}: use 'official' or 'toolsight'")
            chosen = self.with_loop(chosen, loop)
        if chosen.question_view is None:  # the benchmark's, unless the setting declares its own
            chosen = chosen.model_copy(update={"question_view": self.question_view})
        return chosen

    def target_name(self) -> str:
        """What a user types to name this benchmark on the command line (a dataset folder: its path)."""
        return self.name

    def with_loop(self, settings: AgentSettings, loop: str) -> AgentSettings:
        """`settings` in another loop mode. A benchmark whose official loop needs other tools or
        parameters overrides this; by default only the mode changes."""
        return settings.model_copy(update={"loop": loop})
    def tasks_for(self, setting: str, tasks: Sequence[Task]) -> Sequence[Task]:
        """The tasks a setting runs (default: as loaded). A setting that makes several independent
        calls per item (e.g. a CoT and a no-CoT prompt) may expand each item into several tasks."""
        return tasks

    def offered_tools(self, settings: AgentSettings) -> list[str]:
        """What `toolsight list settings` names as a setting's tools: its tool sets by default. A
        benchmark whose official loop offers its driver's tools under their own names says those."""
        return list(settings.tools)

    def one_call_per_task(self, settings: AgentSettings, model: Model) -> bool:
        """Whether the setting's loop asks `model` once per task (what plain `--batch` batches; a loop
        that may ask again needs `--batch rounds`): when it offers no tools, by default. A benchmark
        whose official loop offers a tool the provider runs inside that one call says so."""
        return not settings.tools

    def offered_specs(self, settings: AgentSettings, tools: Sequence[Tool]) -> list[ToolSpec]:
        """The tool schemas the setting's loop sends (the manifest's `tools`): the tools' own specs by
        default; a benchmark whose official loop sends its driver's descriptors returns those."""
        return [t.spec() for t in tools]

    def scorers(self) -> dict[str, ScorerFactory]:
        """Named scorers this benchmark offers beside its default one (`toolsight score --scorer NAME`)."""
        return {}

    def toolsets(self) -> dict[str, ToolSet]:
        """Tool sets only this benchmark offers (e.g. its official code tool), by name."""
        return {}

    def vocabularies(self) -> list[Vocabulary]:
        """The image-operation vocabularies its reports show a share table for, one table each.

        A benchmark whose paper reports how often each kind of image operation was used declares its
        vocabulary here; a suite that mixes several benchmarks' tasks declares theirs. By default
        none: no operation table, and metrics skip the classification of the calls.
        """
        return []

    def make_agent(self, settings: AgentSettings, model: Model, generate: Generate) -> Solver:
        """The agent that runs one task of this benchmark under `settings`.

        By default the agent named by `settings.agent` (the tool loop unless a setting or `--agent`
        says otherwise). A benchmark whose official driver behaves differently returns its own
        loop here when `settings.loop == "official"`.
        """
        return make_agent(settings.agent, model, settings, generate)

    def record_extra(self, task: Task) -> dict[str, Any]:
        """Reference data copied into each record so metrics need only the records."""
        return {
            "gold": [t.answer for t in task.turns],
            "reference_chain_lengths": [len(t.reference_steps) for t in task.turns],
            "reference_tools": [[s.tool for s in t.reference_steps] for t in task.turns],
        }
