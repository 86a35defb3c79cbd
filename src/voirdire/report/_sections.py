"""The report's sections (private). Each builder reads the :class:`Context`, calls the public analyses
and workflows (imported plainly) and fills a :class:`Writer`.

Builders raise :class:`NotAvailable` when the data or the installation do not allow the section.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _plots as plots
from .._results import to_jsonable
from .._scores import HTML_NAMES, REFERENCE_COEFFICIENT, matrix_coefficient
from ._annotators import annotators_section
from ..exceptions import VoirdireError
from ..workflows import compare_raters, design_overview, estimate_judges, summarise_pairwise, validate_judges
from ._build import Context, NotAvailable, Writer
from ._format import DASH, choice_sentence, fmt_ci, fmt_int, fmt_num, fmt_pct, is_missing
from ._model import Cell, ChecklistItem, Section

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
    raters: list[dict[str, Any]] = []
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
    for k, rec in enumerate(raters):
        rows.append([rec["rater"], rec["role"], w.int_(f"raters/{k}/n_labels"), w.num(f"raters/{k}/item_coverage"),
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


# ----------------------------------------------------------------------------------------- agreement
_COEF_NAMES = HTML_NAMES  # the registry's HTML spelling of each coefficient


def _coef_name(c: str) -> str:
    return _COEF_NAMES.get(c, c)


def agreement_section(ctx: Context, w: Writer) -> None:
    """Coefficients with intervals (humans; humans plus each judge), rater-by-rater heatmap,
    confusion matrices and the binary family."""
    t = ctx.table
    humans, judges = list(ctx.humans), list(ctx.judges)
    if len(humans) < 2 and not (judges and humans):
        raise NotAvailable("agreement needs at least two raters besides the judges, or a judge and a human.")
    done = [0]

    def tick(step: str, k: int, total: int) -> None:
        if 0 < k < total and k > done[0]:
            done[0] = k
            w.tick(step)

    coef = matrix_coefficient(t.scale.level)  # the rater-by-rater matrix
    comp = w.call(compare_raters, t, judges or None, confidence_level=ctx.confidence_level,
                  n_resamples=ctx.n_resamples, seed=ctx.seed, progress=tick, matrix=True, matrix_coefficient=coef,
                  confusion=2 < t.n_categories <= MAX_CATEGORIES_SHOWN)
    for n in comp.notes:
        if n not in w.warnings:
            w.warnings.append(n)
    sel_out: list[dict[str, Any]] = comp.to_dict()["groups"]
    w.put("selections", sel_out)
    w.results["selections"] = sel_out
    # the interval method(s) that method="auto" chose (by number of units and coefficient)
    methods: dict[str, list[str]] = {}
    for s_ in sel_out:
        for r in s_["results"]:
            m = (r.get("ci") or {}).get("method") or "none"
            if m != "none" and _coef_name(r["coefficient"]) not in methods.setdefault(m, []):
                methods[m].append(_coef_name(r["coefficient"]))
    method_text = (next(iter(methods)) if len(methods) == 1 else
                   "; ".join(f"{m} ({', '.join(c)})" for m, c in methods.items())) if methods else "none"
    w.put("interval_methods", method_text)
    w.text("Each row is one coefficient on one selection of raters: the humans among themselves, then the humans "
           "together with one judge. A judge that labels like another careful human leaves the coefficient where "
           f"the humans alone put it; a judge that disagrees pulls it down. Intervals: {method_text} over "
           f"{'clusters' if t.clusters is not None else 'items'} ({ctx.n_resamples} resamples, seed {ctx.seed}), "
           "chosen by the number of units (docs/agreement.md, 'Small samples'); every selection sees the same "
           "resamples. Items only the judge labelled are left out of its row (they hold no comparison and would "
           "only shift the chance term).", "note")
    # ---- forest plot: every coefficient, grouped by coefficient
    labels, est, lo, hi, grp, rows = [], [], [], [], [], []
    coefs: list[str] = []
    for s_ in sel_out:
        for r in s_["results"]:
            if r["coefficient"] not in coefs:
                coefs.append(r["coefficient"])
    for c in coefs:
        for si, s_ in enumerate(sel_out):
            for ri, r in enumerate(s_["results"]):
                if r["coefficient"] != c:
                    continue
                labels.append(f"{_coef_name(c)} · {s_['label']}")
                est.append(r["estimate"])
                lo.append(r["ci"]["low"])
                hi.append(r["ci"]["high"])
                grp.append(s_["group"])
                b = f"selections/{si}/results/{ri}"
                ab = r.get("abstention") or {}
                rows.append([_coef_name(c), s_["label"], w.num(f"{b}/estimate"), w.ci(f"{b}/ci/low", f"{b}/ci/high"),
                             w.num(f"{b}/se"), w.int_(f"{b}/n_items"), w.int_(f"{b}/n_pairs"),
                             Cell(text=fmt_pct(ab.get("label_coverage")), numeric=True)])
    w.figure("forest", "Agreement coefficients with intervals",
             plots.forest_plot(f"{w.key}-forest", labels, est, lo, hi, groups=grp, refs=[(0.0, "0")],
                               xlabel=f"coefficient ({ctx.cl_pct} bootstrap intervals)",
                               title="Agreement coefficients with intervals"),
             caption="Blue: humans among themselves; red: the humans together with one judge.")
    w.table("coefficients", "Agreement coefficients",
            ["coefficient", "raters", "estimate", f"{ctx.cl_pct} interval", "SE", "items", "pairs", "label coverage"],
            rows)
    # ---- checklist feed
    first = sel_out[0]["results"][0] if sel_out and sel_out[0]["results"] else {}
    w.put("abstention_policy", (first.get("abstention") or {}).get("policy", "exclude"))
    summ = []
    for s_ in sel_out:
        for r in s_["results"]:
            if r["coefficient"] == REFERENCE_COEFFICIENT:
                summ.append(f"α {s_['label']} = {fmt_num(r['estimate'])} {_fmt_ci(r)}")
    w.put("coefficient_summary", summ)
    w.put("n_pairs_summary", "; ".join(
        f"{s_['label']}: {fmt_int(s_['results'][0]['n_items'])} items, {fmt_int(s_['results'][0]['n_pairs'])} pairs"
        for s_ in sel_out if s_["results"]))
    # ---- rater-by-rater heatmap
    if comp.matrix is not None:  # the rater-by-rater matrix (the workflow's)
        pm = w.put("pairwise_matrix", comp.matrix)
        names = pm["raters"]
        w.figure("heatmap", f"{_coef_name(coef)} for every pair of raters",
                 plots.heatmap(f"{w.key}-heatmap", pm["estimate"], names, names, vmin=-1.0,
                               vmax=1.0, cmap="RdBu", cbar_label=_coef_name(coef),
                               title=f"{_coef_name(coef)} for every pair of raters"),
                 caption="Computed on the items both raters labelled (counts in the Design section); blank: undefined "
                         "or no shared item.")
    # ---- confusion matrices and the binary family
    L = t.n_categories
    if judges and humans and 2 <= L <= MAX_CATEGORIES_SHOWN:
        _confusion_block(ctx, w, judges, L, comp.binary if L == 2 else comp.confusion)
    elif L > MAX_CATEGORIES_SHOWN:
        w.text(f"No confusion matrix: the scale has {L} distinct values.", "note")


def _fmt_ci(r: dict[str, Any]) -> str:
    from ._format import fmt_ci

    return fmt_ci(r["ci"]["low"], r["ci"]["high"])


def _confusion_block(ctx: Context, w: Writer, judges: list[str], L: int, computed: Any = ()) -> None:
    t = ctx.table
    cats = _cats(t)
    out: list[dict[str, Any]] = []
    w.put("confusion", out)
    done = {b.judge: b for b in computed}  # the workflow's binary family or confusion matrices (compare_raters)
    judges = [j for j in judges if j in done]
    if not judges:
        return
    for judge in judges:
        res = done[judge]
        d = res.to_dict()
        if L > 2:  # one-vs-rest numbers would mislead: keep the full L x L matrix only
            d = {k: d[k] for k in ("judge", "reference", "labels", "confusion_matrix", "n_ties", "abstention")}
        out.append(d)
    w.results["confusion"] = out
    mats = [d["confusion_matrix"] for d in out]
    vmax = max([max((max(row) for row in m), default=1) for m in mats] + [1])
    w.heading("Confusion matrices")
    w.figure("confusion", "Confusion matrices: human majority (rows) against each judge (columns)",
             plots.small_heatmaps(f"{w.key}-confusion", mats, judges, [str(x) for x in out[0]["labels"]],
                                  xlabel="judge said", ylabel="human majority", vmin=0, vmax=float(vmax),
                                  integer=True, title="Confusion matrices"),
             caption="Counts of items; the reference is the humans' majority label (items with a tied majority "
                     "are left out).")
    if L == 2:
        w.heading("Binary labels: one number, several names")
        w.text("On binary labels Pearson r, Spearman ρ, Kendall τ-b, φ and MCC are the same number; reporting several "
               "of them is one number reported several times. Cohen κ is at most φ: κ/φ = 2√(AB)/(A+B), with equality "
               "only when the judge says 'positive' exactly as often as the humans (π̂ = π). The gap measures how far "
               "the judge's positive rate departs from the humans'.", "note")
        rows = []
        for k, d in enumerate(out):
            b = f"confusion/{k}"
            rows.append([d["judge"], w.int_(f"{b}/n_items"), w.num(f"{b}/accuracy"), w.num(f"{b}/kappa"),
                         w.ci(f"{b}/kappa_ci/low", f"{b}/kappa_ci/high"), w.num(f"{b}/phi"),
                         w.ci(f"{b}/phi_ci/low", f"{b}/phi_ci/high"), w.num(f"{b}/kappa_phi_ratio"),
                         w.num(f"{b}/prevalence"), w.num(f"{b}/judge_rate"), w.num(f"{b}/f1"),
                         "yes" if d.get("coincide") else "no"])
        w.table("binary", f"Binary family against the human majority (positive = {cats[1]})",
                ["judge", "items", "accuracy", "κ", f"κ {ctx.cl_pct}", "φ = MCC = r", f"φ {ctx.cl_pct}", "κ/φ",
                 "π (humans)", "π̂ (judge)", "F1", "r = ρ = τb = φ here"], rows)
        notes: list[str] = sorted({d["note"] for d in out if d.get("note")})
        for n in notes:
            w.text(n, "p")


# ----------------------------------------------------------------------------------------- validation
def shared_validation(ctx: Context, w: Writer, progress: Any = None) -> Any:
    """The report's one call of :func:`voirdire.workflows.validate_judges` (with the annotator check's
    competence models), kept in ``ctx.cache``: the "Annotators" section reads its annotator check and
    sensitivity lines, the "Judge validation" section everything else. The warnings it emitted are
    recorded in every section that uses it."""
    if "validation" in ctx.cache and progress is not None:  # computed by another section: the same steps
        total = len(ctx.judges) + 2
        for i, name in enumerate(ctx.judges):
            progress(name, i + 1, total)
    if "validation" not in ctx.cache:
        from ..exceptions import VoirdireError

        sink = Writer("validation", "")
        try:
            res = sink.call(validate_judges, ctx.table, list(ctx.judges), epsilon=ctx.epsilon,
                            alt_test_epsilon=ctx.alt_test_epsilon, confidence_level=ctx.confidence_level,
                            n_resamples=ctx.n_resamples, seed=ctx.seed, stability_threshold=ctx.stability_threshold,
                            reference_floor=ctx.reference_floor, progress=progress, rater_competence=True)
            ctx.cache["validation"] = (res, None, sink.warnings)
        except VoirdireError as err:
            ctx.cache["validation"] = (None, err, sink.warnings)
    res, failed, caught = ctx.cache["validation"]
    for msg in caught:
        if msg not in w.warnings:
            w.warnings.append(msg)
    if failed is not None:
        raise failed
    return res


def validation_section(ctx: Context, w: Writer) -> None:
    """Per judge: the verdict with its reasons; leave-one-human-out d_k with intervals against -epsilon,
    omega, decision and stability; the alt-test table; the humans' own reliability; the ranking with P(best).
    Everything comes from one call of :func:`voirdire.workflows.validate_judges`."""
    if not ctx.judges:
        raise NotAvailable("no LLM judge named (pass judges=[...] or --judge NAME).")
    if len(ctx.humans) < 2:
        raise NotAvailable(f"the judge-validation tests need at least two humans; the table has {len(ctx.humans)}.")

    def tick(step: str, k: int, total: int) -> None:
        if 1 < k <= len(ctx.judges):
            w.tick(step)

    res = shared_validation(ctx, w, progress=tick)
    for n in res.notes:
        if n not in w.warnings:
            w.warnings.append(n)
    doc = res.to_dict()
    score = doc["options"]["score"]
    w.put("score", score)
    w.put("epsilon", ctx.epsilon)
    w.put("alt_test_epsilon", ctx.alt_test_epsilon)
    w.put("options", doc["options"])
    w.put("reference", doc["reference"])
    judges_out: list[dict[str, Any]] = doc["judges"]
    w.put("judges", judges_out)
    if doc["ranking"] is not None:
        w.put("ranking", doc["ranking"])
    ref = doc["reference"]
    w.text(f"Leave-one-human-out rule (METHODS §2): for each human k, d_k = S(judge; others) − S(k; others) "
           f"with S = {'observed agreement' if score == 'agreement' else 'Krippendorff alpha'}; the judge wins "
           f"against k when d_k ≥ −ε (ε = {fmt_num(ctx.epsilon, 2)}), ω is the share of humans it wins against, "
           "and it is accepted when ω ≥ 0.5. Stability is the bootstrap probability that the same decision "
           f"comes out. The verdict is three-way: a decision less stable than {fmt_num(ctx.stability_threshold, 2)} "
           "is inconclusive, and so is any accept against humans who do not agree among themselves "
           f"(their own α below {fmt_num(ctx.reference_floor, 2)}, or an interval reaching 0); see docs/validation.md.",
           "note")
    if ref is not None:
        w.heading("The reference: the humans' own agreement", badge=None)
        w.text(ref["sentence"], "warning" if ref["status"] in ("noise", "undefined", "unreliable") else "p")
        w.table("reference", "Krippendorff α among the humans (the reference every judge is compared with)",
                ["coefficient", "level", "estimate", f"{ctx.cl_pct} interval", "items", "humans", "floor", "status"],
                [["Krippendorff α", ref["level"], w.num("reference/estimate"),
                  w.ci("reference/ci/low", "reference/ci/high"), w.int_("reference/n_items"),
                  w.int_("reference/n_humans"), w.num("reference/floor", 2), ref["status"]]])
    summary_rows = []
    for jn, entry in enumerate(judges_out):
        judge = entry["judge"]
        v = entry["verdict"]
        w.heading(judge, badge=v["decision"])
        w.text(v["sentence"], "warning" if v["decision"] != "accept" else "p")
        for method, msg in entry["errors"].items():
            name = "leave-one-out test" if method == "leave_one_out" else "alternative annotator test"
            w.text(f"{judge}: the {name} could not be run: {msg}", "warning")
        if "leave_one_out" in entry:
            _loo_block(ctx, w, jn, entry)
        if "alt_test" in entry:
            _alt_test_block(ctx, w, judge, jn, entry)
        summary_rows.append(jn)
    if summary_rows:
        rows = []
        for jn in summary_rows:
            e = judges_out[jn]
            base = f"judges/{jn}/leave_one_out"
            row: list[Any] = [e["judge"], Cell(text=e["verdict"]["decision"]),
                              ", ".join(r["code"] for r in e["verdict"]["reasons"] if r["blocking"])]
            if "leave_one_out" in e:
                row += [Cell(text=e["leave_one_out"]["decision"]), w.num(f"{base}/omega"),
                        w.num(f"{base}/decision_stability"), w.num(f"{base}/p_accept")]
            else:
                row += [Cell(text=DASH)] * 4
            if "alt_test" in e:
                a = e["alt_test"]
                row += [Cell(text=str(a["decision"])), w.num(f"judges/{jn}/alt_test/omega"),
                        w.num(f"judges/{jn}/alt_test/rho"), w.num(f"judges/{jn}/alt_test/decision_stability")]
            else:
                row += [Cell(text=DASH)] * 4
            rows.append(row)
        cols = ["judge", "verdict", "because", "LOO decision", "ω", "stability", "P(accept)",
                "alt-test decision", "alt-test ω", "ρ (alt-test)", "alt-test stability"]
        w.table("decisions", "Verdicts and decisions per judge", cols, rows)
    if doc["ranking"] is not None:
        _ranking_block(ctx, w)


def _loo_block(ctx: Context, w: Writer, jn: int, entry: dict[str, Any]) -> None:
    judge = entry["judge"]
    base = f"judges/{jn}/leave_one_out"
    d = entry["leave_one_out"]
    humans = d["humans"]
    w.text(f"Leave-one-out: {d['decision']} (ω = {fmt_num(d['omega'], 3)} over {d['n_evaluated']} "
           f"evaluated humans; decision stability {fmt_num(d['decision_stability'], 3)}).")
    w.figure(f"loo-{jn}", f"{judge}: leave-one-human-out differences",
             plots.forest_plot(f"{w.key}-loo-{jn}", humans, d["d"], d["d_low"], d["d_high"],
                               xlabel=f"d_k = S(judge) − S(human k)   ({ctx.cl_pct} "
                               f"{'bootstrap' if 'bootstrap' in str(d.get('interval_method')) else 'normal'} intervals)",
                               refs=[(-ctx.epsilon, "−ε"), (0.0, "0")],
                               title=f"{judge}: d_k per held-out human"),
             caption="A point right of the dashed −ε line is a win for the judge against that human.")
    rows = []
    for k, h in enumerate(humans):
        reason = d["reason"][k]
        tk = d["t"][k]
        rows.append([h, w.int_(f"{base}/n_items/{k}"), w.int_(f"{base}/n_pairs/{k}"),
                     w.num(f"{base}/s_judge/{k}"), w.num(f"{base}/s_human/{k}"), w.num(f"{base}/d/{k}"),
                     w.ci(f"{base}/d_low/{k}", f"{base}/d_high/{k}"),
                     DASH if is_missing(tk) else ("win" if tk else "loss"), reason or ""])
    w.table(f"loo-{jn}", f"{judge}: leave-one-human-out comparison",
            ["held-out human", "items", "pairs", "S(judge; others)", "S(human; others)", "d_k",
             f"{ctx.cl_pct} interval", "T_k", "not evaluated because"], rows)


def _alt_test_block(ctx: Context, w: Writer, judge: str, jn: int, entry: dict[str, Any]) -> None:
    a = entry["alt_test"]
    base = f"judges/{jn}/alt_test"
    rows = []
    for k, h in enumerate(a["humans"]):
        tested = a["tested"][k]
        rows.append([h, w.int_(f"{base}/n_items/{k}"), w.num(f"{base}/rho_f/{k}"), w.num(f"{base}/rho_h/{k}"),
                     w.num(f"{base}/mean_d/{k}"), w.p(f"{base}/p_value/{k}"),
                     (("yes" if a["rejected"][k] else "no") if tested else DASH) +
                     (" (degenerate)" if a["degenerate"][k] else ""),
                     a["reason"][k] or ""])
    w.table(f"alt-{jn}",
            f"{judge}: alternative annotator test ({a['scoring']}, ε = {fmt_num(a['epsilon'], 2)}, "
            f"{a['correction'].upper()} at q = {fmt_num(a['q'], 2)}; ω = {fmt_num(a['omega'], 3)}, "
            f"ρ = {fmt_num(a['rho'], 3)}: {a['decision']}; stability {fmt_num(a['decision_stability'], 3)})",
            ["human", "items", "ρ̂ judge", "ρ̂ human", "mean d", "p (one-sided)", "H0 rejected", "skipped because"],
            rows)


def _ranking_block(ctx: Context, w: Writer) -> None:
    w.tick("ranking")
    r = w.results["ranking"]
    names = r["judges"]
    from ..workflows import order_text, ranking_tiers, tier_ranks, top_tier_note

    w.heading("Ranking the judges")
    tiers = ranking_tiers(r)  # the one order of judges everywhere: by P(best), ties in one tier without a rank
    w.put("tiers", [list(t) for t in tiers])
    order = [names.index(n) for t in tiers for n in t]
    rank_of = tier_ranks(tiers)
    w.figure("p-best", "Probability that each judge is best",
             plots.bar_chart(f"{w.key}-p-best", [names[k] for k in order], [r["p_best"][k] or 0.0 for k in order],
                             groups=["judge"] * len(names), xlabel="P(best) over bootstrap resamples",
                             title="P(best)"),
             caption=f"Share of {r['n_resamples']} bootstrap resamples ({r['resampling_unit']}s) in which the judge "
                     f"ranks first by ρ (the alt-test's average advantage probability).")
    rows = [[Cell(text=rank_of[names[k]], numeric=True), names[k], w.num(f"ranking/p_best/{k}"),
             w.num(f"ranking/statistic/{k}")] for k in order]
    w.table("ranking", "Judge ranking (best first by P(best); 'tie': cannot be told apart from the judge above)",
            ["rank", "judge", "P(best)", "ρ"], rows)
    w.text(f"Order: {order_text(tiers)}. The same order as voirdire validate and plan; a judge ties with the one "
           f"above it when that one ranks above it in fewer than {fmt_pct(ctx.confidence_level, 0)} of resamples.",
           "p")
    if len(names) >= 2:
        w.figure("p-order", "Probability that the row judge ranks above the column judge",
                 plots.heatmap(f"{w.key}-p-order", [[r["p_order"][a][b] if a != b else None for b in order]
                                                    for a in order],
                               [names[k] for k in order], [names[k] for k in order], vmin=0.0, vmax=1.0,
                               cmap="RdBu", cbar_label="P(row above column)", title="Pairwise order probabilities"))
    top = top_tier_note(r)  # said in the one order, as validate says it
    if top:
        w.text(top, "warning")


# ----------------------------------------------------------------------------------------- estimation
def estimation_section(ctx: Context, w: Writer) -> None:
    """DR vs human-only vs PPI intervals for the mean human score, per judge."""
    if ctx.inclusion_prob is None and ctx.estimated_by_group:
        raise NotAvailable("with --by the mean human score is estimated in each group and on the pool: see the "
                           "'By group: mean human score' section.")
    if ctx.inclusion_prob is None:
        raise NotAvailable("no inclusion probability named (pass inclusion_prob= or --inclusion-prob); "
                           "the two-stage estimators need the known probability that each item went to the humans.")
    if not ctx.judges:
        raise NotAvailable("no LLM judge named.")
    t = ctx.table
    if not t.scale.is_numeric:
        raise NotAvailable("the labels are not numbers, so there is no mean score to estimate.")
    w.text("Three estimates of the mean human score over all items: doubly robust (the judge's score on every "
           "item, corrected by the humans' residuals weighted by 1/π; valid whatever the judge's quality because "
           "π is known by design), human-only (design-weighted mean of the human-scored items) and PPI++ "
           "(assumes the human-scored items are a uniform random subset). A narrower valid interval means the "
           "judge saves human labels. With m(X) = X (the paper's choice) a judge whose scores sit on a different "
           "scale than the humans' can make the interval wider than human-only; the calibrated version (the "
           "default of `voirdire estimate`: a cross-fitted ridge fit of the human score on the judge's, power-tuned "
           "so that from 100 labelled items on it is never wider than human-only) stays valid because π is known. "
           "Every row comes from "
           "`estimation.compare_estimators`, the function `voirdire estimate` calls, with its defaults, over the "
           "items the judge scored: the same numbers as `voirdire estimate --drop-unscored --seed` with this seed.",
           "note")
    summary = w.call(estimate_judges, t, list(ctx.judges), ctx.inclusion_prob, unsampled=ctx.unsampled,
                     confidence_level=ctx.confidence_level, seed=ctx.seed,
                     progress=lambda judge, k, n: w.tick(judge) if k else None)
    out: list[dict[str, Any]] = []
    w.put("judges", out)
    left_out = summary.n_human_labels_left_out
    if ctx.unsampled == "omit":
        w.put("n_human_labels_left_out", left_out)
        w.put("n_items_left_out", summary.n_items_left_out)
        if left_out:
            w.text(f"{fmt_int(left_out)} human label(s) on {fmt_int(summary.n_items_left_out)} item(s) with no "
                   "inclusion probability (outside the probability sample) are left out of these estimates; the "
                   "other sections use them.", "note")
    for jn, est in enumerate(summary.judges):
        judge = est.judge
        entry = est.to_dict()
        if est.error is not None:
            out.append(entry)
            w.results["judges"] = out
            w.text(f"{judge}: no estimate ({est.error})", "warning")
            continue
        for msg in ([est.ppi_note] if est.ppi_note else []) + [h["message"] for h in est.hints]:
            w.text(f"{judge}: {msg}", "note")
        out.append(entry)
        w.results["judges"] = out
        names = [("dr", "doubly robust, m(X) = X"), ("dr_calibrated", "doubly robust, calibrated"),
                 ("human_only", "human only"), ("ppi", "PPI++")]
        names = [(k, lab) for k, lab in names if k in entry]
        groups = {"dr": "judge", "dr_calibrated": "judge", "human_only": "human", "ppi": "other"}
        w.figure(f"est-{jn}", f"{judge}: estimates of the mean human score",
                 plots.forest_plot(f"{w.key}-est-{jn}", [lab for _, lab in names],
                                   [entry[k]["estimate"] for k, _ in names],
                                   [entry[k]["ci"]["low"] for k, _ in names],
                                   [entry[k]["ci"]["high"] for k, _ in names],
                                   groups=[groups[k] for k, _ in names],
                                   xlabel=f"mean human score ({ctx.cl_pct} intervals)",
                                   title=f"{judge}: mean human score"))
        rows: list[list[Any]] = []
        for k, lab in names:
            b = f"judges/{jn}/{k}"
            rows.append([lab, w.num(f"{b}/estimate"), w.num(f"{b}/se"), w.ci(f"{b}/ci/low", f"{b}/ci/high"),
                         w.int_(f"{b}/n_labeled"), w.int_(f"{b}/n_total")])
        w.table(f"est-{jn}", f"{judge}: mean human score", ["estimator", "estimate", "SE", f"{ctx.cl_pct} interval",
                                                           "human-scored items", "items"], rows)


# ----------------------------------------------------------------------------------------- design
def design_section(ctx: Context, w: Writer) -> None:
    """Overlap heatmap, eligible items per held-out human, and the planner's recommendation."""
    t = ctx.table
    design = w.call(design_overview, t, list(ctx.judges) or None)
    for n in design.notes:
        if n not in w.warnings:
            w.warnings.append(n)
    ov = w.put("overlap", design.overlap)
    names = ov["raters"]
    w.text("Validation compares a judge with each human on the items they share with the other humans, so what "
           "matters is overlap, not volume. Expected overlap under independent random masks is n_a·n_b/n: a "
           "secondary human shares about ρn items with a full-coverage rater but only ρ²n with another secondary.",
           "note")
    w.figure("overlap", "Items shared by every pair of raters",
             plots.heatmap(f"{w.key}-overlap", ov["observed"], names, names, vmin=0, cmap="Greens", integer=True,
                           cbar_label="shared items", title="Items shared by every pair of raters"),
             caption=f"Diagonal: items the rater labelled (of {fmt_int(ov['n_items'])}).")
    rows = []
    for k, r in enumerate(names):
        rows.append([r, ov["roles"][k], w.int_(f"overlap/n_labelled/{k}"), w.num(f"overlap/coverage/{k}"),
                     w.int_(f"overlap/n_abstentions/{k}")])
    w.table("coverage", "Per-rater coverage", ["rater", "role", "items labelled", "coverage ρ", "abstentions"], rows)
    facts = []
    if ov.get("primary"):
        facts.append(f"primary human (labelled every item): {ov['primary']}")
    if ov.get("shared_panel") is not None:
        facts.append(f"secondaries share one panel: {'yes' if ov['shared_panel'] else 'no'} "
                     f"(panel share {fmt_num(ov['panel_share'], 2)})")
    facts.append(f"global overlap rate (mean share of items shared by two humans): {fmt_num(ov['global_overlap_rate'], 3)}"
                 " — not a per-rater coverage")
    w.text("; ".join(facts) + ".")
    hum, jud = ov["humans"], ov["judges"]
    if hum and jud:
        w.figure("eligible", "Eligible items per held-out human",
                 plots.grouped_bars(f"{w.key}-eligible", hum, jud, ov["eligible"], xlabel="eligible items",
                                    ref=(float(ov["min_eligible"]), f"{ov['min_eligible']}"),
                                    title="Eligible items per held-out human"),
                 caption="Items labelled by the held-out human, by the judge and by at least one other human: what "
                         f"the leave-one-out rule can use. Dashed: {ov['min_eligible']} items.")
        rows = []
        for k, h in enumerate(hum):
            rows.append([h] + [w.int_(f"overlap/eligible/{k}/{jn}") for jn in range(len(jud))])
        w.table("eligible", "Eligible items per held-out human (rows) and judge (columns); comparison pairs are in "
                            "the JSON (overlap.n_pairs)", ["held-out human", *jud], rows)
    if ctx.judges and len(ctx.humans) >= 2:
        _plan_block(ctx, w)


