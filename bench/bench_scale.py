"""From file to answer at scale (issue 18), measured in one run.

Run:  .venv/bin/python bench/bench_scale.py [--quick] [--labels 3.9e6,20e6] [--evalica-python PATH]

Workloads:
  1. ``AnnotationTable.from_frame`` on the long table of 1,000,000 items x 10 raters at 39 %
     density (3.9M labels, string ids, labels 1-5 read as text, as ``pd.read_csv(dtype=str)``
     gives them): the vectorised constructor against the row-by-row one it replaced (kept as
     the test oracle ``tests/data/_reference_table.py``), on the same frame;
  2. ``read_annotations`` of the same table from CSV and from Parquet (reader + constructor);
  3. ``voirdire agree FILE -c krippendorff_alpha --scale interval`` end to end in a fresh
     process per file (wall time and the process's peak resident memory), at each size of
     ``--labels``, from CSV and Parquet; beside it the peers' way from file to answer
     (``pd.read_csv`` + pivot to the dense matrix + ``krippendorff.alpha`` / ``evalica.alpha``),
     where they fit;
  4. 1,000 bootstrap resamples of interval alpha on 1,000,000 distinct-valued items: index
     draws (the classical multinomial bootstrap, as before) against the index-free unit weights;
  5. (``--big N``) ``agree --stream`` on N labels from Parquet written in chunks here (zstd,
     dictionary-encoded item and rater ids, row groups of 2**20 rows): wall, CPU and peak
     memory of the command; then on the first ~5M labels of the same file (cut at an item
     boundary) the streaming path against the in-memory path (every streamed coefficient of
     the interval scale: estimates, analytic SEs, interval ends to 1e-12) and against a Dask
     LocalCluster (2 worker processes, 3 GiB each) running the same streamed statistics; ``--big-dask``
     also runs the N-label file on that cluster through ``voirdire agree --scheduler``;
  6. (``--validate N``) ``voirdire validate FILE --judge judge`` on N labels from Parquet (10
     humans at 39 % density and one judge on every item, labels 1-5): wall, CPU, peak.
  7. (``--kernel``, alone) the alpha kernel (``krippendorff_alpha(table, n_resamples=0)``: the
     estimate and its analytic SE, from a table in memory) against ``evalica.alpha`` with both on
     their default threads (no ``*_NUM_THREADS`` set; evalica's Rust core uses rayon),
     ``krippendorff.alpha`` and irrCAC's ``krippendorff()``, on the PEERS.md data
     (``bench_agreement.make_dense``: 10 raters, 70 % missing, 5 categories) at each size of
     ``--kernel-items``; irrCAC only up to ``--irrcac-max`` items (a Python loop per item).

The machine is shared: every figure comes with CPU time and the load average, and ratios are
taken inside one run. Nothing here is a test; the files are generated in a temporary folder and
deleted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SEED = 20261201


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def timed(fn):
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def make_long(n_items: int, n_raters: int = 10, density: float = 0.39, seed: int = SEED) -> pd.DataFrame:
    """Items ``item0..``, raters ``r0..r9``, labels 1-5 from a noisy truth, cells kept at random."""
    rng = np.random.default_rng(seed)
    keep = rng.random((n_items, n_raters)) < density
    ii, rr = np.nonzero(keep)
    truth = rng.integers(1, 6, n_items)
    noisy = np.clip(truth[ii] + rng.integers(-1, 2, ii.size), 1, 5)
    return pd.DataFrame({"item": np.char.add("item", ii.astype(str)), "rater": np.char.add("r", rr.astype(str)),
                         "label": noisy})


def peak_child(args: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds, peak resident memory (MiB, from /usr/bin/time) and the last line
    mentioning alpha (else the last line) of one command run in a fresh process."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-o", tf.name, "-f", "%M %U %S", *args], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        rss_kb, user, sys_ = tf.read().split()[-3:]
    out = (p.stdout + p.stderr).splitlines()
    hits = [ln for ln in out if "alpha" in ln.lower() and ln.strip()] or [ln for ln in out if ln.strip()][-1:]
    return wall, float(user) + float(sys_), int(rss_kb) // 1024, (hits[0].strip()[:110] if hits else "")


PEER_SCRIPT = r"""
import sys, time, numpy as np, pandas as pd
path, lib = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
df = pd.read_csv(path) if path.endswith(".csv") else pd.read_parquet(path)
X = df.pivot(index="item", columns="rater", values="label").to_numpy(dtype=float)  # items x raters
if lib == "krippendorff":
    import krippendorff
    a = krippendorff.alpha(X.T, level_of_measurement="interval")
