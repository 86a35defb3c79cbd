"""Benchmark of voirdire.agreement against the peer libraries, measured in the same run.

Run:  .venv/bin/python bench/bench_agreement.py [--quick] [--evalica-python PATH]

Workloads (issue 2):
  1. 1,000,000 items x 10 raters, 70 % missing, 5 categories: nominal and interval
     Krippendorff's alpha vs ``krippendorff`` (target >= 10x) and ``evalica`` (target >= 3x),
     same values;
  2. a 1,000-resample bootstrap of nominal alpha on 100,000 items vs ``evalica.alpha_bootstrap``
     (target >= 5x);
  3. interval alpha on 1,000,000 distinct float values (500,000 items x 2 raters): target < 2 s;
  4. Fleiss' kappa and Gwet's AC1 with standard errors vs ``irrCAC`` (target >= 5x), on
     100,000 items x 10 raters.

evalica (Rust core, Apache-2.0) is a bench-only dependency: it is looked for in the current
interpreter, then in ``--evalica-python`` (default ``/tmp/evalica-venv/bin/python``), where it is
run in a subprocess on the same data (saved as .npy); it is skipped with a message when missing.
Install it with ``python3 -m venv /tmp/evalica-venv && /tmp/evalica-venv/bin/pip install evalica pandas``.

BLAS/OpenMP threads are pinned to 1 (the machine is shared). Each call is timed ``--repeat``
times; the table shows the best wall time and the process CPU time of that run; ratios use
wall time (CPU time in brackets). The voirdire timings start from an ``AnnotationTable`` already
in memory (its construction is not timed, as the peers' DataFrame/array construction is not);
voirdire's call also computes the analytic (Gwet) standard error, the peers' do not.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
           "RAYON_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

SEED = 20241129


def make_dense(n_items: int, n_raters: int = 10, q: int = 5, missing: float = 0.7, seed: int = SEED) -> np.ndarray:
    """The PEERS.md timing data: rater accuracy U(0.55, 0.9), else uniform noise; cells missing at random."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, q, n_items)
    acc = rng.uniform(0.55, 0.9, n_raters)
    correct = rng.random((n_items, n_raters)) < acc
    X = np.where(correct, truth[:, None], rng.integers(0, q, (n_items, n_raters))).astype(float) + 1.0
    X[rng.random((n_items, n_raters)) < missing] = np.nan
    return X


def table_from_dense(X: np.ndarray, level: str = "nominal"):
    """An AnnotationTable straight from a dense (items x raters) array (items with no label dropped)."""
    from voirdire.data import AnnotationTable, Scale

    n, R = X.shape
    obs = ~np.isnan(X)
    cnt = obs.sum(axis=1)
    ii, rr = np.nonzero(obs)
    vals = X[ii, rr]
    uniq, codes = np.unique(vals, return_inverse=True)
    keep = cnt > 0
    indptr = np.concatenate([[0], np.cumsum(cnt[keep])]).astype(np.int64)
    return AnnotationTable(
        items=np.arange(int(keep.sum())).astype(str).astype(object),
        raters=np.array([f"r{k}" for k in range(R)], dtype=object),
        roles=np.array(["human"] * R, dtype=object), indptr=indptr, rater_idx=rr.astype(np.int32),
        codes=codes.astype(np.int32), values=vals, scale=Scale(level=level, categories=tuple(uniq.tolist())))


def timed(fn, repeat: int):
    best, cpu, out = float("inf"), float("nan"), None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        w, c = time.perf_counter() - t0, time.process_time() - c0
        if w < best:
            best, cpu = w, c
    return out, best, cpu


EVALICA_SCRIPT = r"""
import json, sys, time
import numpy as np, pandas as pd
import evalica
task, path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
X = np.load(path)
df = pd.DataFrame(X.T)  # observers x units, NaN = missing
res = {"version": evalica.__version__}
def timed(fn):
    best, cpu, out = float("inf"), float("nan"), None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        w, c = time.perf_counter() - t0, time.process_time() - c0
        if w < best:
            best, cpu = w, c
    return out, best, cpu
if task == "alpha":
    for d in ("nominal", "interval"):
        r, w, c = timed(lambda: evalica.alpha(df, distance=d))
        res[d] = {"value": float(r.alpha), "wall": w, "cpu": c}
else:
    r, w, c = timed(lambda: evalica.alpha_bootstrap(df, distance="nominal", n_resamples=1000, random_state=0))
    res["bootstrap"] = {"value": float(r.alpha), "low": float(r.low), "high": float(r.high), "wall": w, "cpu": c}
print(json.dumps(res))
"""


