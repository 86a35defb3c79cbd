"""Candidate bootstrap-t variants on the coverage grid's cells, on the same tables and replicates
(issue 13; docs/agreement.md "Small samples" says which were adopted and why).

Each table of a cell (``bench/interval_coverage.py``'s ``simulate`` and truths) gets one bootstrap
with per-replicate jackknife SEs; then, from those same numbers:

``percentile``, ``bca``, ``studentized``, ``jackknife``
    the library's methods through ``_core.interval_for`` (``studentized`` is ``auto``'s choice at
    these sizes; ``jackknife`` on clusters is the delete-one-cluster jackknife SE with ``t(G-1)``
    quantiles, the CV3-with-``t(G-1)`` recommendation for few clusters);
``bt_floor_t``
    the bootstrap-t whose ``t*`` quantiles are never inside ``+-t_{G-1, 0.975}`` (the cluster
    bootstrap-t "with t(G-1) quantiles": never narrower than the jackknife-t on the same scale);
``bt_symmetric``
    Hall's (1988) symmetric bootstrap-t: ``g(est) +- q s`` with ``q`` the 95% quantile of ``|t*|``.
``double_t``
    the bootstrap-t calibrated by the iterated (double) bootstrap: Beran's (1987) prepivoting,
    as in Hall (1986) and DiCiccio, Martin & Young (1992). Each of ``B1`` outer resamples gets
    ``C`` inner resamples of its own units; ``u_b`` is the share of the inner ``t**`` (centred
    at the outer replicate, each with its own jackknife SE) at or below the outer ``t*_b``. The
    bootstrap-t then takes its ``t*`` quantiles at the levels ``Q_u(a/2)`` and ``Q_u(1 - a/2)``
    instead of ``a/2`` and ``1 - a/2``: each tail's nominal level is set so that, in the
    bootstrap world, the interval covers what it should. ``single_t`` is the one-level bootstrap-t
    on the same outer resamples (the check that the outer draw alone changes nothing).
``bt_log_ratio``
    the bootstrap-t on ``h = -log(1 - theta)`` instead of Fisher's z: every coefficient here is
    ``1 - D_o / D_e``, so ``h`` is the log of a ratio of two sums (the usual scale for a ratio
    estimator), maps ``(-inf, 1)`` onto the line and puts no anchor at -1.

Output: coverage / mean width of each, per coefficient. Monte-Carlo SE about
``sqrt(0.95 * 0.05 / reps)`` (0.011 at 400 tables).

    nice -n 10 .venv/bin/python bench/interval_variants.py --reps 400 --seed 500 --cells 24,25,2,4,5
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as _st

sys.path.insert(0, str(Path(__file__).resolve().parent))
import interval_coverage as ic  # noqa: E402

from voirdire._stats import intervals as iv  # noqa: E402
from voirdire.agreement import _core  # noqa: E402


def _t(th: np.ndarray, se: np.ndarray, centre: Any, scale: Any) -> np.ndarray:
    """``(g(th) - centre) / (g'(th) se)``; ``+-inf`` where ``se`` is 0 and ``th`` differs, 0 where equal."""
    diff = scale.g(th) - centre
    sb = scale.dg(th) * se
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sb > 0, diff / np.where(sb > 0, sb, 1.0), np.sign(diff) * np.inf)
    return np.where(np.isnan(t), 0.0, t)


def _t_star(est: float, boots: np.ndarray, boot_se: np.ndarray, se: float, scale: Any) -> tuple[float, np.ndarray, float]:
    ok = np.isfinite(boots) & np.isfinite(boot_se)
    z0 = float(scale.g(est))
    return z0, np.sort(_t(boots[ok], boot_se[ok], z0, scale)), float(scale.dg(est)) * se


def _order_stat(t: np.ndarray, p: float) -> float:
    return float(t[min(t.size - 1, max(0, int(math.ceil(p * (t.size - 1)))))])