else:
    import evalica
    a = evalica.alpha(pd.DataFrame(X.T), distance="interval").alpha  # observers x units
print(f"{lib} alpha={a:.12f} in {time.perf_counter() - t0:.1f}s")
"""


def write_long_parquet(path: Path, n_items: int, *, n_raters: int = 10, density: float = 0.39, seed: int = SEED,
                       chunk_items: int = 1_000_000, judge: bool = False) -> int:
    """The long table of :func:`make_long` (``judge``: plus a rater ``judge`` on every item), written
    ``chunk_items`` items at a time (memory O(chunk)), items grouped, ids dictionary-encoded, zstd,
    row groups of 2**20 rows. Returns the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = [f"r{k}" for k in range(n_raters)] + (["judge"] if judge else [])
    schema = pa.schema([("item", pa.dictionary(pa.int32(), pa.string())),
                        ("rater", pa.dictionary(pa.int8(), pa.string())), ("label", pa.int64())])
    rows = 0
    with pq.ParquetWriter(path, schema, compression="zstd", use_dictionary=True) as w:
        for a in range(0, n_items, chunk_items):
            m = min(chunk_items, n_items - a)
            keep = rng.random((m, n_raters)) < density
            truth = rng.integers(1, 6, m)
            if judge:
                keep = np.concatenate([keep, np.ones((m, 1), dtype=bool)], axis=1)
            ii, rr = np.nonzero(keep)  # row-major: items grouped, raters in order
            lab = np.clip(truth[ii] + rng.integers(-1, 2, ii.size), 1, 5)
            ids = pa.array(np.char.add("item", np.arange(a, a + m).astype(str)))
            t = pa.table({"item": pa.DictionaryArray.from_arrays(pa.array(ii.astype(np.int32)), ids),
                          "rater": pa.DictionaryArray.from_arrays(pa.array(rr.astype(np.int8)), pa.array(names)),
                          "label": pa.array(lab.astype(np.int64))}, schema=schema)
            w.write_table(t, row_group_size=1 << 20)
            rows += t.num_rows
    return rows