def evalica_runner(python: str | None):
    """A function (task, X, repeat) -> dict, or None with a reason, for evalica here or in another venv."""
    try:
        import evalica  # noqa: F401

        exe = sys.executable
    except ImportError:
        exe = python if python and Path(python).exists() else None
    if exe is None:
        return None, f"evalica not installed here nor at {python}"
    chk = subprocess.run([exe, "-c", "import evalica, pandas"], capture_output=True, text=True)
    if chk.returncode:
        return None, f"evalica not importable with {exe}: {chk.stderr.strip().splitlines()[-1:]}"

    def run(task: str, X: np.ndarray, repeat: int) -> dict:
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "X.npy"
            np.save(p, X)
            out = subprocess.run([exe, "-c", EVALICA_SCRIPT, task, str(p), str(repeat)], capture_output=True,
                                 text=True, env={**os.environ})
            if out.returncode:
                raise RuntimeError(out.stderr)
            return json.loads(out.stdout.strip().splitlines()[-1])

    return run, exe


def fmt(w: float, c: float) -> str:
    return f"{w:8.3f} s  (cpu {c:7.3f} s)"


def ratio(peer: tuple[float, float], ours: tuple[float, float]) -> str:
    return f"{peer[0] / ours[0]:6.1f}x  (cpu {peer[1] / ours[1]:5.1f}x)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10x smaller workloads (a smoke run).")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--evalica-python", default="/tmp/evalica-venv/bin/python")
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    rep = args.repeat
    import krippendorff
    import pandas as pd

    import voirdire
    from voirdire.agreement import fleiss_kappa, gwet_ac1, krippendorff_alpha

    ev_run, ev_info = evalica_runner(args.evalica_python)
    print(f"voirdire {voirdire.__version__}, numpy {np.__version__}, krippendorff {getattr(krippendorff, '__version__', '?')}"
          f", evalica: {ev_info if ev_run is None else 'via ' + ev_info}; threads pinned to 1; best of {rep}")
    failures = []

    # 1. point estimates on 1M x 10
    n1 = 1_000_000 // scale
    X = make_dense(n1)
    t = table_from_dense(X)
    print(f"\n1. {n1:,} items x 10 raters, 70% missing, 5 categories ({int((~np.isnan(X)).sum()):,} labels)")
    ev = ev_run("alpha", X, rep) if ev_run else None
    for level in ("nominal", "interval"):
        r, w, c = timed(lambda: krippendorff_alpha(t, level=level, n_resamples=0), rep)
        k, kw, kc = timed(lambda: krippendorff.alpha(X.T, level_of_measurement=level), max(1, rep - 2))
        line = (f"   {level:8s} voirdire {fmt(w, c)}  alpha={r.estimate:.12f} (analytic SE {r.analytic_se:.6f})\n"
                f"            krippendorff {fmt(kw, kc)}  alpha={k:.12f}  diff={abs(k - r.estimate):.1e}  "
                f"ratio {ratio((kw, kc), (w, c))}")
        if kw / w < 10:
            failures.append(f"{level} alpha vs krippendorff: {kw / w:.1f}x < 10x")
        if ev:
            e = ev[level]
            line += (f"\n            evalica      {fmt(e['wall'], e['cpu'])}  alpha={e['value']:.12f}  "
                     f"diff={abs(e['value'] - r.estimate):.1e}  ratio {ratio((e['wall'], e['cpu']), (w, c))}")
            if e["wall"] / w < 3:
                failures.append(f"{level} alpha vs evalica: {e['wall'] / w:.1f}x < 3x")
        print(line)
    del X, t

    # 2. bootstrap on 100k
    n2 = 100_000 // scale
    X = make_dense(n2)
    t = table_from_dense(X)
    print(f"\n2. bootstrap of nominal alpha, 1,000 resamples, {n2:,} items x 10 raters")
    r, w, c = timed(lambda: krippendorff_alpha(t, level="nominal", n_resamples=1000, rng=0), rep)
    line = f"   voirdire {fmt(w, c)}  alpha={r.estimate:.6f} CI ({r.ci.low:.5f}, {r.ci.high:.5f})"
    if ev_run:
        e = ev_run("bootstrap", X, max(1, rep - 1))["bootstrap"]
        line += (f"\n   evalica  {fmt(e['wall'], e['cpu'])}  alpha={e['value']:.6f} CI ({e['low']:.5f}, {e['high']:.5f})"
                 f"  ratio {ratio((e['wall'], e['cpu']), (w, c))}")
        if e["wall"] / w < 5:
            failures.append(f"bootstrap vs evalica: {e['wall'] / w:.1f}x < 5x")
    print(line)

    # 4. Fleiss and Gwet with SEs vs irrCAC (same 100k data)
    try:
        from irrCAC.raw import CAC
    except ImportError:
        CAC = None
    print(f"\n4. Fleiss' kappa and Gwet's AC1 with SEs, {n2:,} items x 10 raters")
    df = pd.DataFrame(X)
    cats = [float(v) for v in t.scale.categories]
    for name, ours, peer in (("fleiss", fleiss_kappa, "fleiss"), ("gwet_ac1", gwet_ac1, "gwet")):
        r, w, c = timed(lambda: ours(t, n_resamples=0), rep)
        line = f"   {name:8s} voirdire {fmt(w, c)}  est={r.estimate:.6f} SE={r.analytic_se:.6f}"
        if CAC is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p, pw, pc = timed(lambda: getattr(CAC(df, categories=cats), peer)()["est"], max(1, rep - 1))
            line += (f"\n            irrCAC   {fmt(pw, pc)}  est={p['coefficient_value']:.5f} SE={p['se']:.5f}"
                     f"  ratio {ratio((pw, pc), (w, c))}")
            if pw / w < 5:
                failures.append(f"{name} vs irrCAC: {pw / w:.1f}x < 5x")
        print(line)
    del X, t, df

    # 3. interval alpha on 1M distinct floats
    n3 = 500_000 // scale
    rng = np.random.default_rng(SEED)
    truth = rng.normal(size=n3)
    Xc = truth[:, None] + rng.normal(scale=0.5, size=(n3, 2))
    tc = table_from_dense(Xc, level="interval")
    print(f"\n3. interval alpha on {Xc.size:,} distinct float values ({n3:,} items x 2 raters)")
    r, w, c = timed(lambda: krippendorff_alpha(tc, level="interval", n_resamples=0), rep)
    # closed form for two raters on complete data: alpha = 1 - (n-1) sum (x-y)^2 / (2 n S_xx) in pooled terms
    v = Xc.ravel()
    N = v.size
    do = np.sum((Xc[:, 0] - Xc[:, 1]) ** 2) * 2 / N  # each item: 2 ordered pairs, n_i - 1 = 1
    de = 2 * N * np.sum((v - v.mean()) ** 2) / (N * (N - 1))
    print(f"   voirdire {fmt(w, c)}  alpha={r.estimate:.12f}  closed form {1 - do / de:.12f}  "
          f"({'<' if w < 2 else '>='} 2 s)")
    if w >= 2:
        failures.append(f"interval alpha on 1M distinct values took {w:.2f} s >= 2 s")
    rb, wb, cb = timed(lambda: krippendorff_alpha(tc, level="interval", n_resamples=200, rng=0), 1)
    print(f"   with a 200-resample bootstrap: {fmt(wb, cb)}  CI ({rb.ci.low:.5f}, {rb.ci.high:.5f})")
    Xr = np.exp(Xc)  # positive values for the ratio metric
    tr = table_from_dense(Xr, level="ratio")
    rr_, wr, cr = timed(lambda: krippendorff_alpha(tr, level="ratio", n_resamples=0), max(1, rep - 2))
    print(f"   ratio alpha on {Xr.size:,} distinct positive values (quadrature, with SE): {fmt(wr, cr)}  "
          f"alpha={rr_.estimate:.6f} SE={rr_.analytic_se:.6f}")

    print("\nTargets: " + ("all met" if not failures else "NOT met: " + "; ".join(failures)))


if __name__ == "__main__":
    main()
