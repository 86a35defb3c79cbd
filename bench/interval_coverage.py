"""Coverage and width of the agreement intervals on small tables (issue 13; figures in
docs/agreement.md "Small samples").

Every simulated table goes through the library's own path (one bootstrap per table shared by
every coefficient, the jackknife from the per-unit statistics, ``voirdire._stats.intervals``),
and every interval method is built from the same replicates, so methods differ only in the
interval step. The truth of a cell is the coefficient on one 200,000-item table of that cell.

Data: latent-class raters. Each item has a true class (binary with prevalence ``prev``, or five
ordered classes with probabilities 0.1/0.2/0.4/0.2/0.1); each rater reports it with probability
``acc`` and otherwise draws a label from the class distribution (binary), or the class plus a
rounded N(0, 1) step, clipped (five classes). Labels go missing completely at random with
probability ``miss`` (the first rater always labels). ``clusters=C``: ``n`` items in ``C`` texts
that share their class and an accuracy drawn from U(0.3, 1).

    nice -n 10 .venv/bin/python bench/interval_coverage.py --reps 1000 --out bench/interval_coverage.json
    .venv/bin/python bench/interval_coverage.py --quick          # a smoke run
    .venv/bin/python bench/interval_coverage.py --exact [20,25,30]  # two raters: exact coverage, no simulation
    .venv/bin/python bench/interval_coverage.py --sweep 20,30       # two raters: exact coverage over kappa 0.25-0.81
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

import numpy as np

from voirdire._stats import intervals as iv
from voirdire.agreement import _core
from voirdire.agreement._coefficients import _make_spec
from voirdire.agreement._prepare import prepare
from voirdire.data import AnnotationTable

COEFS_BINARY = [("krippendorff_alpha", "nominal"), ("fleiss_kappa", None), ("gwet_ac1", None),
                ("observed_agreement", None)]
COEFS_FIVE = [("krippendorff_alpha", "nominal"), ("krippendorff_alpha", "ordinal"),
              ("krippendorff_alpha", "interval"), ("fleiss_kappa", None), ("gwet_ac1", None),
              ("observed_agreement", None)]
FIVE_P = np.array([0.1, 0.2, 0.4, 0.2, 0.1])


def simulate(n: int, *, kind: str, R: int, miss: float, prev: float = 0.5, acc: float = 0.7,
             clusters: int = 0, rng: np.random.Generator) -> AnnotationTable:
    if clusters:
        size = rng.multinomial(n - clusters, np.full(clusters, 1 / clusters)) + 1
        cl = np.repeat(np.arange(clusters), size)
        a = rng.uniform(0.3, 1.0, clusters)[cl][:, None]
    else:
        cl, a = None, acc
    m = clusters or n
    if kind == "binary":
        truth = (rng.random(m) < prev).astype(int)
        noise = (rng.random((n, R)) < prev).astype(int)
    else:
        truth = rng.choice(5, size=m, p=FIVE_P)
        noise = None
    if clusters:
        truth = truth[cl]
    if kind == "binary":
        X = np.where(rng.random((n, R)) < a, truth[:, None], noise)
    else:
        step = np.rint(rng.normal(0, 1, (n, R))).astype(int)
        X = np.where(rng.random((n, R)) < a, truth[:, None], np.clip(truth[:, None] + step, 0, 4))
    obs = rng.random((n, R)) >= miss
    obs[:, 0] = True
    ii, rr = np.nonzero(obs)
    kw: dict[str, Any] = {"scale": "nominal" if kind == "binary" else "interval"}
    if kind != "binary":
        kw["categories"] = [0, 1, 2, 3, 4]
    import pandas as pd
    df = pd.DataFrame({"item": ii, "rater": rr, "label": X[ii, rr]})
    if clusters:
        df["cluster"] = cl[ii]
        kw["cluster"] = "cluster"
    return AnnotationTable.from_frame(df, **kw)


METHODS = ("percentile", "bca", "studentized", "jackknife", "wald", "wilson", "gof")


def shared_bootstrap(t: AnnotationTable, coefs: list[tuple[str, str | None]], B: int,
                     seed: int) -> tuple[list[tuple[Any, ...]], int, str]:
    """One bootstrap shared by every coefficient of ``coefs`` on ``t``, as the library runs it:
    ``([(key, name, spec, estimate, expected, boots, stats, boot_se, jack, analytic_se), ...],
    n_units, unit_kind)``, ``jack`` and ``analytic_se`` None for an undefined estimate."""
    prep = prepare(t, raters=None, policy="exclude", func="sim")
    specs = [_make_spec(name, prep, level=lvl) for name, lvl in coefs]
    mask = np.zeros(prep.n_items, dtype=bool)
    for s in specs:
        mask |= s.unit_mask()
    unit, n_units, kind = _core._units(prep, mask)
    ok = unit >= 0
    item_units = bool(np.array_equal(unit[ok], np.arange(n_units)))
    points, stats_list = [], []
    for s in specs:
        e, _, x = s.estimate(s.totals().reshape(1, -1))
        points.append((float(e[0]), float(x[0])))
        stats_list.append(_core._aggregate(s.stats(), unit, n_units) if math.isfinite(e[0]) else None)
    se_out: list[Any] = [np.zeros(0) for _ in specs]
    boots = _core.bootstrap(specs, stats_list, unit, n_units, B, seed, se_out=se_out)
    rows = []
    for (name, lvl), s, (e, x), bt, st, bse in zip(coefs, specs, points, boots, stats_list, se_out):
        key = name if lvl is None else f"{name}:{lvl}"
        fin = math.isfinite(e)
        jack = _core.jackknife_values(s, st, unit, n_units, item_units) if fin else None
        a_se = _core._analytic_se(s, e, unit, n_units, kind) if fin else None
        rows.append((key, name, s, e, x, bt, st, bse, jack, a_se))
    return rows, n_units, kind


def all_intervals(t: AnnotationTable, coefs: list[tuple[str, str | None]], B: int, seed: int,
                  level: float = 0.95) -> dict[str, dict[str, Any]]:
    """Every interval method for every coefficient, from one shared bootstrap, each built by the
    library's own ``_core.interval_for`` (its rules for degenerate tables included); ``auto`` is
    the method ``_core.auto_method`` picks."""
    rows, n_units, kind = shared_bootstrap(t, coefs, B, seed)
    out: dict[str, dict[str, Any]] = {}
    for key, name, s, e, x, bt, st, bse, jack, a_se in rows:
        if not math.isfinite(e):
            out[key] = {}
            continue
        res: dict[str, Any] = {}
        for m in METHODS:
            if (m == "wilson" and name != "observed_agreement") or (m == "gof" and _core.binary_pairs(s) is None):
                continue
            r = _core.interval_for(s, m, e, x, boots=bt, st=st, jack=jack, boot_se=bse, a_se=a_se,
                                   n_units=n_units, unit_kind=kind, level=level)[0]
            res[m] = (r.low, r.high)
        if "gof" in res:  # Donner-Eliasziw with the paper's chi-square reference (the library's before issue 13's exact one)
            pairs = _core.binary_pairs(s)
            assert pairs is not None
            r = _core._honest(iv.kappa_gof(*pairs, level, reference="chi2"), s, e, _core._scale(s), lambda: iv.NAN_INTERVAL)[0]
            res["gof_chi2"] = (r.low, r.high)
        auto = _core.auto_after_bootstrap(s, _core.auto_method(s, n_units, B, True), e, bt, bse, level)[0]
        res["auto"] = res[auto]
        res["_auto"] = auto
        out[key] = res
    return out


def truths(cell: dict[str, Any], coefs: list[tuple[str, str | None]]) -> dict[str, float]:
    big_kw = {k: v for k, v in cell.items() if k not in ("n",)}
    if big_kw.get("clusters"):
        big_kw["clusters"] = 50_000
    t = simulate(200_000, rng=np.random.default_rng(999), **big_kw)
    prep = prepare(t, raters=None, policy="exclude", func="sim")
    out = {}
    for name, lvl in coefs:
        s = _make_spec(name, prep, level=lvl)
        out[name if lvl is None else f"{name}:{lvl}"] = float(s.estimate(s.totals().reshape(1, -1))[0][0])
    return out


def run_cell(cell: dict[str, Any], reps: int, B: int, seed: int) -> dict[str, Any]:
    coefs = COEFS_BINARY if cell["kind"] == "binary" else COEFS_FIVE
    truth = truths(cell, coefs)
    rng = np.random.default_rng(seed)
    hits: dict[str, dict[str, list[float]]] = {}
    widths: dict[str, dict[str, list[float]]] = {}
    n_undef: dict[str, int] = {k: 0 for k in truth}
    autos: dict[str, set[str]] = {}
    for r in range(reps):
        t = simulate(rng=rng, **cell)
        res = all_intervals(t, coefs, B, seed * 100_003 + r)
        for key, methods in res.items():
            if not methods:
                n_undef[key] += 1
                continue
            autos.setdefault(key, set()).add(methods["_auto"])
            for m, v in methods.items():
                if m.startswith("_"):
                    continue
                lo, hi = v
                cov = float(lo <= truth[key] <= hi) if math.isfinite(lo) and math.isfinite(hi) else float("nan")
                hits.setdefault(key, {}).setdefault(m, []).append(cov)
                widths.setdefault(key, {}).setdefault(m, []).append(hi - lo)
    summary: dict[str, Any] = {"cell": cell, "reps": reps, "B": B, "truth": truth, "undefined": n_undef,
                               "coverage": {}, "mc_se": {}, "mean_width": {}, "n_nan": {},
                               "auto_methods": {k: sorted(v) for k, v in autos.items()}}
    for key in hits:
        # a table whose estimate is undefined, or an interval that is nan, counts as a miss
        summary["coverage"][key] = {m: float(np.nan_to_num(np.asarray(v), nan=0.0).sum()) / reps
                                    for m, v in hits[key].items()}
        summary["mc_se"][key] = {m: math.sqrt(max(c * (1 - c), 1e-12) / reps)
                                 for m, c in summary["coverage"][key].items()}
        summary["n_nan"][key] = {m: int(np.isnan(v).sum()) for m, v in hits[key].items()}
        summary["mean_width"][key] = {m: float(np.nanmean(v)) for m, v in widths[key].items()}
    return summary


def grid(quick: bool) -> list[dict[str, Any]]:
    data = [
        {"kind": "binary", "prev": 0.5, "R": 2, "miss": 0.0},
        {"kind": "binary", "prev": 0.85, "R": 2, "miss": 0.0},
        {"kind": "binary", "prev": 0.85, "R": 4, "miss": 0.3},
        {"kind": "binary", "prev": 0.5, "R": 6, "miss": 0.5},
        {"kind": "five", "R": 3, "miss": 0.0},
        {"kind": "five", "R": 6, "miss": 0.5},
    ]
    ns = [20, 30, 100, 50] if not quick else [20]
    cells = [dict(d, n=n) for n in ns for d in data]  # smallest n first: partial runs keep the hardest cells
    cells += [{"kind": "five", "R": 3, "miss": 0.0, "n": 60, "clusters": 20},
              {"kind": "binary", "prev": 0.85, "R": 3, "miss": 0.0, "n": 60, "clusters": 20}]
    return cells


def markdown(paths: list[str]) -> str:
    """One row per (cell, coefficient): coverage of auto (and the method it used), the other
    methods, the Monte-Carlo SE, and auto's mean width over the percentile interval's."""
    pooled: dict[str, dict[str, Any]] = {}
    for p in paths:
        with open(p) as f:
            for s in json.load(f):
                key = json.dumps(s["cell"], sort_keys=True)
                # per (coefficient, method): tables, covered, summed width; chunks pool by tables
                t = pooled.setdefault(key, {"cell": s["cell"], "tables": {}, "auto_methods": {}})
                for k2, cov in s["coverage"].items():
                    for m, v in cov.items():
                        n0, h0, w0 = t["tables"].get((k2, m), (0, 0.0, 0.0))
                        w = s["mean_width"][k2][m]
                        t["tables"][(k2, m)] = (n0 + s["reps"], h0 + v * s["reps"], w0 + w * s["reps"])
                    t["auto_methods"][k2] = sorted(set(t["auto_methods"].get(k2, [])) | set(s["auto_methods"][k2]))
    rows = []
    for t in pooled.values():
        cov_: dict[str, dict[str, float]] = {}
        wid: dict[str, dict[str, float]] = {}
        se: dict[str, dict[str, float]] = {}
        reps_: dict[str, int] = {}
        for (k2, m), (n0, h0, w0) in t["tables"].items():
            c = h0 / n0
            cov_.setdefault(k2, {})[m] = c
            wid.setdefault(k2, {})[m] = w0 / n0
            se.setdefault(k2, {})[m] = math.sqrt(max(c * (1 - c), 1e-12) / n0)
            if m == "auto":
                reps_[k2] = n0
        rows.append({"cell": t["cell"], "coverage": cov_, "mean_width": wid, "mc_se": se, "reps": reps_,
                     "auto_methods": t["auto_methods"]})
    rows.sort(key=lambda s: (bool(s["cell"].get("clusters")), s["cell"]["n"], s["cell"]["kind"],
                             s["cell"].get("prev", 0), s["cell"]["R"]))
    out = ["| n | data | coefficient | tables | auto (method) | MC SE | percentile | BCa | bootstrap-t | jackknife | "
           "Wilson / D-E | auto width / percentile |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    short = {"studentized": "boot-t", "wilson": "Wilson", "gof": "D-E", "bca": "BCa", "percentile": "pct",
             "jackknife": "jack", "wald": "Wald"}
    for s in rows:
        c = s["cell"]
        data = (f"binary, prevalence {c['prev']}" if c["kind"] == "binary" else "5 ordered categories")
        data += f", {c['R']} raters, {int(100 * c['miss'])}% missing"
        n = f"{c['n']} items in {c['clusters']} clusters" if c.get("clusters") else str(c["n"])
        for key, cov in s["coverage"].items():
            w = s["mean_width"][key]
            ratio = w["auto"] / w["percentile"] if w.get("percentile") else float("nan")
            used = "+".join(short.get(m, m) for m in s.get("auto_methods", {}).get(key, []))
            other = cov.get("wilson", cov.get("gof", float("nan")))
            nan = float("nan")
            out.append(f"| {n} | {data} | {key.replace(':', ' ')} | {s['reps'][key]} | **{cov['auto']:.3f}** ({used}) | "
                       f"{s['mc_se'][key]['auto']:.3f} | {cov.get('percentile', nan):.3f} | {cov.get('bca', nan):.3f} | "
                       f"{cov.get('studentized', nan):.3f} | {cov.get('jackknife', nan):.3f} | {other:.3f} | "
                       f"{ratio:.2f} |".replace("nan", "-"))
    return "\n".join(out)


def _pair_probs(prev: float, acc: float) -> tuple[float, float, float]:
    """(both first, discordant, both second) probabilities of an item for two latent-class raters
    (each reports the true class with probability ``acc``, else a draw at the prevalence)."""
    hi1, lo1 = acc + (1 - acc) * prev, (1 - acc) * prev
    p11 = prev * hi1 ** 2 + (1 - prev) * lo1 ** 2
    p00 = prev * (1 - hi1) ** 2 + (1 - prev) * (1 - lo1) ** 2
    return p11, 1 - p11 - p00, p00


def exact_two_rater(prevs: tuple[float, ...] = (0.5, 0.7, 0.85), accs: tuple[float, ...] = (0.5, 0.7, 0.9),
                    ns: tuple[int, ...] = (20, 25, 30, 40, 50), level: float = 0.95) -> str:
    """Exact coverage (every table enumerated, no Monte-Carlo error) of the two intervals ``auto``
    uses for two raters on binary labels: Donner-Eliasziw for kappa (the coefficient of this
    latent-class model is ``acc^2``), with the exact reference the library uses up to
    ``GOF_EXACT_MAX`` items and with the paper's chi-square reference, each with its mean width,
    and Wilson for observed agreement (``n_eff`` as the library computes it: ``n - 1`` from the
    jackknife SE of a proportion, ``n`` at 0 or 1). A table with one category only (kappa
    undefined) counts as a miss, as in the simulation."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def de(a: int, b: int, c: int, ref: str) -> tuple[float, float] | None:
        if 2 * a + b == 0 or 2 * c + b == 0:
            return None
        r = iv.kappa_gof(a, b, c, level, reference=ref)
        return r.low, r.high

    def logpmf(counts: tuple[int, ...], probs: tuple[float, ...]) -> float:
        n = sum(counts)
        return math.lgamma(n + 1) + sum(k * math.log(p) - math.lgamma(k + 1) for k, p in zip(counts, probs))

    out = ["| prevalence | accuracy | kappa | observed agreement | interval | "
           + " | ".join(f"n = {n}" for n in ns) + " |", "|---|---|---|---|---|" + "---|" * len(ns)]
    for prev in prevs:
        for acc in accs:
            probs = _pair_probs(prev, acc)
            p11, p00 = probs[0], probs[2]
            pa = p11 + p00
            rows: dict[str, list[str]] = {"exact": [], "chi2": [], "wilson": []}
            for n in ns:
                for ref in ("exact", "chi2"):
                    cov = width = 0.0
                    for a in range(n + 1):
                        for b in range(n + 1 - a):
                            lim = de(a, b, n - a - b, ref)
                            if lim is None:
                                continue
                            pr = math.exp(logpmf((a, b, n - a - b), probs))
                            width += pr * (lim[1] - lim[0])
                            if lim[0] <= acc * acc <= lim[1]:
                                cov += pr
                    rows[ref].append(f"{cov:.3f} ({width:.3f})")
                c_w = 0.0
                for x in range(n + 1):
                    p = x / n
                    w = iv.wilson(p, n if x in (0, n) else n - 1, level)
                    if w.low <= pa <= w.high:
                        c_w += math.exp(logpmf((x, n - x), (pa, 1 - pa)))
                rows["wilson"].append(f"{c_w:.3f}")
            for name, key in (("Donner-Eliasziw, exact reference (kappa; mean width)", "exact"),
                              ("Donner-Eliasziw, chi-square reference (kappa; mean width)", "chi2"),
                              ("Wilson (observed agreement)", "wilson")):
                out.append(f"| {prev} | {acc} | {acc * acc:.2f} | {pa:.3f} | {name} | " + " | ".join(rows[key]) + " |")
    return "\n".join(out)