def head_parquet(src: Path, dst: Path, n_rows: int) -> int:
    """The first ``n_rows`` rows of ``src`` or a few more (to the end of the item there), to ``dst``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from voirdire.agreement._stream import _run_starts

    got, n = [], 0
    for b in pq.ParquetFile(src).iter_batches(batch_size=1 << 20):
        got.append(b)
        n += b.num_rows
        if n > n_rows:
            break
    t = pa.Table.from_batches(got)
    t = t.slice(0, int(_run_starts(t.column("item"))[-1]))  # drop the (perhaps cut) last item
    pq.write_table(t, dst, compression="zstd")
    return t.num_rows


def _same(a, b, tol: float = 1e-12) -> float:
    """Largest absolute difference of estimates, analytic SEs and interval ends of two result lists
    (inf when they differ in coefficients or counts)."""
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if (x.coefficient, x.n_items, x.n_labels) != (y.coefficient, y.n_items, y.n_labels):
            return float("inf")
        for u, v in ((x.estimate, y.estimate), (x.analytic_se, y.analytic_se), (x.ci.low, y.ci.low),
                     (x.ci.high, y.ci.high)):
            if not (np.isnan(u) and np.isnan(v)):
                worst = max(worst, abs(u - v))
    return worst


def big_stream(n_labels: float, tmp: Path, with_dask_big: bool) -> None:
    """Section 5: ``agree --stream`` on ``n_labels`` labels; equality on a 5M-label head; Dask."""
    from voirdire.agreement import agreement
    from voirdire.agreement._stream import agreement_stream
    from voirdire.data import read_annotations

    exe = str(Path(sys.executable).parent / "voirdire")
    big = tmp / "big.parquet"
    (n_rows), w, c = timed(lambda: write_long_parquet(big, int(round(n_labels / 3.9)), seed=SEED + 2))
    print(f"\n## 5. agree --stream on {n_rows:,} labels (Parquet {big.stat().st_size / 2**20:,.0f} MiB, written in "
          f"{w:.0f} s), {load()}")
    cmd = [exe, "agree", str(big), "--stream", "-c", "krippendorff_alpha", "--scale", "interval"]
    w, c, rss, line = peak_child(cmd)
    print(f"  voirdire agree --stream   wall {w:7.1f} s  cpu {c:7.1f} s  peak {rss:6,d} MiB  {load()}  | {line}")
    sub = tmp / "head.parquet"
    n_sub = head_parquet(big, sub, 5_000_000)
    kw = dict(scale="interval", level="interval", n_resamples=2000, rng=0)
    (whole), w1, c1 = timed(lambda: agreement(read_annotations(sub, scale="interval"), level="interval",
                                                n_resamples=2000, rng=0))
    (streamed), w2, c2 = timed(lambda: agreement_stream(sub, **kw))
    names = [r.coefficient for r in whole]
    print(f"  head of {n_sub:,} labels: in memory wall {w1:.1f} s cpu {c1:.1f} s; streamed wall {w2:.1f} s cpu "
          f"{c2:.1f} s; coefficients {names}; largest difference (estimates, analytic SEs, interval ends) "
          f"{_same(list(whole), list(streamed)):.2e}")
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("  Dask: distributed is not installed; not run")
        return
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      memory_limit="3GiB") as cl, Client(cl) as client:
        (on_dask), w3, c3 = timed(lambda: agreement_stream(sub, scheduler=client, **kw))
        print(f"  head on a Dask LocalCluster (2 workers) wall {w3:.1f} s; largest difference from the local stream "
              f"{_same(list(streamed), list(on_dask)):.2e}")
        if with_dask_big:
            w, c, rss, line = peak_child(cmd + ["--scheduler", cl.scheduler_address])
            peaks = client.run(_peak_mib)  # each worker process's peak resident memory
            print(f"  {n_rows:,} labels on the LocalCluster (2 workers, 3 GiB limit each): wall {w:7.1f} s  client cpu "
                  f"{c:7.1f} s  client peak {rss:6,d} MiB  worker peaks {sorted(peaks.values())} MiB  {load()}  | {line}")


def _peak_mib() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def big_validate(n_labels: float, tmp: Path) -> None:
    """Section 6: ``voirdire validate`` on ``n_labels`` labels (10 humans, one judge on every item)."""
    path = tmp / "val.parquet"
    n_rows = write_long_parquet(path, int(round(n_labels / 4.9)), seed=SEED + 3, judge=True)
    w, c, rss, line = peak_child([str(Path(sys.executable).parent / "voirdire"), "validate", str(path), "--judge",
                                  "judge"])
    print(f"\n## 6. voirdire validate on {n_rows:,} labels ({load()})\n  wall {w:7.1f} s  cpu {c:7.1f} s  "
          f"peak {rss:6,d} MiB  | {line}")


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A temporary folder for the generated files, emptied and removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="voirdire-scale-"))
    try:
        yield tmp
    finally:
        for p in tmp.glob("*"):
            p.unlink()
        tmp.rmdir()


def big_sections(args: argparse.Namespace, tmp: Path) -> None:
    """Sections 5 (``--big``) and 6 (``--validate``), each when asked."""
    if args.big:
        big_stream(args.big, tmp, args.big_dask)
    if args.validate:
        big_validate(args.validate, tmp)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    ap.add_argument("--labels", default="3.9e6,20e6", help="comma-separated label counts for the end-to-end runs")
    ap.add_argument("--evalica-python", default="/tmp/evalica-venv/bin/python")
    ap.add_argument("--skip-reference", action="store_true", help="do not time the row-by-row constructor")
    ap.add_argument("--big", type=float, default=0.0, help="labels of section 5 (agree --stream; 0: not run)")
    ap.add_argument("--big-dask", action="store_true", help="section 5 also runs the big file on the LocalCluster")
    ap.add_argument("--validate", type=float, default=0.0, help="labels of section 6 (validate; 0: not run)")
    ap.add_argument("--only", action="store_true", help="run only sections 5 and 6")
    ap.add_argument("--kernel", action="store_true", help="run only section 7 (the alpha kernel vs peers)")
    ap.add_argument("--kernel-items", default="1e5,1e6", help="section 7: item counts")
    ap.add_argument("--irrcac-max", type=float, default=1e5, help="section 7: largest item count irrCAC is run on")
    args = ap.parse_args()
    if args.kernel:
        print(f"# bench_scale  ({os.cpu_count()} CPUs, {load()} at start)")
        section_7(args)
        return
    if args.only:
        print(f"# bench_scale  ({os.cpu_count()} CPUs, {load()} at start)")
        with scratch() as tmp:
            big_sections(args, tmp)
        return
    from voirdire.data import AnnotationTable, read_annotations

    n1 = 100_000 if args.quick else 1_000_000
    sizes = [4e5] if args.quick else [float(x) for x in args.labels.split(",")]
    print(f"# bench_scale  ({os.cpu_count()} CPUs, {load()} at start)\n")
    with scratch() as tmp:
        # ---------------------------------------------------------------- 1. from_frame
        df = make_long(n1)
        csv = tmp / "t.csv"
        df.to_csv(csv, index=False)
        df.to_parquet(tmp / "t.parquet", index=False)
        frame = pd.read_csv(csv, dtype=str, keep_default_na=False, skipinitialspace=True)
        print(f"## 1. from_frame on {len(frame):,} labels ({n1:,} items x 10 raters), {load()}")
        t_new, w_new, c_new = timed(lambda: AnnotationTable.from_frame(frame, scale="interval"))
        print(f"  vectorised       wall {w_new:6.2f} s   cpu {c_new:6.2f} s")
        if not args.skip_reference:
            from tests.data._reference_table import reference_from_frame

            ref, w_ref, c_ref = timed(lambda: reference_from_frame(frame, scale="interval"))
            same = (np.array_equal(ref["codes"][np.lexsort((ref["rater_idx"],))], t_new.codes[np.lexsort((
                t_new.rater_idx,))]) and list(ref["items"]) == list(t_new.items))
            print(f"  row by row       wall {w_ref:6.2f} s   cpu {c_ref:6.2f} s   -> {w_ref / w_new:.1f}x wall, "
                  f"{c_ref / c_new:.1f}x cpu; same table: {same}   ({load()})")
        # ---------------------------------------------------------------- 2. readers
        print(f"\n## 2. read_annotations (reader + constructor), {load()}")
        _, w_pd, c_pd = timed(lambda: pd.read_csv(csv, dtype=str, keep_default_na=False, skipinitialspace=True))
        print(f"  pd.read_csv alone (the old reader)   wall {w_pd:6.2f} s   cpu {c_pd:6.2f} s")
        for name in ("t.csv", "t.parquet"):
            _, w, c = timed(lambda: read_annotations(tmp / name, scale="interval"))
            print(f"  {name:10s} read_annotations    wall {w:6.2f} s   cpu {c:6.2f} s")
        # ---------------------------------------------------------------- 3. end to end
        print(f"\n## 3. voirdire agree FILE -c krippendorff_alpha --scale interval (fresh process each), {load()}")
        have_evalica = Path(args.evalica_python).exists()
        for n_lab in sizes:
            n_items = int(round(n_lab / 3.9))
            big = make_long(n_items, seed=SEED + 1)
            paths = {"csv": tmp / f"a{n_items}.csv", "parquet": tmp / f"a{n_items}.parquet"}
            big.to_csv(paths["csv"], index=False)
            big.to_parquet(paths["parquet"], index=False)
            del big
            for kind, p in paths.items():
                w, c, rss, line = peak_child([str(Path(sys.executable).parent / "voirdire"), "agree", str(p), "-c",
                                              "krippendorff_alpha", "--scale", "interval"])
                print(f"  {n_lab / 1e6:5.1f}M labels {kind:8s} voirdire   wall {w:6.1f} s  cpu {c:6.1f} s  "
                      f"peak {rss:6,d} MiB  {load()}  | {line}")
                peers = [(sys.executable, "krippendorff")] if kind == "csv" else []
                if have_evalica and kind == "csv":  # the peers read the CSV (evalica's venv has no Parquet)
                    peers.append((args.evalica_python, "evalica"))
                for exe, lib in peers:
                    if n_lab > 25e6:
                        print(f"           {kind:8s} {lib:12s} not run (dense matrix of {n_items:,} x 10 and pandas "
                              f"pivot: past this machine's share of memory)")
                        continue
                    w, c, rss, line = peak_child([exe, "-c", PEER_SCRIPT, str(p), lib])
                    print(f"           {kind:8s} {lib:12s} wall {w:6.1f} s  cpu {c:6.1f} s  peak {rss:6,d} MiB  "
                          f"| {line}")
            for p in paths.values():
                p.unlink()
        # ---------------------------------------------------------------- 4. bootstrap
        from voirdire.agreement import _core, krippendorff_alpha

        n_b = 100_000 if args.quick else 1_000_000
        rng = np.random.default_rng(SEED)
        X = rng.normal(size=(n_b, 1)) + rng.normal(scale=0.7, size=(n_b, 2))
        t = AnnotationTable.from_arrays(np.repeat(np.arange(n_b), 2), np.tile(["a", "b"], n_b), X.ravel(),
                                        scale="interval")
        print(f"\n## 4. 1,000 resamples of interval alpha, {n_b:,} items x 2 raters, {t.n_categories:,} distinct "
              f"values, {load()}")
        r_new, w_new, c_new = timed(lambda: krippendorff_alpha(t, level="interval", n_resamples=1000, rng=1))
        _, w0, c0 = timed(lambda: krippendorff_alpha(t, level="interval", n_resamples=0, rng=1))
        old = _core._POISSON_MIN_UNITS
        _core._POISSON_MIN_UNITS = 1 << 62
        try:
            r_old, w_old, c_old = timed(lambda: krippendorff_alpha(t, level="interval", n_resamples=1000, rng=1))
        finally:
            _core._POISSON_MIN_UNITS = old
        print(f"  point estimate + analytic SE   wall {w0:6.2f} s  cpu {c0:6.2f} s")
        print(f"  unit weights (new)             wall {w_new:6.2f} s  cpu {c_new:6.2f} s   SE {r_new.se:.6f}  "
              f"CI [{r_new.ci.low:.5f}, {r_new.ci.high:.5f}]")
        print(f"  index draws (before)           wall {w_old:6.2f} s  cpu {c_old:6.2f} s   SE {r_old.se:.6f}  "
              f"CI [{r_old.ci.low:.5f}, {r_old.ci.high:.5f}]   -> {w_old / w_new:.1f}x wall, {c_old / c_new:.1f}x cpu"
              f"   ({load()})")
        print(f"  analytic SE {r_new.analytic_se:.6f}")
        big_sections(args, tmp)


_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                "RAYON_NUM_THREADS")


def section_7(args) -> None:
    """The alpha kernel against its peers, every library on its default threads."""
    import warnings

    import krippendorff

    saved = {v: os.environ.get(v) for v in _THREAD_VARS}
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_agreement as ba  # it pins threads to 1 on import: undone below, its helpers kept

    for v, x in saved.items():
        if x is None:
            os.environ.pop(v, None)
        else:
            os.environ[v] = x
    pinned = {v: os.environ[v] for v in _THREAD_VARS if v in os.environ}
    from voirdire.agreement import krippendorff_alpha

    try:
        from irrCAC.raw import CAC
    except ImportError:
        CAC = None
    ev_run, ev_info = ba.evalica_runner(args.evalica_python)
    print(f"\n## 7. the alpha kernel vs peers, default threads ({os.cpu_count()} CPUs; thread variables set: "
          f"{pinned or 'none'}; evalica: {ev_info if ev_run is None else 'via ' + ev_info}), best of 3, {load()}")
    for n in [int(float(x)) for x in args.kernel_items.split(",")]:
        X = ba.make_dense(n)
        t = ba.table_from_dense(X)
        ev = ev_run("alpha", X, 3) if ev_run else None
        print(f"  {n:,} items x 10 raters ({int((~np.isnan(X)).sum()):,} labels), {load()}")
        for level in ("nominal", "interval"):
            r, w, c = ba.timed(lambda: krippendorff_alpha(t, level=level, n_resamples=0), 3)
            print(f"    {level:8s} voirdire     wall {w:7.3f} s  cpu {c:7.3f} s  alpha={r.estimate:.12f}")
            if ev:
                e = ev[level]
                print(f"             evalica      wall {e['wall']:7.3f} s  cpu {e['cpu']:7.3f} s  alpha={e['value']:.12f}  "
                      f"diff {abs(e['value'] - r.estimate):.1e}  -> {e['wall'] / w:.1f}x wall, {e['cpu'] / c:.1f}x cpu")
            k, kw, kc = ba.timed(lambda: krippendorff.alpha(X.T, level_of_measurement=level), 1)
            print(f"             krippendorff wall {kw:7.3f} s  cpu {kc:7.3f} s  alpha={k:.12f}  "
                  f"diff {abs(k - r.estimate):.1e}  -> {kw / w:.1f}x wall")
            if CAC is None:
                print("             irrCAC       not installed")
            elif n > args.irrcac_max:
                print(f"             irrCAC       not run above {args.irrcac_max:,.0f} items (a Python loop per item: "
                      f"see the time at the largest size run)")
            else:
                import pandas as pd

                cats = [float(v) for v in t.scale.categories]
                wt = "identity" if level == "nominal" else "quadratic"
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    p, pw, pc = ba.timed(lambda: CAC(pd.DataFrame(X), weights=wt, categories=cats)
                                         .krippendorff()["est"]["coefficient_value"], 1)
                print(f"             irrCAC       wall {pw:7.3f} s  cpu {pc:7.3f} s  alpha={float(p):.5f}  "
                      f"-> {pw / w:.1f}x wall")
        del X, t


if __name__ == "__main__":
    main()