def _plan_block(ctx: Context, w: Writer) -> None:
    """The verdict per judge with its advice, and beside it the running anytime-valid leave-one-out rule: read
    from the one validation result (:func:`voirdire.workflows.validate_judges`), so the numbers are those of
    ``voirdire plan`` and ``validate``; nothing is computed here."""
    from ..workflows import running_text

    try:
        res = shared_validation(ctx, w)
    except VoirdireError as exc:
        w.text(f"Planning the next round is not available: {exc}", "note")
        return
    w.heading("Planning the next round")
    plans: list[dict[str, Any]] = []
    advice: list[dict[str, Any]] = []
    w.put("plans", plans)
    w.put("advice", advice)
    rows: list[list[Any]] = []
    for e in res.judges:
        a = e.advice
        advice.append(to_jsonable(a))
        p = e.plan
        if p is None:  # a settled verdict, or one labels cannot change: the planner was not needed
            plans.append({"judge": e.judge, "error": e.errors.get("leave_one_out", "not planned: " + a.sentence)})
            running = DASH
        else:
            plans.append(to_jsonable(p))
            lim = a.n_items - p.eligible
            running = running_text(p.decision if p.status == "settled" else "continue",
                                   p.more_per_human if p.status == "open" else float("inf"), None, lim, a.n_items)
        w.results["plans"] = plans
        w.results["advice"] = advice
        rows.append([e.judge, Cell(text=e.verdict.decision), a.sentence, running])
    w.table("plan", "What each judge needs next: the verdict (as voirdire validate), what would settle it, and "
                    f"beside it the running anytime-valid leave-one-out rule (ε = {fmt_num(ctx.epsilon, 2)}, e-BH at "
                    "q = 0.05)", ["judge", "verdict", "what next", "running anytime-valid rule"], rows)
    w.text("One answer per judge, the same as voirdire plan, validate and study status at this seed. A comparison is "
           "an item labelled by the held-out human, the judge and another human. A settled verdict (accept or reject) "
           "needs no more labels; an inconclusive one says whether labels can settle it and, when they can, either "
           "a batch of the items on hand that was drawn and checked to create the comparisons, or how many new "
           "items would be needed when the items on hand cannot give them. The running anytime-valid rule is shown "
           "beside the verdict, never instead of it.", "note")


