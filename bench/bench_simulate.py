"""Benchmark of voirdire.simulate (plain script; prints timings, throughput and ratios).

Run:  .venv/bin/python bench/bench_simulate.py [--fraction F] [--dask]

Workload (issue 4): a grid the size of the sparse-overlap paper's Table 3, 40 cells (4 synthetic
fully crossed matrices of 500 items, K = 4/5 humans, L = 2/5 labels, 10 judges each) x 4 designs
x 3 coverages x 300 repetitions = 144,000 sparse validations (14,400 tasks: one sparse draw per
task, every judge of the matrix validated on it), target under 10 minutes on 2 cores.

It runs the grid (or ``--fraction`` of its repetitions) on 1 worker (in-process), on 2 local
worker processes and, with ``--dask``, on a Dask LocalCluster of 2 single-threaded worker
processes, checks that the three give identical tables, and prints throughput per worker and the
1 -> 2 worker scaling. Peer ratio: the engine's dense Krippendorff alpha against
``krippendorff.alpha`` on the same sparse human matrices (the hot loop's second kernel).
BLAS threads are pinned to 1 so that "one worker" means one core.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fraction", type=float, default=1.0, help="share of the 300 repetitions to run")
    ap.add_argument("--dask", action="store_true", help="also run on a Dask LocalCluster (2 workers)")
    args = ap.parse_args()

    from voirdire.simulate import PAPER_COVERAGES, PAPER_DESIGNS, run_experiment, sparse_overlap_settings
    from voirdire._simulation import alpha_dense
    from voirdire._simulation import sparse_codes

    reps = max(1, int(round(300 * args.fraction)))
    settings = sparse_overlap_settings(n_items=500, rng=0)
    n_cells = sum(len(s.table.judges) for s in settings)
    grid = dict(designs=PAPER_DESIGNS, coverages=PAPER_COVERAGES, n_repetitions=reps, rng=0)
    n_val = n_cells * len(PAPER_DESIGNS) * len(PAPER_COVERAGES) * reps
    print(f"grid: {n_cells} cells x {len(PAPER_DESIGNS)} designs x {len(PAPER_COVERAGES)} coverages x {reps} "
          f"repetitions = {n_val:,} sparse validations ({n_val // 10:,} tasks)")
    print(f"machine: {os.cpu_count()} cores (shared with other users today: timings are upper bounds)")

    def line(label: str, wall: float, res: object) -> None:
        busy = res.busy_s  # type: ignore[attr-defined]
        nw = res.n_workers  # type: ignore[attr-defined]
        cpu = res.cpu_s  # type: ignore[attr-defined]
        print(f"{label:<26}{wall:6.1f} s wall {n_val / wall:7.0f}/s | per worker: {n_val / busy / 1:7.0f}/s busy, "
              f"{n_val / cpu:7.0f}/s CPU (CPU share {cpu / busy:.2f}) | parallel efficiency "
              f"{busy / (nw * res.elapsed_s):.2f} | load {os.getloadavg()[0]:.1f}")  # type: ignore[attr-defined]

    print(f"load average before: {os.getloadavg()[0]:.1f}")
    t = time.perf_counter()
    r1 = run_experiment(settings, n_jobs=1, **grid)
    w1 = time.perf_counter() - t
    line("1 worker (in-process):", w1, r1)
    t = time.perf_counter()
    r2 = run_experiment(settings, n_jobs=2, **grid)
    w2 = time.perf_counter() - t
    line("2 worker processes:", w2, r2)
    print(f"  scaling 1 -> 2 workers (wall, including process start-up): {w1 / w2:.2f}x")
    pd.testing.assert_frame_equal(r1.runs, r2.runs)
    pd.testing.assert_frame_equal(r1.tasks, r2.tasks)
    print("identical results: local == processes")
    if args.dask:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as cl, \
                Client(cl) as client:
            # a long-lived cluster has the package imported already: warm the workers up (the
            # import of numpy/scipy/pandas/voirdire takes ~2 s per worker on this machine)
            import importlib

            client.run(importlib.import_module, "voirdire._simulation.runner")
            t = time.perf_counter()
            r3 = run_experiment(settings, scheduler=client, **grid)
            w3 = time.perf_counter() - t
        line("Dask LocalCluster (2):", w3, r3)
        print(f"  scaling 1 -> 2 Dask workers (wall, cluster start-up excluded): {w1 / w3:.2f}x")
        pd.testing.assert_frame_equal(r1.runs, r3.runs)
        print("identical results: local == dask")
    if args.fraction < 1:
        print(f"extrapolated full grid (144,000 validations), 1 worker: {w1 / args.fraction:.0f} s; "
              f"2 workers: {w2 / args.fraction:.0f} s  [EXTRAPOLATION, linear in repetitions]")

    # peer ratio on the alpha kernel
    import krippendorff

    s = settings[0]
    t0 = s.table
    codes = t0.dense()
    hc = t0.human_idx
    gen = np.random.default_rng(0)
    mats = [sparse_codes(codes, primary_col=int(hc[0]), secondary_cols=hc[1:], design="random", m=25,
                         n_categories=t0.n_categories, rng=gen)[:, hc] for _ in range(200)]
    t = time.perf_counter()
    ours = [alpha_dense(m, t0.n_categories) for m in mats]
    a_ours = time.perf_counter() - t
    t = time.perf_counter()
    theirs = [krippendorff.alpha(reliability_data=np.where(m >= 0, m, np.nan).T.astype(float),
                                 level_of_measurement="nominal") for m in mats]
    a_peer = time.perf_counter() - t
    assert np.allclose(ours, theirs)
    print(f"alpha on 200 sparse 500x{hc.size} matrices: voirdire {a_ours * 1e3:.1f} ms, krippendorff "
          f"{a_peer * 1e3:.1f} ms (ratio {a_peer / a_ours:.1f}x; same values)")


if __name__ == "__main__":
    main()
