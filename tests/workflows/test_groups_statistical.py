"""Statistical tests of the rules across groups (issue 31's goals; fixed seeds, marked ``statistical``).

* A judge as good as the humans on 80% of the items and clearly worse on a 20% slice (right with
  probability 0.55 instead of 0.9; 300-1,000 items, 3 humans): the slice is flagged in at least 90%
  of 200 simulated tables; with no planted failure, some slice is flagged in at most 5%.
* The gate over groups with every group exactly on the alt-test's margin (6 criteria): the judge is
  accepted on all groups in at most 5% of 200 simulated tables, and (--group-error fwer) accepted
  on any group in at most 5%.
``bench/bench_slices.py`` prints the same rates with more settings.
"""

from __future__ import annotations

import numpy as np
import pytest

from voirdire._simulation.slices import advantage_gap, margin_frame, slice_failure_frame
from voirdire.data._groups import split_groups
from voirdire.workflows import validate_judges_by

pytestmark = pytest.mark.statistical
N_TABLES = 200


def _grouped(df, column):
    return split_groups(df, np.arange(len(df)) + 2, [column], src="sim", item="item", rater="rater", label="label",
                        role="role")


def _flags(fail: bool, seed: int) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    planted = other = 0
    for _ in range(N_TABLES):
        n = int(rng.integers(300, 1001))
        res = validate_judges_by(_grouped(slice_failure_frame(n, rng, fail=fail), "slice"), ["judge"],
                                 n_resamples=50, check_raters=False)
        flagged = {c.group for c in res.cells if c.slice_flag}
        planted += "E" in flagged
        other += bool(flagged - {"E"}) if fail else bool(flagged)
    return planted, other


def test_planted_slice_failure_is_flagged_in_90_percent():
    planted, other = _flags(True, 31)
    assert planted >= 0.9 * N_TABLES, planted
    assert other <= 0.05 * N_TABLES, other      # the other, clean, slices are not flagged with it


def test_no_planted_failure_is_flagged_in_at_most_5_percent():
    _, flagged = _flags(False, 32)
    assert flagged <= 0.05 * N_TABLES, flagged


def test_gate_over_groups_on_the_margin_accepts_rarely():
    assert abs(advantage_gap(0.9, 0.65) - 0.2) < 1e-12   # every group exactly on the margin epsilon = 0.2
    rng = np.random.default_rng(33)
    on_all = on_any = 0
    for _ in range(N_TABLES):
        res = validate_judges_by(_grouped(margin_frame(200, 6, rng), "criterion"), ["judge"], method="alt-test",
                                 group_error="fwer", n_resamples=50, check_raters=False, slice_check=False)
        d = [c.verdict.decision for c in res.cells]
        on_all += all(x == "accept" for x in d)
        on_any += "accept" in d
    assert on_all <= 0.05 * N_TABLES, on_all
    assert on_any <= 0.05 * N_TABLES, on_any
