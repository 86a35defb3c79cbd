"""Real data (../shared/data/grading): repeated human subsamples, the LLM on every item.

SummEval (expert means, gpt-4-0314 reason-then-score) and HANNA (mean of three MTurk raters,
ChatGPT): humans keep a Poisson 10% or 25% of the items; the doubly-robust interval (finite
target: the mean over these items) must cover the full-data human mean at the nominal rate, and
be narrower than the human-only interval. The full table is in docs/estimation.md
(``bench/bench_estimation.py real``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from voirdire.estimation import classical_mean, dr_mean, item_scores

from ..conftest import shared_data

pytestmark = pytest.mark.statistical


def _summeval(dimension: str) -> tuple[np.ndarray, np.ndarray]:
    d = shared_data("grading", "summeval")
    h = pd.read_csv(d / "summeval_human_ratings_long.csv")
    h = h[(h["rater_type"] == "expert") & (h["dimension"] == dimension)]
    y = h.groupby(["doc_id", "model_id"])["score"].mean()
    j = pd.read_json(d / "summeval_llm_judge_scores.jsonl", lines=True)
    j = j[(j["evaluator"] == "gpt-4-0314") & (j["method"] == "rts") & (j["dimension"] == dimension)]
    x = j.groupby(["doc_id", "model_id"])["parsed_score"].mean()
    m = pd.concat([y.rename("y"), x.rename("x")], axis=1, join="inner").dropna()
    return m["x"].to_numpy(float), m["y"].to_numpy(float)


def _hanna(criterion: str) -> tuple[np.ndarray, np.ndarray]:
    from voirdire.datasets import load_hanna

    x, y, _ = item_scores(load_hanna(criterion=criterion), "ChatGPT")
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


@pytest.mark.parametrize("source", ["summeval-consistency", "hanna-Coherence"])
@pytest.mark.parametrize("frac", [0.10, 0.25])
def test_dr_covers_full_data_mean(source, frac):
    kind, name = source.split("-")
    x, y_full = _summeval(name) if kind == "summeval" else _hanna(name)
    truth = y_full.mean()
    rng = np.random.default_rng([int(frac * 100), len(source)])
    reps = 300
    hits = np.empty(reps, dtype=bool)
    w_dr = np.empty(reps)
    w_h = np.empty(reps)
    for r in range(reps):
        lab = rng.random(x.size) < frac
        y = np.where(lab, y_full, np.nan)
        res = dr_mean(x, y, frac, model="linear", target="finite", rng=r)
        hits[r] = res.ci.low <= truth <= res.ci.high
        w_dr[r] = res.ci.width
        w_h[r] = classical_mean(y, frac, target="finite").ci.width
    tol = 3.5 * math.sqrt(0.95 * 0.05 / reps)
    assert abs(hits.mean() - 0.95) <= tol, hits.mean()
    assert w_dr.mean() < 0.95 * w_h.mean()  # the judge (R^2 ~ 0.3-0.4) saves human labels
