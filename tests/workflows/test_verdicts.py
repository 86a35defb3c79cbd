"""Each verdict reason on real data (``/work/shared/data``; the bundled HANNA), and the rules' edges
on hand-made results."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import pytest

from voirdire.data import read_annotations
from voirdire.datasets import load_hanna
from voirdire.exceptions import InvalidParameterError
from voirdire.workflows import REASON_CODES, validate_judges
from voirdire.workflows._verdict import ReferenceReliability, apply_reference, method_outcome

from ..conftest import shared_data


def _framing_slice(n: int):
    """The first ``n`` framing items in sorted id order (the issue's 300-item slice)."""
    t = read_annotations(shared_data("alttest", "framing"))
    idx = {str(x): k for k, x in enumerate(t.items)}
    return t.select(items=[idx[i] for i in sorted(idx)[:n]])


def _codes(v, blocking=None):
    return [r.code for r in v.reasons if blocking is None or r.blocking == blocking]


def test_every_code_is_documented():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "validation.md").read_text(encoding="utf-8")
    for code in REASON_CODES:
        assert f"`{code}`" in text, code


def test_unstable_decision_is_inconclusive_framing_300():
    # gemini_flash on the 300-item framing slice: the alt-test says accept in barely more than half of
    # the resamples; that is no green accept
    res = validate_judges(_framing_slice(300), ["gemini_flash"], method="alt-test", n_resamples=400, seed=0)
    j = res.judges[0]
    assert j.alt_test.decision == "accept"
    assert j.alt_test.decision_stability < 0.7
    (v,) = j.verdicts
    assert v.decision == "inconclusive" and _codes(v, blocking=True)[0] == "unstable"
    assert j.verdict.decision == "inconclusive"
    # a stricter or looser threshold moves the line, not the numbers
    loose = validate_judges(_framing_slice(300), ["gemini_flash"], method="alt-test", n_resamples=400, seed=0,
                            stability_threshold=0.5)
    assert loose.judges[0].alt_test.decision_stability == j.alt_test.decision_stability
    assert loose.judges[0].verdict.decision == "accept"


def test_noise_reference_hanna_coherence():
    # HANNA Coherence: the three humans' interval alpha is about -0.05; nothing can be validated against it
    t = load_hanna(criterion="Coherence")
    res = validate_judges(t, n_resamples=200, seed=0)
    ref = res.reference
    assert ref.level == "interval" and ref.status == "noise"
    assert ref.estimate < 0 and ref.ci.high < 0.05
    for j in res.judges:
        assert j.verdict.decision == "inconclusive"
        assert _codes(j.verdict, blocking=True) == ["reference_noise"]
    # the tests still say what they say (here some accept): the judge is reported, not accepted
    assert any(j.leave_one_out.decision == "accept" for j in res.judges)


def test_unreliable_reference_hanna_complexity():
    # Complexity: alpha 0.28 [0.23, 0.32], above 0 but below the 0.4 floor: accepts become inconclusive,
    # rejects stand (a judge that trails weak humans is still worse than they are)
    t = load_hanna(criterion="Complexity")
    res = validate_judges(t, ["Beluga-13B", "Llama-13B"], n_resamples=200, seed=0)
    assert res.reference.status == "unreliable"
    beluga, llama = res.judges
    assert beluga.leave_one_out.decision == "accept" and beluga.alt_test.decision == "accept"
    assert beluga.verdict.decision == "inconclusive"
    assert _codes(beluga.verdict, blocking=True) == ["reference_unreliable"]
    assert llama.verdict.decision == "reject" and "reference_unreliable" in _codes(llama.verdict, blocking=False)
    # with the floor lowered below the humans' alpha the same numbers give the tests' own decisions
    low = validate_judges(t, ["Beluga-13B"], n_resamples=200, seed=0, reference_floor=0.2)
    assert low.reference.status == "tentative" and low.judges[0].verdict.decision == "accept"
    assert "reference_tentative" in _codes(low.judges[0].verdict, blocking=False)


