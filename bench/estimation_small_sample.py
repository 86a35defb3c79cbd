"""Coverage at about 30 labels with unequal inclusion probabilities (the shortfall in
docs/estimation.md, "Small samples").

    nice .venv/bin/python bench/estimation_small_sample.py --reps 800
    nice .venv/bin/python bench/estimation_small_sample.py --reps 800 --interval t   # the linearised t interval
    nice .venv/bin/python bench/estimation_small_sample.py --summeval --reps 500     # the SummEval cells

``--summeval``: per SummEval dimension and fraction (5%, 10%, 25%), coverage of the full-data
expert mean and mean width of the default interval against the previous default (the linearised
variance with the same t/normal quantile and skewness correction, rebuilt from ``interval="t"``
on the same draws) for human-only and the calibrated model on all judges, uniform and active
designs (as ``bench/estimation_savings.py``). From 100 labels on both are the same interval.

The world of ``tests/estimation/test_statistical.py::test_small_sample_interval_covers_at_30_labels``
(one copy, ``tests/estimation/_small_sample.py``: 300 items, skewed 1-5 ratings, two judges) with
``pi = 0.15`` where the first judge is above 0 and ``0.05`` elsewhere (about 31 labels, 8 of them
weighted 20; ``--design uniform``: ``pi = 0.1``). Per method: bias, Monte-Carlo standard deviation
of the estimate, root-mean-square reported standard error, mean reported variance over the
Monte-Carlo variance, coverage of the finite-population mean, median effective df, mean
power-tuning ``lambda``; the last row holds the prediction fixed at the population regression
(``model="identity"`` on it: no estimation noise in the model). ``--interval auto`` (default): below 100
labelled units the design variance corrected for the model's estimation noise (the mean of the
linearised variance and the refitting jackknife; human-only: the Hajek jackknife) and the
skewness correction; ``t``: the linearised variance with the t quantile.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from voirdire.estimation import classical_mean, dr_mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tests.estimation._small_sample import DESIGNS, small_sample_world  # noqa: E402


def _old_default(auto, lin) -> tuple[float, float]:
    """The previous default interval: the linearised SE (from ``interval="t"`` on the same draw and
    model) with the default's quantile and skewness shift; below 100 labels ``lin`` is the t
    interval, from 100 on the default is already that interval."""
    if not np.isfinite(auto.df):
        return auto.ci.low, auto.ci.high
    q = (auto.ci.high - auto.ci.low) / (2 * auto.se)
    return auto.estimate - (q - auto.skew) * lin.se, auto.estimate + (q + auto.skew) * lin.se


def summeval_cells(reps: int, fracs: tuple[float, ...], only: str | None = None, seed: int = 0) -> None:
    from estimation_savings import name_key, summeval  # bench/ is on sys.path when run as a script

    from voirdire.estimation import plan_active

    print(f"| dimension | frac | method ({reps} draws) | coverage | previous default | width / previous |")
    print("|---|---:|---|---:|---:|---:|")
    for name, (Xf, y) in summeval().items():
        if only is not None and only not in name:
            continue
        X = Xf.to_numpy(float)
        truth = float(y.mean())
        for f in fracs:
            rng = np.random.default_rng([seed, int(f * 1000), name_key(name)])
            acc: dict[str, list[tuple[bool, bool, float, float]]] = {}
            for r in range(reps):
                lab = rng.random(y.size) < f
                pilot_lab = rng.random(y.size) < f / 2
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    d = plan_active(X, budget=f / 2 * y.size, human_scores=np.where(pilot_lab, y, np.nan),
                                    pilot_prob=f / 2, rng=r)
                    sel = pilot_lab | (rng.random(y.size) < d.draw_prob)
                    runs = {"human-only": lambda kind: classical_mean(np.where(lab, y, np.nan), f, target="finite",
                                                                      interval=kind),
                            "calibrated, all judges": lambda kind: dr_mean(X, np.where(lab, y, np.nan), f,
                                                                           target="finite", rng=r, interval=kind),
                            "calibrated, all judges, active": lambda kind: dr_mean(
                                X, np.where(sel, y, np.nan), d.inclusion_prob, target="finite", rng=r, interval=kind)}
                    for k, run in runs.items():
                        auto, lin = run("auto"), run("t")
                        lo, hi = _old_default(auto, lin)
                        acc.setdefault(k, []).append((auto.ci.low <= truth <= auto.ci.high, lo <= truth <= hi,
                                                      auto.ci.width, hi - lo))
            for k, v in acc.items():
                t = np.array(v, dtype=float)
                print(f"| {name} | {f:.0%} | {k} | {t[:, 0].mean():.3f} | {t[:, 1].mean():.3f} | "
                      f"{t[:, 2].mean() / t[:, 3].mean():.3f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=800)
    ap.add_argument("--interval", choices=["auto", "t"], default="auto",
                    help="auto: the default (jackknife-corrected variance below 100 labels, t, skewness correction); "
                         "t: the linearised variance with the t quantile")
    ap.add_argument("--design", choices=DESIGNS, default="unequal")
    ap.add_argument("--summeval", action="store_true", help="the SummEval cells instead (see above)")
    ap.add_argument("--fracs", default="0.05,0.10,0.25", help="with --summeval")
    ap.add_argument("--only", default=None, help="with --summeval: dimensions whose name contains this")
    ap.add_argument("--seed", type=int, default=0, help="with --summeval")
    a = ap.parse_args()
    if a.summeval:
        summeval_cells(a.reps, tuple(float(v) for v in a.fracs.split(",")), a.only, a.seed)
        return
    rng, X, y_full, pi = small_sample_world(a.design)
    n = y_full.size
    truth = y_full.mean()
    # the population regression of the humans on the judges, held fixed: no estimation noise in m
    A = np.column_stack([np.ones(n), X])
    m_pop = A @ np.linalg.lstsq(A, y_full, rcond=None)[0]
    rows: dict[str, list[tuple[float, ...]]] = {}
    for r in range(a.reps):
        lab = rng.random(n) < pi
        yy = np.where(lab, y_full, np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, kw in (("calibrated (default)", {}), ("ridge, no power tuning", {"model": "ridge"}),
                          ("linear", {"model": "linear"}), ("human-only", None),
                          ("fixed population regression", {"model": "identity"})):
                res = (classical_mean(yy, pi, target="finite", interval=a.interval) if kw is None
                       else dr_mean(m_pop if kw.get("model") == "identity" else X, yy, pi, target="finite", rng=r,
                                    interval=a.interval, **kw))
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
