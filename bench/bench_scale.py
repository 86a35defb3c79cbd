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
     draws (the classical multinomial bootstrap, as before) against the index-free unit weights.

The machine is shared: every figure comes with CPU time and the load average, and ratios are
taken inside one run. Nothing here is a test; the files are generated in a temporary folder and
deleted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    ap.add_argument("--labels", default="3.9e6,20e6", help="comma-separated label counts for the end-to-end runs")
    ap.add_argument("--evalica-python", default="/tmp/evalica-venv/bin/python")
    ap.add_argument("--skip-reference", action="store_true", help="do not time the row-by-row constructor")
    args = ap.parse_args()
    from voirdire.data import AnnotationTable, read_annotations

    n1 = 100_000 if args.quick else 1_000_000
    sizes = [4e5] if args.quick else [float(x) for x in args.labels.split(",")]
    print(f"# bench_scale  ({os.cpu_count()} CPUs, {load()} at start)\n")
    tmp = Path(tempfile.mkdtemp(prefix="voirdire-scale-"))
    try:
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
    finally:
        for p in tmp.glob("*"):
            p.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
