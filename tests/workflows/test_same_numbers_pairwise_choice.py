"""One seed, one pairwise answer (issues 28 and 30): ``voirdire pairwise --format json``, ``voirdire report
--pairwise`` (report.json's Pairwise section) and the API (:func:`voirdire.workflows.summarise_pairwise`, which
obtains the fit from :func:`voirdire.workflows.fit_pairwise`) make the same held-out choice and show the same
per-pair forecasts, on a table where a baseline wins the choice and on one where the model keeps it.

Small simulated tables as ``test_pairwise_fit.py``'s (40 pairs, 3 humans, 2 judges in both orders) at the
default 300 particles: at every seed tried (1-4) Bradley-Terry-Davidson wins on ``rng=3`` (held-out NLL
difference +0.10) and BayesJudge keeps it on ``rng=4`` (-0.06).
"""

from __future__ import annotations

import html
import io
import json
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from voirdire._results import to_jsonable
from voirdire.cli import app
from voirdire.data import read_pairwise
from voirdire.pairwise import simulate_pairwise
from voirdire.report.console.pairwise import render_pairwise
from voirdire.workflows import summarise_pairwise

runner = CliRunner()
SEED = 3  # not the default: the report's --seed must reach the choice's streams


def _json(x):
    return json.loads(json.dumps(to_jsonable(x)))


def _three_ways(tmp_path, rng):
    """(pairwise --format json, report.json's pairwise section, report.html, the API's summary) at SEED."""
    table, _ = simulate_pairwise(40, biases=[1.0, 0.0], rng=rng)
    path = tmp_path / "votes.csv"
    table.to_frame().to_csv(path, index=False)  # the 'role' column names the judges for both commands
    pw = runner.invoke(app, ["pairwise", str(path), "--seed", str(SEED), "--format", "json"])
    assert pw.exit_code == 0, pw.output
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", "--pairwise", str(path), "-o", str(out), "-q", "--seed", str(SEED)])
    assert rep.exit_code == 0, rep.output
    sec = json.loads((out / "report.json").read_text(encoding="utf-8"))["sections"]["pairwise"]
    assert sec["status"] == "ok", sec
    api = summarise_pairwise(read_pairwise(path, role="role"), seed=SEED, bias=False)
    return json.loads(pw.stdout), sec, (out / "report.html").read_text(encoding="utf-8"), api


def _paragraphs(page):
    """The page's paragraphs as the reader sees them (markup gone, entities decoded, whitespace collapsed)."""
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", p)).split())
            for p in re.findall(r"<p[^>]*>(.*?)</p>", page, flags=re.S)]


def _terminal(fit):
    buf = io.StringIO()
    con = Console(file=buf, width=400, color_system=None)
    render_pairwise(con, con, fit, file="votes.csv")
    return buf.getvalue()


def _same_answer(cli, sec, page, api):
    rep = sec["results"]
    # the choice: made the same way, from the same held-out scores, the same interval
    assert cli["choice"] == rep["choice"] == _json(api.choice)
    assert cli["forecaster"] == rep["forecaster"] == api.forecaster == cli["choice"]["method"]
    # the per-pair forecasts shown: the chosen forecaster's, number for number
    assert cli["pairs"] == rep["forecasts"] == _json(api.forecasts.to_dict("records"))
    # the model's posterior (judges' biases) is the same fit in all three
    assert [j["bias_mean"] for j in cli["judges"]] == rep["posterior"]["bias_mean"]
    assert rep["posterior"] == _json(api.posterior.to_dict())
    # the report states the choice in the terminal's words
    (line,) = [t for t in _paragraphs(page) if t.startswith("held-out choice:")]
    assert line in " ".join(_terminal(api.fit).split())
    return rep, line


