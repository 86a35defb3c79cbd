"""CPU seconds of each analysis of ``validate_judges`` on one file (issue 18; bench/scale.md, fifth and
seventh sessions).

Run:  .venv/bin/python bench/validate_phases.py FILE [--judge judge] [--one-thread]

Prints the CPU (``time.process_time``, all threads; wall in brackets) of the imports (the CLI's own
and the analyses') and of reading FILE; for the whole
``validate_judges`` call its wall time, the process's CPU and the load average; for each analysis
inside it (the humans' reference, the leave-one-out rule, the alt-test, the annotator check) the
CPU of the thread it ran on (``time.thread_time``: the reference and the annotator check run on a
second thread beside the judges' tests on large tables; ``--one-thread`` runs them one after the
other) and its wall time; then the process's peak resident memory and the decisions.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

T = time.process_time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--judge", default="judge")
    ap.add_argument("--one-thread", action="store_true", help="the analyses one after the other")
    args = ap.parse_args()
    t0, w0 = T(), time.perf_counter()
    import voirdire.cli  # noqa: F401 - what `voirdire validate` imports before it parses its options
    import voirdire.diagnostics as D
    import voirdire.validation as VA
    import voirdire.workflows._validate as V
    from voirdire.data import read_annotations
    from voirdire.workflows import validate_judges
    print("imports", round(T() - t0, 2), f"(wall {time.perf_counter() - w0:.2f})")
    t0, w0 = T(), time.perf_counter()
    t = read_annotations(args.file, judges=[args.judge])
    print("read", round(T() - t0, 2), f"(wall {time.perf_counter() - w0:.2f})", f"{t.n_items:,} items")
    acc: dict[str, list[float]] = {}
    if args.one_thread:
        V.SIDE_THREAD_LABELS = 2**62

    def wrap(mod, name):  # validate_judges looks these names up in their modules at call time
        f = getattr(mod, name)

        def g(*a, **k):
            s, w = time.thread_time(), time.perf_counter()
            out = f(*a, **k)
            c = acc.setdefault(name, [0.0, 0.0])
            c[0] += time.thread_time() - s
            c[1] += time.perf_counter() - w
            return out
        setattr(mod, name, g)

    for m, n in [(VA, "leave_one_out"), (VA, "alt_test"), (V, "human_reference"), (D, "rater_diagnostics")]:
        wrap(m, n)
    t0, w0 = T(), time.perf_counter()
    res = validate_judges(t, [args.judge], seed=0)
    print(f"validate_judges wall {time.perf_counter() - w0:.2f} s, CPU {T() - t0:.2f} s, load {os.getloadavg()[0]:.2f}")
    print("  per analysis (thread CPU s, wall s):", {k: (round(v[0], 2), round(v[1], 2)) for k, v in acc.items()})
    print("peak MiB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
    j = res.judges[0]
    print("verdict", j.verdict.decision, "| leave-one-out", j.leave_one_out.decision, j.leave_one_out.decision_stability,
          j.leave_one_out.interval_method, "| alt-test", j.alt_test.decision, j.alt_test.decision_stability)


if __name__ == "__main__":
    main()