def variants(s: Any, est: float, expected: float, boots: np.ndarray, st: Any, jack: np.ndarray | None,
             boot_se: np.ndarray, a_se: float | None, n_units: int, kind: str,
             level: float = 0.95) -> dict[str, tuple[float, float]]:
    base = dict(boots=boots, st=st, jack=jack, boot_se=boot_se, a_se=a_se, n_units=n_units, unit_kind=kind,
                level=level)
    out = {m: _core.interval_for(s, m, est, expected, **base)[0] for m in ("percentile", "bca", "studentized",
                                                                           "jackknife")}
    res = {m: (r.low, r.high) for m, r in out.items()}
    if out["studentized"].method != "studentized" or jack is None:
        return res
    sc = _core._scale(s, _core._lowest(est, boots, jack))
    z0, t, s0 = _t_star(est, boots, boot_se, iv.jackknife_se(jack), sc)
    if t.size < 20 or not (math.isfinite(s0) and s0 > 0):
        return res

    def finish(lo_t: float, hi_t: float) -> tuple[float, float]:
        r = iv.Interval(float(sc.ginv(z0 - hi_t * s0)), float(sc.ginv(z0 - lo_t * s0)), "studentized")
        r = _core._honest(r, s, est, sc, lambda: iv.percentile(boots, level))[0]
        return r.low, r.high

    a2 = (1 - level) / 2
    lo_t, hi_t = _order_stat(t, a2), _order_stat(t, 1 - a2)
    tq = float(_st.t.ppf(1 - a2, n_units - 1))
    res["bt_floor_t"] = finish(min(lo_t, -tq), max(hi_t, tq))
    q = _order_stat(np.sort(np.abs(t)), level)
    res["bt_symmetric"] = finish(-q, q)
    lr = _LogRatio()
    z0, t, s0 = _t_star(est, boots, boot_se, iv.jackknife_se(jack), lr)
    if t.size >= 20 and math.isfinite(s0) and s0 > 0:
        lo_t, hi_t = _order_stat(t, a2), _order_stat(t, 1 - a2)
        r = iv.Interval(float(lr.ginv(z0 - hi_t * s0)), float(lr.ginv(z0 - lo_t * s0)), "studentized")
        r = _core._honest(r, s, est, iv.Scale(-math.inf, math.inf), lambda: iv.percentile(boots, level))[0]
        res["bt_log_ratio"] = (r.low, r.high)
    return res