@pytest.mark.slow  # pairwise + a whole report + the API: 0.9 CPU-s here, 2.1 in the oracle environment
def test_a_baseline_wins_the_report_shows_its_forecasts_as_pairwise_does(tmp_path):
    cli, sec, page, api = _three_ways(tmp_path, rng=3)
    rep, line = _same_answer(cli, sec, page, api)
    ch = rep["choice"]
    assert ch["made"] and ch["chosen"] == ch["best_baseline"] == "Bradley-Terry-Davidson" != ch["model"]
    assert ch["difference"] > 0 and line.startswith("held-out choice: Bradley-Terry-Davidson (leave-one-human-out")
    assert {r["forecaster"] for r in rep["forecasts"]} == {"Bradley-Terry-Davidson"}
    # the most uncertain pairs on the page are the baseline's, labelled as the terminal labels them
    ent = [r["entropy"] for r in rep["forecasts"]]
    assert ent[rep["most_uncertain"][0]] == max(ent)
    k = rep["most_uncertain"][0]
    caption = html.unescape(re.search(r"<caption>([^<]*most uncertain pairs[^<]*)</caption>", page).group(1))
    assert caption.startswith("The 10 most uncertain pairs by Bradley-Terry-Davidson's forecasts (the held-out choice")
    first_row = page[page.index(caption.replace("'", "&#39;")):]
    assert re.search(r'data-pointer="([^"]*)"', first_row).group(1) == f"/sections/pairwise/results/forecasts/{k}/p_A"
    assert any(t.startswith("The per-pair forecasts below") and "Bradley-Terry-Davidson's" in t
               for t in _paragraphs(page))


@pytest.mark.slow  # pairwise + a whole report + the API: 0.9 CPU-s here, 2.1 in the oracle environment
def test_the_model_wins_the_report_shows_the_posterior_as_pairwise_does(tmp_path):
    cli, sec, page, api = _three_ways(tmp_path, rng=4)
    rep, line = _same_answer(cli, sec, page, api)
    ch = rep["choice"]
    assert ch["made"] and ch["chosen"] == ch["model"] == "BayesJudge" and ch["difference"] <= 0
    assert line.startswith("held-out choice: BayesJudge (leave-one-human-out")
    # the forecasts shown are the posterior's own
    post = rep["posterior"]
    assert [r["entropy"] for r in rep["forecasts"]] == post["entropy"]
    assert [[r["p_A"], r["p_T"], r["p_B"]] for r in rep["forecasts"]] == post["verdict_proba"]
    assert not any(t.startswith("The per-pair forecasts below") for t in _paragraphs(page))
    assert "The 10 pairs the model is least sure about" in page


def test_summarise_pairwise_passes_the_choice_options_to_fit_pairwise():
    table, _ = simulate_pairwise(40, biases=[1.0, 0.0], rng=0)
    off = summarise_pairwise(table, seed=SEED, bias=False, choose=False)
    assert off.choice is not None and not off.choice["made"] and off.choice["off"]
    assert off.forecaster == "BayesJudge" and off.fit.choice_evaluation is None
    two = summarise_pairwise(table, seed=SEED, bias=False, choice_folds=2, confidence_level=0.9)
    assert two.choice["folds"] == 2 and two.options["choice_folds"] == 2
    assert two.posterior.credible_level == 0.9
    # the choice has its own seed streams: the model's posterior is the same with and without it
    assert _json(two.posterior.to_dict()["bias_mean"]) == _json(off.posterior.to_dict()["bias_mean"])
    with pytest.raises(Exception, match="choice-folds"):
        summarise_pairwise(table, choice_folds=1)


@pytest.mark.slow  # pairwise and a whole report per case
@pytest.mark.parametrize("flags", [["--no-choice"], ["--choice-folds", "2"]])
def test_the_report_takes_the_choice_options_of_pairwise(tmp_path, flags):
    table, _ = simulate_pairwise(40, biases=[1.0, 0.0], rng=3)
    path = tmp_path / "votes.csv"
    table.to_frame().to_csv(path, index=False)
    pw = runner.invoke(app, ["pairwise", str(path), "--seed", str(SEED), "--format", "json", *flags])
    assert pw.exit_code == 0, pw.output
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", "--pairwise", str(path), "-o", str(out), "-q", "--seed", str(SEED), *flags])
    assert rep.exit_code == 0, rep.output
    sec = json.loads((out / "report.json").read_text(encoding="utf-8"))["sections"]["pairwise"]["results"]
    cli = json.loads(pw.stdout)
    assert cli["choice"] == sec["choice"] and cli["pairs"] == sec["forecasts"]
    if flags == ["--no-choice"]:
        assert not sec["choice"]["made"] and sec["choice"]["off"] and sec["forecaster"] == "BayesJudge"
    else:
        assert sec["choice"]["folds"] == 2
