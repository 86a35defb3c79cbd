"""Start-up of the command line, as ratios to ``python -c pass`` on the same machine (issue 27).

Run:  .venv/bin/python bench/bench_startup.py [--repeat 20]

Goals: ``voirdire --version`` under 3x ``python -c pass``; ``voirdire agree`` on the bundled example
(``examples/hanna_complexity.csv``, 8,448 labels, no resampling) under 10x. Each command runs
``--repeat`` times through the installed console script; the table shows the mean CPU time of the
child (user + system: robust to a busy machine) and the median wall time; the ratios use CPU time. Run it with the bytecode compiled (the Makefile's venvs compile it at install).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "hanna_complexity.csv"
GOALS = {"--version": 3.0, "agree (example)": 10.0}


def _run(argv: list[str], repeat: int) -> tuple[float, float]:
    """Mean CPU-seconds of the child over ``repeat`` runs (the kernel counts in clock ticks: the
    total over many runs, divided, is finer than any one run) and the median wall time."""
    wall = []
    before = os.times()
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall.append(time.perf_counter() - t0)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return cpu / repeat, statistics.median(wall)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    script = str(Path(sys.executable).parent / "voirdire")
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "--version": [script, "--version"],
        "--help": [script, "--help"],
        "agree (example)": [script, "agree", str(EXAMPLE), "--role", "role", "--scale", "interval", "--abstain", "-1",
                            "--n-resamples", "0"],
    }
    rows = {name: _run(argv, args.repeat) for name, argv in cases.items()}
    base_cpu, _ = rows["python -c pass"]
    print(f"{'command':<18} {'CPU s':>7} {'wall s':>7} {'x pass (CPU)':>13} {'goal':>6}")
    failed = False
    for name, (cpu, wall) in rows.items():
        ratio = cpu / base_cpu
        goal = GOALS.get(name)
        ok = goal is None or ratio < goal
        failed |= not ok
        print(f"{name:<18} {cpu:7.3f} {wall:7.3f} {ratio:13.1f} {('<' + format(goal, 'g')) if goal else '':>6}"
              f"{'' if ok else '  MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
