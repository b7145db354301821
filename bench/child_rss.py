"""Peak RSS and CPU of toolsight's measured runs alone (no floors): `bench/engine.py`'s own child
(`--child toolsight`, its own process, route kept after a 1-task warm-up) against a scripted server
in a subprocess. For comparing two versions of the code quickly, e.g. `PYTHONPATH=OTHER/src`.

Usage: python bench/child_rss.py WIRE TASKS ROUNDS [--repeat N]
  ROUNDS 5: the crop workload (5 crop calls + answer); ROUNDS 0: single-call tasks.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import engine


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wire", choices=["openai", "anthropic", "google"])
    ap.add_argument("tasks", type=int)
    ap.add_argument("rounds", type=int)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    from toolsight.models.scripted import ScriptedServer

    with tempfile.TemporaryDirectory(prefix="toolsight-bench-rss-") as t:
        tmp = Path(t)
        data, warm = engine.make_dataset(tmp / "data", a.tasks), engine.make_dataset(tmp / "warm", 1)
        with ScriptedServer(engine.script(a.rounds, 0), subprocess=True) as srv:
            engine.run_child("toolsight", a.wire, srv.base_url, warm, 1, tmp / "cache")  # learns the route
            for _ in range(a.repeat):
                r = engine.run_child("toolsight", a.wire, srv.base_url, data, 32, tmp / "cache")
                print(f"{a.wire}, {a.tasks} tasks x {a.rounds + 1} calls: peak RSS {r['rss']:.1f} MB "
                      f"({r['rss_start']:.1f} MB when the clock started), CPU {1000 * r['cpu'] / r['calls']:.2f} ms "
                      f"per model call, SDK imported: {r['sdk']}")


if __name__ == "__main__":
    main()
