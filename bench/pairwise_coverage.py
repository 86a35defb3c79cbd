"""Coverage of the 95% intervals of the judges' position biases under the default model.

Usage: .venv/bin/python bench/pairwise_coverage.py [--pairs 300,1000,2000] [--streams 30] [--particles 100]
       [--move] [--quadrature laplace|adaptive] [--setting bench|other] [--seed-offset 2000]

Streams drawn from the default judge model. ``--setting bench`` (the setting of docs/pairwise.md, "Are the
bias intervals honest?"): ``simulate_pairwise(n, biases=[0.8, -0.3], reliabilities=[0.5, 1.0],
tie_offsets=[-1.0, 0.0], rng=2000 + s)``; ``--setting other``: three judges, ``biases=[0.4, 0.0, -0.6],
reliabilities=[0.8, 0.3, 1.0], tie_offsets=[0.5, -0.5, 0.0]`` (with ``--seed-offset 5000``: streams
drawn at ``rng=5000 + s``, seeds the model was never tried on). Each stream is fitted by
``PairwiseBayesModel(n_particles=100, rng=s)`` (``--move``: also with ``batch_move=True``;
``--quadrature adaptive``: adaptive Gauss-Hermite integration of each pair instead of the Laplace
approximation). Prints, per stream length, how many of the judges x streams intervals cover the truth
and the mean and sd of the standardised errors (estimate - truth) / sd per judge, for two readings of
the same fit: ``posterior()`` (what the model reports: by default the judges' batch posterior, computed
once when asked, see ``PairwiseBayesModel._bias_summary``) and ``particles`` (the filter's weighted
particles: mean, sd and quantiles; the intervals the model reported before). CPU s: the fits and the
``posterior()`` calls of the row's streams (the particle reading costs nothing more).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from voirdire.pairwise import PairwiseBayesModel, simulate_pairwise  # noqa: E402

SETTINGS: dict[str, dict[str, Any]] = {
    "bench": {"biases": [0.8, -0.3], "reliabilities": [0.5, 1.0], "tie_offsets": [-1.0, 0.0]},
    "other": {"biases": [0.4, 0.0, -0.6], "reliabilities": [0.8, 0.3, 1.0], "tie_offsets": [0.5, -0.5, 0.0]},
}


def _wq(x: np.ndarray, w: np.ndarray, q: float) -> float:
    o = np.argsort(x, kind="stable")
    cw = np.cumsum(w[o]) / w.sum()
    return float(x[o][min(int(np.searchsorted(cw, q)), len(x) - 1)])


def run(n_pairs: int, streams: int, particles: int, move: bool, quadrature: str = "laplace",
        setting: str = "bench", offset: int = 2000) -> tuple[dict[str, tuple[int, int, np.ndarray]], float]:
    out: dict[str, list] = {"posterior()": [0, []], "particles": [0, []]}
    c0 = time.process_time()
    n = 0
    for s in range(streams):
        table, truth = simulate_pairwise(n_pairs, rng=offset + s, **SETTINGS[setting])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = PairwiseBayesModel(n_particles=particles, batch_move=move, quadrature=quadrature,  # type: ignore[arg-type]
                                       rng=s).fit(table)
            post = model.posterior()
        b, w = model.particles_
        low = np.array([_wq(b[:, j], w[:, j], 0.025) for j in range(b.shape[1])])
        high = np.array([_wq(b[:, j], w[:, j], 0.975) for j in range(b.shape[1])])
        tb = truth.biases
        n += len(tb)
        for key, (lo, hi, mean, sd) in (("posterior()", (post.bias_low, post.bias_high, post.bias_mean, post.bias_sd)),
                                        ("particles", (low, high, model.bias_mean_, model.bias_sd_))):
            out[key][0] += int(((lo <= tb) & (tb <= hi)).sum())
            out[key][1].append((mean - tb) / sd)
    cpu = time.process_time() - c0
    return {k: (h, n, np.array(z)) for k, (h, z) in out.items()}, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", default="300,1000,2000")
    ap.add_argument("--streams", type=int, default=30)
    ap.add_argument("--particles", type=int, default=100)
    ap.add_argument("--move", action="store_true")
    ap.add_argument("--quadrature", default="laplace", choices=["laplace", "adaptive"])
    ap.add_argument("--setting", default="bench", choices=sorted(SETTINGS))
    ap.add_argument("--seed-offset", type=int, default=2000)
    args = ap.parse_args()
    print(f"# setting {args.setting} {SETTINGS[args.setting]}, streams rng={args.seed_offset}+s\n")
    print("| pairs | inference | intervals | covering | (est - truth) / sd per judge: mean, sd | CPU s |")
    print("|---:|---|---|---:|---|---:|")
    for n in (int(x) for x in args.pairs.split(",")):
        for move in ((False, True) if args.move else (False,)):
            res, cpu = run(n, args.streams, args.particles, move, args.quadrature, args.setting, args.seed_offset)
            label = ("batch move" if move else "filter") + ("" if args.quadrature == "laplace" else ", adaptive")
            for key, (hits, tot, z) in res.items():
                zs = "; ".join(f"{z[:, j].mean():.2f}, {z[:, j].std():.2f}" for j in range(z.shape[1]))
                print(f"| {n:,} | {label} | {key} | {hits} of {tot} ({100 * hits / tot:.0f}%) | {zs} | {cpu:.0f} |",
                      flush=True)


if __name__ == "__main__":
    main()
