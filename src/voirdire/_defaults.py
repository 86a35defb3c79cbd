"""Defaults shared by the workflows and the command line, in a module that imports nothing heavy.

The command line reads them to build its options; ``voirdire --help`` must not load numpy or pandas.
"""

from __future__ import annotations

__all__ = ["DEFAULT_N_RESAMPLES", "GATES", "REPORT_MIN_N_RESAMPLES"]

#: Bootstrap resamples behind every interval and decision-stability figure, in every command.
DEFAULT_N_RESAMPLES = 2000

#: The fewest resamples the validation report takes (its every section has intervals; 0 = none is refused).
REPORT_MIN_N_RESAMPLES = 10

#: The gate rule (``--fail-on``): which verdicts fail a judge, read by ``validate`` (its exit code), the
#: Markdown and JUnit summaries and the grouped grid; declared once.
GATES: dict[str, tuple[str, ...]] = {"reject": ("reject",), "inconclusive": ("reject", "inconclusive")}
