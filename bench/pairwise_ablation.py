"""Leave-one-human-out ablation of PairwiseBayesModel against Dawid-Skene and the humans' vote.

Usage: .venv/bin/python bench/pairwise_ablation.py [ROOT] [--sets summeval_h2h,pandalm,llmfao]
       [--particles 100] [--variants all] [--groups]

``--groups``: humans are grouped by their name up to the last ``_`` (``expert_1`` -> ``expert``,
``crowd_3`` -> ``crowd``; summeval_h2h_8) and scored per group too; the model and Dawid-Skene then
forecast a held-out human through the confusion matrices of the other humans of the same group.

For every set: each human (or fold of humans, at most 10) is held out; every method is fitted
on the rest, with and without the judges, and scored on the held-out verdicts (accuracy, NLL).
Seeds are fixed (rng=0). Prints markdown tables (docs/pairwise.md, "Does the model earn its place")
and the paired differences (model minus Dawid-Skene, minus the humans' vote, with minus without
the judges) with 95% intervals from a paired bootstrap over pairs (``LOHOResult.difference``,
2,000 resamples), and where the model and Dawid-Skene part (the labels on which their forecasts
differ; accuracy and NLL by the held-out verdict). ``--save DIR`` pickles each set's two ``LOHOResult`` objects (with and without
the judges, with every held-out forecast) to ``DIR/<set>.pkl``; ``--load DIR`` prints the paired
differences and the diagnosis from them without fitting.
"""

from __future__ import annotations

import argparse
import pathlib
import pickle
import time

import numpy as np

from voirdire.data import read_pairwise_set
from voirdire.pairwise import DawidSkene, MajorityVote, PairwiseBayesModel, leave_one_human_out

VARIANTS = {
    "PairwiseBayesModel (defaults)": {},
    "  paper's judge (no reliability, no tie offsets)": {"judge_reliability": False, "judge_ties": False},
    "  without judge reliability (tie offsets only)": {"judge_reliability": False},
    "  without judge tie offsets (reliability only)": {"judge_ties": False},
    "  paper's model and inference (standard prior, joint MAP plug-in, no refine, paper's judge)":
        {"pair_prior": "standard", "integrate_verdict": False, "n_refine": 0, "judge_reliability": False,
         "judge_ties": False},
    "  without empirical-Bayes prior": {"pair_prior": "standard"},
    "  without integrated verdict": {"integrate_verdict": False},
    "  without refine sweeps": {"n_refine": 0},
    "  with the batch move (batch_move=True)": {"batch_move": True},
    "  refine to convergence (n_refine=30)": {"n_refine": 30},
    "  without the system-strength prior": {"system_prior": "off"},
    "  flat Dirichlet confusions (lambda 0.01/0.01, n_refine=30)":
        {"n_refine": 30, "lambda_diag": 0.01, "lambda_off": 0.01},
}


JUDGE_ONLY = {"judge_reliability", "judge_ties", "batch_move"}


MODEL = "PairwiseBayesModel (defaults)"
VOTE = "vote of the other humans (+0.5 pseudo-votes)"


def differences(res: dict, shown: list[str]) -> None:
    """The paired differences (LOHOResult.difference: 95% bootstrap over pairs, 2,000 resamples, rng 0)."""
    w, wo = res["with judges"], res["without judges"]
    if MODEL not in w.proba:
        return
    comparisons = [(f"{MODEL} - Dawid-Skene (both with judges)", w, MODEL, "Dawid-Skene", None),
                   (f"{MODEL} (with judges) - vote of the other humans", w, MODEL, VOTE, wo),
                   (f"{MODEL}: with - without judges", w, MODEL, MODEL, wo),
                   ("Dawid-Skene: with - without judges", w, "Dawid-Skene", "Dawid-Skene", wo),
                   (f"{MODEL} - Dawid-Skene (both without judges)", wo, MODEL, "Dawid-Skene", None)]
    print("\n| paired difference (95% bootstrap over pairs) | humans | accuracy | NLL |")
    print("|---|---|---:|---:|")
    for g in shown:
        for text, res_a, ma, base, other in comparisons:
            d = res_a.difference(ma, base, other=other, group=g, rng=0).set_index("metric")
            cells = [f"{d.loc[m, 'estimate']:+.4f} [{d.loc[m, 'low']:+.4f}, {d.loc[m, 'high']:+.4f}]"
                     for m in ("accuracy", "nll")]
            print(f"| {text} | {g} | {cells[0]} | {cells[1]} |")


