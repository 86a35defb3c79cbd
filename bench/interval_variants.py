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


def _t_star(est: float, boots: np.ndarray, boot_se: np.ndarray, se: float, scale: Any) -> tuple[float, np.ndarray, float]:
    ok = np.isfinite(boots) & np.isfinite(boot_se)
    z0 = float(scale.g(est))
    diff = scale.g(boots[ok]) - z0
    sb = scale.dg(boots[ok]) * boot_se[ok]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sb > 0, diff / np.where(sb > 0, sb, 1.0), np.sign(diff) * np.inf)
    t = np.sort(np.where(np.isnan(t), 0.0, t))
    return z0, t, float(scale.dg(est)) * se


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


class _LogRatio:
    """``h(x) = -log(1 - x)`` (``1 - x`` floored at 1e-6), its derivative and inverse."""

    def g(self, x: Any) -> np.ndarray:
        return -np.log(np.maximum(1.0 - np.asarray(x, dtype=float), 1e-6))

    def dg(self, x: Any) -> np.ndarray:
        return 1.0 / np.maximum(1.0 - np.asarray(x, dtype=float), 1e-6)

    def ginv(self, z: Any) -> np.ndarray:
        return 1.0 - np.exp(-np.asarray(z, dtype=float))


def run_cell(cell: dict[str, Any], reps: int, seed: int, B: int = 1000) -> dict[str, dict[str, tuple[float, float]]]:
    coefs = ic.COEFS_BINARY if cell["kind"] == "binary" else ic.COEFS_FIVE
    truth = ic.truths(cell, coefs)
    rng = np.random.default_rng(seed)
    hits: dict[str, dict[str, list[float]]] = {}
    for r in range(reps):
        t = ic.simulate(rng=rng, **cell)
        rows, n_units, kind = ic.shared_bootstrap(t, coefs, B, seed * 100_003 + r)
        for key, _, s, e, x, bt, st, bse, jack, a_se in rows:
            if not math.isfinite(e):
                continue  # counted as a miss of every method (hits stay, reps divide)
            for m, (lo, hi) in variants(s, e, x, bt, st, jack, bse, a_se, n_units, kind).items():
                h = hits.setdefault(key, {}).setdefault(m, [0.0, 0.0, 0.0])
                fin = math.isfinite(lo) and math.isfinite(hi)
                h[0] += float(fin and lo <= truth[key] <= hi)
                h[1] += float(fin)
                h[2] += (hi - lo) if fin else 0.0
    return {k: {m: (h[0] / reps, h[2] / max(h[1], 1.0)) for m, h in ms.items()} for k, ms in hits.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=500, help="cell k uses seed + k")
    ap.add_argument("--cells", type=str, default="24,25", help="indices into interval_coverage's grid")
    ap.add_argument("--out", type=str, default="")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    grid = ic.grid(False)
    results = []
    for k in map(int, a.cells.split(",")):
        res = run_cell(grid[k], a.reps, a.seed + k)
        results.append({"cell": grid[k], "index": k, "reps": a.reps, "seed": a.seed + k, "coverage_width": res})
        print(k, json.dumps(grid[k]), flush=True)
        for key, ms in res.items():
            print(f"  {key:28s}", " ".join(f"{m}={c:.3f}/{w:.3f}" for m, (c, w) in ms.items()), flush=True)
        if a.out:
            with open(a.out, "w") as f:
                json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
