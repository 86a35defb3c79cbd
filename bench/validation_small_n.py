"""Validation statistics at small n (issue 13; figures in docs/validation.md "Small samples").

1. Alt-test, one human's test at the null boundary: d_i in {-1, 0, 1} with mean exactly epsilon
   (so H0: mean(d) >= epsilon holds with equality); the rejection rate at one-sided level 0.05 is
   the test's size. The library's own ``t_pvalues`` and ``_wilcoxon`` are called.
2. Leave-one-out: coverage of the percentile interval of d_k and the calibration of
   ``decision_stability`` (the bootstrap probability of the same decision) against how often an
   independent table of the same size gives the same decision.

    nice -n 10 .venv/bin/python bench/validation_small_n.py --reps 2000
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np
import pandas as pd

from voirdire.data import AnnotationTable
from voirdire.validation import _leave_one_out as _loo
from voirdire.validation import leave_one_out
from voirdire.validation._alt_test import _wilcoxon, t_pvalues


def alt_size(n: int, p0: float, eps: float, reps: int, rng: np.random.Generator) -> dict[str, float]:
    # P(d=1) = a, P(d=-1) = b, P(d=0) = p0 with a - b = eps
    a = (1 - p0 + eps) / 2
    b = a - eps
    probs = np.clip(np.array([b, p0, a]), 0, 1)
    probs /= probs.sum()
    D = rng.choice(np.array([-1.0, 0.0, 1.0]), size=(reps, n), p=probs)
    _, pt, _ = t_pvalues(np.full(reps, float(n)), D.sum(1), (D * D).sum(1), eps)
    pw = np.array([_wilcoxon(D[r], eps)[1] for r in range(reps)])
    return {"n": n, "p_zero": p0, "epsilon": eps, "size_t": float(np.mean(pt < 0.05)),
            "size_wilcoxon": float(np.mean(pw < 0.05))}


def loo_table(n: int, H: int, acc_h: float, acc_j: float, rng: np.random.Generator) -> AnnotationTable:
    truth = rng.integers(0, 3, n)
    acc = np.r_[np.full(H, acc_h), acc_j]
    X = np.where(rng.random((n, H + 1)) < acc, truth[:, None], rng.integers(0, 3, (n, H + 1)))
    ii, rr = np.nonzero(np.ones_like(X, dtype=bool))
    names = np.array([f"h{k}" for k in range(H)] + ["judge"])
    df = pd.DataFrame({"item": ii, "rater": names[rr], "label": X[ii, rr]})
    return AnnotationTable.from_frame(df, scale="nominal", judges=["judge"])


def loo_cell(n: int, reps: int, B: int, rng: np.random.Generator, acc_j: float) -> dict[str, float]:
    H, acc_h = 3, 0.7
    big = leave_one_out(loo_table(100_000, H, acc_h, acc_j, np.random.default_rng(7)), "judge", n_resamples=0)
    truth = big.d
    cover, cover_p, stab, same = [], [], [], []
    prev_dec = None
    for r in range(reps):
        t = loo_table(n, H, acc_h, acc_j, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = leave_one_out(t, "judge", n_resamples=B, rng=r)
            keep = _loo._jackknife_d
            _loo._jackknife_d = lambda *a, **k: None  # the same replicates, percentile intervals
            try:
                pct = leave_one_out(t, "judge", n_resamples=B, rng=r)
            finally:
                _loo._jackknife_d = keep
        cover.extend(((res.d_low <= truth) & (truth <= res.d_high)).tolist())
        cover_p.extend(((pct.d_low <= truth) & (truth <= pct.d_high)).tolist())
        stab.append(res.decision_stability)
        if prev_dec is not None:
            same.append(res.decision == prev_dec)
        prev_dec = res.decision
    return {"n": n, "acc_judge": acc_j, "d_true": [float(x) for x in truth], "coverage_d_bca": float(np.mean(cover)),
            "coverage_d_percentile": float(np.mean(cover_p)),
            "mean_stability": float(np.nanmean(stab)), "replication_agreement": float(np.mean(same))}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--loo-reps", type=int, default=300)
    ap.add_argument("--B", type=int, default=500)
    ap.add_argument("--out", default="")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(13)
    out: dict[str, list] = {"alt_test": [], "leave_one_out": []}
    for n in (20, 30, 50):  # below ~15 items scipy's exact Wilcoxon with ties takes ~0.4 s a call
        for p0 in (0.2, 0.5, 0.7):
            s = alt_size(n, p0, 0.2, a.reps, rng)
            out["alt_test"].append(s)
            print(json.dumps(s), file=sys.stderr)
    for n in (30, 50):
        for acc_j in (0.7, 0.55):
            s = loo_cell(n, a.loo_reps, a.B, rng, acc_j)
            out["leave_one_out"].append(s)
            print(json.dumps(s), file=sys.stderr)
            if a.out:
                with open(a.out, "w") as f:
                    json.dump(out, f, indent=1)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
