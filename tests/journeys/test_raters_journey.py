"""The annotator path (``voirdire raters``, then ``validate`` with and without the flagged annotator)
through the installed console script (issue 27, Build 3).

CeBaB stars (../shared/data/alttest/cebab_stars; skipped when absent): 711 reviews, 10 crowd
workers, six LLM judges, an AltTest folder. ``raters`` flags w40 (docs/diagnostics.md), lists the
contested items and writes them as an adjudication file; ``validate`` shows that mistral-v03's
acceptance rests on its win against w40; ``validate --exclude-rater w40`` re-runs without w40.

Asserted is what the user reads: each annotator's item count (against the file), the one flag, the
pool's alpha with and without w40 (raters' sentence and validate's reference line), the contested
items' label counts (against the file) and the adjudication file listing them in order, the
sensitivity line's omegas equal to the two validate runs'.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from ..conftest import shared_data
from ._cli import needs_console_script, number, table, voirdire

pytestmark = [pytest.mark.slow, needs_console_script]


def _loo(out: str) -> tuple[dict[str, int], str]:
    t = table(out, header_has="S(J;P)", title_has="mistral-v03: leave-one-human-out")
    m = re.search(r"omega = ([\d.]+) \((\d+) of (\d+) humans evaluated; accept when >= 0.50\) -> (ACCEPT|REJECT)", out)
    assert m, out
    return {k: int(r["items"]) for k, r in t.by("human").items()}, f"{m.group(1)} -> {m.group(4).lower()}"


def test_raters_flag_adjudicate_and_validate_without_the_outlier(tmp_path: Path) -> None:
    folder = shared_data("alttest", "cebab_stars")
    humans = json.loads((folder / "human_annotations.json").read_text())
    n_labels = {w: len(v) for w, v in humans.items()}
    per_item: dict[str, int] = {}
    for v in humans.values():
        for item in v:
            per_item[item] = per_item.get(item, 0) + 1

    # raters: who drags agreement down, which items are contested (--n-resamples: the name every other
    # bootstrapping command takes; raters had only --resamples)
    r = voirdire("raters", str(folder), "--top", "5", "--adjudicate", "adj.csv", "--n-resamples", "400", cwd=tmp_path)
    assert "711 items, 10 annotators in the pool, pool krippendorff_alpha (nominal) = 0.357" in r.flat, r
    rows = table(r.out, header_has="flag", title_has="Annotators").by("rater")
    assert {k: int(x["items"]) for k, x in rows.items()} == n_labels
    assert {k: x["flag"] for k, x in rows.items()} == {k: "OUTLIER" if k == "w40" else "-" for k in humans}
    assert "Outlier w40:" in r.flat and "the pool's krippendorff_alpha goes from 0.357 to 0.469" in r.flat
    contested = table(r.out, header_has="excess", title_has="Contested items")
    assert len(contested.rows) == 5
    for row in contested.dicts():
        assert int(row["labels"]) == per_item[row["item"]], row
    with open(tmp_path / "adj.csv", newline="") as fh:
        adj = [tuple(x.values()) for x in csv.DictReader(fh)]
    assert adj == [("adjudicator", it, f"rank {k}") for k, it in enumerate(contested.column("item"), start=1)]
    assert "Adjudication: adj.csv (5 items) and adj.manifest.json." in r.flat
    sens = re.search(r"mistral-v03: accept with every human \(omega ([\d.]+)\);.*?re-run without w40: omega ([\d.]+) -> "
                     r"(\w+)", r.flat)
    assert sens, r

    # validate: the judge's acceptance, and why it is fragile
    v = voirdire("validate", str(folder), "--judge", "mistral-v03", "--method", "loo", "--n-resamples", "200",
                 cwd=tmp_path)
    items, decision = _loo(v.out)
    assert items == n_labels                       # every review has two or more workers: all comparisons
    assert decision == f"{sens.group(1)} -> accept"
    assert "Flagged annotators: w40" in v.flat and "won mainly against the excluded annotators" in v.flat

    # validate without w40: the decision raters' sensitivity line announced, the pool's alpha it named
    w = voirdire("validate", str(folder), "--judge", "mistral-v03", "--method", "loo", "--n-resamples", "200",
                 "--exclude-rater", "w40", cwd=tmp_path)
    assert "711 items, 9 humans, 6 judges" in w.flat and "Excluded by the user: w40" in w.flat
    items2, decision2 = _loo(w.out)
    assert items2 == {k: n for k, n in n_labels.items() if k != "w40"}
    assert decision2 == f"{sens.group(2)} -> {sens.group(3)}"
    m = re.search(r"The humans' own alpha \(nominal\) = ([\d.]+) ", w.flat)
    assert m and number(m.group(1)) == 0.469