def diagnose(res: dict) -> None:
    """Where the model and Dawid-Skene (both with judges) part: labels on which their forecasts'
    argmax differ, and accuracy / NLL by the held-out human's verdict."""
    w = res["with judges"]
    if MODEL not in w.proba:
        return
    y = w.labels["y"].to_numpy()
    r = np.arange(len(y))
    pm, pds = w.proba[MODEL], w.proba["Dawid-Skene"]
    am, ad = pm.argmax(1), pds.argmax(1)
    dis = am != ad
    print(f"\nModel vs Dawid-Skene (with judges): their forecasts' argmax differ on {int(dis.sum())} of {len(y)} "
          f"held-out labels (model right on {int((am[dis] == y[dis]).sum())}, Dawid-Skene on "
          f"{int((ad[dis] == y[dis]).sum())}); forecast A/T/B shares: model "
          f"{'/'.join(f'{v:.3f}' for v in np.bincount(am, minlength=3) / len(y))}, Dawid-Skene "
          f"{'/'.join(f'{v:.3f}' for v in np.bincount(ad, minlength=3) / len(y))}, held-out "
          f"{'/'.join(f'{v:.3f}' for v in np.bincount(y, minlength=3) / len(y))}")
    for k, c in enumerate("ATB"):
        m = y == k
        if m.any():
            print(f"  held-out {c} ({int(m.sum())} labels): accuracy model {(am[m] == k).mean():.3f}, Dawid-Skene "
                  f"{(ad[m] == k).mean():.3f}; NLL model {-np.log(np.clip(pm[r[m], k], 1e-12, 1)).mean():.3f}, "
                  f"Dawid-Skene {-np.log(np.clip(pds[r[m], k], 1e-12, 1)).mean():.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", default="../shared/data/pairwise")
    ap.add_argument("--sets", default="summeval_h2h,pandalm,llmfao")
    ap.add_argument("--particles", type=int, default=100)
    ap.add_argument("--variants", default="all", help="'all', or variant names separated by ';'")
    ap.add_argument("--groups", action="store_true", help="group the humans by name prefix (expert_, crowd_)")
    ap.add_argument("--save", default=None, help="folder for <set>.pkl with both LOHOResults")
    ap.add_argument("--load", default=None, help="folder of <set>.pkl from --save: print the paired differences "
                    "and the diagnosis without fitting")
    a = ap.parse_args()
    if a.load:
        for name in a.sets.split(","):
            with open(pathlib.Path(a.load) / f"{name}.pkl", "rb") as fh:
                res = pickle.load(fh)
            groups = sorted({g for g in res["with judges"].labels["group"] if g})
            print(f"\n### {name} (from {a.load})")
            differences(res, ["all"] + groups)
            diagnose(res)
        return
    keep = list(VARIANTS) if a.variants == "all" else [k for k in VARIANTS if k.strip() in a.variants.split(";")]
    for name in a.sets.split(","):
        t = read_pairwise_set(name, a.root)
        nj = t.select(raters=list(t.humans))
        methods: dict = {"vote of the other humans (+0.5 pseudo-votes)": lambda: MajorityVote(smoothing=0.5),
                         "Dawid-Skene": lambda: DawidSkene()}
        for k in keep:
            methods[k] = (lambda kw=VARIANTS[k]: PairwiseBayesModel(n_particles=a.particles, rng=0, **kw))
        t0 = time.perf_counter()
        rows: dict = {}
        weights = {}
        groups = {h: h.rsplit("_", 1)[0] for h in t.humans} if a.groups else None
        shown = ["all"] + sorted(set(groups.values())) if groups else ["all"]
        res = {}
        for label, tab in (("with judges", t), ("without judges", nj)):
            # without judges a variant that changes only the judges' model is the defaults exactly
            ms = {k: v for k, v in methods.items() if not (label == "with judges" and k.startswith("vote"))
                  and not (label == "without judges" and k in VARIANTS and VARIANTS[k]
                           and set(VARIANTS[k]) <= JUDGE_ONLY)}
            r = res[label] = leave_one_human_out(tab, methods=ms, groups=groups, rng=0)
            for _, row in r.table.iterrows():
                rows.setdefault((row["method"], row["group"]), {})[label] = (row["accuracy"], row["nll"])
        full = PairwiseBayesModel(n_particles=a.particles, rng=0).fit(t)
        post = full.posterior()
        for k, j in enumerate(post.judges):
            weights[j] = (post.bias_mean[k], post.bias_low[k], post.bias_high[k], post.reliability_mean[k],
                          post.reliability_low[k], post.reliability_high[k], post.tie_offset_mean[k])
        print(f"\n### {name}: {t.n_pairs:,} pairs, {len(t.humans)} humans, {len(t.judges)} judges "
              f"({time.perf_counter() - t0:.0f} s)\n")
        print("| method | humans | accuracy with judges | NLL with judges | accuracy without | NLL without |")
        print("|---|---|---:|---:|---:|---:|")
        nan2 = (float("nan"), float("nan"))
        for g in shown:
            for (m, gg), v in rows.items():
                if gg != g:
                    continue
                w = v.get("with judges", nan2)
                wo = v.get("without judges", rows.get(("PairwiseBayesModel (defaults)", g), {}).get(
                    "without judges", nan2))
                print(f"| {m} | {g} | {w[0]:.3f} | {w[1]:.3f} | {wo[0]:.3f} | {wo[1]:.3f} |")
        if a.save:
            pathlib.Path(a.save).mkdir(parents=True, exist_ok=True)
            with open(pathlib.Path(a.save) / f"{name}.pkl", "wb") as fh:
                pickle.dump(res, fh)
        differences(res, shown)
        diagnose(res)
        print(f"\nEmpirical-Bayes pair prior: {', '.join(f'{k} {v:.2f}' for k, v in full.pair_prior_.items())}")
        print("Judges (defaults):", "; ".join(
            f"{j}: reliability {r:.2f} [{rlo:.2f}, {rhi:.2f}], position bias {b:.3f} [{lo:.3f}, {hi:.3f}], "
            f"tie offset {d:.2f}" for j, (b, lo, hi, r, rlo, rhi, d) in weights.items()))


if __name__ == "__main__":
    main()
