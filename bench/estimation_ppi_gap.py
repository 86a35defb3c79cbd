"""Is the default's gap to single-judge PPI++ real, and does another predictor close it? (issue 33)

Per cell (SummEval 4 dimensions, HANNA 6 criteria; 10% and 25% uniform Poisson samples, the draws
of ``bench/estimation_savings.py``), the mean squared error of each variant's estimate about the
full-data human mean divided by that of PPI++ on the single judge of highest full-data R^2
(``voirdire.estimation.ppi_mean``, equal to ``ppi_py.ppi_mean_ci``), **on the same draws**, with a
bootstrap standard error over the draws. Below 1: fewer labels than PPI++ for the same precision
(about ``1 - ratio`` of them at 10%). Paired, the ratio is free of the noise of two separate
Monte-Carlo runs and of any interval's calibration (the savings bench's "equal coverage"
comparison moves by about 9% of labels per 0.01 of coverage error).

    nice -n 5 .venv-oracle/bin/python bench/estimation_ppi_gap.py --reps 500
    nice -n 5 .venv-oracle/bin/python bench/estimation_ppi_gap.py --reps 500 --variants calibrated,ric \\
        --only "SummEval fluency,HANNA Coherence"       # and each variant against the default, paired
    nice -n 5 .venv-oracle/bin/python bench/estimation_ppi_gap.py --coverage --reps 2000 \\
        --only "HANNA Coherence"                        # the default's coverage in detail, 2,000 draws

``--coverage``: per cell, the default and human-only on the same draws: coverage ± Monte-Carlo
se over all draws, over the first 500 (the savings bench's goal table) and the rest, the mean
reported variance over the Monte-Carlo MSE, the kurtosis of the studentised error, and the
draws with fewer than 100 labels (the small-sample branch) apart.

Variants (all cross-fitted leave-one-out and power-tuned like the default; the candidates are
bench-only monkeypatches of the anchored ridge in ``voirdire.estimation._models``):

- ``calibrated``: the default (ridge anchored on the judges' first principal component, GCV).
- ``best``: the default on the oracle best judge alone (the judge PPI++ uses).
- ``select``: ``model="select"`` (GCV choice among ridge, ridge anchored on the training set's best
  single judge, and the constant) with power tuning.
- ``choose``: per training set, the GCV choice between the default's path and ridge anchored on
  the training set's best single judge (the judge with the largest explained sum of squares).
- ``ric``: as ``choose``, the selected judge charged ``log p`` degrees of freedom in its GCV
  score instead of 1 (the risk-inflation cost of picking one of ``p`` columns; Foster & George
  1994); ``ric2``: ``2 log p - 1``.
- ``two``: ridge anchored on the span of the first principal component and the training set's
  best judge (both unpenalised).
- ``pc2``: ridge anchored on the span of the judges' first two principal components (no label
  used to choose the span).
- ``blend``: per training set, ``w`` times the default's coefficients plus ``1 - w`` times the
  ridge anchored on the set's best judge, ``w`` in 0, 0.1, ..., 1 by the GCV score of the blend
  (its degrees of freedom blended likewise); ``blendric``: the picked judge charged ``log p``.
- ``single`` / ``singleric``: GCV choice between the default's path and least squares on the
  set's best judge alone (charged 1 or ``log p`` degrees of freedom for the pick).
- ``stack2``: power tuning over two leave-one-out predictions (the default's and least squares
  on the training set's best judge), both coefficients by least squares on the labels.
- ``pick2``: the default or least squares on the training set's best judge (both leave-one-out,
  power-tuned), whichever has the smaller estimated design variance on the labels.
- ``ppi_chosen``: PPI++ on the judge with the highest R^2 on the draw's own labels (a reference:
  the baseline without its oracle choice).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

import voirdire.estimation._models as M
from voirdire.estimation import dr_mean, ppi_mean

sys.path.insert(0, str(Path(__file__).resolve().parent))
from estimation_savings import alttest, hanna, name_key, summeval  # noqa: E402

VARIANTS = ("calibrated", "best", "select", "choose", "ric", "ric2", "two", "pc2", "blend", "blendric", "ppi_chosen",
            "single", "singleric", "stack2", "pick2")


def _span_ridge(gram: np.ndarray, c: np.ndarray, byy: np.ndarray, nk: np.ndarray, sw: np.ndarray,
                A: np.ndarray, anchor_dof: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Ridge anchored on the span of ``A[k]`` (``(K, p, r)``, unpenalised), the rest shrunk by the
    GCV-chosen penalty, the anchor charged ``anchor_dof`` degrees of freedom in the GCV score
    (default ``r``); ``r = 1`` is ``_models._anchored_ridge``. Returns ``(coef, gcv)``."""
    GA = np.einsum("kpq,kqr->kpr", gram, A)
    Mi = np.linalg.pinv(np.einsum("kpr,kps->krs", A, GA), hermitian=True)
    Ac = np.einsum("kpr,kp->kr", A, c)
    GAMi = np.einsum("kpr,krs->kps", GA, Mi)
    dof = float(A.shape[2]) if anchor_dof is None else anchor_dof
    gamma, gcv = M._ridge_gcv(gram - np.einsum("kps,kqs->kpq", GAMi, GA), c - np.einsum("kps,ks->kp", GAMi, Ac),
                              byy - np.einsum("kr,krs,ks->k", Ac, Mi, Ac), nk, sw, 1.0 + dof)
    t = np.einsum("krs,ks->kr", Mi, Ac - np.einsum("kpr,kp->kr", GA, gamma))
    return gamma + np.einsum("kpr,kr->kp", A, t), gcv


