"""``compare_raters``: items only the judge labelled stay out of the chance term by default
(SummEval, real data), and numeric labels read without --scale get a note."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.data import AnnotationTable
from voirdire.workflows import compare_raters

from ..conftest import shared_data

runner = CliRunner()


@pytest.fixture(scope="module")
def summeval_sparse():
    """SummEval coherence: the 3 experts on 200 summaries, gpt-4-0314 (reason-then-score) on all 1,200."""
    d = shared_data("grading", "summeval")
    h = pd.read_csv(d / "summeval_human_ratings_long.csv")
    h = h[(h.dimension == "coherence") & (h.rater_type == "expert")]
    h = h.assign(item=h.doc_id + "/" + h.model_id)
    h = h[h.item.isin(sorted(h.item.unique())[:200])]
    rows = [(i, f"expert_{r}", int(s)) for i, r, s in zip(h.item, h.rater_index, h.score)]
    j = pd.read_json(d / "summeval_llm_judge_scores.jsonl", lines=True)
    j = j[(j.dimension == "coherence") & (j.evaluator == "gpt-4-0314") & (j.method == "rts")]
    j = j.dropna(subset=["parsed_score"]).assign(item=lambda f: f.doc_id + "/" + f.model_id).drop_duplicates("item")
    rows += [(i, "gpt-4", int(round(s))) for i, s in zip(j.item, j.parsed_score)]
    return AnnotationTable.from_frame(pd.DataFrame(rows, columns=["item", "rater", "label"]), judges=["gpt-4"])


def test_judge_only_items_leave_the_chance_term(summeval_sparse):
    t = summeval_sparse
    coefs = ["fleiss_kappa", "krippendorff_alpha"]
    drop = compare_raters(t, coefficients=coefs, n_resamples=0)
    keep = compare_raters(t, coefficients=coefs, n_resamples=0, judge_only_items="keep")
    assert drop.n_judge_only_items == (0, 1000) and keep.n_judge_only_items == (0, 0)
    assert any("1000 item(s) only the judge labelled are left out" in n for n in drop.notes)
    d, k = drop.groups[1], keep.groups[1]
    # the 1,000 judge-only items carry no pair: alpha (which pairs values within items) is unmoved
    assert d["krippendorff_alpha"].estimate == pytest.approx(k["krippendorff_alpha"].estimate)
    # but Fleiss' chance term is built from every label, so the judge's 1,000 lone scores drag it down
    assert k["fleiss_kappa"].estimate < 0 < d["fleiss_kappa"].estimate
    assert d["fleiss_kappa"].estimate == pytest.approx(0.119, abs=0.005)
    assert k["fleiss_kappa"].estimate == pytest.approx(-0.254, abs=0.005)


def test_agree_says_so_and_keeps_on_request(summeval_sparse, tmp_path):
    f = tmp_path / "summeval_sparse.csv"
    summeval_sparse.to_frame()[["item", "rater", "label"]].to_csv(f, index=False)
    base = ["agree", str(f), "-j", "gpt-4", "-c", "fleiss_kappa", "--n-resamples", "0", "--scale", "ordinal"]
    res = runner.invoke(app, base + ["--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["groups"][1]["n_judge_only_items"] == 1000 and doc["options"]["judge_only_items"] == "drop"
    assert any("only the judge labelled" in n for n in doc["notes"])
    res = runner.invoke(app, base + ["--judge-only-items", "keep", "--format", "json"])
    assert json.loads(res.stdout)["groups"][1]["n_judge_only_items"] == 0


def test_numeric_labels_without_scale_get_a_note(tmp_path):
    f = tmp_path / "stars.csv"
    rows = ["item,rater,label"] + [f"i{i},{r},{(i + k) % 5 + 1}" for i in range(30) for k, r in enumerate("abj")]
    f.write_text("\n".join(rows) + "\n")
    res = runner.invoke(app, ["agree", str(f), "-j", "j", "--n-resamples", "0"])
    assert res.exit_code == 0, res.output
    assert "read as nominal categories" in res.stderr and "--scale ordinal" in res.stderr
    # machine output carries the note itself and leaves stderr clean
    res = runner.invoke(app, ["agree", str(f), "-j", "j", "--n-resamples", "0", "--format", "json"])
    assert "read as nominal categories" in json.loads(res.stdout)["notes"][0] and "read as" not in res.stderr
    res = runner.invoke(app, ["agree", str(f), "-j", "j", "--n-resamples", "0", "--scale", "ordinal"])
    assert "read as nominal" not in res.stderr
    # two numeric values (0/1 codes) are not scores: no note
    f2 = tmp_path / "binary.csv"
    f2.write_text("item,rater,label\n" + "\n".join(f"i{i},{r},{(i + k) % 2}" for i in range(30)
                                                     for k, r in enumerate("abj")) + "\n")
    res = runner.invoke(app, ["agree", str(f2), "-j", "j", "--n-resamples", "0"])
    assert "read as nominal" not in res.stderr
    # an error keeps its one line (the note is not printed)
    res = runner.invoke(app, ["agree", str(f), "-j", "j", "--n-resamples", "-1"])
    assert res.exit_code == 1 and len(res.stderr.strip().splitlines()) == 1
