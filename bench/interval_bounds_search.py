"""Random search over small tables for agreement intervals that miss their estimate, have low > high,
or (bootstrap-t, jackknife) end on the Fisher z map's end -1 where -1 is no bound (issue 17).

Each case: 2-14 items, 2-4 raters, 2-4 ordered categories, half of the tables adversarial (raters
that disagree on purpose), 0/30/50% missing; every coefficient (Cohen and Scott with two raters)
and every interval method, 200 resamples. Prints the count of each kind of problem per
coefficient and method ("lo==-1" is reported only where -1 is not in ci.method's clipping note;
for AC1, Cohen, Scott and unweighted coefficients -1 is a true bound and such an end is right).

Rerun: .venv/bin/python bench/interval_bounds_search.py [N]   (N cases, default 150)
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

import voirdire.agreement as A
from voirdire.data import AnnotationTable

warnings.simplefilter("ignore")
NAMES = ["fleiss_kappa", "conger_kappa", "krippendorff_alpha", "gwet_ac1", "gwet_ac2", "bennett_s", "cohen_kappa",
         "scott_pi", "observed_agreement"]
METHODS = ["auto", "wald", "percentile", "bca", "studentized", "jackknife"]


def main(n_cases: int) -> None:
    bad: dict[tuple[str, str, str], int] = {}
    n_intervals = 0
    rng0 = np.random.default_rng(12345)
    for _ in range(n_cases):
        rng = np.random.default_rng(int(rng0.integers(2**31)))
        n, R, q = int(rng.integers(2, 15)), int(rng.integers(2, 5)), int(rng.integers(2, 5))
        if rng.random() < 0.5:
            X = (rng.integers(0, q, n)[:, None] + np.arange(R)[None, :] * int(rng.integers(1, q))) % q
        else:
            X = rng.integers(0, q, (n, R))
        obs = rng.random((n, R)) >= rng.choice([0, 0.3, 0.5])
        obs[:, :2] = True
        ii, rr = np.nonzero(obs)
        t = AnnotationTable.from_arrays([f"i{i}" for i in ii], [f"r{r}" for r in rr], X[ii, rr], scale="ordinal",
                                        categories=list(range(q)))
        for name in NAMES:
            if name in ("cohen_kappa", "scott_pi") and R != 2:
                continue
            for method in METHODS:
                try:
                    r = getattr(A, name)(t, n_resamples=200, rng=1, method=method, on_undefined="nan")
                except Exception as e:  # noqa: BLE001 - a search: count every failure
                    bad[(name, method, "exception " + type(e).__name__)] = bad.get((name, method, "exc"), 0) + 1
                    continue
                e, lo, hi = r.estimate, r.ci.low, r.ci.high
                if not (np.isfinite(e) and np.isfinite(lo) and np.isfinite(hi)):
                    continue
                n_intervals += 1
                probs = []
                if lo > hi:
                    probs.append("low > high")
                if not lo <= e <= hi:
                    probs.append("misses the estimate")
                if hi > 1:
                    probs.append("above 1")
                if lo == -1.0 and e > -1 and r.ci.method.startswith(("studentized", "jackknife")) and name in (
                        "fleiss_kappa", "conger_kappa", "krippendorff_alpha"):
                    probs.append("ends at -1, no bound of it")
                for p in probs:
                    bad[(name, method, p)] = bad.get((name, method, p), 0) + 1
    print(f"{n_cases} tables, {n_intervals} finite intervals")
    for k, v in sorted(bad.items()):
        print(*k, v)
    print("problems:", sum(bad.values()))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 150)
