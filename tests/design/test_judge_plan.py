"""plan_judges: one answer per judge (settled / open / boundary), consistent with its parts."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from voirdire.data import read_annotations
from voirdire.design import plan_certification, plan_judges
from voirdire.exceptions import InvalidParameterError
from voirdire.validation import validate_sequential

DATA = Path("/work/shared/data/alttest")
for _p in Path(__file__).resolve().parents:
    if (_p / "shared" / "data" / "alttest").exists():
        DATA = _p / "shared" / "data" / "alttest"
        break
needs_data = pytest.mark.skipif(not (DATA / "framing").exists(), reason="shared/data not available")


@needs_data
def test_framing_slice_one_answer_per_judge() -> None:
    t = read_annotations(DATA / "framing").select(items=np.arange(300))
    r = plan_judges(t)
    assert [p.judge for p in r.plans] == list(t.judges)
    st = {p.judge: p for p in r.plans}
    # gpt-4o-mini sits on the margin on this slice: no finite budget, with its effect size in the reason
    b = st["gpt-4o-mini"]
    assert b.status == "boundary" and math.isinf(b.more_per_human) and abs(b.effect_size) < 0.05
    assert "no finite budget" in b.reason and "effect size" in b.reason
    for p in r.plans:
        if p.status == "open":
            assert p.method == "sequential expectation" and 0 < p.more_per_human < math.inf
            seq = validate_sequential(t, p.judge, rounds=np.zeros(t.n_labels), method="loo")
            assert p.more_per_human == seq.more_items[-1]
        if p.margin > 0:  # the closed form is the planner's own m*_cert
            assert p.m_cert == plan_certification(t, judge=p.judge).m_star
    assert r.to_frame().shape[0] == len(t.judges)


@needs_data
def test_settled_judge_needs_no_top_up() -> None:
    t = read_annotations(DATA / "lesion")
    r = plan_judges(t, ["gpt-4o"])
    p = r.plan("gpt-4o")
    assert p.status == "settled" and p.decision == "reject" and p.more_per_human == 0.0
    assert "no more labels" in p.reason
    with pytest.raises(InvalidParameterError, match="No plan"):
        r.plan("nobody")
