"""The report's Annotators section: equals the direct calls, and says when a verdict rests on a flagged annotator."""

from __future__ import annotations

import jsonschema
import numpy as np
import pytest

from voirdire.data import AnnotationTable
from voirdire.diagnostics import rater_diagnostics
from voirdire.report import build_report, render_html, report_schema
from voirdire.workflows import validate_judges


@pytest.fixture(scope="module")
def spam_report():
    # 3 good humans, 3 spammers, a judge that beats only the spammers (accepted at omega 0.5 with everyone)
    rng = np.random.default_rng(0)
    n, q = 200, 4
    z = rng.integers(0, q, n)

    def rater(acc):
        return np.where(rng.random(n) < acc, z, (z + rng.integers(1, q, n)) % q)

    cols = {"g1": rater(0.85), "g2": rater(0.85), "g3": rater(0.85), "s1": rng.integers(0, q, n),
            "s2": rng.integers(0, q, n), "s3": rng.integers(0, q, n), "judge": rater(0.55)}
    t = AnnotationTable.from_arrays(np.tile(np.arange(n), len(cols)), np.repeat(list(cols), n),
                                    np.concatenate(list(cols.values())), judges=["judge"])
    return t, build_report(t, n_resamples=300, seed=1)


def test_section_matches_direct_call(spam_report):
    # the section shows the validation workflow's own annotator check (one computation, issue 19):
    # equal to validate_judges' result, and its point values to rater_diagnostics called directly
    t, rep = spam_report
    s = rep.section("annotators")
    assert s.status == "ok"
    jsonschema.validate(rep.to_dict(), report_schema())
    direct = validate_judges(t, n_resamples=300, seed=1, rater_competence=True).annotators
    res = s.results["raters"]
    assert res["raters"] == list(direct.raters)
    np.testing.assert_allclose(res["s"], direct.s, atol=1e-12)
    np.testing.assert_allclose(res["s"], rater_diagnostics(t, n_resamples=0).s, atol=1e-12)
    np.testing.assert_allclose(res["s_low"], direct.s_low, atol=1e-12)
    np.testing.assert_allclose(res["ds_accuracy"], direct.ds_accuracy, atol=1e-12)
    assert np.all(np.isfinite(res["ds_accuracy"])) and np.all(np.isfinite(res["mace_competence"]))
    assert res["flagged"] == direct.flagged.tolist() and set(direct.flagged_raters) == {"s1", "s2", "s3"}
    sens = s.results["sensitivity"]
    assert sens and sens[0]["judge"] == "judge" and sens[0]["won_mainly_against_excluded"]
    assert sens[0]["reasons"] == ["won_mainly_against_flagged_annotators"]
    html = render_html(rep)
    assert "Annotators" in html and "Outlier s1" in html and "won mainly against the excluded annotators" in html
    assert len(s.results["items"]["top"]) == 15


def test_one_human_section_not_available():
    t = AnnotationTable.from_arrays([1, 1, 2, 2], ["h", "j", "h", "j"], ["a", "a", "b", "a"], judges=["j"])
    rep = build_report(t, n_resamples=20)
    s = rep.section("annotators")
    assert s.status == "not available" and "two human" in s.reason


@pytest.mark.slow  # a whole report: 1.7-2.9 CPU-s in the oracle environment (the fast suite allows 2)
def test_the_report_runs_the_annotator_check_once(spam_report, monkeypatch):
    import voirdire.diagnostics as D

    t, _ = spam_report
    calls = []
    real = D.rater_diagnostics

    def counted(*a, **k):
        calls.append(k.get("competence"))
        return real(*a, **k)

    monkeypatch.setattr(D, "rater_diagnostics", counted)  # the workflows import it when called
    rep = build_report(t, n_resamples=50, seed=1)
    assert rep.section("annotators").status == "ok" and rep.section("validation").status == "ok"
    assert calls == [True]
