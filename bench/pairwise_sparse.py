"""Leave-one-human-out on sparse raters: the default PairwiseBayesModel against the baselines.

Usage: .venv/bin/python bench/pairwise_sparse.py [--sim] [--sets summeval_h2h,pandalm,llmfao] [ROOT]
       [--seeds 0,1,2] [--particles 300] [--variants defaults,...]

``--sim``: a simulated set that mimics sparse real exports (the setting of issue 30): 2,400 pairs
of 12 systems (Bradley-Terry strengths N(0, 0.8^2); each pair compares two systems drawn at random,
so systems repeat across pairs; the pair's theta = strength difference + N(0, 0.5^2), tau ~ N(-0.3, 1)),
60 humans with confusion matrices of accuracy 0.55-0.90 (ties confused more often than A/B), each
pair judged by 1 or 2 of them (equal odds), and one LLM judge (reliability 0.7, tie offset -1,
position bias 0.4) shown each pair in a random order that the export does not record (every judge
row says AB, the verdict in the original frame). ``--subjective``: the same, but the humans have no
shared latent verdict: each says ``softmax(theta + e, tau + t_h, -(theta + e))`` with its own view
``e ~ N(0, 1)`` of every pair and its own tie habit ``t_h ~ N(0, 0.7^2)`` (subjective preferences, a
model the confusion matrices only approximate). ``--sets``: the real sets of ROOT
(``read_pairwise_set``; default ../shared/data/pairwise) with several humans a pair.

Every method is fitted with the humans of one fold held out (10 folds of humans at random, or one
human a fold when there are at most 10) and scored on the held-out verdicts (``leave_one_human_out``,
target "human"). Prints accuracy and NLL per method, and the paired differences of each model
variant minus the best baseline by NLL (in NLL) and minus the best baseline by accuracy (in
accuracy), each with its 95% bootstrap interval over pairs (``LOHOResult.difference``).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import pathlib  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from voirdire.data import PairwiseTable, read_pairwise_set  # noqa: E402
from voirdire.pairwise import (BradleyTerryDavidson, DawidSkene, HeldOutChoice, LOHOResult,  # noqa: E402
                               MajorityVote, PairwiseBayesModel, SystemBradleyTerryDavidson, choose_forecaster,
                               leave_one_human_out, simulate_sparse_pairwise)

BASELINES = ("majority vote", "Bradley-Terry-Davidson", "Dawid-Skene", "systems Bradley-Terry-Davidson")
VARIANTS: dict[str, dict] = {
    "defaults": {},
    "no refine": {"n_refine": 0},
    "refine 30": {"n_refine": 30},
    "flat confusion prior": {"lambda_diag": 0.5, "lambda_off": 0.5},
    "paper judge": {"judge_reliability": False, "judge_ties": False},
    "standard pair prior": {"pair_prior": "standard"},
    "adaptive": {"quadrature": "adaptive"},
    "calibrated intervals": {"quadrature": "adaptive", "batch_move": True},
    "fixed confusion prior": {"confusion_prior": "fixed"},
    "no judge": {"_no_judge": True},
    "no system prior": {"system_prior": "off"},
    "held-out choice": {"_choice": "not_worse"},
    "held-out choice (lowest)": {"_choice": "lowest"},
}

_INNER: dict[str, LOHOResult] = {}


class _Choice(HeldOutChoice):
    """HeldOutChoice whose inner leave-one-human-out is shared by the two rules (same training table)."""

    def fit(self, table: PairwiseTable) -> _Choice:
        key = table.fingerprint()
        if key not in _INNER:
            _INNER[key] = leave_one_human_out(table, methods=self.methods, max_folds=self.max_folds, rng=self.rng)
        self.evaluation_ = _INNER[key]
        self.choice_ = choose_forecaster(self.evaluation_, model=self.model, rule=self.rule, rng=self.rng)
        CHOSEN.setdefault(self.rule, []).append(self.choice_.chosen)
        self.estimator_ = self.methods[self.choice_.chosen]().fit(table)
        self._table = table
        return self


CHOSEN: dict[str, list[str]] = {}


def simulate_sparse(n_pairs: int = 2400, n_humans: int = 60, n_systems: int = 12, rng: int = 0,
                    subjective: bool = False) -> PairwiseTable:
    """The simulated sparse-rater export described in the module docstring
    (:func:`voirdire.pairwise.simulate_sparse_pairwise`; ``--hide-systems``: without ``model_a``/``model_b``)."""
    return simulate_sparse_pairwise(n_pairs, n_humans=n_humans, n_systems=n_systems, subjective=subjective,
                                    systems_named=not HIDE_SYSTEMS, rng=rng)


HIDE_SYSTEMS = False


class _NoJudge:
    """The model fitted on the humans' verdicts only (the judges' rows dropped), scored as the model."""

    def __init__(self, model: PairwiseBayesModel) -> None:
        self.model = model

    def fit(self, table: PairwiseTable) -> _NoJudge:
        self.table = table
        self.model.fit(table.select(raters=list(table.humans), drop_empty=False))
        return self

    def predict_human_proba(self, like: list[str] | None = None) -> np.ndarray:
        return self.model.predict_human_proba(self.table.select(raters=list(self.table.humans), drop_empty=False),
                                              like=like)


def evaluate(name: str, table: PairwiseTable, seed: int, particles: int, variants: list[str]) -> None:
    methods = {f"model ({v})": (lambda kw=VARIANTS[v]: PairwiseBayesModel(n_particles=particles, rng=seed, **kw))
               for v in variants if "_no_judge" not in VARIANTS[v] and "_choice" not in VARIANTS[v]}
    if any("_no_judge" in VARIANTS[v] for v in variants):
        methods["model (no judge)"] = lambda: _NoJudge(PairwiseBayesModel(n_particles=particles, rng=seed))
    methods.update({"majority vote": lambda: MajorityVote(smoothing=0.5),
                    "Bradley-Terry-Davidson": lambda: BradleyTerryDavidson(),
                    "Dawid-Skene": lambda: DawidSkene(smoothing=0.01)})
    if table.systems is not None:   # the systems' strengths alone (the information the system prior adds)
        methods["systems Bradley-Terry-Davidson"] = lambda: SystemBradleyTerryDavidson()
    # the held-out choice (nested: inside each outer fold, 5 inner folds among the training humans)
    inner = {"model": lambda: PairwiseBayesModel(n_particles=particles, rng=seed),
             **{m: f for m, f in methods.items() if m in BASELINES}}
    for v in variants:
        if "_choice" in VARIANTS[v]:
            methods[f"model ({v})"] = lambda r=VARIANTS[v]["_choice"]: _Choice(inner, model="model", rule=r, rng=seed)
    _INNER.clear()
    CHOSEN.clear()
    c0 = time.process_time()
    res = leave_one_human_out(table, methods=methods, rng=seed)
    cpu = time.process_time() - c0
    t = res.table[res.table["group"] == "all"].set_index("method")
    base = [m for m in BASELINES if m in t.index]
    best = min(base, key=lambda m: t.loc[m, "nll"])
    best_acc = max(base, key=lambda m: t.loc[m, "accuracy"])
    print(f"\n### {name} (seed {seed}): {table.n_pairs:,} pairs, {len(table.humans)} humans, "
          f"{len(table.judges)} judges, {res.n_folds} folds, {int(t['n_labels'].iloc[0]):,} held-out labels, "
          f"{cpu:.0f} CPU-s\n")
    print("| method | accuracy | NLL | NLL minus the best baseline's (by NLL) | accuracy minus the best "
          "baseline's (by accuracy) |")
    print("|---|---:|---:|---:|---:|")
    for m in t.index:
        cells = ["", ""]
        if m.startswith("model"):
            d = res.difference(m, best, rng=0).set_index("metric")
            a = res.difference(m, best_acc, rng=0).set_index("metric")
            cells = [f"{x.loc[k, 'estimate']:+.4f} [{x.loc[k, 'low']:+.4f}, {x.loc[k, 'high']:+.4f}]"
                     for x, k in ((d, "nll"), (a, "accuracy"))]
        print(f"| {m} | {t.loc[m, 'accuracy']:.4f} | {t.loc[m, 'nll']:.4f} | {cells[0]} | {cells[1]} |")
    print(f"\n(best baseline by NLL: {best}; by accuracy: {best_acc}, {t.loc[best_acc, 'accuracy']:.4f})", flush=True)
    for rule, chosen in CHOSEN.items():
        print(f"held-out choice, rule {rule!r}, per outer fold: {', '.join(chosen)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", default=str(pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"
                                                   / "pairwise"))
    ap.add_argument("--sim", action="store_true")
    ap.add_argument("--subjective", action="store_true")
    ap.add_argument("--sets", default="")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--particles", type=int, default=300)
    ap.add_argument("--variants", default="defaults")
    ap.add_argument("--hide-systems", action="store_true", help="the simulated sets without model_a/model_b")
    args = ap.parse_args()
    global HIDE_SYSTEMS
    HIDE_SYSTEMS = args.hide_systems
    variants = args.variants.split(",")
    for seed in (int(s) for s in args.seeds.split(",")):
        if args.sim:
            evaluate("simulated sparse raters", simulate_sparse(rng=seed), seed, args.particles, variants)
        if args.subjective:
            evaluate("simulated sparse subjective raters", simulate_sparse(rng=seed, subjective=True), seed,
                     args.particles, variants)
        for name in filter(None, args.sets.split(",")):
            evaluate(name, read_pairwise_set(name, args.root), seed, args.particles, variants)


if __name__ == "__main__":
    main()