def test_too_few_items_and_humans():
    # 8 framing items: every human has fewer than min_items=10 eligible items (leave-one-out cannot
    # evaluate two humans) and fewer than 30 (the alt-test cannot run)
    res = validate_judges(_framing_slice(8), ["gpt-4o"], n_resamples=50, seed=0)
    j = res.judges[0]
    loo, alt = j.verdicts
    assert loo.decision == "inconclusive" and "too_few_humans" in _codes(loo, blocking=True)
    assert j.alt_test is None and "alt_test" in j.errors
    assert alt.decision == "inconclusive" and "too_few_items" in _codes(alt, blocking=True)
    assert j.verdict.decision == "inconclusive"


def test_methods_disagree_says_which_why_and_what_settles():
    # 40 WAX items: leave-one-out accepts gemini_pro, the alt-test rejects it
    t = read_annotations(shared_data("alttest", "wax")).select(items=range(40))
    res = validate_judges(t, ["gemini_pro"], n_resamples=300, seed=0, reference_floor=0.0)
    j = res.judges[0]
    assert {j.leave_one_out.decision, j.alt_test.decision} == {"accept", "reject"}
    v = j.verdict
    assert v.decision == "inconclusive" and _codes(v, blocking=True)[0] == "methods_disagree"
    msg = v.reasons[0].message
    assert "pooled agreement" in msg and "item by item" in msg and "epsilon = 0.05" in msg
    # what would settle it: not more labels (both decisions are stable; their margins differ), and no
    # number or command that suggests otherwise
    settle = [r for r in v.reasons if r.code == "what_would_settle"]
    assert len(settle) == 1 and settle[0].message in v.sentence
    assert "more labels will not settle it" in settle[0].message and "margins differ" in settle[0].message
    assert settle[0].value is None
    assert j.advice.status == "not_labels" and j.advice.command() is None


def test_stability_unknown_without_resamples():
    t = read_annotations(shared_data("alttest", "wax"))
    res = validate_judges(t, ["gemini_pro"], method="loo", n_resamples=0, reference_floor=0.0)
    assert _codes(res.judges[0].verdict, blocking=True) == ["stability_unknown"]
    assert res.judges[0].verdict.decision == "inconclusive"


def test_rules_on_hand_made_results():
    loo = SimpleNamespace(decision="accept", omega=0.75, threshold=0.5, decision_stability=0.79, n_resamples=100)
    out, reasons = method_outcome("leave_one_out", loo, None, stability_threshold=0.8)
    assert out == "inconclusive" and reasons[0].code == "unstable" and reasons[0].value == 0.79
    out, reasons = method_outcome("leave_one_out", loo, None, stability_threshold=0.79)
    assert out == "accept"  # exactly at the threshold: stable enough
    from voirdire._results import ConfidenceInterval

    def ref(status):
        return ReferenceReliability(coefficient="krippendorff_alpha", level="nominal", estimate=0.3,
                                    ci=ConfidenceInterval(low=0.1, high=0.5, confidence_level=0.95), n_items=10,
                                    n_humans=3, floor=0.4, status=status, sentence=status)

    assert apply_reference("reject", [], ref("noise"))[0] == "inconclusive"
    assert apply_reference("reject", [], ref("unreliable"))[0] == "reject"
    assert apply_reference("accept", [], ref("unreliable"))[0] == "inconclusive"
    assert apply_reference("accept", [], ref("tentative"))[0] == "accept"


@pytest.mark.parametrize("kw, needle", [
    (dict(stability_threshold=0.0), "stability_threshold"),
    (dict(stability_threshold=1.5), "stability_threshold"),
    (dict(reference_floor=1.0), "reference_floor"),
    (dict(method="lo"), "method"),
    (dict(seed=-1), "seed"),
])
def test_bad_options(kw, needle):
    t = load_hanna(criterion="Coherence").select(items=range(40))
    with pytest.raises(InvalidParameterError, match=needle):
        validate_judges(t, ["ChatGPT"], n_resamples=10, **kw)


def test_unknown_judge():
    t = load_hanna(criterion="Coherence").select(items=range(40))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidParameterError, match="gpt-5"):
            validate_judges(t, ["gpt-5"], n_resamples=10)
