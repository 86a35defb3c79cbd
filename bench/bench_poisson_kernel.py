"""1,000 bootstrap resamples of interval alpha on 1,000,000 distinct-valued items: the index-free
kernel (``_stats/_poisson.weighted_sums``) against an earlier one (``--old``, read with
``git show``: e5b154b, the first index-free kernel; 45cede5, the float64 kernel in cache-sized
blocks), in one process on the same table, alternating twice (issue 18). Each line gives the
whole ``krippendorff_alpha`` call (estimate, analytic SE, 1,000 resamples, the BCa interval with
its jackknife) and, apart, the bootstrap's weighted sums alone (``weighted_sums``), CPU and wall.

Run:  .venv/bin/python bench/bench_poisson_kernel.py [--old 45cede5]

``--against REF``: the whole call instead (estimate, analytic SE, 1,000 resamples, BCa with its
jackknife: the serial preparation included), this tree against commit REF's package (``git
archive``), each in a fresh process that builds the table and then times ``--repeat`` calls,
alternating REF / now ``--rounds`` times so that a drifting machine load falls on both alike;
CPU seconds and the 1-minute load are printed with each wall time.

Run:  env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/bench_poisson_kernel.py --against e1a89c8
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OLD = "45cede5"


def main() -> None:

    ap = argparse.ArgumentParser()
    ap.add_argument("--old", default=OLD, help="the commit whose kernel is timed against the current one")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--against", default="", help="time the whole call against this commit's package instead")
    ap.add_argument("--rounds", type=int, default=3, help="--against: alternations of REF and now")
    ap.add_argument("--resamples", type=int, default=1000,
                    help="--against: resamples per call (20: the preparation and jackknife with a near-empty kernel)")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.repeat, args.resamples)
    if args.against:
        return against(args.against, args.rounds, args.repeat, args.resamples)
    old_ref = args.old
    from voirdire.agreement import _core, krippendorff_alpha
    from voirdire.data import AnnotationTable

    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{old_ref}:src/voirdire/_stats/_poisson.py"],
                         capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "old_poisson.py"
        f.write_text(src.replace("from .._optional import", "from voirdire._optional import"))
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

    kern: list[tuple[float, float]] = []

    def clocked(ws):
        def f(*a, **k):
            _, c, w = timed(lambda: ws(*a, **k))
            kern.append((c, w))
            return _
        return f

    print(f"# {n:,} items x 2 raters, {B} resamples, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    cur = _core.weighted_sums
    for _ in range(args.repeat):
        kern.clear()
        _core.weighted_sums = clocked(cur)
        try:
            r_new, c_new, w_new = timed(lambda: krippendorff_alpha(t, level="interval", n_resamples=B, rng=1))
            _core.weighted_sums = clocked(old.weighted_sums)
            r_old, c_old, w_old = timed(lambda: krippendorff_alpha(t, level="interval", n_resamples=B, rng=1))
        finally:
            _core.weighted_sums = cur
        (kc_new, kw_new), (kc_old, kw_old) = kern
        print(f"now:    call cpu {c_new:.2f} s wall {w_new:.2f} s | weighted sums cpu {kc_new:.2f} s wall {kw_new:.2f} s"
              f" | CI [{r_new.ci.low:.6f}, {r_new.ci.high:.6f}]\n"
              f"{old_ref}: call cpu {c_old:.2f} s wall {w_old:.2f} s | weighted sums cpu {kc_old:.2f} s wall {kw_old:.2f} s"
              f" | CI [{r_old.ci.low:.6f}, {r_old.ci.high:.6f}]\n"
              f"  -> weighted sums {kc_old / kc_new:.2f}x cpu; call {c_old / c_new:.2f}x cpu | load {os.getloadavg()[0]:.1f}",
              flush=True)


def child(src: str, repeat: int, B: int) -> None:
    """One process: the bench table, then ``repeat`` timed calls of the package under ``src``."""
    sys.path.insert(0, src)
    from voirdire.agreement import krippendorff_alpha
    from voirdire.data import AnnotationTable

    n = 1_000_000
    rng = np.random.default_rng(20261201)
    X = rng.normal(size=(n, 1)) + rng.normal(scale=0.7, size=(n, 2))
    t = AnnotationTable.from_arrays(np.repeat(np.arange(n), 2), np.tile(["a", "b"], n), X.ravel(), scale="interval")
    runs = []
    for _ in range(repeat):
        load = os.getloadavg()[0]
        c, w = time.process_time(), time.perf_counter()
        r = krippendorff_alpha(t, level="interval", n_resamples=B, rng=1)
        runs.append(f"wall {time.perf_counter() - w:5.2f} s cpu {time.process_time() - c:5.2f} s (load {load:4.1f})")
    print(" | ".join(runs) + f" | CI [{r.ci.low:.10f}, {r.ci.high:.10f}]", flush=True)


def against(ref: str, rounds: int, repeat: int, B: int) -> None:
    """The whole call under ``ref``'s package and this tree's, alternating, each in its own process."""
    print(f"# 1,000,000 items x 2 raters, {B} resamples, whole krippendorff_alpha call, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}; {ref} vs this tree, {rounds} rounds of {repeat} calls", flush=True)
    with tempfile.TemporaryDirectory() as d:
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", d], input=arch, check=True)
        for _ in range(rounds):
            for name, src in ((ref, str(Path(d) / "src")), ("now", str(ROOT / "src"))):
                out = subprocess.run([sys.executable, __file__, "--child", src, "--repeat", str(repeat),
                                      "--resamples", str(B)],
                                     capture_output=True, text=True, check=True).stdout.strip()
                print(f"{name:>8s}: {out}", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
