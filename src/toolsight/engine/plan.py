"""What a run (or a resume) has left to do: the `Plan`, and the rules that make it.

A new run does every (task, epoch) unit, epoch 1 of every task first. A resume first checks that the
run directory was made with the same identity (`--force` accepts a change and records it in the
manifest's history), then re-runs the units without a record, those whose last record is an error
(unless `--no-retry-errors`) and those whose task changed since it ran (its content hash), and
skips the rest. `TaskExecutor` is what runs a plan somewhere other than the runner's own loop.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsight.engine.options import RunOptions, config_hash
from toolsight.engine.rundir import RunError, identity_changes, record_resume
from toolsight.engine.summary import RunSummary
from toolsight.log.files import latest_status
from toolsight.log.manifest import Manifest
from toolsight.log.record import record_key
from toolsight.version import __version__

Unit = tuple[int, int]  # (position in Runner.selected, epoch): the task is built when it runs


@dataclass
class Plan:
    """What a run (or a resume) has left to do, and the summary its outcomes are counted into."""

    todo: list[Unit]
    summary: RunSummary
    new_run: bool = True
    #: units whose model part is recorded but whose score is pending: scored now, not run again
    rescore: set[Unit] = field(default_factory=set)


def identity_of(old: Manifest) -> dict[str, Any]:
    """The identity a run directory was made with (rebuilt from its options for manifests older than
    stored identities)."""
    if old.identity:
        return old.identity
    try:
        opts = RunOptions.model_validate(old.options)
    except ValueError:
        return {}
    return opts.identity(old.benchmark, old.setting, old.dataset.hash)


@dataclass(frozen=True)
class PlanInput:
    """What planning needs to know about the run."""

    run_dir: Path
    ids: list[str]
    opts: RunOptions
    identity: dict[str, Any]
    task_hashes: dict[str, str]
    dataset_info: Callable[[str], dict[str, Any]]  # the manifest's `dataset` block for a data hash
    emit: Callable[[str], None]


def summary_prices(path: str | None) -> dict[str, Any]:
    """The price table the run summary prices with (`--prices FILE` merged over the built-in table),
    read before anything runs so a bad file stops the run at once (`PriceError`)."""
    if path is None:
        return {}
    from toolsight.metrics.cost import load_prices

    return {"prices": load_prices(Path(path)), "price_file": Path(path).name}


def plan_run(run: PlanInput, old: Manifest | None) -> Plan:
    """Which units to run: all on a new run (`old` is None); on resume, see the module docstring."""
    epochs = run.opts.control.epochs
    units = [(n, e) for e in range(1, epochs + 1) for n in range(len(run.ids))]
    summary = RunSummary(run_dir=run.run_dir, total=len(units), **summary_prices(run.opts.control.prices))
    if old is None:
        return Plan(units, summary)
    _accept_resume(run, old)
    status = latest_status(run.run_dir)
    todo: list[Unit] = []
    rescore: set[Unit] = set()
    for n, epoch in units:
        last = status.get(record_key(run.ids[n], epoch))
        if last is None:
            todo.append((n, epoch))
            continue
        error, th, pending = last
        if th is not None and th != run.task_hashes.get(run.ids[n]):
            summary.changed += 1
            todo.append((n, epoch))
        elif error is None and pending:
            summary.rescored += 1
            todo.append((n, epoch))
            rescore.add((n, epoch))
        elif error is None:
            summary.skipped += 1
        elif run.opts.control.retry_errors:
            summary.retried += 1
            todo.append((n, epoch))
        else:
            summary.kept_errors += 1
            summary.skipped += 1
    if summary.retried:
        run.emit(f"re-running {summary.retried} task(s) whose last record is an error "
                 "(--no-retry-errors keeps them)")
    if summary.changed:
        run.emit(f"re-running {summary.changed} task(s) whose content changed since they ran")
    if summary.rescored:
        run.emit(f"scoring {summary.rescored} task(s) whose score was pending (their model work is kept)")
    return Plan(todo, summary, new_run=False, rescore=rescore)


def _accept_resume(run: PlanInput, old: Manifest) -> None:
    """Refuse a resume with another identity (unless --force), and record the resume in the manifest."""
    changes = identity_changes(identity_of(old), run.identity)
    if changes and not run.opts.control.force:
        raise RunError(
            f"--resume refused: {run.run_dir} was made with a different configuration ("
            + "; ".join(changes) + "). Use a new --out, or --force to accept the change "
            "(recorded in the manifest's history)."
        )
    event: dict[str, Any] = {
        "event": "resume", "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "pid": os.getpid(),
        "toolsight_version": __version__, "retry_errors": run.opts.control.retry_errors,
    }
    flat = run.opts.flat()
    for key in ("base_url", "judge_base_url"):
        was, now = old.options.get(key), flat[key]
        if was != now:
            event[key] = now
            run.emit(f"warning: resuming with --{key.replace('_', '-')} {now} (the run was made with {was})")
    accepted: dict[str, Any] | None = None
    if changes:
        event["accepted_changes"] = changes
        accepted = {"identity": run.identity, "config_hash": config_hash(run.identity), "options": flat,
                    "dataset": run.dataset_info(run.identity["dataset"])}
        run.emit("warning: --force: accepting " + "; ".join(changes))
    record_resume(run.run_dir, old, event, accepted)
