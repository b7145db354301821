"""How a sweep plan expands into runs, checked on the expanded options (no run needed): which run
gets which options (defaults < benchmark options < model options < the model's generation
settings), run ids that never collide (the same model twice, several epochs), and generated sets
whose benchmark-level options still reach every run."""

from __future__ import annotations

from pathlib import Path

from scalekit import dataset

from toolsight.engine.sweep import check_settings, expand, read_plan


def _write(tmp: Path, text: str) -> Path:
    dataset(tmp / "ds", 2)
    path = tmp / "plan.toml"
    path.write_text(text)
    return path


def test_options_layer_defaults_then_benchmark_then_model(tmp_path: Path) -> None:
    path = _write(tmp_path, """
[defaults]
concurrency = 3
retries = 1
generate = { temperature = 0.1, top_p = 0.5 }

[[models]]
spec = "reference"
options = { retries = 4, generate = { top_p = 0.7 } }
generate = { max_tokens = 99 }

[[models]]
spec = "random"

[[benchmarks]]
name = "ds"
options = { concurrency = 5, retries = 2, generate = { temperature = 0.2 } }
""")
    sweep = expand(read_plan(path), path, tmp_path / "sw")
    ref, rnd = (next(r for r in sweep.runs if r.model == m) for m in ("reference", "random"))
    # benchmark options over defaults; model options over both; the model's `generate` over every layer
    assert (ref.opts.control.concurrency, ref.opts.control.retries) == (5, 4)
    assert (rnd.opts.control.concurrency, rnd.opts.control.retries) == (5, 2)
    g = ref.opts.model.generate
    assert (g.temperature, g.top_p, g.max_tokens) == (0.2, 0.7, 99)
    assert (rnd.opts.model.generate.temperature, rnd.opts.model.generate.top_p) == (0.2, 0.5)


def test_run_ids_never_collide(tmp_path: Path) -> None:
    path = _write(tmp_path, """
epochs = 2

[[models]]
spec = "reference"

[[models]]
spec = "reference"
options = { retries = 0 }

[[benchmarks]]
name = "ds"
""")
    sweep = expand(read_plan(path), path, tmp_path / "sw")
    ids = [r.id for r in sweep.runs]
    outs = [r.opts.control.out for r in sweep.runs]
    assert len(sweep.runs) == 4 and len(set(ids)) == 4 and len(set(outs)) == 4
    assert sorted(r.epoch for r in sweep.runs) == [1, 1, 2, 2]
    assert all(f"__e{r.epoch}" in r.id for r in sweep.runs)
    # the second `reference` keeps its own options in its own run directory
    second = [r for r in sweep.runs if r.opts.control.retries == 0]
    assert len(second) == 2 and all(r.id.endswith("__1") for r in second)


def test_a_generated_sets_runs_keep_the_benchmark_options(tmp_path: Path) -> None:
    path = _write(tmp_path, """
[[models]]
spec = "reference"

[[benchmarks]]
name = "gen"
generate = { kind = "maze", n = 1, seed = 2, difficulty = 5 }
options = { concurrency = 6, generate = { temperature = 0.3 } }
""")
    sweep = expand(read_plan(path), path, tmp_path / "sw")
    (run,) = sweep.runs
    assert run.opts.control.concurrency == 6 and run.opts.model.generate.temperature == 0.3
    assert run.opts.benchmark.endswith("0-maze-n1-s2-d5")  # the generated dataset folder is the target


def test_each_run_gets_its_own_benchmark_with_its_own_options(tmp_path: Path) -> None:
    """Runs of one benchmark entry share its loaded tasks, never its options (`-B`): each run's
    Benchmark object is its own, configured with that run's options."""
    from toolsight.engine.sweep import SweepRunner

    demos = tmp_path / "demo_prompts.py"
    demos.write_text('demo_prompt_maze = "MAZE DEMO"\n')
    path = _write(tmp_path, f"""
[[models]]
spec = "reference"
options = {{ benchmark_options = {{ demo_prompts = "{demos}" }} }}

[[models]]
spec = "random"

[[benchmarks]]
name = "tir"
generate = {{ kind = "maze", n = 1, seed = 2, difficulty = 5 }}
""")
    from toolsight.engine.sweep import generate_data

    plan = read_plan(path)
    generate_data(plan, path, tmp_path / "sw")
    sweep = expand(plan, path, tmp_path / "sw")
    for r in sweep.runs:  # a generated TIR set runs as a dataset folder; name the benchmark to get its options
        r.opts = r.opts.replace(benchmark="tir-bench", data=r.opts.benchmark)
    runner = SweepRunner(sweep, make_model=lambda spec, url: None)  # type: ignore[arg-type, return-value]
    (ref_bench, ref_tasks), (rnd_bench, rnd_tasks) = (runner._benchmark(r) for r in sweep.runs)
    assert len(ref_tasks.tasks) == len(rnd_tasks.tasks) == 1
    assert ref_bench is not rnd_bench
    assert getattr(ref_bench, "few_shot", None) == {"maze": "MAZE DEMO"}
    assert getattr(rnd_bench, "few_shot", None) == {}


def test_a_generated_phystool_set_runs_under_the_setting_its_reference_needs(tmp_path: Path) -> None:
    """PhysToolBench's default setting is `cot` (no tools); a generated set's reference solutions detect
    and read numbers, so a sweep that generates one and names no setting runs it under `tools`, as
    `toolsight run phystoolbench --data DIR` does — decided before the set exists."""
    path = _write(tmp_path, """
[[models]]
spec = "reference"

[[benchmarks]]
name = "ptb"
generate = { kind = "phystool", n = 2, seed = 1 }

[[benchmarks]]
name = "phystoolbench"
settings = ["cot"]
generate = { kind = "phystool", n = 2, seed = 1 }
""")
    sweep = expand(read_plan(path), path, tmp_path / "sw", settings_of=check_settings)
    assert [(r.opts.benchmark, r.setting) for r in sweep.runs] == [("phystoolbench", "tools"),
                                                                    ("phystoolbench", "cot")]
