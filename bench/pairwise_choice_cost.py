"""Added cost of ``voirdire pairwise``'s default held-out choice (CPU seconds, one thread).

Usage: .venv/bin/python bench/pairwise_choice_cost.py [--repeat 3] [--sets summeval_h2h,subjective] [--folds 5]

For the 1,000-pair bench stream (``simulate_pairwise(1000, biases=[0.8, -0.3], rng=1)``: 3 humans, 2
judges in both orders, 300 particles) each shared set named in ``--sets`` (``../shared/data/pairwise``) and ``subjective`` (the simulated sparse
subjective raters, ``simulate_sparse_pairwise(2400, subjective=True, rng=0)``), ``fit_pairwise``
is timed with ``choose=False`` (the model alone, as before the choice) and with the default choice
(``choice_folds`` folds of humans); the best of ``--repeat`` CPU times (``time.process_time``) of each is
printed with the difference, and the method chosen with its NLL difference and interval.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from voirdire.pairwise import simulate_pairwise  # noqa: E402
from voirdire.workflows import fit_pairwise  # noqa: E402

ROOT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pairwise"


def _table(name: str):  # type: ignore[no-untyped-def]
    if name == "bench":
        return simulate_pairwise(1000, biases=[0.8, -0.3], rng=1)[0]
    if name == "subjective":  # the simulated sparse subjective raters of docs/pairwise.md, seed 0
        from voirdire.pairwise import simulate_sparse_pairwise

        return simulate_sparse_pairwise(2400, subjective=True, rng=0)
    from voirdire.data import PairwiseTable, pairwise_set_frame

    f = pairwise_set_frame(name, ROOT)
    return PairwiseTable.from_frame(f, role="role", source=name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sets", default="summeval_h2h")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    for name in ["bench", *[s for s in args.sets.split(",") if s]]:
        table = _table(name)
        best = {}
        fit = None
        for choose in (False, True):
            times = []
            for _ in range(args.repeat):
                c0 = time.process_time()
                fit = fit_pairwise(table, choose=choose, choice_folds=args.folds, seed=0)
                times.append(time.process_time() - c0)
            best[choose] = min(times)
        assert fit is not None
        s = table.summary()
        ch = fit.choice
        said = ("not made: " + fit.choice_note) if ch is None else (
            f"{ch.chosen} (model - {ch.best_baseline}: NLL {ch.nll_difference:+.4f} [{ch.nll_low:+.4f}, "
            f"{ch.nll_high:+.4f}], accuracy {ch.accuracy_difference:+.4f}; "
            f"{fit.choice_evaluation.n_folds} folds)")
        print(f"{name}: {s.n_pairs} pairs, {s.n_humans} humans, {s.n_judges} judges | model alone "
              f"{best[False]:.2f} CPU-s, with the choice {best[True]:.2f} CPU-s (+{best[True] - best[False]:.2f}, "
              f"x{best[True] / best[False]:.2f}) | choice: {said}", flush=True)


if __name__ == "__main__":
    main()
