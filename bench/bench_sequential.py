"""Sequential validation: error under continuous monitoring and labels to a decision.

Part 1 (type-I): a judge exactly on the alt-test margin (E[d] = epsilon = 0.2 for every human),
2,000 streams, a look after every 10 items up to 5,000 items; the probability of ever accepting
for the sequential rule and for the fixed-sample alt-test (t-tests + BY) re-run at every look.

Part 2 (expected stopping): items streamed in random order in rounds of 10, on the sparse-overlap
paper's synthetic setting (4 humans of accuracy 0.85, binary labels) and on the real AltTest sets
lesion, summeval and framing; per judge, the median number of comparisons per human at the decision
(leave-one-out, epsilon = 0.05) over R shuffles, next to the fixed-sample sizes for the same error
rates:
- m*_cert = z_{0.975}^2 sigma0^2 / (mu_d + eps)^2 (the planner's plug-in rule: wrong decision 2.5%);
- m*_test = (z_{0.95} + z_{0.975})^2 sigma0^2 / (mu_d + eps)^2 (a fixed test with type-I error 5% at
  the margin and the same 2.5% wrong decisions: the error rates the sequential rule guarantees).

Part 2 also checks the planner's forecast (the sequential expectation that ``plan_judges`` shows):
taken at the first undecided look with >= 50 comparisons per human, against what the rule then took.

Run: python bench/bench_sequential.py [--quick] [--streams N] [--reps R]   (writes bench/sequential.md)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from voirdire.data import read_annotations
from voirdire.design import plan_certification
from voirdire.exceptions import InfeasiblePlanError
from voirdire.simulate import simulate_annotations
from voirdire.validation import sequential_operating_characteristics, validate_sequential

HERE = Path(__file__).resolve().parent
DATA = next((p / "shared" / "data" / "alttest" for p in HERE.parents if (p / "shared" / "data" / "alttest").exists()),
            Path("/work/shared/data/alttest"))


def type_one(n_streams: int, max_items: int) -> list[str]:
    rows = ["| humans K | wins needed | sequential P(ever accept) | MC SE | fixed alt-test re-run every look |",
            "|---|---|---|---|---|"]
    for K in (2, 3, 5):
        r = sequential_operating_characteristics(mean_d=0.2, n_humans=K, n_streams=n_streams, max_items=max_items,
                                                 rng=K)
        rows.append(f"| {K} | {math.ceil(K / 2)} | {r.p_accept:.4f} | {r.mc_se_accept:.4f} | {r.p_accept_fixed:.4f} |")
    return rows


def _moments(table, judge):  # per-human mu_d and sigma0 of the pooled LOO difference (full data)
    r = validate_sequential(table, judge, rounds=np.zeros(table.n_labels), method="loo")
    from voirdire.validation._sequential import _comparisons  # noqa: PLC0415  (bench only)
    names = [judge]
    jidx = np.array([table.rater_index(n) for n in names])
    elig, num, den = _comparisons(table, jidx, table.human_idx, "loo", "accuracy")
    mu, s0 = [], []
    for k in range(table.human_idx.size):
        e = elig[:, k]
        z, n = num[e, k], den[e, k]
        d = z.sum() / n.sum()
        D = (z - d * n) / n.mean()
        mu.append(d)
        s0.append(float(np.std(D, ddof=1)))
    return np.array(mu), np.array(s0), r


#: Comparisons per human at which the planner's forecast is taken (part 2).
FORECAST_AT = 50


def stopping(table, judge: str, reps: int, eps: float = 0.05, round_size: int = 10, seed: int = 0) -> dict:
    f = table.to_frame()
    codes = f["item"].astype("category").cat.codes.to_numpy()
    mu, s0, _ = _moments(table, judge)
    margin = mu + eps
    z1, z2 = stats.norm.ppf(0.975), stats.norm.ppf(0.95)
    mbar, sbar = float(np.mean(margin)), float(np.sqrt(np.mean(s0**2)))
    try:  # the planner's own number where the judge is certifiable
        m_cert = float(plan_certification(table, judge=judge, epsilon=eps).m_star)
    except InfeasiblePlanError:  # outside the margin: the same formula, sized to reject
        m_cert = math.ceil(z1**2 * sbar**2 / mbar**2)
    m_test = math.ceil(m_cert * ((z1 + z2) / z1) ** 2)
    stops, decs, fc, act = [], [], [], []
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        pos = rng.permutation(table.n_items)
        rounds = pos[codes] // round_size
        r = validate_sequential(table, judge, rounds=rounds, method="loo", epsilon=eps, rng=rng,
                                stop_when_decided=True)
        decs.append(r.decision)
        per = np.array([row[row > 0].mean() if (row > 0).any() else 0.0 for row in r.n_items])
        if r.decided_at is not None:
            i = r.looks.index(r.decided_at)
            stops.append(float(per[i]))
            # the planner's forecast (the number plan_judges shows: n now + more_items) at the first
            # undecided look with >= FORECAST_AT comparisons per human, against what the rule then took
            early = [k for k in range(i) if per[k] >= FORECAST_AT and np.isfinite(r.more_items[k])]
            if early:
                k = early[0]
                fc.append(float(per[k] + r.more_items[k]))
                act.append(float(per[i]))
    ratio = np.array(act) / np.array(fc) if fc else np.array([])
    return dict(mu=float(np.mean(mu)), margin=mbar, decisions=decs,
                median_stop=float(np.median(stops)) if stops else float("nan"),
                m_cert=m_cert, m_test=m_test, n_items=table.n_items,
                n_forecast=len(fc), median_forecast=float(np.median(fc)) if fc else float("nan"),
                ratio_forecast=float(np.median(ratio)) if ratio.size else float("nan"),
                under=float(np.mean(ratio > 1)) if ratio.size else float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--streams", type=int, default=None, help="streams of part 1 (default 2000; quick 300)")
    ap.add_argument("--reps", type=int, default=None, help="random orders of part 2 (default 20; quick 5)")
    a = ap.parse_args()
    n_streams, max_items, reps = (300, 1500, 5) if a.quick else (2000, 5000, 20)
    n_streams = a.streams or n_streams
    reps = a.reps or reps
    args = " ".join(sys.argv[1:])
    out = [f"# Sequential validation (`python bench/bench_sequential.py{' ' + args if args else ''}`)", "",
           f"Load average at start: {os.getloadavg()[0]:.1f}; Python {sys.version.split()[0]}.", "",
           f"## Type-I error under continuous monitoring ({n_streams} streams, a look every 10 items up to "
           f"{max_items}; judge on the margin, E[d] = epsilon = 0.2, q = 0.05)", ""]
    t0 = time.time()
    out += type_one(n_streams, max_items)
    out += ["", f"({time.time() - t0:.0f} s)", "",
            f"## Comparisons per human to a decision (leave-one-out, epsilon 0.05, rounds of 10 items, "
            f"{reps} random orders)", "",
            "Forecast: the planner's number (`plan_judges` / `more_items`: comparisons so far + the sequential "
            f"expectation) taken at the first undecided look with >= {FORECAST_AT} comparisons per human, in the "
            "orders that decided later; 'taken/forecast' is the median ratio of the comparisons the rule then took "
            "to that forecast, 'under' the share of orders where the rule took more than forecast.", "",
            "| set | judge | mu_d + eps | decisions | median to decision | m*_cert | m*_test | ratio to m*_cert | "
            "ratio to m*_test | forecasts | median forecast | taken/forecast | under |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    sets = {}
    sim = simulate_annotations(n_items=3000, n_humans=4, n_categories=2, human_accuracy=0.85,
                               judge_accuracies=(0.6, 0.7, 0.77, 0.9, 0.95), rng=0)
    sets["synthetic (seed 000)"] = sim.table
    for name in ("lesion", "summeval", "framing"):
        if (DATA / name).exists():
            sets[name] = read_annotations(DATA / name)
    for name, t in sets.items():
        for j in t.judges:
            s = stopping(t, j, reps)
            dec = {d: s["decisions"].count(d) for d in ("accept", "reject", "continue") if d in s["decisions"]}
            dtxt = ", ".join(f"{k} {v}" for k, v in dec.items())
            r1 = s["median_stop"] / s["m_cert"] if s["m_cert"] > 0 else float("nan")
            r2 = s["median_stop"] / s["m_test"] if s["m_test"] > 0 else float("nan")
            out.append(f"| {name} | {j} | {s['margin']:+.3f} | {dtxt} | {s['median_stop']:.0f} | {s['m_cert']:.0f} | "
                       f"{s['m_test']:.0f} | {r1:.2f} | {r2:.2f} | {s['n_forecast']} | {s['median_forecast']:.0f} | "
                       f"{s['ratio_forecast']:.2f} | {s['under']:.2f} |")
            print(out[-1], flush=True)
    out += ["", f"Total {time.time() - t0:.0f} s."]
    (HERE / "sequential.md").write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
