"""One task, run to one record: its workspace, its agent under the task's time limit, its score.

`TaskRunner.run(task, caller, ctx, epoch)` sets up the task's workspace (`RUN/artifacts/<task>/`: made
when the task first needs it — a tool, model code, a loop that reads files by name — with its input
images copied in; their one copy for the whole run is `RUN/artifacts/.inputs/`), builds its toolbox and agent, runs the agent under the per-task wall-clock limit (time the run
spent paused for an unreachable endpoint does not count), and turns whatever happened into a
`Record`: a trajectory and a score, or an error the run goes on after (a model error after retries,
a time limit, a bad input image, a harness bug). What no task can survive — a full disk, the run
aborted — is raised. The local runner and the Ray workers run tasks through the same object.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsight.agents.inputs import InputImageError, SharedInputs, register_inputs
from toolsight.agents.loop import TaskFailed
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import Benchmark
from toolsight.calls.batching import batch_scope
from toolsight.calls.retry import ModelCaller
from toolsight.calls.sent import SentLog
from toolsight.calls.task import TaskCalls
from toolsight.engine.store import (
    ARTIFACTS,
    artifact_dir,
    disk_has_room,
    is_disk_full,
    mentions_disk_full,
    shared_inputs_dir,
)
from toolsight.errors import RunAborted, TaskAbort
from toolsight.log.record import Record
from toolsight.log.textcap import cap_trajectory
from toolsight.log.trajectory import Trajectory
from toolsight.models.base import Model
from toolsight.models.images import remember_image_bytes
from toolsight.scoring.base import Score, ScoreContext, Scorer
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Tool, Toolbox


def has_gold(task: Task) -> bool:
    """Whether anything can say if an answer is right: a gold answer or rubrics in some turn."""
    return any(t.answer is not None or t.rubrics for t in task.turns)


def disk_full(exc: BaseException | str) -> RunAborted:
    return RunAborted(
        f"disk full ({exc}); free some space, then resume — tasks cut short were not recorded and will run again"
    )


@dataclass
class TaskRunner:
    """Runs the tasks of one run (see the module docstring); `task_hashes` is filled when the run starts."""

    bench: Benchmark
    setting_name: str
    settings: AgentSettings
    tools: Sequence[Tool]
    model: Model
    model_spec: str
    scorer: Scorer | None
    run_dir: Path
    dataset_root: Path
    task_timeout: float
    task_hashes: dict[str, str]
    #: what this process's requests carried (tools, prompts): the manifest's `sent` block
    sent: SentLog = field(default_factory=SentLog)
    @functools.cached_property
    def _shared(self) -> SharedInputs:
        return SharedInputs(shared_inputs_dir(self.run_dir))

    @functools.cached_property
    def _left_over(self) -> set[str]:
        """The task folders the run directory held when this invocation's first task started (one
        listing, not a `stat` per task): a killed or errored attempt's, replaced when its task runs
        again. Each unit runs once per invocation, so a folder made since cannot be one of them."""
        try:
            return set(os.listdir(self.run_dir / ARTIFACTS))
        except FileNotFoundError:
            return set()

    @functools.cached_property
    def _dataset_root(self) -> Path:
        """The dataset folder resolved once per run (not per task; not per process either: a folder
        behind a symlink may point elsewhere in a later run of the same process)."""
        return self.dataset_root.resolve()

    async def run(self, task: Task, caller: ModelCaller, ctx: ScoreContext, epoch: int = 1) -> Record:
        t0 = time.time()
        ws = artifact_dir(self.run_dir, task.id, epoch)
        if ws.name in self._left_over:  # a partial workspace from a killed run, or from an errored attempt:
            self._left_over.discard(ws.name)  # gone even if this attempt never makes one
            shutil.rmtree(ws, ignore_errors=True)
        store = ArtifactStore(ws, lazy=True, on_write=remember_image_bytes)
        toolbox = Toolbox(list(self.tools), store, task.id)
        model = self.model.for_task(task, epoch)
        calls = TaskCalls(caller if model is self.model else None, model.generate,
                          cache_salt=f"epoch {epoch}" if epoch > 1 else "", sent=self.sent,
                          prompts=[turn.prompt for turn in task.turns])
        agent = self.bench.make_agent(self.settings, model, calls)
        error: str | None = None
        traj = Trajectory()
        try:
            inputs = register_inputs(task, self._dataset_root, toolbox, self._shared, root_resolved=True)
            with batch_scope(f"{task.id}#{epoch}"):  # batch mode numbers the task's calls from here
                traj = await self._within_deadline(agent.run(task, toolbox, inputs), caller)
        except TaskFailed as exc:
            traj, error = exc.trajectory, str(exc)
        except TaskAbort as exc:  # e.g. a web replay without the recorded call: the task cannot go on
            error = str(exc)
            traj.artifacts = store.all()
        except TimeoutError:
            traj = Trajectory(stop_reason="time_limit", artifacts=store.all())
            error = f"time limit: task exceeded {self.task_timeout:.0f} s"
        except InputImageError as exc:
            error = f"input error: {exc}"
        except (asyncio.CancelledError, RunAborted):
            raise
        except Exception as exc:  # a harness or tool bug must not end the run
            if is_disk_full(exc):
                raise disk_full(exc) from None
            error = f"harness error: {type(exc).__name__}: {exc}"
            traj.artifacts = store.all()
        finally:
            await toolbox.aclose()
        traj.model_call_log = calls.log
        traj.retries = sum(c.retries for c in calls.log)
        self._check_disk(traj, error)
        extra = self.bench.record_extra(task)
        if cut := cap_trajectory(traj):  # before scoring: a re-score reads the same text
            extra = {**extra, "texts_cut": cut}
        rec = Record(
            task_id=task.id, epoch=epoch, benchmark=self.bench.name, setting=self.setting_name, model=self.model_spec,
            tags=task.tags, trajectory=traj, error=error, started_at=t0, duration_s=round(time.time() - t0, 4),
            extra=extra, task_hash=self.task_hashes.get(task.id),
        )
        return await self.score(task, rec, ctx)

    async def score(self, task: Task, rec: Record, ctx: ScoreContext) -> Record:
        """`rec` (a task whose model part finished) with its score; also used to complete a score that
        was pending (the model is not run again). A judge that cannot be reached leaves the score
        pending (`Record.score_pending`): the model's work is recorded all the same."""
        rec = rec.model_copy(update={"score": None, "score_pending": None})
        if rec.error is not None or self.scorer is None:
            return rec
        if not has_gold(task):
            rec.extra = {**rec.extra, "unscored": "no gold answer"}
            return rec
        try:
            with batch_scope(f"{task.id}#{rec.epoch}"):  # a batched judge numbers its calls from here
                rec.score, rec.error = await self._score(task, rec.trajectory, ctx)
        except RunAborted as exc:  # the judge endpoint is down past the outage timeout, or refused us
            rec.score_pending = str(exc)
        return rec

    async def _score(self, task: Task, traj: Trajectory, ctx: ScoreContext) -> tuple[Score | None, str | None]:
        if self.scorer is None:
            return None, None
        try:
            return await self.scorer.score(task, traj.responses, ctx), None
        except Exception as exc:
            return None, f"scoring failed: {type(exc).__name__}: {exc}"

    async def _within_deadline(self, work: Coroutine[Any, Any, Trajectory], caller: ModelCaller) -> Trajectory:
        """Await `work` for at most the task timeout, not counting time the run was paused for an
        unreachable endpoint (a task should not time out because the server was down).

        `work` runs in the calling task under one timer (no task and waiter per task, as
        `asyncio.wait` needs): when the timer fires, the deadline is computed again with the pauses
        since, and the timer is set again or the work is cancelled as a timeout."""
        loop = asyncio.get_running_loop()
        start, paused0 = loop.time(), caller.breaker.down_seconds()

        def due() -> float:
            return start + self.task_timeout + (caller.breaker.down_seconds() - paused0)

        timer: asyncio.TimerHandle
        async with asyncio.timeout(None) as limit:
            def check() -> None:
                nonlocal timer
                when = due()
                if when <= loop.time():
                    limit.reschedule(loop.time())  # expire now: the work is cancelled, TimeoutError raised
                else:
                    timer = loop.call_at(when, check)

            timer = loop.call_at(due(), check)
            try:
                result = await work
            finally:
                timer.cancel()
        if limit.expired():  # the work swallowed the cancellation and returned: still a timeout
            raise TimeoutError
        return result

    def _check_disk(self, traj: Trajectory, error: str | None) -> None:
        """A task that met a full disk (in a tool, say) did not really finish: stop, do not record it."""
        texts = [error or ""] + [c.error or "" for c in traj.tool_calls]
        if any(mentions_disk_full(t) for t in texts) and not disk_has_room(self.run_dir):
            raise disk_full(f"no space left in {self.run_dir}")
