"""`toolsight report` over 10,000 synthetic records: time and peak memory, and proof that it streams.

Each measurement runs in a fresh child process (peak RSS from getrusage), against baselines
measured in the same run on the same records:

- idle:   import toolsight.report (+ matplotlib) and do nothing — the interpreter's own footprint;
- parse:  read and validate every record once, keeping none — the floor for any report;
- hold:   load every record into a list — what a non-streaming report would need;
- report: build_report (markdown, --by category --by turn_type, plots and records.csv to --out);
- report-notax: the same without image-operation vocabularies (no AST pass over model code);
- report-quarter: the same over a quarter of the records — memory must not grow ~4x.

Usage: python bench/report.py [--records 10000]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path


def _child(mode: str, run: Path, out: Path) -> None:
    import toolsight.report
    import toolsight.report.plots
    from toolsight.benchmarks import registry
    from toolsight.benchmarks.visualtoolbench.taxonomy import CATEGORY_VOCABULARY
    from toolsight.benchmarks.vtc_bench.taxonomy import TOOL_GROUP_VOCABULARY
    from toolsight.engine.store import iter_records

    # the fixture's benchmark declares no vocabulary: give it both built-in ones, or (notax) none
    vocabularies = [] if mode == "report-notax" else [CATEGORY_VOCABULARY, TOOL_GROUP_VOCABULARY]
    registry.vocabularies = lambda name: list(vocabularies)

    def work() -> int:
        if mode == "parse":
            return sum(1 for _ in iter_records(run))
        if mode == "hold":
            held = list(iter_records(run))
            return len(held)
        if mode.startswith("report"):
            return len(toolsight.report.build_report([run], by=["category", "turn_type"], fmt="md", out_dir=out))
        return 0

    t0 = time.perf_counter()
    n = work()
    dt = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()  # second pass, traced: peak of Python allocations made by the work itself
    work()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"mode": mode, "seconds": dt, "rss_mb": rss_mb, "traced_mb": peak / 2**20, "n": n}))


def _measure(mode: str, run: Path, out: Path) -> dict[str, float]:
    res = subprocess.run([sys.executable, __file__, "--child", mode, str(run), str(out)],
                         capture_output=True, text=True, check=True)
    data: dict[str, float] = json.loads(res.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--child", nargs=3, metavar=("MODE", "RUN", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test-support fixture
    from runfixture import make_fixture_run

    tmp = Path(tempfile.mkdtemp(prefix="toolsight-bench-report-"))
    try:
        t0 = time.perf_counter()
        full = make_fixture_run(tmp, name="full", n_tasks=args.records, images=False)
        quarter = make_fixture_run(tmp, name="quarter", n_tasks=args.records // 4, images=False)
        size_mb = (full / "records.jsonl").stat().st_size / 1e6
        print(f"synthetic run: {args.records} records, records.jsonl {size_mb:.1f} MB "
              f"(made in {time.perf_counter() - t0:.1f} s)")
        rows = {m: _measure(m, full, tmp / f"out-{m}") for m in ("idle", "parse", "hold", "report")}
        rows["report-notax"] = _measure("report-notax", full, tmp / "out-n")
        rows["report-quarter"] = _measure("report-quarter", quarter, tmp / "out-q")
        print(f"\n{'mode':<16}{'seconds':>9}{'peak RSS MB':>13}{'traced peak MB':>16}")
        for m, r in rows.items():
            print(f"{m:<16}{r['seconds']:>9.2f}{r['rss_mb']:>13.1f}{r['traced_mb']:>16.1f}")
        rep, parse, hold, q = rows["report"], rows["parse"], rows["hold"], rows["report-quarter"]
        print("\nratios (same run; traced peak = Python allocations made by the work itself):")
        print(f"  report time / parse-only time            = {rep['seconds'] / parse['seconds']:.2f}x")
        print(f"  report traced peak / hold-all traced peak = {rep['traced_mb'] / hold['traced_mb']:.3f}")
        print(f"  report traced peak, 4x records / 1x       = {rep['traced_mb'] / q['traced_mb']:.2f}x")
        print(f"  report peak RSS / idle RSS                = {rep['rss_mb'] / rows['idle']['rss_mb']:.2f}x")
        print(f"  report time / report without taxonomy     = {rep['seconds'] / rows['report-notax']['seconds']:.2f}x"
              "  (AST classification of model code)")
        print(f"  report throughput                         = {args.records / rep['seconds']:.0f} records/s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
