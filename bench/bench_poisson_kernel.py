"""1,000 bootstrap resamples of interval alpha on 1,000,000 distinct-valued items: the index-free
kernel (``_stats/_poisson.weighted_sums``) against the previous one (commit e5b154b, read with
``git show``), in one process on the same table, alternating twice (issue 18).

Run:  .venv/bin/python bench/bench_poisson_kernel.py
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OLD = "e5b154b"


def main() -> None:
    from voirdire.agreement import _core, krippendorff_alpha
    from voirdire.data import AnnotationTable

    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{OLD}:src/voirdire/_stats/_poisson.py"],
                         capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "old_poisson.py"
        f.write_text(src.replace("from .._optional import optional_import", ""))
        spec = importlib.util.spec_from_file_location("old_poisson", f)
        old = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(old)  # type: ignore[union-attr]
    n, B = 1_000_000, 1000
    rng = np.random.default_rng(20261201)
    X = rng.normal(size=(n, 1)) + rng.normal(scale=0.7, size=(n, 2))
    t = AnnotationTable.from_arrays(np.repeat(np.arange(n), 2), np.tile(["a", "b"], n), X.ravel(), scale="interval")

    def timed(fn):
        c, w = time.process_time(), time.perf_counter()
        r = fn()
        return r, time.process_time() - c, time.perf_counter() - w

    print(f"# {n:,} items x 2 raters, {B} resamples, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for _ in range(2):
        r_new, c_new, w_new = timed(lambda: krippendorff_alpha(t, level="interval", n_resamples=B, rng=1))
        cur = _core.weighted_sums
        _core.weighted_sums = old.weighted_sums
        try:
            r_old, c_old, w_old = timed(lambda: krippendorff_alpha(t, level="interval", n_resamples=B, rng=1))
        finally:
            _core.weighted_sums = cur
        print(f"now: cpu {c_new:.2f} s wall {w_new:.2f} s | {OLD}: cpu {c_old:.2f} s wall {w_old:.2f} s | "
              f"{c_old / c_new:.2f}x cpu | CI now [{r_new.ci.low:.6f}, {r_new.ci.high:.6f}] "
              f"{OLD} [{r_old.ci.low:.6f}, {r_old.ci.high:.6f}] | load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
