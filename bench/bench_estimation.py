"""Estimation benchmarks: speed against ppi_py, and coverage/width on real data (SummEval, HANNA).

Run from the repository root:

    .venv/bin/python bench/bench_estimation.py speed          # 1,000,000 items, DR vs ppi_py
    .venv/bin/python bench/bench_estimation.py real           # repeated 10% / 25% human subsamples
    .venv/bin/python bench/bench_estimation.py real --reps 1000 --markdown
    .venv/bin/python bench/bench_estimation.py sim            # synthetic coverage / variance

``speed`` prints the best-of-k wall time of each estimator on the same arrays and the ratio to
``ppi_py.ppi_mean_ci`` measured in the same run. ``real`` draws repeated Poisson subsamples of
the items for the humans (the LLM scores all items), and reports, per data set and fraction, the
coverage of the full-data human mean by each 95% interval and the mean interval width. The
real data come from ../shared/data/grading (tests and benchmarks only; never shipped).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from voirdire.estimation import classical_mean, dr_mean, ppi_mean

sys.path.insert(0, str(Path(__file__).resolve().parent))
from estimation_savings import name_key  # noqa: E402  (the savings bench's draws: one seed per data set name)

SHARED = Path(os.environ.get("VOIRDIRE_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "data"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/data")


# ------------------------------------------------------------------------------------------ speed
def speed(n_items: int = 1_000_000, frac: float = 0.1, k: int = 10) -> None:
    """Best of ``k`` interleaved rounds (every estimator once per round), so load changes on a
    shared machine hit all of them alike."""
    with warnings.catch_warnings():
        import ppi_py
    rng = np.random.default_rng(0)
    x = rng.normal(3, 1, n_items)
    y_all = 0.5 + 0.8 * x + rng.normal(0, 0.6, n_items)
    lab = rng.random(n_items) < frac
    y = np.where(lab, y_all, np.nan)
    Y, Yhat, Yhat_unl = y_all[lab], x[lab], x[~lab]
    clusters = np.arange(n_items) % 1000
    cases = {
        "ppi_py.ppi_mean_ci (PPI++, lam tuned)": lambda: ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unl, alpha=0.05),
        "voirdire ppi_mean (PPI++)": lambda: ppi_mean(x, y),
        "voirdire classical_mean": lambda: classical_mean(y, frac),
        "voirdire dr_mean identity": lambda: dr_mean(x, y, frac),
        "voirdire dr_mean linear, cross_fit=5": lambda: dr_mean(x, y, frac, model="linear", cross_fit=5, rng=0),
        "voirdire dr_mean isotonic, cross_fit=5": lambda: dr_mean(x, y, frac, model="isotonic", cross_fit=5, rng=0),
        "voirdire dr_mean linear, cross_fit=5, 1,000 clusters":
            lambda: dr_mean(x, y, frac, model="linear", clusters=clusters, rng=0),
    }
    best = {name: float("inf") for name in cases}
    for _ in range(k):
        for name, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    t_ppi = best["ppi_py.ppi_mean_ci (PPI++, lam tuned)"]
    print(f"N = {n_items:,} items, {int(lab.sum()):,} human-scored; best of {k} interleaved rounds; "
          f"{os.cpu_count()} CPUs, numpy {np.__version__}")
    print("| estimator | seconds | time / ppi_py |")
    print("|---|---:|---:|")
    for name, t in best.items():
        print(f"| {name} | {t:.3f} | {t / t_ppi:.2f} |")


# ------------------------------------------------------------------------------------------ data
def summeval(evaluator: str = "gpt-4-0314", method: str = "rts") -> dict[str, tuple[np.ndarray, np.ndarray]]:
    d = SHARED / "grading" / "summeval"
    h = pd.read_csv(d / "summeval_human_ratings_long.csv")
    h = h[h["rater_type"] == "expert"].groupby(["doc_id", "model_id", "dimension"])["score"].mean()
    j = pd.read_json(d / "summeval_llm_judge_scores.jsonl", lines=True)
    j = j[(j["evaluator"] == evaluator) & (j["method"] == method)]
    j = j.groupby(["doc_id", "model_id", "dimension"])["parsed_score"].mean()
    m = pd.concat([h.rename("y"), j.rename("x")], axis=1, join="inner").dropna().reset_index()
    return {f"SummEval {dim} ({evaluator})": (g["x"].to_numpy(float), g["y"].to_numpy(float))
            for dim, g in m.groupby("dimension")}


def hanna(judge: str = "ChatGPT") -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from voirdire.datasets import load_hanna
    from voirdire.estimation import item_scores

    out = {}
    for crit in ("Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"):
        t = load_hanna(criterion=crit)
        x, y, _ = item_scores(t, judge)
        ok = np.isfinite(x) & np.isfinite(y)
        out[f"HANNA {crit} ({judge})"] = (x[ok], y[ok])
    return out


# ------------------------------------------------------------------------------------------ real


def _one(x, y_full, lab, frac, seed):
    y = np.where(lab, y_full, np.nan)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny subsamples warn (SmallSampleWarning); counted elsewhere
        for model in ("identity", "linear", "isotonic"):
            out[f"DR {model}"] = dr_mean(x, y, frac, model=model, target="finite", rng=seed)
        out["human-only"] = classical_mean(y, frac, target="finite")
        out["DR linear [sp]"] = dr_mean(x, y, frac, model="linear", rng=seed)
        out["human-only [sp]"] = classical_mean(y, frac)
        out["PPI++ [sp]"] = ppi_mean(x, y)
    return out


def real(reps: int = 500, fracs=(0.10, 0.25), seed: int = 0, markdown: bool = False) -> pd.DataFrame:
    data = {**summeval(), **hanna()}
    rows = []
    t0 = time.perf_counter()
    for name, (x, y_full) in data.items():
        truth = float(y_full.mean())
        r2 = float(np.corrcoef(x, y_full)[0, 1] ** 2)
        for frac in fracs:
            rng = np.random.default_rng([seed, int(frac * 1000), name_key(name)])
            hits: dict[str, list[bool]] = {}
            widths: dict[str, list[float]] = {}
            errs: dict[str, list[float]] = {}
            for rep in range(reps):
                lab = rng.random(x.size) < frac
                if lab.sum() < 3:
                    continue
                res = _one(x, y_full, lab, frac, rep)
                for k, r in res.items():
                    hits.setdefault(k, []).append(r.ci.low <= truth <= r.ci.high)
                    widths.setdefault(k, []).append(r.ci.width)
                    errs.setdefault(k, []).append(r.estimate - truth)
            for k in hits:
                rows.append({"data": name, "N": x.size, "r2": r2, "frac": frac, "estimator": k,
                             "coverage": float(np.mean(hits[k])), "mean_width": float(np.mean(widths[k])),
                             "bias": float(np.mean(errs[k])), "rmse": float(np.sqrt(np.mean(np.square(errs[k])))),
                             "reps": len(hits[k])})
    df = pd.DataFrame(rows)
    print(f"{len(data)} data sets x {len(fracs)} fractions x {reps} reps in {time.perf_counter() - t0:.0f} s",
          file=sys.stderr)
    if markdown:
        _print_markdown(df)
    else:
        with pd.option_context("display.width", 200, "display.max_rows", 500):
            print(df.round(4))
    return df


def _print_markdown(df: pd.DataFrame) -> None:
    finite = ["DR identity", "DR linear", "DR isotonic", "human-only"]
    sp = ["DR linear [sp]", "human-only [sp]", "PPI++ [sp]"]
    for frac, g in df.groupby("frac"):
        print(f"\n**{frac:.0%} of the items human-scored.** Coverage of the full-data human mean by the 95% "
              "intervals; in brackets the mean width relative to human-only with the same target. "
              "[sp] = superpopulation standard error (the default of dr_mean; PPI++ has only this one).\n")
        print("| data set | N | R\u00b2 | " + " | ".join(finite + sp) + " |")
        print("|---|---:|---:|" + "---:|" * (len(finite) + len(sp)))
        for name, gg in g.groupby("data", sort=False):
            gg = gg.set_index("estimator")
            cells = []
            for group, base in ((finite, "human-only"), (sp, "human-only [sp]")):
                w0 = gg.loc[base, "mean_width"]
                cells += [f"{gg.loc[e, 'coverage']:.3f} ({gg.loc[e, 'mean_width'] / w0:.2f})" for e in group]
            print(f"| {name} | {int(gg['N'].iloc[0])} | {gg['r2'].iloc[0]:.2f} | " + " | ".join(cells) + " |")
        summ = g.groupby("estimator").agg(coverage=("coverage", "mean"))
        print("\nAverage coverage over the data sets: " + "; ".join(
            f"{e} {summ.loc[e, 'coverage']:.3f}" for e in finite + sp) + f" (reps per cell: {int(g['reps'].min())}).")


# ------------------------------------------------------------------------------------------ sim
def sim(reps: int = 1000, seed: int = 0) -> None:
    """Synthetic checks behind the statistical tests, printed with their Monte-Carlo figures.

    Curved truth ``Y = 1 + sin 2X + X^2/2 + e`` (E[Y] = 1.5), ``pi = 0.1`` for ``X < 0`` and ``0.4``
    otherwise: no model is correct; the coverage of 95% intervals, bias and the ratio of the mean
    estimated variance to the Monte-Carlo variance.
    """
    print(f"| N | model | coverage | bias | mean SE^2 / Var(estimate) | reps |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in (500, 2000):
        for model in ("identity", "linear", "isotonic"):
            rng = np.random.default_rng([seed, n, len(model)])
            est, se2, hit = np.empty(reps), np.empty(reps), np.empty(reps, dtype=bool)
            for r in range(reps):
                x = rng.normal(0, 1, n)
                y = 1 + np.sin(2 * x) + 0.5 * x**2 + 0.5 * rng.normal(0, 1, n)
                pi = np.where(x < 0, 0.1, 0.4)
                lab = rng.random(n) < pi
                res = dr_mean(x, np.where(lab, y, np.nan), pi, model=model, rng=r)
                est[r], se2[r], hit[r] = res.estimate, res.se**2, res.ci.low <= 1.5 <= res.ci.high
            print(f"| {n} | {model} | {hit.mean():.3f} | {est.mean() - 1.5:+.4f} | "
                  f"{se2.mean() / est.var(ddof=1):.3f} | {reps} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=["speed", "real", "sim", "all"], nargs="?", default="all")
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--n-items", type=int, default=1_000_000)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    if a.part in ("speed", "all"):
        speed(a.n_items)
    if a.part in ("real", "all"):
        real(a.reps, markdown=a.markdown)
    if a.part in ("sim", "all"):
        sim(a.reps)
