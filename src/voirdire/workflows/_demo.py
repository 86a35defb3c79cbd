"""``hanna_agreement``: the agreement part of ``voirdire demo`` in one result (private).

The bundled HANNA story ratings: interval Krippendorff's alpha of the three humans, then of the humans
with each of the five LLM judges (:func:`voirdire.workflows.compare_raters`, one seed), over all criteria
pooled and per criterion.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from .._results import Result
from .._scores import REFERENCE_COEFFICIENT

__all__ = ["DEMO_COEFFICIENTS", "DemoAgreement", "hanna_agreement", "check_demo_folder", "write_demo_agreement"]

#: the coefficients the demo shows
DEMO_COEFFICIENTS = (REFERENCE_COEFFICIENT,)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DemoAgreement(Result):
    """The composite result of :func:`hanna_agreement`.

    Attributes
    ----------
    table : AnnotationTable
        HANNA, all criteria.
    overall : tuple of agreement groups
        The humans, then the humans with each judge (``label``, ``raters``, results by coefficient).
    per_criterion : tuple of (str, tuple of AgreementResult)
        Per criterion (sorted), alpha of the same groups.
    notes : tuple of str
    methods : str
        The interval methods of the pooled results.
    halves : tuple of float or None
        The smallest and largest half-width of the per-criterion intervals.
    seed, n_resamples : int
    elapsed_s : float
    """

    table: Any
    overall: tuple[Any, ...]
    per_criterion: tuple[tuple[str, tuple[Any, ...]], ...]
    notes: tuple[str, ...]
    methods: str
    halves: tuple[float, float] | None
    seed: int
    n_resamples: int
    elapsed_s: float

    @property
    def groups(self) -> list[tuple[str, Any]]:
        """(label, raters) of each group, in order."""
        return [(g.label, g.raters) for g in self.overall]

    def to_dict(self) -> dict[str, Any]:
        return {"data": "HANNA (bundled, MIT)", "seed": self.seed, "n_resamples": self.n_resamples,
                "overall": [g.to_dict() for g in self.overall],
                "per_criterion": {c: [r.to_dict() for r in row] for c, row in self.per_criterion}}


def check_demo_folder(out: Path | None) -> None:
    """Refuse (before any work) a demo folder ``out`` that exists and is not a folder."""
    from ..exceptions import InvalidParameterError

    if out is not None and out.exists() and not out.is_dir():
        raise InvalidParameterError(f"--out {out} is not a folder. Give a folder (created when missing).")


def write_demo_agreement(res: DemoAgreement, out: Path) -> Path:
    """Write ``res`` as ``out/agreement.json`` (the folder created when missing, the file atomically)."""
    import json

    from .._io import write_text
    from .._results import to_jsonable

    out.mkdir(parents=True, exist_ok=True)
    path = out / "agreement.json"
    write_text(path, json.dumps(to_jsonable(res.to_dict()), indent=2) + "\n")
    return path


def hanna_agreement(*, seed: int = 0, n_resamples: int = 1000) -> DemoAgreement:
    """Agreement on HANNA: the three humans, then the humans with each of the five LLM judges, pooled and per
    criterion (interval alpha, bootstrap over stories)."""
    import pandas as pd

    from ..datasets import hanna_path, load_hanna
    from ._compare import compare_raters

    t0 = time.perf_counter()

    def compare(t: Any) -> Any:
        return compare_raters(t, coefficients=list(DEMO_COEFFICIENTS), level="interval", n_resamples=n_resamples,
                              seed=seed)

    table = load_hanna()
    comp = compare(table)
    notes = list(comp.notes)
    rows = []
    for c in sorted(set(pd.read_csv(hanna_path(), usecols=["criterion"])["criterion"])):
        cc = compare(load_hanna(criterion=c))
        rows.append((c, tuple(g[REFERENCE_COEFFICIENT] for g in cc.groups)))
        notes += [f"{c}: {n}" for n in cc.notes]
    methods = ", ".join(sorted({str(r.ci.method) for g in comp.groups for r in g.results}))
    halves = [(r.ci.high - r.ci.low) / 2 for _, row in rows for r in row if r.ci.high == r.ci.high]
    return DemoAgreement(table=table, overall=tuple(comp.groups), per_criterion=tuple(rows), notes=tuple(notes),
                         methods=methods, halves=(min(halves), max(halves)) if halves else None, seed=int(seed),
                         n_resamples=int(n_resamples), elapsed_s=time.perf_counter() - t0)