# ----------------------------------------------------------------------------------------- pairwise
N_UNCERTAIN = 10
MAX_HUMAN_MATRICES = 12


def pairwise_section(ctx: Context, w: Writer) -> None:
    """The Bayesian pairwise model: position bias per judge, human confusion matrices, entropy."""
    if ctx.pairwise is None:
        raise NotAvailable("no pairwise file given (pass pairwise= or --pairwise FILE).")
    pt = ctx.pairwise
    w.put("summary", pt.summary())
    summary = shared_pairwise(ctx, w)
    d = w.put("posterior", summary.posterior)
    ctx.cache["pairwise_posterior"] = d  # the Judge biases section and the pairwise glance show beta beside the swap test
    verdicts = ["A", "tie", "B"]
    w.text("BayesJudge model (METHODS §3): each pair has a latent verdict (A better, tie, B better); humans are "
           "noisy raters with their own confusion matrices; each LLM judge, asked in both orders, has a position "
           "bias β (> 0: it favours the response shown first; 2β shifts its log-odds of A over B). A pair's "
           "entropy near log 3 = 1.10 nats means the evidence does not settle its verdict.", "note")
    # the held-out choice of the forecaster, as `voirdire pairwise` states it before the posteriors
    w.put("choice", summary.choice)
    forecaster = w.put("forecaster", summary.forecaster)
    fc = w.put("forecasts", summary.forecasts.to_dict("records"))
    line = choice_sentence(summary.choice)
    if line:
        w.text(f"held-out choice: {line}", "p")
    model_name = summary.choice.get("model", "BayesJudge")
    if forecaster != model_name:
        w.text(f"The per-pair forecasts below (the entropy histogram and the most uncertain pairs; report.json "
               f"'forecasts') are {forecaster}'s, fitted on the whole file; the judges' biases and the humans' "
               f"confusion matrices are {model_name}'s (`voirdire pairwise --no-choice` shows {model_name}'s "
               "forecasts).", "note")
    by = "" if forecaster == model_name else f" by {forecaster}'s forecasts (the held-out choice)"
    judges = d["judges"]
    if judges:
        w.heading("Position bias per judge")
        w.figure("bias", "Position bias per judge",
                 plots.forest_plot(f"{w.key}-bias", judges, d["bias_mean"], d["bias_low"], d["bias_high"],
                                   groups=["judge"] * len(judges), refs=[(0.0, "no bias")],
                                   xlabel=f"position bias β ({ctx.cl_pct} credible intervals)",
                                   title="Position bias per judge"),
                 caption="An interval clear of 0 is evidence of position bias; β is identified only for judges "
                         "asked in both orders.")
        # which judges were asked in both orders (only there is beta identified by the swap)
        both = [summary.both_orders[str(j)] for j in judges]
        w.put("judge_both_orders", both)
        rows = [[j, w.num(f"posterior/bias_mean/{k}"), w.num(f"posterior/bias_sd/{k}"),
                 w.ci(f"posterior/bias_low/{k}", f"posterior/bias_high/{k}"), "yes" if both[k] else "no",
                 w.num(f"posterior/reliability_mean/{k}", 2),
                 w.ci(f"posterior/reliability_low/{k}", f"posterior/reliability_high/{k}", 2)]
                for k, j in enumerate(judges)]
        w.table("bias", "Position bias and reliability per judge (reliability 1: the judge answers from the pair's "
                        "own verdict distribution; 0: its verdicts carry no information about the pair)",
                ["judge", "β (mean)", "sd", f"{ctx.cl_pct} credible interval", "asked in both orders",
                 "reliability", f"{ctx.cl_pct} interval"], rows)
        optimistic = [j for j, o in zip(judges, d.get("bias_interval_optimistic") or []) if o]
        if optimistic:
            w.text(f"The β intervals of {', '.join(optimistic)} are the particle filter's and optimistic: the model "
                   "does not hold every pair of the stream (a resumed state), so it cannot read them from the judges' "
                   "batch posterior; with a reliability and a tie offset per judge (the default judge model) the "
                   "filter's 95% intervals covered the planted bias in only 80-90% of simulated streams of "
                   "300-2,000 pairs, the batch posterior's in 93-96% (docs/pairwise.md, 'Are the bias intervals "
                   "honest?'). Fit the whole stream at once for the latter.", "warning")
        one = [j for j, b in zip(judges, both) if not b]
        if one:
            w.text(f"{', '.join(one)} {'was' if len(one) == 1 else 'were'} asked in one order only: β is then "
                   "confounded with the pairs' quality difference and must not be read as position bias.",
                   "warning")
    humans = d["humans"]
    if humans:
        order = list(range(len(humans)))
        if len(humans) > MAX_HUMAN_MATRICES:  # the humans with the most labels, in table order
            n_lab = np.bincount(pt.rater_idx, minlength=pt.n_raters)
            per_h = np.array([n_lab[pt.rater_index(h)] for h in humans])
            order = sorted(np.argsort(-per_h, kind="stable")[:MAX_HUMAN_MATRICES].tolist())
        w.heading("Human confusion matrices")
        w.figure("confusion", "Human confusion matrices",
                 plots.small_heatmaps(f"{w.key}-confusion", [d["confusion"][k] for k in order],
                                      [humans[k] for k in order], verdicts, xlabel="said", ylabel="true verdict",
                                      title="Human confusion matrices"),
                 caption="Posterior mean P(said | true verdict) per human; rows sum to 1."
                         + (f" The {MAX_HUMAN_MATRICES} humans with the most labels are shown; all are in the JSON."
                            if len(humans) > MAX_HUMAN_MATRICES else ""))
    w.heading("How settled is each pair?")
    ent = np.array([np.nan if r["entropy"] is None else r["entropy"] for r in fc], dtype=float)
    what = "Posterior entropy" if not by else f"Entropy{by}"
    w.figure("entropy", "Posterior entropy of the pairs' verdicts" if not by else f"Entropy of the pairs' verdicts{by}",
             plots.histogram(f"{w.key}-entropy", [r["entropy"] for r in fc], bins=20, range_=(0.0, float(np.log(3))),
                             xlabel=f"entropy of the {'posterior' if not by else 'forecast'} verdict (nats; log 3 = "
                                    "1.10 is no information)", title=what),
             caption=f"{fmt_int(len(fc))} pairs.")
    top = [int(k) for k in np.argsort(-np.nan_to_num(ent, nan=-1.0), kind="stable")[:N_UNCERTAIN]]
    w.put("most_uncertain", top)
    rows = [[str(fc[k]["pair"]), w.num(f"forecasts/{k}/p_A"), w.num(f"forecasts/{k}/p_T"),
             w.num(f"forecasts/{k}/p_B"), w.num(f"forecasts/{k}/entropy")] for k in top]
    w.table("uncertain", f"The {len(top)} pairs the model is least sure about (send them for review)" if not by
            else f"The {len(top)} most uncertain pairs{by[:-1]}; send them for review)",
            ["pair", "P(A better)", "P(tie)", "P(B better)", "entropy"], rows)


