"""Throughput of PairwiseBayesModel.fit on the 1,000-pair bench stream (CPU time, one thread).

Usage: .venv/bin/python bench/pairwise_speed.py [--pairs 1000] [--repeat 3] [--variants defaults,paper]
       [--memory 50000] [--posterior] [--biases 0.8,-0.3]   (variants: the keys of VARIANTS, comma-separated)

The stream: ``simulate_pairwise(n, biases=[0.8, -0.3], rng=1)``: 3 humans and 2 judges in both
orders a pair (7 verdicts), 300 particles. Each variant is fitted ``--repeat`` times (after one
warm-up fit); the best CPU time (``time.process_time``) is reported as pairs per CPU-second, so a
loaded machine shows up as a slower figure, not as a wrong one. ``--memory N`` also streams N
pairs through ``partial_fit`` in 1,000-pair batches with ``store_items=False`` and prints the
resident memory at N/10 and N pairs (flat in the stream length). ``--posterior`` also times the first
``posterior()`` call on the last fit of each variant (under the default judge model it computes the judges'
batch posterior once, see ``PairwiseBayesModel._bias_summary``) and prints the rate of fit + posterior().
``--biases``: the judges' planted biases (one judge each; default the bench stream's two).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from voirdire.pairwise import PairwiseBayesModel, simulate_pairwise  # noqa: E402

PAPER = {"pair_prior": "standard", "integrate_verdict": False, "n_refine": 0, "judge_reliability": False,
         "judge_ties": False}
VARIANTS: dict[str, dict] = {
    "defaults": {},
    "defaults without refine (n_refine=0)": {"n_refine": 0},
    "paper": PAPER,
    "adaptive quadrature": {"quadrature": "adaptive"},
    "calibrated intervals (adaptive quadrature + batch move)": {"quadrature": "adaptive", "batch_move": True},
}


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def throughput(kw: dict, n_pairs: int, repeat: int, biases: tuple[float, ...] = (0.8, -0.3)
               ) -> tuple[float, PairwiseBayesModel, float]:
    table, _ = simulate_pairwise(n_pairs, biases=biases, rng=1)
    PairwiseBayesModel(n_particles=300, rng=0, **kw).fit(table)       # warm-up
    best = np.inf
    model = None
    for r in range(repeat):
        c0 = time.process_time()
        model = PairwiseBayesModel(n_particles=300, rng=r, **kw).fit(table)
        best = min(best, time.process_time() - c0)
    assert model is not None
    c0 = time.process_time()
    model.posterior()
    return n_pairs / best, model, time.process_time() - c0


def memory(n_pairs: int) -> tuple[float, float, float]:
    model = PairwiseBayesModel(n_particles=300, store_items=False, rng=0)
    gc.collect()
    r0 = rss_mb()
    out = {}
    for k in range(n_pairs // 1000):
        t, _ = simulate_pairwise(1000, biases=[0.8, -0.3], rng=10 + k)
        model.partial_fit(t)
        if (k + 1) * 1000 in (n_pairs // 10, n_pairs):
            gc.collect()
            out[(k + 1) * 1000] = rss_mb()
    return r0, out[n_pairs // 10], out[n_pairs]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--variants", default="defaults,defaults without refine (n_refine=0),paper")
    ap.add_argument("--memory", type=int, default=0)
    ap.add_argument("--posterior", action="store_true")
    ap.add_argument("--biases", default="0.8,-0.3")
    args = ap.parse_args()
    print(f"# PairwiseBayesModel.fit throughput, {args.pairs:,} pairs (numpy {np.__version__})\n")
    extra = " posterior() CPU-s | fit + posterior(): pairs / CPU-s |" if args.posterior else ""
    print(f"| variant | pairs / CPU-s | biases (truth {args.biases}) | resamplings |" + extra)
    print("|---|---:|---|---:|" + ("---:|---:|" if args.posterior else ""))
    for name in args.variants.split(","):
        rate, m, post_cpu = throughput(VARIANTS[name], args.pairs, args.repeat,
                                       tuple(float(b) for b in args.biases.split(",")))
        more = f" {post_cpu:.3f} | {args.pairs / (args.pairs / rate + post_cpu):,.0f} |" if args.posterior else ""
        print(f"| {name} | {rate:,.0f} | {np.round(m.bias_mean_, 3).tolist()} | {m.n_resamples_} |{more}", flush=True)
    if args.memory:
        r0, a, b = memory(args.memory)
        print(f"\nRSS (MB), partial_fit in 1,000-pair batches, store_items=False: before {r0:.1f}, after "
              f"{args.memory // 10:,} pairs {a:.1f}, after {args.memory:,} pairs {b:.1f} ({b - a:+.1f})")


if __name__ == "__main__":
    main()
