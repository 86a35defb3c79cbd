"""`voirdire validate`: tables, JSON, CSV, ranking, inconclusive cases and one-line errors."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner

from voirdire.cli import app

from ..conftest import shared_data

runner = CliRunner()


def _invoke(*args: str):
    return runner.invoke(app, ["validate", *args])


def test_table_output_both_methods() -> None:
    wax = str(shared_data("alttest", "wax"))
    res = _invoke(wax, "--judge", "gemini_pro", "--alt-epsilon", "0.1", "--resamples", "100")
    assert res.exit_code == 0, res.output
    out = res.output
    assert "leave-one-human-out" in out and "Alternative Annotator Test" in out
    assert "omega = 0.750" in out and "ACCEPT" in out          # LOO on WAX, agreement, eps 0.05
    assert "omega = 0.500" in out and "rho = 0.737" in out     # the notebook's gemini_pro figures
    assert "bootstrap resamples" in out


def test_json_matches_library() -> None:
    from voirdire.data import read_annotations
    from voirdire.validation import alt_test

    path = shared_data("alttest", "mtbench")
    res = _invoke(str(path), "-j", "gpt-4o", "--method", "alt-test", "--epsilon", "0.2", "--format", "json",
                  "--resamples", "0")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    entry = data["judges"][0]
    assert "leave_one_out" not in entry
    ref = alt_test(read_annotations(path), "gpt-4o", epsilon=0.2)
    assert entry["alt_test"]["rho"] == ref.rho and entry["alt_test"]["epsilon"] == 0.2
    assert data["ranking"] is None


def test_ranking_with_several_judges_and_csv() -> None:
    wax = str(shared_data("alttest", "wax"))
    res = _invoke(wax, "-j", "gemini_pro", "-j", "gpt-4o", "-j", "mistral-v03", "--method", "alt-test",
                  "--epsilon", "0.1", "--resamples", "200")
    assert res.exit_code == 0, res.output
    assert "Ranking by rho" in res.output and "P(best)" in res.output
    assert "cannot be told apart" in res.output
    res = _invoke(wax, "-j", "gemini_pro", "--method", "loo", "--format", "csv", "--resamples", "0")
    assert res.exit_code == 0
    from io import StringIO
    frame = pd.read_csv(StringIO(res.output))
    assert set(frame["method"]) == {"leave_one_out"} and len(frame) == 8


def test_inconclusive_said_plainly(tmp_path) -> None:
    # humans a and b share only one item with the judge: the alt-test cannot run (30 items per human)
    # and the leave-one-out rule sees two humans, each on a single item.
    rows = ["item,rater,label"]
    rows += [f"s,{r},1" for r in ("a", "b", "llm")]
    rows += [f"x{i},a,{i % 2}" for i in range(5)] + [f"x{i},llm,{i % 2}" for i in range(5)]
    rows += [f"y{i},c,{i % 2}" for i in range(5)] + [f"y{i},llm,0" for i in range(5)]
    f = tmp_path / "thin.csv"
    f.write_text("\n".join(rows) + "\n")
    res = _invoke(str(f), "--judge", "llm", "--resamples", "50")
    assert res.exit_code == 0, res.output
    assert "INCONCLUSIVE" in res.output
    assert "too thin" in res.output or "fewer than min_items_per_human" in res.output


def test_errors_are_one_line() -> None:
    mt = str(shared_data("alttest", "mtbench"))
    res = _invoke(mt, "--judge", "gpt-5")
    assert res.exit_code == 1 and "gpt-5" in res.output and "Traceback" not in res.output
    res = _invoke(mt, "--judge", "gpt-4o", "--epsilon", "5")
    assert res.exit_code == 1 and "epsilon" in res.output and "Did you mean 0.05" in res.output
    res = _invoke(mt, "--judge", "gpt-4o", "--method", "alt-test", "--scoring", "neg_rmse")
    assert res.exit_code == 1 and "needs numeric labels" in res.output


def test_no_judge_in_file(tmp_path) -> None:
    f = tmp_path / "h.csv"
    f.write_text("item,rater,label\n1,a,x\n1,b,x\n")
    res = _invoke(str(f))
    assert res.exit_code == 1 and "--judge" in res.output