def shared_pairwise(ctx: Context, w: Writer) -> Any:
    """The report's one call of :func:`voirdire.workflows.summarise_pairwise` (model and bias diagnostics),
    kept in ``ctx.cache`` for the Pairwise and Judge biases sections; its warnings go to every section that
    uses it."""
    if "pairwise_summary" not in ctx.cache:
        sink = Writer("pairwise", "")
        res = sink.call(summarise_pairwise, ctx.pairwise, covariates=ctx.pairwise_covariates,
                        confidence_level=ctx.confidence_level, seed=ctx.seed, choose=ctx.pairwise_choice,
                        choice_folds=ctx.pairwise_choice_folds)
        ctx.cache["pairwise_summary"] = (res, sink.warnings)
    res, caught = ctx.cache["pairwise_summary"]
    for msg in caught:
        if msg not in w.warnings:
            w.warnings.append(msg)
    return res


def judge_bias_section(ctx: Context, w: Writer) -> None:
    """Position, length and self-preference biases of the pairwise judges (pairwise.bias_report)."""
    if ctx.pairwise is None:
        raise NotAvailable("no pairwise file given (pass pairwise= or --pairwise FILE).")
    if not ctx.pairwise.judges:
        raise NotAvailable("the pairwise file has no LLM judge.")
    summary = shared_pairwise(ctx, w)
    if summary.bias is None:
        raise VoirdireError(summary.bias_error or "the bias diagnostics did not run")
    rep = summary.bias
    d = w.put("bias", rep)
    eff = d["effects"]
    w.text("Each effect is estimated from per-pair scores (a judge asked in both orders counts once per pair), with "
           f"a {ctx.cl_pct} interval; flagged = rejected by Benjamini-Hochberg at false discovery rate "
           f"{rep.fdr:g} over the tested effects of the table (q <= {rep.fdr:g}; an effect with no estimate is "
           "not counted); MDE = the smallest effect detected with "
           f"{100 * rep.power:.0f}% power at this sample size. Length needs len_a/len_b columns and "
           "self-preference model_a/model_b columns in the pairwise file.", "note")
    shown = [k for k, e in enumerate(eff) if e["effect"] != "length" and not is_missing(e["estimate"])]
    if shown:
        w.figure("forest", "Judge biases",
                 plots.forest_plot(f"{w.key}-forest", [f"{eff[k]['judge']}: {eff[k]['effect']}" for k in shown],
                                   [eff[k]["estimate"] for k in shown], [eff[k]["low"] for k in shown],
                                   [eff[k]["high"] for k in shown], groups=["judge"] * len(shown),
                                   refs=[(0.0, "no bias")], xlabel=f"difference in win share ({ctx.cl_pct} intervals)",
                                   title="Judge biases"),
                 caption="Position and self-preference effects (shares of wins; 0 = no bias). Length effects are "
                         "on another scale (log-odds) and are in the table only.")
    rows = [[str(e["judge"]), str(e["effect"]), w.num(f"bias/effects/{k}/estimate"),
             w.ci(f"bias/effects/{k}/low", f"bias/effects/{k}/high"), w.num(f"bias/effects/{k}/q_value"),
             "yes" if e["flagged"] else "no", w.num(f"bias/effects/{k}/mde"), w.int_(f"bias/effects/{k}/n_pairs"),
             str(e["detail"])] for k, e in enumerate(eff)]
    w.table("effects", "Judge biases", ["judge", "effect", "estimate", f"{ctx.cl_pct} interval", "q", "flagged",
                                        "MDE", "pairs", "detail"], rows)
    flagged = [f"{e['judge']} ({e['effect']})" for e in eff if e["flagged"]]
    w.text(("Flagged: " + "; ".join(flagged) + ".") if flagged else "No bias flagged at this false discovery rate.",
           "warning" if flagged else "p")
    post = ctx.cache.get("pairwise_posterior")
    if post is not None and post.get("judges"):
        w.heading("Position bias: the model's β beside the swap test")
        rows = _position_rows(ctx, w, post, eff)
        w.table("position_views", "Position bias per judge, two ways", ["judge", "β (model)",
                f"β {ctx.cl_pct} credible interval", "swap effect", f"{ctx.cl_pct} interval", "q", "flagged"], rows)
        w.text(POSITION_VIEWS, "note")


