"""The ``--fail-on`` gate of a validation (private): who fails it, named as the gate's line names them."""

from __future__ import annotations

from typing import Any

from .._defaults import GATES

__all__ = ["gate_failures"]

#: A sequential rule's running decision read as a verdict: "continue" has not settled, it counts as inconclusive.
SEQUENTIAL_VERDICT = {"accept": "accept", "reject": "reject", "continue": "inconclusive"}


def gate_failures(res: Any, fail_on: str) -> list[str]:
    """What fails ``--fail-on fail_on`` (the rule of :data:`voirdire._defaults.GATES`) in a validation.

    Parameters
    ----------
    res : ValidationResult, GroupedValidation or a sequential validation
        :func:`validate_judges` (each failing judge as ``"JUDGE is VERDICT"``), :func:`validate_judges_by`
        (each failing (judge, group) cell as ``"JUDGE is VERDICT on GROUP"``) or
        :func:`sequential_validation` (each judge whose running decision fails, by name; see
        :data:`SEQUENTIAL_VERDICT`).
    fail_on : {"reject", "inconclusive"}
        The gate.

    Returns
    -------
    list of str
        Empty when the gate passes.
    """
    from ._groups import GroupedValidation
    from ._validate import ValidationResult

    fails = GATES[fail_on]
    if isinstance(res, GroupedValidation):
        return [f"{c.judge} is {c.verdict.decision} on {c.group}" for c in res.failing(fails)]
    if isinstance(res, ValidationResult):
        return [f"{j.judge} is {j.verdict.decision}" for j in res.judges if j.verdict.decision in fails]
    return [r.judge for r in res.results if SEQUENTIAL_VERDICT[r.decision] in fails]
