"""Coverage of the 95% intervals of the judges' position biases under the default model.

Usage: .venv/bin/python bench/pairwise_coverage.py [--pairs 300,1000,2000] [--streams 30] [--particles 100]
       [--move]

Streams drawn from the default judge model (the setting of docs/pairwise.md, "Are the bias
intervals honest?"): ``simulate_pairwise(n, biases=[0.8, -0.3], reliabilities=[0.5, 1.0],
tie_offsets=[-1.0, 0.0], rng=2000 + s)``, fitted by ``PairwiseBayesModel(n_particles=100, rng=s)``
(``--move``: also with ``batch_move=True``; ``--quadrature adaptive``: adaptive Gauss-Hermite
integration of each pair instead of the Laplace approximation). Prints, per stream length, how many of the 2 x streams
intervals cover the truth, and the mean and sd of the standardised errors (estimate - truth) / sd per
judge.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from voirdire.pairwise import PairwiseBayesModel, simulate_pairwise  # noqa: E402


def run(n_pairs: int, streams: int, particles: int, move: bool, quadrature: str = "laplace"
        ) -> tuple[int, int, np.ndarray, float]:
    hits, z = 0, []
    c0 = time.process_time()
    for s in range(streams):
        table, truth = simulate_pairwise(n_pairs, biases=[0.8, -0.3], reliabilities=[0.5, 1.0],
                                         tie_offsets=[-1.0, 0.0], rng=2000 + s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = PairwiseBayesModel(n_particles=particles, batch_move=move, quadrature=quadrature,
                                      rng=s).fit(table).posterior()
        hits += int(((post.bias_low <= truth.biases) & (truth.biases <= post.bias_high)).sum())
        z.append((post.bias_mean - truth.biases) / post.bias_sd)
    return hits, 2 * streams, np.array(z), time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", default="300,1000,2000")
    ap.add_argument("--streams", type=int, default=30)
    ap.add_argument("--particles", type=int, default=100)
    ap.add_argument("--move", action="store_true")
    ap.add_argument("--quadrature", default="laplace", choices=["laplace", "adaptive"])
    args = ap.parse_args()
    print("| pairs | inference | covering | (est - truth) / sd, judge 1: mean, sd | judge 2: mean, sd | CPU s |")
    print("|---:|---|---:|---|---|---:|")
    for n in (int(x) for x in args.pairs.split(",")):
        for move in ((False, True) if args.move else (False,)):
            hits, tot, z, cpu = run(n, args.streams, args.particles, move, args.quadrature)
            label = ("batch move" if move else "filter") + ("" if args.quadrature == "laplace" else ", adaptive")
            print(f"| {n:,} | {label} | {hits} of {tot} "
                  f"({100 * hits / tot:.0f}%) | {z[:, 0].mean():.2f}, {z[:, 0].std():.2f} | "
                  f"{z[:, 1].mean():.2f}, {z[:, 1].std():.2f} | {cpu:.0f} |", flush=True)


if __name__ == "__main__":
    main()