#: why the model's beta and the swap test can disagree, and which to read (shown wherever both are)
POSITION_VIEWS = (
    "Why the two can differ: β is model-based (the pairwise model's log-odds shift toward the response shown "
    "first, estimated jointly with every pair's latent verdict and the humans' confusion, and shrunk toward 0 by "
    "its prior), while the swap effect is swap-based (the judge's own verdicts on the same pair in both orders, "
    "no model, one interval per effect with Benjamini-Hochberg across effects). Read the swap effect and its flag "
    "for whether the judge favours a position: it needs no model and its error rate is controlled; read β for how "
    "large the bias is once the pairs' quality is accounted for. An interval of one that reaches 0 while the other "
    "does not is a small bias near the detection limit, not a contradiction.")


def _position_rows(ctx: Context, w: Writer, post: dict[str, Any], eff: list[dict[str, Any]]) -> list[list[Any]]:
    """Per judge: the model's beta (pairwise section) and the swap effect (this section), from their results."""
    rows = []
    swap = {str(e["judge"]): (k, e) for k, e in enumerate(eff) if e["effect"] == "position (swap)"}
    for k, j in enumerate(post["judges"]):
        beta = [Cell(text=fmt_num(post["bias_mean"][k]), pointer="/sections/pairwise/results/posterior/bias_mean/"
                     f"{k}", numeric=True),
                Cell(text=fmt_ci(post["bias_low"][k], post["bias_high"][k]), numeric=True)]
        if str(j) in swap:
            i, e = swap[str(j)]
            rest = [w.num(f"bias/effects/{i}/estimate"), w.ci(f"bias/effects/{i}/low", f"bias/effects/{i}/high"),
                    w.num(f"bias/effects/{i}/q_value"), "yes" if e["flagged"] else "no"]
        else:
            rest = [Cell(text=DASH)] * 4
        rows.append([str(j), *beta, *rest])
    return rows


