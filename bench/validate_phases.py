"""CPU seconds of each analysis of ``validate_judges`` on one file (issue 18; bench/scale.md, fifth session).

Run:  .venv/bin/python bench/validate_phases.py FILE [--judge judge]

Prints the CPU (``time.process_time``) of the imports, of reading FILE, of the whole
``validate_judges`` call and of each analysis inside it (the humans' reference, the leave-one-out
rule, the alt-test, the annotator check), the process's peak resident memory and the decisions.
"""

from __future__ import annotations

import argparse
import resource
import time

T = time.process_time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--judge", default="judge")
    args = ap.parse_args()
    t0 = T()
    import scipy.stats  # noqa: F401 - the alt-test's import, counted with the rest

    import voirdire.diagnostics as D
    import voirdire.validation as VA
    import voirdire.workflows._validate as V
    from voirdire.data import read_annotations
    from voirdire.workflows import validate_judges
    print("imports", round(T() - t0, 2))
    t0 = T()
    t = read_annotations(args.file, judges=[args.judge])
    print("read", round(T() - t0, 2), f"{t.n_items:,} items")
    acc: dict[str, float] = {}

    def wrap(mod, name):  # validate_judges looks these names up in their modules at call time
        f = getattr(mod, name)

        def g(*a, **k):
            s = T()
            out = f(*a, **k)
            acc[name] = acc.get(name, 0.0) + T() - s
            return out
        setattr(mod, name, g)

    for m, n in [(VA, "leave_one_out"), (VA, "alt_test"), (V, "human_reference"), (D, "rater_diagnostics")]:
        wrap(m, n)
    t0 = T()
    res = validate_judges(t, [args.judge], seed=0)
    print("validate_judges", round(T() - t0, 2), {k: round(v, 2) for k, v in acc.items()})
    print("peak MiB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
    j = res.judges[0]
    print("verdict", j.verdict.decision, "| leave-one-out", j.leave_one_out.decision, j.leave_one_out.decision_stability,
          j.leave_one_out.interval_method, "| alt-test", j.alt_test.decision, j.alt_test.decision_stability)


if __name__ == "__main__":
    main()
