"""Coverage at about 30 labels with unequal inclusion probabilities (the shortfall in
docs/estimation.md, "Small samples").

    nice .venv/bin/python bench/estimation_small_sample.py --reps 800
    nice .venv/bin/python bench/estimation_small_sample.py --reps 800 --interval t   # without the skewness correction

The world of ``tests/estimation/test_statistical.py::test_small_sample_interval_covers_at_30_labels``
(one copy, ``tests/estimation/_small_sample.py``: 300 items, skewed 1-5 ratings, two judges) with
``pi = 0.15`` where the first judge is above 0 and ``0.05`` elsewhere (about 31 labels, 8 of them
weighted 20; ``--design uniform``: ``pi = 0.1``). Per method: bias, Monte-Carlo standard deviation
of the estimate, root-mean-square reported standard error, mean reported variance over the
Monte-Carlo variance, coverage of the finite-population mean, median effective df, mean
power-tuning ``lambda``. ``--interval auto`` (default): the jackknife design variance below 100
labelled units and the skewness correction; ``t``: the linearised variance with the t quantile.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from voirdire.estimation import classical_mean, dr_mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.estimation._small_sample import DESIGNS, small_sample_world  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=800)
    ap.add_argument("--interval", choices=["auto", "t"], default="auto",
                    help="auto: the default (jackknife variance below 100 labels, t, skewness correction); "
                         "t: the linearised variance with the t quantile")
    ap.add_argument("--design", choices=DESIGNS, default="unequal")
    a = ap.parse_args()
    rng, X, y_full, pi = small_sample_world(a.design)
    n = y_full.size
    truth = y_full.mean()
    rows: dict[str, list[tuple[float, ...]]] = {}
    for r in range(a.reps):
        lab = rng.random(n) < pi
        yy = np.where(lab, y_full, np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, kw in (("calibrated (default)", {}), ("ridge, no power tuning", {"model": "ridge"}),
                          ("linear", {"model": "linear"}), ("human-only", None)):
                res = (classical_mean(yy, pi, target="finite", interval=a.interval) if kw is None
                       else dr_mean(X, yy, pi, target="finite", rng=r, interval=a.interval, **kw))
                rows.setdefault(k, []).append((res.estimate - truth, res.se, res.ci.low <= truth <= res.ci.high,
                                               res.df, np.nan if res.lam is None else res.lam))
    print(f"| method ({a.reps} draws, {a.design}, interval={a.interval}) | bias | sd of estimate | rms SE | "
          "mean SE^2 / var | coverage | median df | mean lambda |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for k, v in rows.items():
        t = np.array(v, dtype=float)
        lam = f"{np.nanmean(t[:, 4]):.2f}" if np.isfinite(t[:, 4]).any() else ""
        print(f"| {k} | {t[:, 0].mean():+.4f} | {t[:, 0].std():.4f} | {np.sqrt(np.mean(t[:, 1] ** 2)):.4f} | "
              f"{np.mean(t[:, 1] ** 2) / t[:, 0].var():.2f} | {t[:, 2].mean():.3f} | {np.median(t[:, 3]):.1f} | {lam} |")


if __name__ == "__main__":
    main()
