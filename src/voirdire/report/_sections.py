"""The report's sections (private). Each builder reads the :class:`Context`, calls public analyses
(imported lazily, so a missing analysis only removes its section) and fills a :class:`Writer`.

Builders raise :class:`NotAvailable` when the data or the installation do not allow the section.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _plots as plots
from ._build import Context, NotAvailable, Writer, require
from ._format import DASH, fmt_int, fmt_num, fmt_pct, is_missing
from ._model import ChecklistItem, Section

__all__ = ["SECTIONS", "build_checklist"]

MAX_CATEGORIES_SHOWN = 12


def _cats(table: Any) -> list[str]:
    return [str(c) for c in (table.scale.categories or ())]


# ----------------------------------------------------------------------------------------- data
def data_section(ctx: Context, w: Writer) -> None:
    """Who labelled what: labels, item coverage and abstentions per rater; label distributions."""
    t = ctx.table
    n_items = t.n_items
    counts = np.bincount(t.rater_idx, minlength=t.n_raters)
    abst = np.bincount(t.rater_idx[t.is_abstention], minlength=t.n_raters)
    raters = []
    for r in range(t.n_raters):
        raters.append({
            "rater": str(t.raters[r]), "role": str(t.roles[r]), "n_labels": int(counts[r]),
            "n_abstentions": int(abst[r]), "item_coverage": counts[r] / max(1, n_items),
            "abstention_share": (abst[r] / counts[r]) if counts[r] else None,
        })
    w.put("raters", raters)
    w.put("n_items", n_items)
    w.put("clustered", t.clusters is not None)
    w.put("n_clusters", None if t.clusters is None else int(np.unique(t.clusters).size))
    rows = []
    for k, r in enumerate(raters):
        rows.append([r["rater"], r["role"], w.int_(f"raters/{k}/n_labels"), w.num(f"raters/{k}/item_coverage"),
                     w.int_(f"raters/{k}/n_abstentions")])
    w.table("raters", "Labels per rater", ["rater", "role", "labels", "share of items labelled", "abstentions"], rows)
    order = list(range(t.n_raters))
    w.figure("labels-per-rater", "Labels per rater",
             plots.bar_chart("labels-per-rater", [raters[k]["rater"] for k in order],
                             [raters[k]["n_labels"] for k in order], groups=[raters[k]["role"] for k in order],
                             xlabel=f"labels (of {n_items:,} items)", title="Labels per rater"),
             caption="Blue: humans; red: LLM judges.")
    L = t.n_categories
    if 0 < L <= MAX_CATEGORIES_SHOWN:
        valid = ~t.is_abstention
        m = np.zeros((t.n_raters, L))
        np.add.at(m, (t.rater_idx[valid], t.codes[valid]), 1)
        tot = m.sum(axis=1, keepdims=True)
        shares = np.divide(m, tot, out=np.zeros_like(m), where=tot > 0)
        w.put("label_distribution", {"categories": _cats(t), "raters": [str(r) for r in t.raters],
                                     "counts": m.astype(int)})
        w.figure("label-distribution", "Label distribution per rater",
                 plots.stacked_shares("label-distribution", [str(r) for r in t.raters], shares, _cats(t),
                                      title="Label distribution per rater"),
                 caption="Share of each category among the rater's substantive labels (abstentions left out).")
    elif L > MAX_CATEGORIES_SHOWN:
        w.text(f"The scale has {L} distinct values; the per-category distribution is not drawn.", "note")
    if t.clusters is not None:
        w.text(f"Items are grouped into {fmt_int(np.unique(t.clusters).size)} clusters; every interval in this "
               "report resamples clusters, not items.", "note")


# ----------------------------------------------------------------------------------------- checklist
def build_checklist(ctx: Context, sections: list[Section]) -> list[ChecklistItem]:
    """The reporting checklist of METHODS.md §1, filled in from the sections' results."""
    t = ctx.table
    sec = {s.key: s for s in sections}
    items: list[ChecklistItem] = []
    sc = t.scale
    cats = _cats(t)
    cat_text = (", ".join(cats) if len(cats) <= MAX_CATEGORIES_SHOWN
                else f"{len(cats)} distinct values from {cats[0]} to {cats[-1]}")
    items.append(ChecklistItem(item="Judgment scale", value=f"{sc.level}, {len(cats)} categories",
                               detail=f"categories: {cat_text}", section="data"))
    tie = ("Ties between raters' labels are agreements; in the alt-test a tie between the judge's and the "
           "human's score counts as a win for both.")
    if ctx.pairwise is not None:
        tie += " Pairwise verdicts keep ties as a third outcome (A / tie / B)."
    items.append(ChecklistItem(item="Tie handling", value="ties are agreements", detail=tie))
    n_abst = int(np.count_nonzero(t.is_abstention))
    coverage = 1 - n_abst / max(1, t.n_labels)
    policy = _first_result(sec, "agreement", "abstention_policy") or "exclude"
    abst_vals = ", ".join(str(a) for a in sc.abstain) or "none declared"
    items.append(ChecklistItem(
        item="Abstention policy and coverage", value=f"{policy}; coverage {fmt_pct(coverage)}",
        detail=f"abstention values: {abst_vals}; {fmt_int(n_abst)} of {fmt_int(t.n_labels)} labels are abstentions. "
               "'exclude' compares only labels where neither side abstained.", section="data"))
    cm = sec.get("agreement")
    has_cm = cm is not None and cm.status == "ok" and "confusion" in cm.results
    items.append(ChecklistItem(
        item="Confusion matrix", value="shown" if has_cm else "not shown",
        detail=("per judge against the pooled human labels, in the Agreement section" if has_cm else
                ("the scale has too many distinct values for a confusion matrix" if t.n_categories > MAX_CATEGORIES_SHOWN
                 else "the agreement analysis is not available")), section="agreement" if has_cm else None))
    agg = "per item (one label per rater and item)"
    if t.clusters is not None:
        agg += f"; items grouped in {fmt_int(np.unique(t.clusters).size)} clusters, resampled as units"
    items.append(ChecklistItem(item="Aggregation level", value=agg))
    coefs = _first_result(sec, "agreement", "coefficient_summary")
    if coefs:
        value = "; ".join(coefs[:4]) + (" …" if len(coefs) > 4 else "")
        items.append(ChecklistItem(item="Coefficients with intervals", value=value,
                                   detail=f"{ctx.cl_pct} intervals, {ctx.n_resamples} bootstrap resamples "
                                          f"(seed {ctx.seed})", section="agreement"))
    else:
        items.append(ChecklistItem(item="Coefficients with intervals", value=DASH,
                                   detail="the agreement analysis is not available"))
    n_pairs = _first_result(sec, "agreement", "n_pairs_summary")
    items.append(ChecklistItem(item="n items and n pairs",
                               value=f"{fmt_int(t.n_items)} items; " + (n_pairs or "pairs: see Agreement"),
                               section="agreement" if n_pairs else "data"))
    return items


def _first_result(sec: dict[str, Section], key: str, name: str) -> Any:
    s = sec.get(key)
    if s is None or s.status != "ok":
        return None
    return s.results.get(name)


# ----------------------------------------------------------------------------------------- registry
Builder = Callable[[Context, Writer], None]

SECTIONS: list[tuple[str, str, Builder]] = [
    ("data", "Data", data_section),
]
