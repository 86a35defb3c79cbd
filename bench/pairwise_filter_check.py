"""The stream of issue 30's speed work against the filter it replaced, on held-out humans.

Usage: .venv/bin/python bench/pairwise_filter_check.py [--sets summeval_h2h,pandalm,llmfao,sparse0,subjective1]
       [--root ../shared/data/pairwise] [--seeds 0]

For each set, leave-one-human-out (``leave_one_human_out``, 10 folds of humans at most, rng 0) of the
defaults (``PairwiseBayesModel(n_particles=300, rng=seed)``) twice: the stream whose resampled
particles are copies jittered at the end of the step (the default) and the filter that cut the
step at every resampling, jittered there and recomputed the rest (``_deferred_jitter=False``, before
issue 30), beside Dawid-Skene. Prints accuracy and NLL and the paired difference (default minus the
cut filter) with its 95% bootstrap interval over pairs. ``sparseN`` / ``subjectiveN``: the simulated
sparse raters of ``bench/pairwise_sparse.py`` at seed N. Figures: docs/pairwise.md, "Speed".
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402

from voirdire.data import read_pairwise_set  # noqa: E402
from voirdire.pairwise import DawidSkene, PairwiseBayesModel, leave_one_human_out  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from pairwise_sparse import simulate_sparse  # noqa: E402


def model(deferred: bool, seed: int) -> Callable[[], PairwiseBayesModel]:
    def make() -> PairwiseBayesModel:
        m = PairwiseBayesModel(n_particles=300, rng=seed)
        m._deferred_jitter = deferred
        return m
    return make


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="summeval_h2h,pandalm,llmfao,sparse0,subjective1")
    ap.add_argument("--root", default="../shared/data/pairwise")
    ap.add_argument("--seeds", default="0")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    for seed in (int(s) for s in args.seeds.split(",")):
        for name in args.sets.split(","):
            if name.startswith(("sparse", "subjective")):
                kind = "subjective" if name.startswith("subjective") else "sparse"
                table = simulate_sparse(rng=int(name[len(kind):]), subjective=kind == "subjective")
            else:
                table = read_pairwise_set(name, args.root)
            res = leave_one_human_out(table, methods={"default stream": model(True, seed),
                                                      "cut filter": model(False, seed),
                                                      "Dawid-Skene": lambda: DawidSkene(smoothing=0.01)}, rng=0)
            t = res.table[res.table["group"] == "all"].set_index("method")
            d = res.difference("default stream", "cut filter", rng=0).set_index("metric")
            print(f"\n### {name} (model seed {seed})\n")
            print("| method | accuracy | NLL |\n|---|---:|---:|")
            for m in t.index:
                print(f"| {m} | {t.loc[m, 'accuracy']:.4f} | {t.loc[m, 'nll']:.4f} |")
            for metric in ("accuracy", "nll"):
                r = d.loc[metric]
                print(f"\ndefault stream minus cut filter, {metric}: {r['estimate']:+.4f} "
                      f"[{r['low']:+.4f}, {r['high']:+.4f}]")


if __name__ == "__main__":
    main()
