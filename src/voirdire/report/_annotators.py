"""The report's "Annotators" section (private): each annotator against the pool, outlier flags,
the contested items, and each judge's leave-one-out decision again without flagged annotators."""

from __future__ import annotations

from typing import Any

from ..workflows import diagnose_annotators
from ._build import Context, NotAvailable, Writer

__all__ = ["annotators_section", "TOP_ITEMS"]

TOP_ITEMS = 15


def annotators_section(ctx: Context, w: Writer) -> None:
    """Per-annotator diagnostics (:func:`voirdire.diagnostics.rater_diagnostics`), contested items
    (:func:`~voirdire.diagnostics.item_diagnostics`) and the sensitivity of each judge's
    leave-one-out decision to flagged annotators (:func:`~voirdire.diagnostics.loo_sensitivity`)."""
    t = ctx.table
    humans = list(ctx.humans)
    if len(humans) < 2:
        raise NotAvailable("annotator diagnostics need at least two human annotators.")
    # the validation workflow's own annotator check (one computation for both sections) when it ran:
    # judges named, three or more humans
    shared = None
    if ctx.judges and len(humans) >= 3:
        from ..exceptions import VoirdireError
        from ._sections import shared_validation

        try:
            shared = shared_validation(ctx, w)
        except VoirdireError:
            shared = None  # the validation section reports why; the annotators are checked here
    summary = w.call(diagnose_annotators, t, list(ctx.judges), validation=shared,
                     confidence_level=ctx.confidence_level, n_resamples=ctx.n_resamples, seed=ctx.seed,
                     epsilon=ctx.epsilon)
    d = summary.raters
    r = w.put("raters", d)
    w.text("Each annotator against the rest of the pool. S(k;pool) is the annotator's agreement with the other "
           f"annotators' labels on the same items ({d.score}), the bar a judge must clear against this annotator in "
           "the leave-one-out rule; gap is S minus the other annotators' median; delta is the pool's "
           f"{d.coefficient} without the annotator minus with everyone (positive: the pool agrees more without "
           "them); DS is the Dawid-Skene accuracy and MACE the probability of not spamming. " + d.rule, "note")
    rows = []
    for k, name in enumerate(d.raters):
        rows.append([name, w.int_(f"raters/n_labels/{k}"), w.int_(f"raters/n_items/{k}"), w.num(f"raters/s/{k}"),
                     w.ci(f"raters/s_low/{k}", f"raters/s_high/{k}"), w.num(f"raters/gap/{k}"),
                     w.p(f"raters/p_value/{k}"), w.num(f"raters/delta/{k}"),
                     w.ci(f"raters/delta_low/{k}", f"raters/delta_high/{k}"), w.num(f"raters/ds_accuracy/{k}", 2),
                     w.num(f"raters/mace_competence/{k}", 2),
                     "outlier" if r["flagged"][k] else ("-" if r["evaluated"][k] else "not tested")])
    w.table("raters", f"Annotators (pool {d.coefficient} = {d.pool_estimate:.3f})",
            ["annotator", "labels", "shared items", "S(k;pool)", f"{ctx.cl_pct} CI", "gap", "p", "delta pool",
             f"{ctx.cl_pct} CI", "DS", "MACE", "flag"], rows)
    from . import _plots as plots

    w.figure("annotators", "Each annotator's agreement with the rest of the pool",
             plots.forest_plot(f"{w.key}-annotators", list(d.raters), list(r["s"]), list(r["s_low"]),
                               list(r["s_high"]),
                               groups=["other" if r["flagged"][k] else "human" for k in range(len(d.raters))],
                               xlabel=f"S(k;pool), {d.score} ({ctx.cl_pct} bootstrap intervals)",
                               title="S(k;pool) per annotator"),
             caption="Grey: flagged as an outlier. An annotator whose interval sits left of the others' agrees "
                     "less with the pool than the pool's other members do.")
    flagged = d.flagged_raters
    if flagged:
        for name, why in zip(d.raters, d.reason):
            if name in flagged and why:
                w.text(f"Outlier {name}: {why}.", "warning")
        w.text("A flagged annotator may be the only one who is right: read their contested items before retraining, "
               "re-weighting or dropping them. Nothing is dropped here; the validation below is only shown again "
               "without them.", "note")
    else:
        w.text("No annotator is flagged.")
    if d.note:
        w.text(f"Note: {d.note}.", "note")
    # ---- each judge's leave-one-out decision without the flagged annotators (a sensitivity line)
    sens: list[dict[str, Any]] = []
    if flagged and ctx.judges:
        for j in ctx.judges:
            s = summary.sensitivity.get(j)
            if s is None:
                if j in summary.sensitivity_errors:
                    w.text(f"{j}: the leave-one-out sensitivity could not run ({summary.sensitivity_errors[j]}).",
                           "note")
                continue
            sens.append({"judge": j, "excluded": list(s.excluded), "won_mainly_against_excluded":
                         s.won_mainly_against_excluded, "reasons": list(s.reasons), "sentence": s.sentence,
                         "variants": s.to_frame().to_dict(orient="records")})
            w.text(s.sentence, "warning" if s.won_mainly_against_excluded else "p")
    w.put("sensitivity", sens)
    # ---- contested items
    items = summary.items
    top = items.to_frame().head(TOP_ITEMS) if items.n_ranked else None
    w.put("items", {"unit": items.unit, "level": items.level, "chance_disagreement": items.chance_disagreement,
                    "n_ranked": items.n_ranked, "top": [] if top is None else top.to_dict(orient="records")})
    if top is None:
        w.text("No item has two or more labels from the annotators: no item can be contested.")
        return
    cols = ["rank", "item"] + (["cluster"] if "cluster" in top.columns else []) + ["labels", "observed", "expected",
                                                                                   "excess"]
    rows = []
    for i, rec in enumerate(top.to_dict(orient="records")):
        b = f"items/top/{i}"
        row: list[Any] = [str(int(rec["rank"]) + 1), str(rec["item"])]
        if "cluster" in top.columns:
            row.append(str(rec["cluster"]))
        row += [w.int_(f"{b}/n_labels"), w.num(f"{b}/observed"), w.num(f"{b}/expected"), w.num(f"{b}/excess")]
        rows.append(row)
    w.table("items", f"The {len(rows)} most contested {items.unit}s", cols, rows)
    w.text("observed: mean disagreement over the pairs of labels on the item, in units of the pool's chance "
           "disagreement (1 = as much as random labels); expected: the same if these annotators had labelled at "
           "random with their own habits; excess = observed - expected. `voirdire raters FILE --adjudicate "
           "FILE.csv` writes the most contested items as an assignment file for adjudication.", "note")