def _best_column(gram: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Per training set, the column with the largest explained sum of squares ``c_j^2 / G_jj``."""
    gjj = np.diagonal(gram, axis1=1, axis2=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = gjj > 1e-12 * np.maximum(gjj.max(axis=1, keepdims=True), 1e-300)
        return np.argmax(np.where(ok, c * c / np.where(ok, gjj, 1.0), -np.inf), axis=1)


def _rss(gram: np.ndarray, c: np.ndarray, byy: np.ndarray, b: np.ndarray) -> np.ndarray:
    return byy - 2.0 * np.einsum("kp,kp->k", c, b) + np.einsum("kp,kpq,kq->k", b, gram, b)


def _gcv(nk: np.ndarray, rss: np.ndarray, dof: np.ndarray | float) -> np.ndarray:
    """The GCV score ``n RSS / (n - df)^2`` (``inf`` where ``df >= n``), as ``_models._ridge_gcv``'s."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(nk - dof > 0, nk * rss / (nk - dof) ** 2, np.inf)


def _blend(gram, c, byy, nk, coef_a, gcv_a, coef_b, gcv_b, grid=np.linspace(0.0, 1.0, 11)):
    """Per set, ``w coef_a + (1 - w) coef_b`` with ``w`` on ``grid`` minimising the GCV score of
    the blend (its degrees of freedom the blend of the two paths', the trace being linear)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        dfs = [nk - np.sqrt(nk * np.maximum(_rss(gram, c, byy, b), 0.0) / g)
               for b, g in ((coef_a, gcv_a), (coef_b, gcv_b))]
        best_s, best_b = np.full(nk.shape, np.inf), coef_a.copy()
        for w in grid:
            b = w * coef_a + (1.0 - w) * coef_b
            s = _gcv(nk, _rss(gram, c, byy, b), w * dfs[0] + (1.0 - w) * dfs[1])
            better = s < best_s
            best_s = np.where(better, s, best_s)
            best_b = np.where(better[:, None], b, best_b)
    return best_b, best_s


@contextmanager
def _patched(variant: str, p: int) -> Iterator[None]:
    """The default's anchored ridge replaced by ``variant``'s for the duration (this process only:
    the bench's own monkeypatch)."""
    orig_anchored, orig_pc = M._anchored_ridge, M._first_component
    ric = max(1.0, float(np.log(p)))  # the risk-inflation charge for picking one of p columns
    sel_dof = {"choose": 1.0, "ric": ric, "ric2": max(1.0, 2.0 * float(np.log(p)) - 1.0), "blendric": ric,
               "single": 1.0, "singleric": ric, "only_single": 1.0}

    def anchored(gram, c, byy, nk, sw, a):
        if variant == "pc2":  # a: the first component; the second was kept by first_two
            return _span_ridge(gram, c, byy, nk, sw, np.stack([a, np.broadcast_to(second[0], a.shape)], axis=2))
        j = _best_column(gram, c)
        best = np.eye(c.shape[1])[j]
        if variant == "two":
            return _span_ridge(gram, c, byy, nk, sw, np.stack([a, best], axis=2))
        if variant in ("single", "singleric", "only_single"):  # least squares on the set's best column alone
            rows = np.arange(c.shape[0])
            coef_b = np.zeros_like(c)
            coef_b[rows, j] = c[rows, j] / np.maximum(gram[rows, j, j], 1e-300)
            gcv_b = _gcv(nk, _rss(gram, c, byy, coef_b), 1.0 + sel_dof[variant])
            if variant == "only_single":
                return coef_b, gcv_b
        else:
            coef_b, gcv_b = _span_ridge(gram, c, byy, nk, sw, best[:, :, None], sel_dof.get(variant, 1.0))
        coef_a, gcv_a = orig_anchored(gram, c, byy, nk, sw, a)
        if variant in ("blend", "blendric"):
            return _blend(gram, c, byy, nk, coef_a, gcv_a, coef_b, gcv_b)
        return np.where((gcv_b < gcv_a)[:, None], coef_b, coef_a), np.minimum(gcv_a, gcv_b)

    second: list[np.ndarray] = []

    def first_two(Z: np.ndarray) -> np.ndarray:
        """The default's first component; the second one kept for ``anchored``."""
        Zc = Z - Z.mean(axis=0)
        second[:] = [np.linalg.eigh(np.einsum("ij,ik->jk", Zc, Zc))[1][:, -2]]
        return orig_pc(Z)

    if variant in ("choose", "ric", "ric2", "two", "pc2", "blend", "blendric", "single", "singleric", "only_single"):
        M._anchored_ridge = anchored
    if variant == "pc2":
        M._first_component = first_two
    try:
        yield
    finally:
        M._anchored_ridge, M._first_component = orig_anchored, orig_pc


def _two_predictions(Xa: np.ndarray, yy: np.ndarray, f: float
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(y, pi, lab, li, mA, mB)`` of a uniform draw: the labels (0 where unlabelled), the inclusion
    probabilities, the labelled mask and indices, and the leave-one-out predictions of the default
    (``mA``) and of least squares on each training set's best single judge (``mB``)."""
    lab = ~np.isnan(yy)
    pi = np.full(yy.size, f)
    y = np.where(lab, yy, 0.0)
    g = np.random.default_rng(0)
    mA = M.cross_fit_predict(Xa, y, pi, lab, model="calibrated", n_folds="loo", rng=g, clusters=None, func="b")
    with _patched("only_single", Xa.shape[1]):
        mB = M.cross_fit_predict(Xa, y, pi, lab, model="calibrated", n_folds="loo", rng=g, clusters=None, func="b")
    return y, pi, lab, np.flatnonzero(lab), mA, mB


def _stack2(Xa: np.ndarray, yy: np.ndarray, f: float) -> float:
    """Power tuning over two cross-fitted predictions: the default's (anchored ridge) and least
    squares on the training set's best single judge, ``m = c + lA (mA - c) + lB (mB - c)`` with
    ``(lA, lB)`` minimising the estimated design variance (a weighted least squares of the labels
    on the two predictions, uniform design)."""
    from voirdire.estimation._dr import _hajek_form, _theta

    y, pi, _, li, mA, mB = _two_predictions(Xa, yy, f)
    F = np.column_stack([np.ones(li.size), mA[li], mB[li]])
    coef = np.linalg.lstsq(F, y[li], rcond=None)[0]
    m = coef[0] + coef[1] * mA + coef[2] * mB
    m_l, scale = _hajek_form(y, m, pi, li)
    return _theta(m_l, scale * (y[li] - m_l[li]) / pi[li])


def _pick2(Xa: np.ndarray, yy: np.ndarray, f: float) -> float:
    """The default or least squares on the training set's best single judge (both leave-one-out,
    power-tuned), whichever has the smaller estimated design variance on the labels."""
    from voirdire.estimation._dr import _theta, _tune, _variance

    y, pi, lab, li, mA, mB = _two_predictions(Xa, yy, f)
    best = (np.inf, 0.0)
    for m_raw in (mA, mB):
        m_l, _, scale = _tune(y, m_raw, pi, lab, None, None, "finite")
        ce = scale * (y[li] - m_l[li])
        theta = _theta(m_l, ce / pi[li])
        v = _variance(m_l, li, ce / pi[li], ce, pi[li], theta, None, None)[1]
        best = min(best, (v, theta))
    return best[1]


def _estimate(variant: str, xb: np.ndarray, Xa: np.ndarray, yy: np.ndarray, f: float, r: int) -> float:
    if variant == "ppi_chosen":  # PPI++ on the judge a user would pick: the highest R^2 on the labelled items
        lab = ~np.isnan(yy)
        r2 = [np.corrcoef(Xa[lab, j], yy[lab])[0, 1] ** 2 if np.ptp(Xa[lab, j]) > 0 else -1.0
              for j in range(Xa.shape[1])]
        return ppi_mean(Xa[:, int(np.nanargmax(r2))], yy).estimate
    if variant == "stack2":
        return _stack2(Xa, yy, f)
    if variant == "pick2":
        return _pick2(Xa, yy, f)
    if variant == "best":
        return dr_mean(xb, yy, f, target="finite", interval="normal", rng=r).estimate
    with _patched(variant, Xa.shape[1]):
        return dr_mean(Xa, yy, f, model="select" if variant == "select" else "calibrated", power_tuning=True,
                       target="finite", interval="normal", rng=r).estimate


def coverage(data: dict, reps: int, fracs: list[float], first: int = 500) -> None:
    """The default and human-only (finite target, ``interval="auto"``), per cell: coverage of the
    full-data mean ± Monte-Carlo se over all draws, over the first ``first`` (the savings bench's
    goal table at ``--reps 500``) and the rest; mean reported variance over the Monte-Carlo MSE;
    the kurtosis of the studentised error; and the draws with fewer than 100 labels (the
    small-sample branch) apart. The draws are the savings bench's."""
    from voirdire.estimation import classical_mean

    print("| cell | method | coverage ± MC se | first 500 / rest | variance ÷ MSE | kurtosis of z "
          "| share < 100 labels | coverage < 100 / ≥ 100 | variance ÷ MSE < 100 | mean width |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, (X, y) in data.items():
        Xa, truth = X.to_numpy(float), float(y.mean())
        for f in fracs:
            rng = np.random.default_rng([0, int(f * 1000), name_key(name)])
            rows: dict[str, list[tuple[float, float, bool, int, float]]] = {"default": [], "human-only": []}
            for r in range(reps):
                lab = rng.random(y.size) < f
                if lab.sum() < 3:
                    continue
                yy = np.where(lab, y, np.nan)
                for key, res in (("default", dr_mean(Xa, yy, f, target="finite", rng=r)),
                                 ("human-only", classical_mean(yy, f, target="finite"))):
                    rows[key].append((res.estimate - truth, res.se ** 2, res.ci.low <= truth <= res.ci.high,
                                      int(lab.sum()), res.ci.high - res.ci.low))
            for key, v in rows.items():
                a = np.array(v, dtype=float)
                err, var, hit, small = a[:, 0], a[:, 1], a[:, 2], a[:, 3] < 100
                c = hit.mean()
                rest = f"{hit[first:].mean():.3f}" if hit.size > first else ""
                lo = (f"{hit[small].mean():.3f} / {hit[~small].mean():.3f}" if small.any() else "")
                vs = f"{var[small].mean() / np.mean(err[small] ** 2):.3f}" if small.any() else ""
                print(f"| {name} {f:.0%} | {key} | {c:.3f} ± {np.sqrt(c * (1 - c) / hit.size):.3f} | "
                      f"{hit[:first].mean():.3f} / {rest} | {var.mean() / np.mean(err ** 2):.3f} | "
                      f"{np.mean(err ** 4 / var ** 2):.2f} | {small.mean():.2f} | {lo} | {vs} | {a[:, 4].mean():.5f} |",
                      flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--fracs", default="0.1,0.25")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, from {', '.join(VARIANTS)}")
    ap.add_argument("--only", default=None, help="comma-separated data set names (e.g. 'SummEval fluency')")
    ap.add_argument("--coverage", action="store_true",
                    help="the default's coverage in detail instead (with --reps 2000 for the disputed cells)")
    ap.add_argument("--no-tail", action="store_true",
                    help="with --coverage: the heavy-tail term switched off (dr_mean and classical_mean), to "
                         "measure what it adds on the same draws")
    a = ap.parse_args()
    variants = a.variants.split(",")
    if bad := [v for v in variants if v not in VARIANTS]:
        ap.error(f"unknown variant(s) {bad}; choose from {', '.join(VARIANTS)}")
    warnings.simplefilter("ignore")  # small draws warn; the errors say what matters
    data = {**summeval(), **hanna(), **alttest()}
    if a.only:
        data = {k: v for k, v in data.items() if k in [s.strip() for s in a.only.split(",")]}
    if a.coverage:
        if a.no_tail:
            import voirdire.estimation._dr as D

            D._tail_term = lambda *args, **kw: 0.0  # this process only
        coverage(data, a.reps, [float(s) for s in a.fracs.split(",")])
        return
    t0 = time.process_time()
    ratios: dict[str, list[float]] = {v: [] for v in variants}
    print(f"| cell | {' | '.join(variants)} |\n|---|" + "---:|" * len(variants))
    for name, (X, y) in data.items():
        r2s = {col: float(np.corrcoef(X[col], y)[0, 1] ** 2) for col in X.columns}
        xb = X[max(r2s, key=r2s.__getitem__)].to_numpy(float)
        Xa = X.to_numpy(float)
        truth = float(y.mean())
        for f in (float(s) for s in a.fracs.split(",")):
            rng = np.random.default_rng([0, int(f * 1000), name_key(name)])  # the savings bench's draws
            e2: dict[str, list[float]] = {v: [] for v in variants + ["ppi"]}
            for r in range(a.reps):
                yy = np.where(rng.random(y.size) < f, y, np.nan)
                e2["ppi"].append((ppi_mean(xb, yy).estimate - truth) ** 2)
                for v in variants:
                    e2[v].append((_estimate(v, xb, Xa, yy, f, r) - truth) ** 2)
            P = np.asarray(e2["ppi"])
            boot = np.random.default_rng(1).integers(0, P.size, (400, P.size))
            cells = []
            for v in variants:
                E = np.asarray(e2[v])
                ratios[v].append(float(E.mean() / P.mean()))
                se = float(np.std(E[boot].mean(axis=1) / P[boot].mean(axis=1)))
                cell = f"{ratios[v][-1]:.3f} ± {se:.3f}"
                if v != variants[0]:  # against the first variant, paired
                    E0 = np.asarray(e2[variants[0]])
                    se0 = float(np.std(E[boot].mean(axis=1) / E0[boot].mean(axis=1)))
                    cell += f" ({E.mean() / E0.mean():.3f} ± {se0:.3f})"
                cells.append(cell)
            print(f"| {name} {f:.0%} | " + " | ".join(cells) + " |", flush=True)
    print("| geometric mean | " + " | ".join(f"{np.exp(np.mean(np.log(ratios[v]))):.3f}" for v in variants) + " |")
    print("| worst cell | " + " | ".join(f"{max(ratios[v]):.3f}" for v in variants) + " |")
    print(f"\ncells: MSE / MSE of PPI++ (best judge) on the same {a.reps} draws ± bootstrap se; in brackets the "
          f"ratio to {variants[0]}, paired. CPU {time.process_time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