def kappa_sweep(n: int, prevs: tuple[float, ...] = (0.5, 0.7, 0.85), level: float = 0.95) -> str:
    """Exact coverage of Donner-Eliasziw's interval for two raters on ``n`` items over the true
    kappa: the latent-class raters of :func:`exact_two_rater` with accuracy 0.50, 0.51, ..., 0.90
    (kappa 0.25-0.81, 41 values) at each prevalence, every table enumerated; per reference
    (exact, chi-square) the smallest, mean and largest coverage, the share of the 41 values
    inside [0.935, 0.965] and below it, and the mean width. A discrete interval's coverage jumps
    where the true kappa crosses a probable table's limit, so one setting can land on a dip; the
    sweep shows how often."""
    from scipy.special import gammaln

    tables = [(a, b, n - a - b) for a in range(n + 1) for b in range(n + 1 - a) if 2 * a + b and 2 * (n - a - b) + b]
    T = np.array(tables, dtype=float)
    lc = gammaln(n + 1) - gammaln(T + 1).sum(axis=1)
    lims = {ref: np.array([[(r := iv.kappa_gof(*t, level, reference=ref)).low, r.high] for t in tables])
            for ref in ("exact", "chi2")}
    out = [f"| n | prevalence | reference | min | mean | max | share in [0.935, 0.965] | share below | mean width |",
           "|---|---|---|---|---|---|---|---|---|"]
    for prev in prevs:
        for ref, lim in lims.items():
            covs, widths = [], []
            for acc in np.linspace(0.5, 0.9, 41):
                p11, p10, p00 = _pair_probs(prev, float(acc))
                pr = np.exp(lc + T[:, 0] * np.log(p11) + T[:, 1] * np.log(p10) + T[:, 2] * np.log(p00))
                k = acc * acc
                covs.append(float(pr[(lim[:, 0] <= k) & (k <= lim[:, 1])].sum()))
                widths.append(float((pr * (lim[:, 1] - lim[:, 0])).sum()))
            c = np.array(covs)
            out.append(f"| {n} | {prev} | {'exact' if ref == 'exact' else 'chi-square'} | {c.min():.3f} | {c.mean():.3f} | "
                       f"{c.max():.3f} | {np.mean((c >= 0.935) & (c <= 0.965)):.2f} | {np.mean(c < 0.935):.2f} | "
                       f"{np.mean(widths):.3f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    if argv is None and len(sys.argv) > 2 and sys.argv[1] == "--markdown":
        print(markdown(sys.argv[2:]))
        return
    if argv is None and len(sys.argv) == 3 and sys.argv[1] == "--sweep":
        print("\n".join(kappa_sweep(int(n)) if i == 0 else "\n".join(kappa_sweep(int(n)).splitlines()[2:])
                        for i, n in enumerate(sys.argv[2].split(","))))
        return
    if argv is None and len(sys.argv) in (2, 3) and sys.argv[1] == "--exact":
        print(exact_two_rater(ns=tuple(int(x) for x in sys.argv[2].split(",")) if len(sys.argv) == 3 else (20, 25, 30, 40, 50)))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--B", type=int, default=1000)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cells", type=str, default="", help="comma-separated indices into the grid")
    ap.add_argument("--out", type=str, default="")
    ap.add_argument("--chunk", type=int, default=0,
                    help="chunk number: its own seeds, so chunks of --reps tables each pool into one cell "
                         "(--markdown pools every file it is given)")
    a = ap.parse_args(argv)
    cells = list(enumerate(grid(a.quick)))
    if a.cells:
        cells = [cells[int(i)] for i in a.cells.split(",")]
    reps = 60 if a.quick and a.reps == 1000 else a.reps
    results = []
    for k, cell in cells:  # the seed follows the cell's place in the grid: chunks give the same numbers
        t0 = time.perf_counter()
        s = run_cell(cell, reps, a.B, seed=1 + k + 1000 * a.chunk)
        s["chunk"] = a.chunk
        s["seconds"] = time.perf_counter() - t0
        results.append(s)
        print(json.dumps(cell), f"{s['seconds']:.0f}s", file=sys.stderr)
        for key, cov in s["coverage"].items():
            line = " ".join(f"{m}={v:.3f}" for m, v in cov.items())
            print(f"  {key:32s} {line}", file=sys.stderr)
        if a.out:
            with open(a.out, "w") as f:
                json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