def build_pairwise_glance(ctx: Context, w: Writer, sections: list[Section]) -> None:
    """At a glance for a pairwise-only report: per judge, position bias two ways (model and swap test) and the
    model's reliability, read from the pairwise and Judge biases sections' results."""
    sec = {s.key: s for s in sections if s.status == "ok"}
    pw, bias = sec.get("pairwise"), sec.get("biases")
    if pw is None and bias is None:
        raise NotAvailable("neither the pairwise model nor the bias diagnostics ran.")
    post = None if pw is None else pw.results.get("posterior")
    eff = [] if bias is None else bias.results.get("bias", {}).get("effects", [])
    judges = list(ctx.judges)
    if not judges:
        raise NotAvailable("the pairwise file has no LLM judge.")
    rows = []
    swap = {str(e["judge"]): e for e in eff if e["effect"] == "position (swap)"}
    flagged = {str(e["judge"]): [x["effect"] for x in eff if x["judge"] == e["judge"] and x["flagged"]] for e in eff}
    pj = [] if post is None else [str(j) for j in post["judges"]]
    for j in judges:
        row: list[Any] = [j]
        if post is not None and j in pj:
            k = pj.index(j)
            opt = bool((post.get("bias_interval_optimistic") or [False] * len(pj))[k])
            row += [w.ref(pw, f"posterior/bias_mean/{k}"),  # type: ignore[arg-type]
                    Cell(text=fmt_ci(post["bias_low"][k], post["bias_high"][k]) + (" *" if opt else ""),
                         numeric=True),
                    w.ref(pw, f"posterior/reliability_mean/{k}", 2)]  # type: ignore[arg-type]
        else:
            row += [Cell(text=DASH)] * 3
        e = swap.get(j)
        i = next((n for n, x in enumerate(eff) if x is e), None)
        row += ([w.ref(bias, f"bias/effects/{i}/estimate"),  # type: ignore[arg-type]
                 Cell(text=fmt_ci(e["low"], e["high"]), numeric=True)] if e is not None
                else [Cell(text=DASH)] * 2)
        row.append(", ".join(flagged.get(j, [])) or "none")
        rows.append(row)
    w.put("judges", judges)
    w.text("A pairwise-only report: the judges' position bias two ways and the biases flagged; the details are in "
           "the Pairwise and Judge biases sections below.", "p")
    w.table("judges", "Headline numbers per judge (pairwise)", ["judge", "β (model)", f"β {ctx.cl_pct} interval",
            "reliability", "swap effect", f"{ctx.cl_pct} interval", "flagged biases"], rows)
    w.text(POSITION_VIEWS, "note")
    if post is not None and any(post.get("bias_interval_optimistic") or []):
        w.text("* optimistic: the particle filter's β interval (a resumed state does not hold the stream's earlier "
               "pairs, so the judges' batch posterior cannot be computed); under the default judge model such "
               "intervals covered the planted bias in only 80-90% of simulated streams, the batch posterior's in "
               "93-96% (docs/pairwise.md, 'Are the bias intervals honest?'). Fit the whole stream at once for the "
               "latter.", "note")


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
        detail=("per judge against the human majority label, in the Agreement section" if has_cm else
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
                                   detail=f"{ctx.cl_pct} intervals: "
                                          f"{_first_result(sec, 'agreement', 'interval_methods') or 'bootstrap'}; "
                                          f"{ctx.n_resamples} bootstrap resamples (seed {ctx.seed})",
                                   section="agreement"))
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


