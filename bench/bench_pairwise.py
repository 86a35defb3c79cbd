"""Benchmark of the streaming pairwise model (one core) and the crowd-kit baselines on the same data.

Run:  .venv/bin/python bench/bench_pairwise.py            (speed and memory, a few minutes)
      .venv/bin/python bench/bench_pairwise.py --quick    (smaller, for a smoke run)
      .venv/bin/python bench/bench_pairwise.py --figures  (the statistical figures of docs/pairwise.md)

Prints markdown tables: BayesJudge throughput (pairs/s, 300 particles, 3 humans + 2 judges in
both orders per pair = 7 labels a pair), resident memory at two stream lengths (flat in the
stream length with store_items=False), and crowd-kit's DawidSkene and GLAD beside ours on the
same data. The figures are recorded in bench/pairwise.md.
"""

from __future__ import annotations

import os

# one core: must be set before numpy is imported
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from voirdire.pairwise import GLAD, DawidSkene, PairwiseBayesModel, crowd_arrays, simulate_pairwise  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def stream(model: PairwiseBayesModel, n_pairs: int, batch: int, seed: int, checkpoints: list[int]) -> dict:
    """Feed ``n_pairs`` pairs in batches of ``batch`` (each generated on the fly), timing the model only."""
    busy = 0.0
    cpu = 0.0
    rss = {}
    done = 0
    k = 0
    while done < n_pairs:
        t, _ = simulate_pairwise(batch, biases=[0.8, -0.3], rng=seed + k)
        k += 1
        t0, c0 = time.perf_counter(), time.process_time()
        model.partial_fit(t)
        busy += time.perf_counter() - t0
        cpu += time.process_time() - c0
        done += batch
        for c in checkpoints:
            if done == c:
                gc.collect()
                rss[c] = rss_mb()
    return {"seconds": busy, "cpu": cpu, "pairs_per_s": n_pairs / busy, "pairs_per_cpu_s": n_pairs / cpu, "rss": rss}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    try:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    except (AttributeError, OSError):
        pass
    n_long = 20_000 if args.quick else 200_000
    n_short = n_long // 10
    print(f"# pairwise benchmark (one core; numpy {np.__version__})\n")

    # ---- throughput and memory, store_items=False
    model = PairwiseBayesModel(n_particles=300, store_items=False, rng=0)
    warm = simulate_pairwise(500, biases=[0.8, -0.3], rng=99)[0]
    PairwiseBayesModel(n_particles=300, rng=0).fit(warm)  # import / allocation warm-up
    gc.collect()
    rss0 = rss_mb()
    res = stream(model, n_long, 1000, 1, [n_short, n_long])
    print("## BayesJudge throughput (300 particles, 3 humans + 2 judges x 2 orders per pair)\n")
    print("| pairs | wall s | pairs/s (wall) | CPU s | pairs/s (CPU) | resamplings | biases (truth 0.8, -0.3) |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    print(f"| {n_long:,} | {res['seconds']:.2f} | {res['pairs_per_s']:,.0f} | {res['cpu']:.2f} | "
          f"{res['pairs_per_cpu_s']:,.0f} | {model.n_resamples_} | {np.round(model.bias_mean_, 3).tolist()} |")
    print("\n(one thread pinned to one core; 'CPU' counts only the time the process ran, which is what one "
          "free core gives; wall time includes waiting for the core on a shared machine)")
    print("\n## Memory (RSS, MB) during the stream, store_items=False\n")
    print(f"| before | after {n_short:,} pairs | after {n_long:,} pairs | growth |")
    print("|---:|---:|---:|---:|")
    a, b = res["rss"][n_short], res["rss"][n_long]
    print(f"| {rss0:.1f} | {a:.1f} | {b:.1f} | {b - a:+.1f} |")

    # ---- store_items=True: the per-pair posteriors are kept (linear, by design)
    model2 = PairwiseBayesModel(n_particles=300, store_items=True, rng=0)
    gc.collect()
    n_keep = n_short
    res2 = stream(model2, n_keep, 1000, 1, [n_keep // 2, n_keep])
    import sys

    stored = sum(o.nbytes for o in model2._out) + sum(
        p.nbytes + sum(sys.getsizeof(x) for x in p) for p in model2._out_pairs)
    print(f"\nstore_items=True keeps every pair's posterior: {res2['pairs_per_s']:,.0f} pairs/s; the stored "
          f"arrays and pair ids take {stored / n_keep:.0f} bytes a pair ({stored / 2**20:.1f} MB for "
          f"{n_keep:,} pairs; RSS {res2['rss'][n_keep // 2]:.1f} -> {res2['rss'][n_keep]:.1f} MB).")

    # ---- batch size: 1 (exact one-pair-at-a-time algorithm) vs the default
    t1, _ = simulate_pairwise(2000, biases=[0.8, -0.3], rng=5)
    for bs in (1, 16, 64, 256):
        t0 = time.process_time()
        m = PairwiseBayesModel(n_particles=300, batch_size=bs, rng=0).fit(t1)
        dt = time.process_time() - t0
        print(f"batch_size={bs:>3}: {2000 / dt:8,.0f} pairs/CPU-s, biases {np.round(m.bias_mean_, 3).tolist()}")

    # ---- crowd-kit beside ours on the same data
    from crowdkit.aggregation import GLAD as CKGLAD
    from crowdkit.aggregation import DawidSkene as CKDS

    print("\n## Dawid-Skene and GLAD: ours vs crowd-kit on the same data (workers = humans + judge x order)\n")
    print("| model | pairs | labels | ours (s) | crowd-kit (s) | crowd-kit / ours | argmax agreement |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    warnings.simplefilter("ignore")  # crowd-kit's pandas FutureWarnings (bench script only)
    for name, ours_cls, ck, n in (("DawidSkene", DawidSkene, lambda: CKDS(n_iter=100), n_short),
                                  ("GLAD", GLAD, lambda: CKGLAD(n_iter=100), 2000 if not args.quick else 500)):
        t, _ = simulate_pairwise(n, biases=[0.8, -0.3], rng=7)
        pair, w, y, _ = crowd_arrays(t)
        df = pd.DataFrame({"task": pair, "worker": w, "label": y})
        t0 = time.perf_counter()
        ours = ours_cls().fit(t)
        d_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        c = ck().fit(df)
        d_ck = time.perf_counter() - t0
        cp = c.probas_.sort_index().reindex(columns=[0, 1, 2]).fillna(0).to_numpy()
        agree = (cp.argmax(1) == ours.predict()).mean()
        print(f"| {name} | {n:,} | {len(y):,} | {d_ours:.3f} | {d_ck:.3f} | {d_ck / d_ours:.1f}x | {agree:.3f} |")
    t, _ = simulate_pairwise(n_short, biases=[0.8, -0.3], rng=7)
    t0 = time.perf_counter()
    PairwiseBayesModel(n_particles=300, rng=0).fit(t)
    d_b = time.perf_counter() - t0
    print(f"| BayesJudge (for scale) | {n_short:,} | {t.n_labels:,} | {d_b:.3f} | - | - | - |")



# ================================================================================== figures
# ``--figures``: the statistical figures of docs/pairwise.md (recovery, ablations, entropy,
# leave-one-human-out on the real data sets). Needs ../shared/data/pairwise.

def _spearman(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    from scipy.stats import spearmanr

    r = spearmanr(a, b)
    return float(r.statistic), float(r.pvalue)


def figures_recovery(seeds: range) -> None:
    from voirdire.pairwise import DEFAULT_CONFUSIONS as D

    five = np.stack([D[0], D[0], D[1], D[1], D[2]])
    print("## Synthetic recovery (2,000 pairs, judges beta = (0.8, -0.3) in both orders)\n")
    print("| humans | update | weights | max abs beta error | max Frobenius error of C | mean Frobenius |")
    print("|---|---|---|---:|---:|---:|")
    for label, conf in (("3 (expert/average/novice)", D), ("5 (2 expert, 2 average, 1 novice)", five)):
        for update in ("soft", "hard"):
            for laplace in (True, False):
                be, fe, fm = [], [], []
                for s in seeds:
                    t, truth = simulate_pairwise(2000, confusions=conf, biases=[0.8, -0.3], rng=s)
                    post = PairwiseBayesModel(update=update, laplace=laplace, rng=s).fit(t).posterior()
                    be.append(np.abs(post.bias_mean - truth.biases).max())
                    fr = np.linalg.norm(post.confusion - truth.confusions, axis=(1, 2))
                    fe.append(fr.max())
                    fm.append(fr.mean())
                print(f"| {label} | {update} | {'Laplace' if laplace else 'profile'} | "
                      f"{np.mean(be):.3f} (worst {np.max(be):.3f}) | {np.mean(fe):.3f} (worst {np.max(fe):.3f}) | "
                      f"{np.mean(fm):.3f} |")
    print(f"\n(means over seeds {list(seeds)}; 'worst' = worst seed)\n")
    print("Judges with tie offsets (-1.5, +0.5), 5 humans, defaults vs judge_ties=True:\n")
    print("| model | max abs beta error | tie offsets (truth -1.5, 0.5) | max Frobenius error of C |")
    print("|---|---:|---|---:|")
    for jt in (False, True):
        be, te, fe = [], [], []
        for s in seeds:
            t, truth = simulate_pairwise(2000, confusions=five, biases=[0.8, -0.3], tie_offsets=[-1.5, 0.5], rng=s)
            post = PairwiseBayesModel(judge_ties=jt, rng=s).fit(t).posterior()
            be.append(np.abs(post.bias_mean - truth.biases).max())
            te.append(post.tie_offset_mean)
            fe.append(np.linalg.norm(post.confusion - truth.confusions, axis=(1, 2)).max())
        print(f"| {'judge_ties=True' if jt else 'paper model (default)'} | {np.mean(be):.3f} | "
              f"{np.round(np.mean(te, 0), 3).tolist()} | {np.mean(fe):.3f} |")
    print()


def figures_ablation(seeds: range) -> None:
    from scipy.stats import ttest_rel

    print("## Ablations: held-out predictive log-likelihood per pair (train 1,000 pairs, test 1,000)\n")
    print("Data: 3 humans (expert/average/novice), judges beta = (0.8, 0.0), theta mean 0.3. "
          "Score: log p(all labels of a new pair | trained state), Laplace over (theta, tau).\n")
    variants = {
        "full model": dict(),
        "C = I (confusions frozen at the prior)": dict(learn_confusion=False),
        "beta = 0 (no bias learning)": dict(learn_bias=False),
        "both frozen": dict(learn_confusion=False, learn_bias=False),
        "single order (trained on AB only)": dict(_single=True),
    }
    scores: dict[str, list[np.ndarray]] = {k: [] for k in variants}
    for s in seeds:
        t, _ = simulate_pairwise(2000, biases=[0.8, 0.0], theta_mean=0.3, rng=s)
        train, test = t.select(pairs=slice(0, 1000)), t.select(pairs=slice(1000, 2000))
        for name, kw in variants.items():
            kw = dict(kw)
            tr = train.select(label_mask=train.orders != 1) if kw.pop("_single", False) else train
            m = PairwiseBayesModel(rng=s, **kw).fit(tr)
            scores[name].append(m.score_samples(test))
    full = np.concatenate(scores["full model"])
    print("| variant | PLL per pair | difference vs full | paired t p-value |")
    print("|---|---:|---:|---:|")
    for name in variants:
        v = np.concatenate(scores[name])
        p = ttest_rel(v, full).pvalue if name != "full model" else float("nan")
        print(f"| {name} | {v.mean():.4f} | {v.mean() - full.mean():+.4f} | {p:.2g} |")
    print(f"\n(seeds {list(seeds)}; paper, synthetic 1,000 items: full -5.3356, C=I -5.3620, beta=0 -5.8719, "
          "both -6.0188)\n")


def _vote_entropy(table) -> np.ndarray:
    hm = table.roles[table.rater_idx] == "human"
    c = np.zeros((table.n_pairs, 3))
    np.add.at(c, (table.label_pair[hm], table.verdicts[hm].astype(int)), 1)
    p = c / np.maximum(c.sum(1, keepdims=True), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -(np.where(p > 0, p * np.log(p), 0.0)).sum(1), c.sum(1)


def figures_real(root) -> None:
    from voirdire.data import PairwiseTable, pairwise_set_frame
    from voirdire.pairwise import leave_one_human_out

    tables = {}
    for name in ("summeval_h2h", "summeval_h2h_8", "pandalm", "llmfao", "llmbar", "autoj"):
        df = pairwise_set_frame(name, root)
        df = df[df["verdict"].fillna("") != ""]
        tables[name] = PairwiseTable.from_frame(df, role="role")
    print("## Posterior entropy vs the humans' vote entropy (Spearman)\n")
    print("| data | pairs (>= 2 human votes) | model sees humans + judges | model sees judges only |")
    print("|---|---:|---:|---:|")
    for name in ("summeval_h2h", "summeval_h2h_8", "pandalm", "llmfao"):
        t = tables[name]
        ve, nv = _vote_entropy(t)
        ok = nv >= 2
        full = PairwiseBayesModel(rng=0).fit(t)
        ent_full = -(lambda p: (np.where(p > 0, p * np.log(np.maximum(p, 1e-300)), 0)).sum(1))(full.predict_proba(t))
        jt = t.select(raters=list(t.judges), drop_empty=False)
        jm = PairwiseBayesModel(rng=0).fit(jt)
        pj = jm.predict_proba(jt)
        ent_j = -(np.where(pj > 0, pj * np.log(np.maximum(pj, 1e-300)), 0)).sum(1)
        # jt keeps every pair (drop_empty=False) in the same order as t
        r1, p1 = _spearman(ent_full[ok], ve[ok])
        r2, p2 = _spearman(ent_j[ok], ve[ok])
        print(f"| {name} | {ok.sum():,} | {r1:.3f} (p={p1:.1g}) | {r2:.3f} (p={p2:.1g}) |")
    print("\n(paper, SummEval: 0.404)\n")
    print("## Leave-one-human-out on the real data sets\n")
    g8 = {h: ("expert" if h.startswith("expert") else "crowd") for h in tables["summeval_h2h_8"].humans}
    for name, groups in (("summeval_h2h", None), ("summeval_h2h_8", g8), ("pandalm", None), ("llmfao", None),
                         ("autoj", None), ("llmbar", None)):
        t = tables[name]
        t0 = time.perf_counter()
        from voirdire.pairwise import default_methods

        methods = default_methods(rng=0)
        methods["BayesJudge + judge tie offsets"] = lambda: PairwiseBayesModel(judge_ties=True, rng=1)
        res = leave_one_human_out(t, groups=groups, methods=methods, rng=0)
        dt = time.perf_counter() - t0
        print(f"### {name}: {t.n_pairs:,} pairs, {len(t.humans)} humans, {len(t.judges)} judges, "
              f"{res.n_folds} folds, {dt:.0f} s\n")
        print("| method | group | labels | accuracy | NLL | Brier | ECE |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for r in res.table.itertuples(index=False):
            print(f"| {r.method} | {r.group} | {r.n_labels:,} | {100 * r.accuracy:.1f}% | {r.nll:.3f} | "
                  f"{r.brier:.3f} | {r.ece:.3f} |")
        print()


def figures() -> None:
    from pathlib import Path

    root = Path(os.environ.get("VOIRDIRE_SHARED", "/work/shared")) / "data" / "pairwise"
    figures_recovery(range(1, 6))
    figures_ablation(range(1, 6))
    figures_real(root)


if __name__ == "__main__":
    import sys as _sys

    if "--figures" in _sys.argv:
        figures()
    else:
        main()
