"""``validate_judges`` on two threads: the humans' reference and the annotator check beside the judges'
tests give the same result, the same notes in the same order, and the same warnings to the caller."""

from __future__ import annotations

import threading
import time
import warnings

import numpy as np
import pytest

import voirdire.agreement as agreement
import voirdire.diagnostics as diagnostics
import voirdire.validation as validation
from voirdire.data import AnnotationTable
from voirdire.workflows import _validate, validate_judges


def _table(seed: int = 0, n: int = 300) -> AnnotationTable:
    """Three good humans, two spammers, a constant human, two judges; 60% of the labels kept."""
    rng = np.random.default_rng(seed)
    q = 4
    z = rng.integers(0, q, n)

    def rater(acc: float) -> np.ndarray:
        return np.where(rng.random(n) < acc, z, (z + rng.integers(1, q, n)) % q)

    cols = {"g1": rater(0.85), "g2": rater(0.85), "g3": rater(0.85), "s1": rng.integers(0, q, n),
            "s2": rng.integers(0, q, n), "c": np.zeros(n, dtype=int), "judge": rater(0.55), "j2": rater(0.7)}
    keep = (rng.random((len(cols), n)) < 0.6).ravel()
    items = np.tile(np.arange(n), len(cols))[keep]
    names = np.repeat(list(cols), n)[keep]
    return AnnotationTable.from_arrays(items, names, np.concatenate(list(cols.values()))[keep]).with_roles(
        judges=["judge", "j2"])


def _warning(func, *texts, pause=0.0):
    def wrapped(*args, **kwargs):
        time.sleep(pause)
        for t in texts:
            warnings.warn(t, UserWarning, stacklevel=2)
        return func(*args, **kwargs)
    return wrapped


@pytest.fixture
def noisy(monkeypatch):
    """Analyses that warn: the reference late (so that on two threads the judges' notes come first)."""
    monkeypatch.setattr(agreement, "krippendorff_alpha",
                        _warning(agreement.krippendorff_alpha, "ref note", "shared note", pause=0.3))
    monkeypatch.setattr(validation, "leave_one_out", _warning(validation.leave_one_out, "shared note", "loo note"))
    monkeypatch.setattr(diagnostics, "rater_diagnostics",
                        _warning(diagnostics.rater_diagnostics, "annotator warning"))


@pytest.mark.parametrize("score", ["agreement", "kappa"])
def test_a_second_thread_gives_the_same_result_and_notes(noisy, monkeypatch, score):
    t = _table()
    docs = []
    for side in (False, True):
        monkeypatch.setattr(_validate, "SIDE_THREAD_LABELS", 0 if side else 10**12)
        monkeypatch.setattr(_validate, "two_cores", lambda: True)
        with pytest.warns(UserWarning, match="annotator warning") as rec:
            res = validate_judges(t, n_resamples=100, seed=1, score=score)
        # the annotator check's warning reaches the caller (as before: it never was a note), once per run
        assert [str(w.message) for w in rec if "annotator" in str(w.message)] == ["annotator warning"]
        docs.append(res.to_dict())
    assert docs[0] == docs[1]
    notes = docs[0]["notes"]
    assert notes[:3] == ["ref note", "shared note", "loo note"] and notes.count("shared note") == 1
    assert "annotator warning" not in notes and docs[0]["flagged_raters"]


def test_each_thread_keeps_its_own_warnings():
    step = threading.Barrier(2)

    def chatty(tag):
        for i in range(5):
            step.wait(timeout=10)  # the two threads warn in turn
            warnings.warn(f"{tag}{i}", UserWarning)
        return tag

    got = {}
    with _validate._capturing():
        th = threading.Thread(target=lambda: got.setdefault("a", _validate._caught(chatty, "a")))
        th.start()
        got["b"] = _validate._caught(chatty, "b")
        th.join()
    for tag in "ab":
        out, caught = got[tag]
        assert out == tag and [str(w.message) for w in caught] == [f"{tag}{i}" for i in range(5)]


def test_a_warning_outside_any_analysis_reaches_the_caller_after():
    with pytest.warns(UserWarning, match="loose") as rec:
        with _validate._capturing():
            warnings.warn("loose", UserWarning)
            _, caught = _validate._caught(lambda: warnings.warn("held", UserWarning))
    assert [str(w.message) for w in rec] == ["loose"] and [str(w.message) for w in caught] == ["held"]


def test_one_order_of_judges_by_p_best_with_ties():
    # issue 28: validate ranked gpt-4 first (by rho) with P(best) 0.499 below llama-70b's 0.501; the one order
    # is by P(best), and two judges that neither ranks above the other in 95% of resamples form one tier
    from types import SimpleNamespace

    import numpy as np

    from voirdire.workflows import order_text, ranking_tiers

    r = SimpleNamespace(judges=("gpt-4", "llama-70b"), p_best=np.array([0.499, 0.501]), confidence_level=0.95,
                        p_order=np.array([[0.0, 0.499], [0.501, 0.0]]))
    assert ranking_tiers(r) == (("llama-70b", "gpt-4"),)
    assert order_text(ranking_tiers(r)) == "llama-70b ~ gpt-4 (cannot be told apart)"
    # separable: a strict order; judges at P(best) = 0 are ordered by how often they rank above the others
    r = SimpleNamespace(judges=("a", "b", "c", "d"), p_best=np.array([0.0, 0.97, 0.0, 0.03]), confidence_level=0.95,
                        p_order=np.array([[0, 0.0, 0.2, 0.0], [1, 0, 1, 0.97], [0.8, 0.0, 0, 0.01], [1, 0.03, 0.99, 0]]))
    assert ranking_tiers(r) == (("b",), ("d",), ("c", "a"))
    # the dict form (report.json) gives the same tiers
    d = {"judges": list(r.judges), "p_best": list(r.p_best), "confidence_level": 0.95,
         "p_order": [list(x) for x in r.p_order]}
    assert ranking_tiers(d) == ranking_tiers(r)


def test_method_margins_read_one_epsilon_per_method():
    # --epsilon is the leave-one-out tolerance when that rule runs, else the alt-test margin; defaults 0.05, 0.2
    m = _validate.method_margins
    assert m("both", None, None) == (0.05, 0.2)
    assert m("both", 0.1, None) == (0.1, 0.2)
    assert m("both", 0.1, 0.15) == (0.1, 0.15)
    assert m("loo", 0.1, None) == (0.1, 0.2)
    assert m("alt-test", 0.1, None) == (0.05, 0.1)
    assert m("alt-test", 0.1, 0.15) == (0.05, 0.15)


def test_judges_to_validate_names_each_once_or_every_marked_judge():
    from voirdire.exceptions import InvalidParameterError

    t = AnnotationTable.from_arrays([1, 1, 1, 2, 2, 2], ["h1", "h2", "j", "h1", "h2", "j"],
                                    [0, 1, 0, 1, 1, 1]).with_roles(judges=["j"])
    assert _validate.judges_to_validate(t, ["j", "j"]) == ["j"]
    assert _validate.judges_to_validate(t, None) == ["j"]
    humans = t.select(raters=["h1", "h2"])
    with pytest.raises(InvalidParameterError, match="marks no rater as a judge"):
        _validate.judges_to_validate(humans, None)
