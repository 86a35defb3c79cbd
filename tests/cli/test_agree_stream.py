"""`voirdire agree --stream`: the same groups and numbers as `agree` on the whole file for the
coefficients that stream, one-line errors for what it refuses."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app

pytest.importorskip("pyarrow")
runner = CliRunner()


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    rng = np.random.default_rng(4)
    rows = []
    for i in range(240):
        truth = rng.integers(1, 6)
        for h in ("ann", "bob", "cat"):
            if rng.random() < 0.8:
                rows.append((f"q{i:03d}", h, str(int(np.clip(truth + rng.integers(-1, 2), 1, 5)))))
        if rng.random() < 0.9:  # some items only the judge labelled, some abstentions
            rows.append((f"q{i:03d}", "gpt-x", "skip" if i % 19 == 0 else str(int(np.clip(truth + 1, 1, 5)))))
    d = tmp_path_factory.mktemp("stream")
    df = pd.DataFrame(rows, columns=["item", "rater", "label"])
    df.to_csv(d / "t.csv", index=False)
    df.to_parquet(d / "t.parquet", index=False)
    return d


def _json(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_stream_equals_whole_file_with_a_judge(judged, ext):
    f = str(judged / f"t.{ext}")
    common = ["--judge", "gpt-x", "--abstain", "skip", "--scale", "ordinal", "--resamples", "100", "--seed", "3",
              "-f", "json", "-c", "observed_agreement", "-c", "fleiss_kappa", "-c", "krippendorff_alpha",
              "-c", "gwet_ac1", "-c", "gwet_ac2", "-c", "bennett_s", "--abstain-policy", "disagree"]
    ref = _json(["agree", f, *common])
    got = _json(["agree", f, *common, "--stream"])
    assert [g["label"] for g in got["groups"]] == [g["label"] for g in ref["groups"]] == ["humans", "+ gpt-x"]
    assert got["groups"][1]["n_judge_only_items"] == ref["groups"][1]["n_judge_only_items"] > 0
    for gg, rg in zip(got["groups"], ref["groups"]):
        for a, b in zip(gg["results"], rg["results"], strict=True):
            assert a["coefficient"] == b["coefficient"]
            for k in ("estimate", "se", "analytic_se", "observed", "expected"):
                assert (a[k] is None) == (b[k] is None), k
                if b[k] is not None:
                    assert a[k] == pytest.approx(b[k], rel=1e-12, abs=1e-12, nan_ok=True), (gg["label"], a["coefficient"], k)
            assert a["ci"]["low"] == pytest.approx(b["ci"]["low"], abs=1e-12)
            assert a["ci"]["high"] == pytest.approx(b["ci"]["high"], abs=1e-12)
            assert (a["n_items"], a["n_labels"], a["abstention"]) == (b["n_items"], b["n_labels"], b["abstention"])
    for k in ("n_items", "n_labels", "n_abstentions", "n_humans", "n_judges", "n_rows_read"):
        assert got["table"][k] == ref["table"][k], k
    assert [n for n in got["notes"] if "binary" not in n] == [n for n in ref["notes"] if "binary" not in n]


def test_stream_default_coefficients_and_table_output(judged):
    f = str(judged / "t.parquet")
    got = _json(["agree", f, "--stream", "--abstain", "skip", "--resamples", "0", "-f", "json"])
    names = [r["coefficient"] for r in got["groups"][0]["results"]]
    assert names == ["observed_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1"]
    res = runner.invoke(app, ["agree", f, "--stream", "--abstain", "skip", "--resamples", "0"])
    whole = runner.invoke(app, ["agree", f, "--abstain", "skip", "--resamples", "0"])
    assert res.exit_code == whole.exit_code == 0, res.output
    assert res.stdout == whole.stdout  # the same terminal table, line for line


@pytest.mark.parametrize("extra,msg", [
    (["--matrix"], "--matrix is not supported"),
    (["--role", "role"], "--role is not supported"),
    (["-c", "cohen_kappa"], "'cohen_kappa' does not stream"),
    (["--judge", "nobody"], "'nobody' is not in"),
])
def test_stream_refusals_are_one_line(judged, extra, msg):
    res = runner.invoke(app, ["agree", str(judged / "t.csv"), "--stream", "--abstain", "skip", *extra])
    assert res.exit_code == 1, res.output
    err = res.stderr.strip()
    assert msg in err and "\n" not in err and "Traceback" not in res.output


def test_stream_ungrouped_items_are_refused_naming_the_row(tmp_path):
    df = pd.DataFrame({"item": ["a", "a", "b", "b", "a"], "rater": ["x", "y", "x", "y", "z"],
                       "label": ["1", "2", "1", "1", "2"]})
    f = tmp_path / "u.csv"
    df.to_csv(f, index=False)
    res = runner.invoke(app, ["agree", str(f), "--stream"])
    assert res.exit_code == 1
    err = res.stderr.strip()
    assert "items are not grouped: item 'a' appears again at row 6" in err and "\n" not in err


def test_stream_refuses_big_integers_lists_and_names_missing_columns(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    big = tmp_path / "big.csv"
    big.write_text("item,rater,label\ni1,a,9007199254740993\ni1,b,9007199254740994\n")
    lst = tmp_path / "lst.parquet"
    pq.write_table(pa.table({"item": [["i1"], ["i1"]], "rater": ["a", "b"], "label": [1, 2]}), lst)
    wide = tmp_path / "wide.csv"
    wide.write_text("item,ann,bob\ni1,1,2\n")
    for path, msg in [(big, "row 2, column 'label': label '9007199254740993' is an integer beyond 2**53"),
                      (lst, "row 1, column 'item': the column holds list<element: string> values"),
                      (wide, "column 'rater': missing column(s) ['rater', 'label']; found ['item', 'ann', 'bob']. "
                             "Name the columns with --item/--rater/--label.")]:
        res = runner.invoke(app, ["agree", str(path), "--stream", "--resamples", "0"])
        assert res.exit_code == 1, res.output
        assert msg in res.stderr and "internal error" not in res.stderr and res.stderr.count("\n") == 1, res.stderr
