"""Shared fixtures of the report tests: one small hostile table, its report built once per session."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from voirdire.data import AnnotationTable

SCRIPT_RATER = "<script>alert(1)</script>"
HUMANS = ["ann_a", "ann_b", SCRIPT_RATER, "ann & d"]
JUDGES = ["gpt-x", "judge <b>2</b>"]


def make_table(n_items: int = 60, seed: int = 3) -> AnnotationTable:
    """Binary 0/1 (fail/pass) labels with 'cannot assess' abstentions and sparse human overlap.

    A latent truth per item; humans are right 85% of the time and label about 70% of the items;
    judge 'gpt-x' is right 80% of the time, the other judge 65%; each judge abstains on ~5%.
    Rater names include markup, so every string the report shows must be escaped.
    """
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n_items)
    item, rater, label = [], [], []
    names = [0, 1]
    for i in range(n_items):
        iid = f"item<{i}>"
        for h in HUMANS:
            if rng.random() < 0.7:
                y = truth[i] if rng.random() < 0.85 else 1 - truth[i]
                item.append(iid), rater.append(h), label.append(names[y])
        for j, acc in zip(JUDGES, (0.8, 0.65)):
            if rng.random() < 0.05:
                lab = "cannot assess"
            else:
                lab = names[truth[i] if rng.random() < acc else 1 - truth[i]]
            item.append(iid), rater.append(j), label.append(lab)
    return AnnotationTable.from_arrays(item, rater, label, judges=JUDGES, categories=[0, 1],
                                       abstain=["cannot assess"], source="hostile.csv")


@pytest.fixture(scope="session", autouse=True)
def _plotting_loaded() -> None:
    """Import the plotting stack and draw one figure per test process before the first report test: a first
    import of matplotlib and its fonts (about 0.9 CPU-s) is the process's, not the test's (the fast suite's 2
    CPU-s budget counts only the test's call; a whole-report test that happened to come first in its worker
    went over it)."""
    from voirdire.report._plots import forest_plot

    forest_plot("warm", ["a", "b"], [0.1, 0.2], [0.0, 0.1], [0.2, 0.3])


@pytest.fixture(scope="session")
def hostile_table() -> AnnotationTable:
    return make_table()


def build_kwargs() -> dict:
    """The options of the session's report: every section asked for."""
    from voirdire.pairwise import simulate_pairwise

    pt, _ = simulate_pairwise(150, rng=2)
    return dict(seed=7, n_resamples=100, pairwise=pt, inclusion_prob=0.8)


@pytest.fixture(scope="session")
def built(hostile_table):
    from voirdire.report import build_report

    steps: list[tuple[str, int, int]] = []
    rep = build_report(hostile_table, progress=lambda *a: steps.append(a), **build_kwargs())
    return rep, steps


@pytest.fixture(scope="session")
def written(built, tmp_path_factory):
    """(report, html text, json document, paths) with the files on disk."""
    from voirdire.report import write_report

    rep, _ = built
    out = tmp_path_factory.mktemp("report")
    paths = write_report(rep, out)
    return rep, paths.html.read_text(encoding="utf-8"), json.loads(paths.json.read_text(encoding="utf-8")), paths


def artifacts_dir() -> Path:
    """``test-artifacts/`` at the repository root (screenshots of the rendered report)."""
    d = Path(__file__).resolve().parents[2] / "test-artifacts"
    d.mkdir(exist_ok=True)
    return d