def double_t(s: Any, est: float, st: Any, jack: np.ndarray | None, boots: np.ndarray, n_units: int,
             B1: int, C: int, seed: int, level: float = 0.95) -> dict[str, tuple[float, float]]:
    """The prepivoted (double-bootstrap calibrated) bootstrap-t and the plain one on the same outer draws."""
    if jack is None or st is None:
        return {}
    S = st.toarray() if hasattr(st, "toarray") else np.asarray(st)
    gen = np.random.default_rng(seed)
    sc = _core._scale(s, _core._lowest(est, boots, jack))
    W1 = _core._draw_block(gen, B1, n_units).astype(float)
    th1 = s.from_weights(W1, S)
    se1 = _core._replicate_se(s, W1, S)
    z0 = float(sc.g(est))
    s0 = float(sc.dg(est)) * iv.jackknife_se(jack)
    if not (math.isfinite(s0) and s0 > 0):
        return {}

    ok1 = np.isfinite(th1) & np.isfinite(se1)
    t1 = _t(th1, se1, z0, sc)
    u = np.full(B1, np.nan)
    step = max(1, 200_000 // max(C * n_units, 1))
    for b0 in range(0, B1, step):
        bs = [b for b in range(b0, min(B1, b0 + step)) if ok1[b]]
        if not bs:
            continue
        W2 = np.vstack([gen.multinomial(n_units, W1[b] / n_units, size=C) for b in bs]).astype(float)
        th2 = s.from_weights(W2, S)
        se2 = _core._replicate_se(s, W2, S)
        cen = np.repeat(sc.g(th1[bs]), C)
        t2 = _t(th2, se2, cen, sc).reshape(len(bs), C)
        ok2 = (np.isfinite(th2) & np.isfinite(se2)).reshape(len(bs), C)
        tb = t1[bs][:, None]
        below = ((t2 < tb) & ok2).sum(1) + 0.5 * ((t2 == tb) & ok2).sum(1)
        u[bs] = below / np.maximum(ok2.sum(1), 1)
    tt = np.sort(t1[ok1])
    uu = u[np.isfinite(u)]
    if tt.size < 20 or uu.size < 20:
        return {}
    a2 = (1 - level) / 2
    out = {}

    def finish(lo_t: float, hi_t: float) -> tuple[float, float]:
        r = iv.Interval(float(sc.ginv(z0 - hi_t * s0)), float(sc.ginv(z0 - lo_t * s0)), "studentized")
        r = _core._honest(r, s, est, sc, lambda: iv.percentile(boots, level))[0]
        return r.low, r.high

    out["single_t"] = finish(_order_stat(tt, a2), _order_stat(tt, 1 - a2))
    lo_p, hi_p = float(np.quantile(uu, a2)), float(np.quantile(uu, 1 - a2))
    out["double_t"] = finish(_order_stat(tt, lo_p), _order_stat(tt, hi_p))
    out["_levels"] = (lo_p, hi_p)  # the calibrated tail levels (nominal 0.025 / 0.975)
    return out


class _LogRatio:
    """``h(x) = -log(1 - x)`` (``1 - x`` floored at 1e-6), its derivative and inverse."""

    def g(self, x: Any) -> np.ndarray:
        return -np.log(np.maximum(1.0 - np.asarray(x, dtype=float), 1e-6))

    def dg(self, x: Any) -> np.ndarray:
        return 1.0 / np.maximum(1.0 - np.asarray(x, dtype=float), 1e-6)

    def ginv(self, z: Any) -> np.ndarray:
        return 1.0 - np.exp(-np.asarray(z, dtype=float))


def run_cell(cell: dict[str, Any], reps: int, seed: int, B: int = 1000, double: tuple[int, int] | None = None,
             only: set[str] | None = None) -> dict[str, dict[str, tuple[float, float]]]:
    coefs = ic.COEFS_BINARY if cell["kind"] == "binary" else ic.COEFS_FIVE
    if only:  # the same tables (the simulation draws no less); one bootstrap shared by these only
        coefs = [c for c in coefs if (c[0] if c[1] is None else f"{c[0]}:{c[1]}") in only]
    truth = ic.truths(cell, coefs)
    rng = np.random.default_rng(seed)
    hits: dict[str, dict[str, list[float]]] = {}
    for r in range(reps):
        t = ic.simulate(rng=rng, **cell)
        rows, n_units, kind = ic.shared_bootstrap(t, coefs, B, seed * 100_003 + r)
        for key, _, s, e, x, bt, st, bse, jack, a_se in rows:
            if not math.isfinite(e) or (only and key not in only):
                continue  # counted as a miss of every method (hits stay, reps divide)
            got = variants(s, e, x, bt, st, jack, bse, a_se, n_units, kind)
            auto = _core.auto_after_bootstrap(s, _core.auto_method(s, n_units, B, True), e, bt, bse, 0.95)[0]
            if auto in got:
                got["auto"] = got[auto]
            if double and auto in ("studentized", "bca") and e < 1.0:
                got.update(double_t(s, e, st, jack, bt, n_units, double[0], double[1], seed * 100_003 + r + 7))
            for m, (lo, hi) in got.items():
                if m.startswith("_"):  # the calibrated levels: their means, reported as (low, high)
                    h = hits.setdefault(key, {}).setdefault(m, [0.0, 0.0, 0.0])
                    h[0], h[1], h[2] = h[0] + lo, h[1] + 1, h[2] + hi
                    continue
                h = hits.setdefault(key, {}).setdefault(m, [0.0, 0.0, 0.0])
                fin = math.isfinite(lo) and math.isfinite(hi)
                h[0] += float(fin and lo <= truth[key] <= hi)
                h[1] += float(fin)
                h[2] += (hi - lo) if fin else 0.0
        if (r + 1) % 25 == 0:
            print(f"  {r + 1} tables:", "; ".join(f"{k} " + " ".join(f"{m}={h[0] / (r + 1):.3f}" for m, h in ms.items()
                                                                         if m in ("auto", "single_t", "double_t"))
                                           for k, ms in hits.items()), file=sys.stderr, flush=True)
    return {k: {m: ((h[0] / max(h[1], 1.0), h[2] / max(h[1], 1.0)) if m.startswith("_") else
                    (h[0] / reps, h[2] / max(h[1], 1.0))) for m, h in ms.items()} for k, ms in hits.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=500, help="cell k uses seed + k")
    ap.add_argument("--cells", type=str, default="24,25", help="indices into interval_coverage's grid")
    ap.add_argument("--out", type=str, default="")
    ap.add_argument("--double", type=str, default="",
                    help="B1,C: also the double-bootstrap calibrated bootstrap-t with B1 outer and C inner resamples")
    ap.add_argument("--only", type=str, default="", help="coefficient keys to run (default all)")
    a = ap.parse_args(argv)
    dbl = tuple(map(int, a.double.split(","))) if a.double else None
    only = set(a.only.split(",")) if a.only else None
    warnings.simplefilter("ignore")
    grid = ic.grid(False)
    results = []
    for k in map(int, a.cells.split(",")):
        res = run_cell(grid[k], a.reps, a.seed + k, double=dbl, only=only)  # type: ignore[arg-type]
        results.append({"cell": grid[k], "index": k, "reps": a.reps, "seed": a.seed + k, "coverage_width": res})
        print(k, json.dumps(grid[k]), flush=True)
        for key, ms in res.items():
            print(f"  {key:28s}", " ".join(f"{m}={c:.3f}/{w:.3f}" for m, (c, w) in ms.items()), flush=True)
        if a.out:
            with open(a.out, "w") as f:
                json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
