"""Per-rater diagnostics at scale: 50 raters on 100,000 items, against one agreement computation.

Design: 100,000 items, 50 raters, each item labelled by ``--per-item`` raters (default 5: 500,000
labels) drawn at random, 5 categories, raters right with probability 0.7. Reference: Krippendorff's
alpha of the whole pool with its 2,000-resample bootstrap (``krippendorff_alpha``), timed in the same
run. Measured: ``rater_diagnostics`` with 2,000 resamples (every per-rater S with its interval, the
pool coefficient without each rater with its interval, the outlier test), without and with the
latent-class competence models. Wall and CPU seconds, best of ``--repeat``.

``--stages``: one run, stage by stage (CPU seconds): building the table; the reference; the
joint per-item statistics of every S(k; pool) and of the pool without each rater (factored into
distinct pieces, and for comparison built directly); their point estimates; the joint bootstrap's
sums (drawing the weights, then the product); for comparison the hash factoring and the sums of
the S(k; pool) columns alone and of the pool/without-k columns alone (each its own factoring and
product, so they do not add up to the joint one); Dawid-Skene; MACE; the per-item diagnostics.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from voirdire.agreement import krippendorff_alpha
from voirdire.data import AnnotationTable
from voirdire.diagnostics import rater_diagnostics


def table(n: int, K: int, per: int, seed: int = 0) -> AnnotationTable:
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 5, n)
    # per distinct raters per item: argsort of random keys, first `per` columns
    raters = np.argsort(rng.random((n, K)), axis=1)[:, :per].ravel()
    items = np.repeat(np.arange(n), per)
    lab = np.where(rng.random(n * per) < 0.7, np.repeat(z, per), rng.integers(0, 5, n * per))
    names = np.array([f"r{k:02d}" for k in range(K)])[raters]
    return AnnotationTable.from_arrays(items, names, lab, categories=list(range(5)))


def timed(f, repeat: int) -> tuple[float, float, object]:
    best = (float("inf"), float("inf"), None)
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        out = f()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        if w < best[0]:
            best = (w, c, out)
    return best


def stages(n: int, K: int, per: int) -> None:
    """The stage-by-stage breakdown (private functions of the diagnostics: a profile, not an API)."""
    import scipy.sparse as sp

    from voirdire._stats import _poisson as P
    from voirdire.diagnostics import item_diagnostics
    from voirdire.diagnostics import _raters as R
    from voirdire.pairwise import dawid_skene_arrays, mace_arrays

    def T(label: str, f):  # noqa: ANN001, ANN202
        c = time.process_time()
        out = f()
        print(f"  {label:64s} {time.process_time() - c:6.2f} s CPU", flush=True)
        return out

    t = T("table construction (AnnotationTable.from_arrays)", lambda: table(n, K, per))
    T("reference: krippendorff_alpha + 2,000 resamples", lambda: krippendorff_alpha(t, n_resamples=2000, rng=0))
    st = T("setup: joint rows [pool | S(k;pool) rows | without-k rows]", lambda: R._setup(
        t, list(t.humans), "agreement", "krippendorff_alpha", None))
    prep, spec = st.prep, st.spec
    args = (prep, st.rpos, st.K, st.L, "agreement", "nominal", prep.cat_values.astype(float), "krippendorff_alpha",
            "nominal", True)
    T("  of which: the factored rows (M, G, X = M @ G)", lambda: R._joint_rows(*args))
    T("  for comparison: the same rows built directly over all items", lambda: R._blocks(*args))
    T("    of which: S(k;pool) pair rows", lambda: R._pair_rows(prep, st.rpos, st.K, "agreement", "nominal", st.L,
                                                               prep.cat_values.astype(float)))
    T("    of which: without-k corrections", lambda: R._without_rows(prep, st.rpos, st.K, "krippendorff_alpha",
                                                                     "nominal", None))
    S = spec.stats()
    M, G = spec.factors
    print(f"  (labels {prep.n_labels:,}; joint rows {S.shape[0]:,} x {S.shape[1]} with {S.nnz:,} non-zeros; "
          f"M: {M.nnz:,} non-zeros over {M.shape[1]:,} distinct pieces; G: {G.nnz:,} non-zeros)")
    T("point estimates (pool, every S(k;pool), every pool without k)",
      lambda: spec.estimate(spec.totals().reshape(1, -1)))
    B, key = 2000, 12345

    def draw() -> None:
        for g in range(-(-S.shape[0] // P.GROUP_UNITS)):
            P._group_weights(key, g, S.shape[0], B)

    T("bootstrap: drawing the 2,000 x n_items weights", draw)
    sums = T("bootstrap: joint sums (weights + (w @ M) @ G)", lambda: P.weighted_sums(S, key, B, factors=(M, G)))
    T("bootstrap: estimates from the sums", lambda: spec.estimate(sums))
    T("  for comparison: factoring X by hashing its pieces", lambda: P.factor_rows(S, spec.column_segments))
    sp_, width = spec.s_pool, st.S
    Rm = S[:, sp_:sp_ + st.K * width]
    T("  S(k;pool) columns alone: sums (hash-factored)",
      lambda: P.weighted_sums(Rm, key, B, segments=np.repeat(np.arange(1, st.K + 1), width)))
    Dp = sp.hstack([S[:, :sp_], S[:, sp_ + st.K * width:]], format="csr")
    T("  pool + without-k columns alone: sums (hash-factored)",
      lambda: P.weighted_sums(Dp, key, B, segments=np.r_[np.zeros(sp_, dtype=np.int64),
                                                          np.repeat(np.arange(1, st.K + 1), sp_)]))
    T("rater_diagnostics(competence=False), whole", lambda: rater_diagnostics(t, n_resamples=B, competence=False, rng=0))
    sub = prep.code < st.L
    lab = (prep.item[sub], st.rpos[sub], prep.code[sub])
    kw = dict(n_items=prep.n_items, n_workers=st.K, n_classes=st.L)
    T("Dawid-Skene (competence)", lambda: dawid_skene_arrays(*lab, **kw))
    T("MACE, 10 restarts (competence)", lambda: mace_arrays(*lab, **kw, rng=np.random.default_rng(0)))
    T("item_diagnostics (per-item)", lambda: item_diagnostics(t))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--raters", type=int, default=50)
    ap.add_argument("--per-item", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10,000 items, one repeat")
    ap.add_argument("--stages", action="store_true", help="one run, stage by stage")
    a = ap.parse_args()
    if a.quick:
        a.items, a.repeat = 10_000, 1
    if a.stages:
        print(f"{a.items:,} items x {a.raters} raters, {a.per_item} per item; load average {os.getloadavg()[0]:.1f}")
        stages(a.items, a.raters, a.per_item)
        return
    t = table(a.items, a.raters, a.per_item)
    print(f"{a.items:,} items x {a.raters} raters, {a.per_item} per item ({t.n_labels:,} labels); "
          f"load average {os.getloadavg()[0]:.1f}")
    wa, ca, ra = timed(lambda: krippendorff_alpha(t, n_resamples=2000, rng=0), a.repeat)
    print(f"krippendorff_alpha + 2,000 resamples      {wa:6.2f} s wall {ca:6.2f} s CPU  (alpha {ra.estimate:.4f})")
    wd, cd, rd = timed(lambda: rater_diagnostics(t, n_resamples=2000, competence=False, rng=0), a.repeat)
    print(f"rater_diagnostics, 2,000 resamples        {wd:6.2f} s wall {cd:6.2f} s CPU  "
          f"ratio {wd / wa:.2f}x wall, {cd / ca:.2f}x CPU  (flagged: {len(rd.flagged_raters)})")
    wc, cc, _ = timed(lambda: rater_diagnostics(t, n_resamples=2000, competence=True, rng=0), 1)
    print(f"  + Dawid-Skene and MACE competence        {wc:6.2f} s wall {cc:6.2f} s CPU")


if __name__ == "__main__":
    main()
