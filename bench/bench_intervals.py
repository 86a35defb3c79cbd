"""Speed of the interval methods on 100,000 items (issue 13): ``method="auto"`` (BCa at this size,
percentile for ordinal alpha) against the percentile bootstrap, both with 2,000 resamples, in the
same run. Target: auto no slower than 2x percentile.

    .venv/bin/python bench/bench_intervals.py
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

import voirdire.agreement as A
from voirdire.data import AnnotationTable


def table(n: int, R: int = 4, seed: int = 0) -> AnnotationTable:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, n)
    X = np.where(rng.random((n, R)) < 0.6, truth[:, None], rng.integers(0, 5, (n, R)))
    obs = rng.random((n, R)) > 0.3
    obs[:, 0] = True
    ii, rr = np.nonzero(obs)
    return AnnotationTable.from_frame(pd.DataFrame({"item": ii, "rater": rr, "label": X[ii, rr]}),
                                      scale="interval", categories=[0, 1, 2, 3, 4])


def best_of(f, k: int = 3) -> float:
    out = []
    for _ in range(k):
        t0 = time.process_time()
        f()
        out.append(time.process_time() - t0)
    return min(out)


def main() -> None:
    t = table(100_000)
    print("100,000 items x 4 raters (30% missing), 5 categories, 2,000 resamples; CPU seconds, best of 3")
    print(f"{'coefficient':34s} {'percentile':>10s} {'auto':>8s} {'ratio':>6s}  auto chose")
    for name, kw in [("krippendorff_alpha", {"level": "nominal"}), ("krippendorff_alpha", {"level": "interval"}),
                     ("krippendorff_alpha", {"level": "ordinal"}), ("fleiss_kappa", {}), ("gwet_ac1", {}),
                     ("observed_agreement", {})]:
        f = getattr(A, name)
        p = best_of(lambda: f(t, rng=0, method="percentile", **kw))
        a = best_of(lambda: f(t, rng=0, **kw))
        chose = f(t, rng=0, **kw).ci.method
        label = name + (f" ({kw['level']})" if kw else "")
        print(f"{label:34s} {p:10.3f} {a:8.3f} {a / p:6.2f}  {chose}")
    t2 = table(100_000)
    p = best_of(lambda: A.agreement(t2, rng=0, method="percentile"))
    a = best_of(lambda: A.agreement(t2, rng=0))
    print(f"{'agreement() default set':34s} {p:10.3f} {a:8.3f} {a / p:6.2f}")


if __name__ == "__main__":
    main()
