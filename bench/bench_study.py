"""Study workspace at scale: 1,000,000 labels in 20 rounds, then one more 50,000-label round and status.

Run: python bench/bench_study.py [--rounds 20] [--per-round 50000]   (prints the times; no timed tests)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from voirdire.study import Study


def _round(path: Path, start: int, n_labels: int, rng: np.random.Generator) -> Path:
    n_items = n_labels // 5
    items = np.repeat([f"it{i}" for i in range(start, start + n_items)], 5)
    raters = np.tile(["h1", "h2", "h3", "h4", "j1"], n_items)
    roles = np.where(raters == "j1", "judge", "human")
    pd.DataFrame({"item": items, "rater": raters, "role": roles, "label": rng.integers(0, 2, items.size)}) \
        .to_csv(path, index=False)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--per-round", type=int, default=50_000)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        s = Study.init(Path(d) / "s.vdb")
        t0 = time.perf_counter()
        for r in range(a.rounds):
            s.add(_round(Path(d) / f"r{r}.csv", r * a.per_round, a.per_round, rng), role="role")
        build = time.perf_counter() - t0
        f = _round(Path(d) / "last.csv", a.rounds * a.per_round, a.per_round, rng)
        t1 = time.perf_counter()
        s.add(f, role="role")
        add = time.perf_counter() - t1
        t2 = time.perf_counter()
        st = s.status()
        status = time.perf_counter() - t2
        print(f"load average {os.getloadavg()[0]:.1f}; {st.n_labels:,} labels in {len(st.rounds)} rounds "
              f"(built in {build:.1f} s); adding a {a.per_round:,}-label round: {add:.2f} s; status: {status:.3f} s")


if __name__ == "__main__":
    main()
