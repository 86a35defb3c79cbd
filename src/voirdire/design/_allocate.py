"""Allocation designs for the next round of human labels, and assignment files."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from .. import _options
from .._checks import check_choice, check_positive_int
from .._io import atomic_outputs
from .._safe import csv_cell, csv_frame, shown
from ..data import AnnotationTable, argilla_records, label_studio_tasks
from ..exceptions import InvalidParameterError
from .._designs import AssignmentResult  # one layer down: diagnostics builds it too (adjudication rounds)
from ._core import DESIGNS, LABEL_DEPENDENT, draw_design, item_modes
from ._overlap import find_primary

__all__ = ["AssignmentResult", "allocate", "write_assignments", "escape_formula"]

_FUNC = "allocate"


def _seed_from(rng: int | np.random.Generator | None) -> tuple[np.random.Generator, int | None]:
    if isinstance(rng, np.random.Generator):
        return rng, None
    if rng is None:
        seed = int(cast(int, np.random.SeedSequence().entropy) % (2**63))
    elif isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        seed = int(rng)
    else:
        raise InvalidParameterError(
            f"The 'rng' parameter of {_FUNC} must be an int, a numpy Generator or None. Got {type(rng).__name__}.")
    return np.random.default_rng(seed), seed


def allocate(
    table: AnnotationTable,
    *,
    design: str = "strat",
    n_per_rater: int | Mapping[str, int],
    raters: Sequence[str] | None = None,
    primary: str | None = None,
    rng: int | np.random.Generator | None = None,
) -> AssignmentResult:
    """The (rater, item) assignments for the next round of human labels.

    Designs (METHODS §2; tasks are fixed before each rater starts):

    - ``random``: each rater draws ``m`` items uniformly, independently of the others;
    - ``strat``: strata are the primary human's labels; each rater draws per stratum in
      proportion to stratum size (``floor(m N_h / N)``, the remainder one each to the larger
      strata), uniformly within a stratum. Without a primary (strata: the per-item mode), each rater
      takes first the items another human already labelled (or an earlier rater of this round was
      given), then the rest, items no judge labelled last: the leave-one-out rule needs the judge,
      the held-out human and another human on an item, and independent draws would give most items
      to one human each;
    - ``panel``: one stratified panel shared by every rater (maximal rater-rater overlap);
    - ``seq-refined``: raters in turn, strata = per-item mode of all human labels so far;
    - ``seq-coverage``: as ``seq-refined``, but inside a stratum the items with the fewest human
      labels (counting this round's earlier assignments) come first.

    Parameters
    ----------
    table : AnnotationTable
        The labels collected so far (humans and judges).
    design : {"random", "strat", "panel", "seq-refined", "seq-coverage"}, default "strat"
        The allocation design.
    n_per_rater : int or mapping of str to int
        Items each rater gets (one number for all, or per rater).
    raters : sequence of str, optional
        Who gets work, in the order they work. Names may be new raters. Default: every human
        except the primary.
    primary : str, optional
        The human whose labels define the strata. Default: the human who labelled every item;
        when no human did, strata are the per-item mode of all human labels (a pooled first pass).
    rng : int, numpy.random.Generator or None
        Seed or generator. An int (or the seed drawn when None) is recorded in the result.

    Returns
    -------
    AssignmentResult
        ``to_frame()`` is the assignment table; :func:`write_assignments` writes it with a manifest.

    Raises
    ------
    InvalidParameterError
        Unknown design, bad budget, a primary that is not a human.
    InfeasiblePlanError
        A rater needs more items than are open to them (items a rater already labelled are
        never assigned to them again; a panel needs items open to every rater).

    Notes
    -----
    Between rounds the sequential designs can only use labels already collected: the strata of
    ``seq-refined`` come from the labels in ``table``, and ``seq-coverage`` additionally counts
    the items given to earlier raters of this round. In simulation (:func:`voirdire.simulate.subsample`)
    each rater's labels are revealed before the next one is assigned. Every design but
    ``random`` chooses items using labels, which breaks the label-independent-mask assumption of
    the variance results; report it (``label_dependent``).

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> from voirdire.design import allocate
    >>> t = load_hanna(criterion="Coherence")
    >>> a = allocate(t, design="strat", n_per_rater=40, raters=["new_1", "new_2"], rng=7)
    >>> a.to_frame().groupby("rater").size().tolist()
    [40, 40]
    >>> a.label_dependent
    True
    """
    if not isinstance(table, AnnotationTable):
        raise InvalidParameterError(
            f"The 'table' parameter of {_FUNC} must be an AnnotationTable. Got {type(table).__name__} instead.")
    design = check_choice(design, "design", _FUNC, DESIGNS)
    gen, seed = _seed_from(rng)
    present = table.dense()
    L = table.n_categories
    if primary is None:
        primary = find_primary(table, (present >= 0) & (present < L))
    else:
        pi = table.rater_index(primary)
        if table.roles[pi] != "human":
            raise InvalidParameterError(f"The primary {primary!r} must be a human rater; it is a judge.")
    humans = list(table.humans)
    if raters is None:
        raters = [h for h in humans if h != primary]
        if not raters:
            raise InvalidParameterError(
                "No secondary humans to assign work to: pass raters=[...] (new names are fine).")
    raters = [str(r) for r in raters]
    if len(set(raters)) != len(raters):
        raise InvalidParameterError(f"The 'raters' parameter of {_FUNC} repeats a name: {raters}.")
    for r in raters:
        if r in set(table.raters.tolist()) and table.roles[table.rater_index(r)] != "human":
            raise InvalidParameterError(f"Rater {r!r} is a judge; assignments are for human raters.")
    if isinstance(n_per_rater, Mapping):
        missing = [r for r in raters if r not in n_per_rater]
        if missing:
            raise InvalidParameterError(f"The 'n_per_rater' mapping of {_FUNC} has no budget for {missing}.")
        sizes = [check_positive_int(n_per_rater[r], "n_per_rater", _FUNC) for r in raters]
    else:
        sizes = [check_positive_int(n_per_rater, "n_per_rater", _FUNC)] * len(raters)

    hcols = table.human_idx
    hcodes = present[:, hcols]
    if primary is not None:
        strata = present[:, table.rater_index(primary)].astype(np.int64)
    else:
        strata = item_modes(hcodes, L).astype(np.int64)
    strata = np.where((strata >= 0) & (strata < L), strata, -1)
    exclude = np.zeros((len(raters), table.n_items), dtype=bool)
    for t, r in enumerate(raters):
        if r in set(table.raters.tolist()):
            col = present[:, table.rater_index(r)]
            exclude[t] = col >= 0
    overlap_first = design == "strat" and primary is None  # without a primary, overlap must be created
    jcols = [table.rater_index(j) for j in table.judges]
    judged = np.asarray(((present[:, jcols] >= 0) & (present[:, jcols] < L)).any(axis=1)) if jcols else None
    chosen = draw_design(design, n_items=table.n_items, sizes=sizes, strata=strata, known=hcodes,
                         n_categories=L, exclude=exclude if exclude.any() else None, rng=gen, names=raters,
                         overlap=((hcodes >= 0) & (hcodes < L)).sum(axis=1) if overlap_first else None,
                         judged=judged if overlap_first else None)
    # the stratum each item was drawn from, under the design's own stratification signal
    if design in ("seq-refined", "seq-coverage"):
        st_label = item_modes(hcodes, L, prefer=strata)
    else:
        st_label = strata
    cats = list(table.scale.categories or ())

    def name(c: int) -> str:
        return "none" if c < 0 else str(cats[c])

    rater_col = np.concatenate([np.full(c.size, r, dtype=object) for r, c in zip(raters, chosen)]) \
        if chosen else np.array([], dtype=object)
    idx = np.concatenate(chosen) if chosen else np.array([], dtype=np.int64)
    item_col = table.items[idx].astype(object)
    stratum_col = np.array([name(int(c)) for c in st_label[idx]], dtype=object)
    u, cnt = np.unique(strata, return_counts=True)
    return AssignmentResult(
        design=design, seed=seed, raters=tuple(raters), n_per_rater=tuple(int(s) for s in sizes),
        rater=rater_col, item=item_col, stratum=stratum_col, primary=primary,
        strata={name(int(a)): int(b) for a, b in zip(u, cnt)}, label_dependent=design in LABEL_DEPENDENT,
        source_fingerprint=table.fingerprint(), n_items=table.n_items,
    )


# one guard for CSV cells (voirdire._safe.csv_cell); kept under this public name
escape_formula = csv_cell


#: what :func:`write_assignments` writes: a table, or the next round as the annotation tool imports it
WRITE_FORMATS = _options.ASSIGNMENT_FORMATS  # the one registry of option values


def write_assignments(result: AssignmentResult, path: str | os.PathLike[str], *,
                      format: str | None = None,
                      inputs: Sequence[str | os.PathLike[str] | None] = (),
                      item_data: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[Path, Path]:
    """Write the assignment table (CSV or JSONL) and a manifest next to it.

    The manifest ``<path stem>.manifest.json`` records the design, the seed, the source table's
    fingerprint, the voirdire version, the budgets and the strata. In CSV output every cell a
    spreadsheet would run as a formula is escaped (see :func:`escape_formula`); JSONL keeps the
    exact values (JSON is not evaluated by spreadsheets).

    Parameters
    ----------
    result : AssignmentResult
        From :func:`allocate`.
    path : path-like
        Output file; the format follows the extension (``.csv``, ``.jsonl``) unless ``format``
        is given.
    format : {"csv", "jsonl", "label-studio", "argilla"}, optional
        Output format: the assignment table, or the next round as the tool imports it: Label
        Studio tasks JSON (one task per item, ``data.item`` and ``data.assigned_to``) or Argilla v2
        records (``fields.item``, ``metadata.assigned_to``; the manifest gives the dataset's
        ``distribution.min_submitted``). Reading the tool's export back gives the same items and
        annotators.
    inputs : sequence of path-like
        Files this assignment was computed from: writing over one of them is refused.
    item_data : mapping, optional
        Item id -> the item's content in the tool (Label Studio task ``data``, Argilla record
        ``fields``), e.g. :func:`voirdire.data.read_item_data` of the export the round was drawn
        from: carried into the tasks or records, so the imported batch shows annotators the text
        (``voirdire assign EXPORT.json --to label-studio`` does this). Ignored for CSV and JSONL.

    Returns
    -------
    (Path, Path)
        The assignment file and the manifest.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from voirdire.datasets import load_hanna
    >>> from voirdire.design import allocate, write_assignments
    >>> a = allocate(load_hanna(criterion="Empathy"), design="random", n_per_rater=5, raters=["ann"], rng=1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out, man = write_assignments(a, pathlib.Path(d) / "next.csv")
    ...     json.loads(man.read_text())["design"], len(out.read_text().splitlines())
    ('random', 6)
    """
    p = Path(path)
    fmt = format or {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(p.suffix.lower())
    if fmt not in WRITE_FORMATS:
        raise InvalidParameterError(
            f"Cannot tell the output format of {shown(str(p))}: use a .csv or .jsonl name, or format= one of "
            f"{list(WRITE_FORMATS)} (--to).")
    df = result.to_frame()
    man = result.manifest()
    if fmt in _options.ANNOTATION_TOOLS:
        carried = sum(1 for it in dict.fromkeys(str(i) for i in result.item) if (item_data or {}).get(it))
        man["n_items_with_content"] = carried  # items whose source task data / fields were carried over
    man.update({"file": p.name, "format": fmt,
                "formula_escaping": ("cells starting with = + - @ tab or CR (not plain numbers) are prefixed with '"
                                     if fmt == "csv" else "none (JSON values are exact)"),
                "created_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
    mp = p.with_name(p.stem + ".manifest.json")
    # both files appear complete or not at all; the manifest is replaced after its data
    if fmt == "csv":
        text = csv_frame(df).to_csv(index=False, lineterminator="\n")
    elif fmt == "label-studio":
        text = json.dumps(label_studio_tasks(result, item_data=item_data), indent=1, ensure_ascii=False) + "\n"
        man["import"] = ("Label Studio: import this file into a project (one task per item); data.assigned_to lists "
                         "who labels it: filter the Data Manager on it, or assign the filtered tasks (Enterprise). "
                         "Read the export back with: voirdire ... EXPORT.json (data.item is the item id).")
    elif fmt == "argilla":
        text = json.dumps(argilla_records(result, item_data=item_data), indent=1, ensure_ascii=False) + "\n"
        per_item = df.groupby("item", sort=False)["rater"].size()
        man["import"] = ("Argilla v2: dataset.records.from_json(FILE) logs the records (fields.item is the item id; "
                         "add a TextField 'item' and a TermsMetadataProperty 'assigned_to' to the settings); each "
                         "annotator filters on metadata.assigned_to. Read dataset.records.to_json(...) back with "
                         "voirdire.")
        man["argilla_distribution"] = {"strategy": "overlap", "min_submitted": int(per_item.max()) if len(per_item) else 1}
    else:
        text = "".join(json.dumps({k: (v if isinstance(v, (str, int, float)) else str(v)) for k, v in rec.items()},
                                  ensure_ascii=False) + "\n" for rec in df.to_dict(orient="records"))
    man["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()  # ties the manifest to this very file
    with atomic_outputs(inputs=inputs) as files:
        with files.open(p) as fh:
            fh.write(text)
        with files.open(mp) as fh:
            fh.write(json.dumps(man, indent=2) + "\n")
    return p, mp
