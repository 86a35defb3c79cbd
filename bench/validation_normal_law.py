"""The normal law against the bootstrap in ``validate`` (issue 18): where may one stand in for the other?

Run:  .venv/bin/python bench/validation_normal_law.py [--sizes 2000,5000,20000,100000] [--seeds 3]

From ``voirdire._stats.resampling.NORMAL_MIN_UNITS`` units behind every output the leave-one-out
rule, the alt-test and the annotator check take the joint normal law of their statistics (delta
method over the units' influence values) instead of 2,000 resamples of the units. This script puts
both on the same tables, the threshold forced either way, at each size of ``--sizes`` (items;
each human labels about 60 % of them, so its d rests on about 0.6 x items units):

* ``loo z``: the largest difference between the normal and the bootstrap interval ends of the
  d's (over humans and both ends), in Monte-Carlo standard errors of a 2,000-resample percentile
  end (0.06 bootstrap SDs: sqrt(0.025 * 0.975 / 2000) / phi(1.96)); a few units are noise;
* ``sd ratio``: bootstrap SD of the d's over the delta-method SE (mean over humans; 1 +- 0.016
  is the Monte-Carlo noise of an SD from 2,000 resamples);
* ``loo p_accept``: the rule's probability of accept (normal, bootstrap) at a tolerance that puts
  the median human's d on the edge (Monte-Carlo SE of each about 0.011 near 0.5);
* ``alt p_accept``: the alt-test's probability of accept (normal, bootstrap) at a margin chosen
  to make the decision borderline (the median human's t near -2.3), and ``rater z``: the
  annotator check's S(k; pool) interval ends as for ``loo z``.

Two label models: ``five`` (labels 1-5, truth +- 1, as bench_scale) and ``skewed`` (binary labels,
each rater wrong 3 % of the time, the judge 4 %: rare disagreements, the skewed case).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from voirdire.data import AnnotationTable
from voirdire.diagnostics import rater_diagnostics
from voirdire.validation import alt_test, leave_one_out
import voirdire.diagnostics._raters as _R
import voirdire.validation._alt_test as _A
import voirdire.validation._leave_one_out as _L

MCSE = float(np.sqrt(0.025 * 0.975 / 2000) / 0.05844)  # SE of a 2.5 % quantile of 2,000 draws, in SDs


def make_table(n: int, kind: str, seed: int, n_humans: int = 5, density: float = 0.6) -> AnnotationTable:
    rng = np.random.default_rng(seed)
    keep = rng.random((n, n_humans)) < density
    keep = np.concatenate([keep, np.ones((n, 1), dtype=bool)], axis=1)
    ii, rr = np.nonzero(keep)
    if kind == "five":
        truth = rng.integers(1, 6, n)
        lab = np.clip(truth[ii] + rng.integers(-1, 2, ii.size), 1, 5)
    else:
        truth = rng.integers(0, 2, n)
        err = np.where(rr == n_humans, 0.04, 0.03)
        lab = np.where(rng.random(ii.size) < err, 1 - truth[ii], truth[ii])
    names = np.array([f"h{k}" for k in range(n_humans)] + ["judge"])
    df = pd.DataFrame({"item": ii, "rater": names[rr], "label": lab.astype(str)})
    return AnnotationTable.from_frame(df, judges=["judge"])


def force(normal: bool) -> None:
    thr = 1 if normal else 10**12
    _L.NORMAL_MIN_UNITS = _A.NORMAL_MIN_UNITS = _R.NORMAL_MIN_UNITS = thr


def one(n: int, kind: str, seed: int) -> dict[str, float]:
    t = make_table(n, kind, seed)
    out: dict[str, float] = {}
    res = {}
    cpu = {}
    for normal in (True, False):
        force(normal)
        c0 = time.process_time()
        res[normal] = leave_one_out(t, "judge", n_resamples=2000, rng=seed)
        cpu[normal] = time.process_time() - c0
    a, b = res[True], res[False]
    sd = (b.d_high - b.d_low) / 3.92
    out["loo z"] = float(np.nanmax(np.abs(np.r_[a.d_low - b.d_low, a.d_high - b.d_high]) / np.r_[sd, sd] / MCSE))
    force(False)
    ps, kw = _ps(t)
    db = _L._bootstrap_d(ps, **kw, n_resamples=2000, rng=np.random.default_rng(seed + 7), clusters=None)[:, 0, :]
    force(True)
    law = _L._normal_d(ps, **kw, clusters=None)
    out["sd ratio"] = float(np.nanmean(db.std(axis=0) / np.sqrt(np.diag(law[1])))) if law is not None else np.nan
    # the rule at a borderline tolerance (the median human's d on the edge): P(accept) both ways
    eps_loo = float(np.clip(-np.nanmedian(a.d), 0.0, 0.5))
    pl = []
    for normal in (True, False):
        force(normal)
        pl.append(leave_one_out(t, "judge", epsilon=eps_loo, n_resamples=2000, rng=seed).p_accept)
    out["loo p_accept n/b"] = tuple(pl)  # type: ignore[assignment]
    out["cpu n/b"] = (round(cpu[True], 2), round(cpu[False], 2))  # type: ignore[assignment]
    # alt-test at a borderline margin
    force(False)
    r0 = alt_test(t, "judge", epsilon=0.5, n_resamples=0)
    se = (r0.mean_d - 0.5) / r0.statistic
    k = int(np.argsort(r0.mean_d)[len(r0.mean_d) // 2])
    eps = float(r0.mean_d[k] + 2.3 * se[k])
    pa = []
    for normal in (True, False):
        force(normal)
        pa.append(alt_test(t, "judge", epsilon=eps, n_resamples=2000, rng=seed).p_accept)
    out["alt p_accept n/b"] = tuple(pa)  # type: ignore[assignment]
    rd = {}
    for normal in (True, False):
        force(normal)
        rd[normal] = rater_diagnostics(t, n_resamples=2000, rng=seed, competence=False)
    a2, b2 = rd[True], rd[False]
    sd2 = (b2.s_high - b2.s_low) / 3.92
    out["rater z"] = float(np.nanmax(np.abs(np.r_[a2.s_low - b2.s_low, a2.s_high - b2.s_high]) / np.r_[sd2, sd2] / MCSE))
    return out


def _ps(t: AnnotationTable):  # the leave-one-out kernel of the judge, as leave_one_out builds it
    from voirdire.validation._common import category_values, resolve_judges
    from voirdire.validation._kernel import PairStats

    _, jidx, hidx = resolve_judges(t, "judge", "bench")
    cv = category_values(t)
    ps = PairStats(t.dense(), hidx, jidx, n_categories=t.n_categories, score="agreement", level="nominal",
                   category_values=cv)
    return ps, dict(score="agreement", level="nominal", cvals=cv)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,5000,20000,100000")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    for kind in ("five", "skewed"):
        for n in (int(float(x)) for x in args.sizes.split(",")):
            for seed in range(args.seeds):
                o = one(n, kind, seed)
                print(f"{kind:6s} n={n:7d} seed={seed} " + "  ".join(
                    f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in o.items()), flush=True)


if __name__ == "__main__":
    main()