# ----------------------------------------------------------------------------------------- at a glance
def build_glance(ctx: Context, w: Writer, sections: list[Section]) -> None:
    """One row per judge with the headline numbers of the other sections (cells point at them)."""
    sec = {s.key: s for s in sections if s.status == "ok"}
    if not ctx.judges:
        raise NotAvailable("no LLM judge named.")
    val, agr = sec.get("validation"), sec.get("agreement")
    if val is None and agr is None:
        raise NotAvailable("neither the agreement nor the validation analysis ran.")
    cols = ["judge"]
    alpha_h = None
    sel_idx: dict[str, int] = {}
    si: int | None
    if agr is not None:
        sels = agr.results.get("selections", [])
        for si, s_ in enumerate(sels):
            if s_["group"] == "human":
                alpha_h = si
            else:
                sel_idx[s_["raters"][-1]] = si

        def _alpha_pos(si: int) -> int | None:
            return next((ri for ri, r in enumerate(sels[si]["results"]) if r["coefficient"] == REFERENCE_COEFFICIENT),
                        None)

        cols += ["α humans", "α humans + judge"]
    if val is not None:
        cols += ["verdict", "leave-one-out", "ω", "stability", "alt-test", "ρ", "alt-test stability"]
        if "ranking" in val.results:
            cols += ["P(best)"]
    rows = []
    sentences = []
    judges = list(ctx.judges)
    if val is not None and "ranking" in val.results:  # the one order of judges: validate's P(best) tiers
        from ..workflows import ranking_tiers

        ranked = [j for t in ranking_tiers(val.results["ranking"]) for j in t]
        judges = [j for j in ranked if j in judges] + [j for j in judges if j not in ranked]
    for jn, judge in enumerate(judges):
        row: list[Any] = [judge]
        if agr is not None:
            for si in (alpha_h, sel_idx.get(judge)):
                pos = None if si is None else _alpha_pos(si)
                row.append(Cell(text=DASH) if pos is None else w.ref(agr, f"selections/{si}/results/{pos}/estimate"))
        if val is not None:
            vlist = val.results.get("judges", [])
            vj = next((i for i, x in enumerate(vlist) if x.get("judge") == judge), None)
            e = vlist[vj] if vj is not None else {}
            row.append(Cell(text=e["verdict"]["decision"]) if "verdict" in e else Cell(text=DASH))
            if "leave_one_out" in e:
                row += [Cell(text=e["leave_one_out"]["decision"]), w.ref(val, f"judges/{vj}/leave_one_out/omega"),
                        w.ref(val, f"judges/{vj}/leave_one_out/decision_stability")]
            else:
                row += [Cell(text=DASH)] * 3
            if "alt_test" in e:
                row += [Cell(text=e["alt_test"]["decision"]), w.ref(val, f"judges/{vj}/alt_test/rho"),
                        w.ref(val, f"judges/{vj}/alt_test/decision_stability")]
            else:
                row += [Cell(text=DASH)] * 3
            if "ranking" in val.results:
                rj = val.results["ranking"]["judges"]
                row.append(w.ref(val, f"ranking/p_best/{rj.index(judge)}") if judge in rj else Cell(text=DASH))
            if "verdict" in e:
                sentences.append(e["verdict"])
        rows.append(row)
    w.put("judges", list(ctx.judges))
    w.put("verdicts", sentences)
    ref = val.results.get("reference") if val is not None else None
    if ref is not None and ref.get("status") in ("noise", "undefined", "unreliable"):
        w.text(ref["sentence"], "warning")
    for v in sentences:
        w.heading(v["judge"], badge=v["decision"])
        w.text(v["sentence"], "p" if v["decision"] == "accept" else "warning")
    w.table("judges", "Headline numbers per judge (details in the sections below)", cols, rows)


# ----------------------------------------------------------------------------------------- registry
Builder = Callable[[Context, Writer], None]

#: Sub-steps of each section (for the progress bar); sections not listed have one.
SECTION_STEPS: dict[str, Callable[[Context], int]] = {
    "agreement": lambda c: len(c.judges) + 1,
    "validation": lambda c: len(c.judges) + 1,
    "estimation": lambda c: len(c.judges) if c.inclusion_prob is not None else 1,
}

SECTIONS: list[tuple[str, str, Builder]] = [
    ("data", "Data", data_section),
    ("agreement", "Agreement", agreement_section),
    ("annotators", "Annotators", annotators_section),
    ("validation", "Judge validation", validation_section),
    ("design", "Design", design_section),
    ("estimation", "Estimation", estimation_section),
    ("pairwise", "Pairwise", pairwise_section),
    ("biases", "Judge biases", judge_bias_section),
]

#: The sections of a pairwise-only report (``build_report(None, pairwise=...)``).
PAIRWISE_SECTIONS: list[tuple[str, str, Builder]] = [s for s in SECTIONS if s[0] in ("pairwise", "biases")]
