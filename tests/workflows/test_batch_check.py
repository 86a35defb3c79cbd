"""``check_batch`` and the advice it guards (issue 28): a suggested ``assign`` batch is simulated on the
table's own structure before any view prints it, and a batch the simulation finds short is never suggested."""

from __future__ import annotations

import math
import types

import numpy as np
import pandas as pd
import pytest

from voirdire.data import AnnotationTable
from voirdire.design import allocate
from voirdire.workflows import advise, check_batch, comparison_capacity

N_ITEMS, ABSTAIN = 400, 0.5


def _table(abstain: float) -> AnnotationTable:
    # 400 items, a judge on all of them, three humans each on a random quarter; every human answers
    # "cannot assess" (category 2, declared as the abstention) on a share `abstain` of their rows
    rng = np.random.default_rng(3)
    rows = [(f"i{k}", "judge", int(rng.integers(0, 2))) for k in range(N_ITEMS)]
    for h in ("h1", "h2", "h3"):
        for k in rng.choice(N_ITEMS, size=N_ITEMS // 4, replace=False):
            rows.append((f"i{k}", h, 2 if rng.random() < abstain else int(rng.integers(0, 2))))
    df = pd.DataFrame(rows, columns=["item", "rater", "label"])
    return AnnotationTable.from_frame(df, judges=["judge"], categories=[0, 1], abstain=[2])


def _open_verdict():
    reason = types.SimpleNamespace(code="unstable", method="leave_one_out", blocking=True)
    return types.SimpleNamespace(decision="inconclusive", reasons=(reason,))


def _plan(t: AnnotationTable, more: float):
    return types.SimpleNamespace(status="open", more_per_human=more, decision="continue", reason="",
                                 open_humans=tuple(str(h) for h in t.humans))


def _labelled_by_the_same_humans(t: AnnotationTable, batch, seed: int) -> AnnotationTable:
    """The batch labelled as these humans label: a substantive label with their own abstention rate."""
    rng = np.random.default_rng(seed)
    df = t.to_frame()[["item", "rater", "label"]]
    new = pd.DataFrame({"item": [str(i) for i in batch.item], "rater": [str(r) for r in batch.rater]})
    new["label"] = np.where(rng.random(len(new)) < ABSTAIN, 2, rng.integers(0, 2, len(new)))
    return AnnotationTable.from_frame(pd.concat([df, new]), judges=["judge"], categories=[0, 1], abstain=[2])


def test_a_suggested_batch_gives_the_comparisons_when_humans_abstain():
    # half the humans' answers are abstentions, which make no comparison: a batch of `need` items per
    # assignee gives about need / 2 new comparisons. The advice must suggest a batch that, labelled by the
    # same humans, gives about `need` (without the simulation check it suggested `need` items per assignee)
    t = _table(ABSTAIN)
    need = 20
    adv = advise(t, "judge", _open_verdict(), plan=_plan(t, need), seed=0)
    assert adv.status == "label_more" and adv.check is not None and adv.check.enough
    assert adv.n_per_rater is not None and adv.n_per_rater > need
    assert "checked by simulation" in adv.sentence and adv.command() is not None
    batch = allocate(t, design=adv.design, n_per_rater=adv.n_per_rater, rng=adv.seed)
    _, before, _ = comparison_capacity(t, "judge")
    gains = [comparison_capacity(_labelled_by_the_same_humans(t, batch, s), "judge")[1] - before for s in range(20)]
    assert np.mean(gains, axis=0).min() >= 0.9 * need


def test_the_check_counts_only_substantive_labels():
    t0, t1 = _table(0.0), _table(ABSTAIN)
    c0 = check_batch(t0, "judge", design="strat", n_per_rater=20, seed=0, need=20)
    c1 = check_batch(t1, "judge", design="strat", n_per_rater=20, seed=0, need=20)
    assert c0 is not None and c1 is not None
    assert c0.enough and c0.share_enough == 1.0  # no abstention: the drawn batch, as assign draws it
    assert c1.fewest < 0.75 * c0.fewest and not c1.enough
    again = check_batch(t1, "judge", design="strat", n_per_rater=20, seed=0, need=20)
    assert again == c1  # seeded


def test_no_suggestion_when_the_check_fails(monkeypatch):
    import voirdire.workflows._planning as planning

    t = _table(0.0)

    def short(*args, **kwargs):
        c = check_batch(*args, **kwargs)
        return None if c is None else type(c)(**{**{f: getattr(c, f) for f in c.__dataclass_fields__},
                                                 "fewest": 0.0, "enough": False})

    monkeypatch.setattr(planning, "check_batch", short)
    adv = advise(t, "judge", _open_verdict(), plan=_plan(t, 20), seed=0)
    assert adv.status == "label_more" and adv.command() is None and adv.design is None
    assert "not enough" in adv.sentence and "voirdire assign" not in adv.sentence
    assert math.isfinite(adv.more_comparisons)


def test_the_check_refuses_a_batch_that_cannot_be_drawn():
    t = _table(0.0)
    assert check_batch(t, "judge", design="panel", n_per_rater=N_ITEMS, seed=0, need=1) is None


def test_no_batch_when_an_accept_cannot_stand():
    # both tests accept but the humans' alpha is below the floor (HANNA Complexity's Beluga-13B): labels of
    # this judge cannot make the accept stand, so no batch is suggested; a test leaning to reject keeps one
    t = _table(0.0)

    def verdict(*codes):
        rs = [types.SimpleNamespace(code="unstable", method="alt_test", blocking=True),
              types.SimpleNamespace(code="reference_unreliable", method="reference", blocking=False)]
        rs += [types.SimpleNamespace(code=c, method=m, blocking=False) for c, m in codes]
        return types.SimpleNamespace(decision="inconclusive", reasons=tuple(rs))

    both = verdict(("test_accepts", "leave_one_out"), ("test_accepts", "alt_test"))
    adv = advise(t, "judge", both, alt_more=20, seed=0)
    assert adv.status == "not_labels" and adv.command() is None and "an accept cannot stand" in adv.sentence
    mixed = verdict(("test_accepts", "leave_one_out"), ("test_rejects", "alt_test"))
    assert advise(t, "judge", mixed, alt_more=20, seed=0).status == "label_more"
