"""The one registry of the commands' options (private): for each option a command declares, its flags, default
and help, keyed by a stable name (``"estimate.model"``: command, then parameter). The CLI declares an option with
one call reading this table (``cli._app.option``), so ``--help``, the docs site's CLI reference (generated from the
Typer app) and the code read the same text. The values users type live in :mod:`voirdire._options`. Plain data,
no heavy imports, so a command's ``--help`` stays cheap."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import TYPE_CHECKING, Any

from ._defaults import DEFAULT_N_RESAMPLES, REPORT_MIN_N_RESAMPLES
from ._format_names import format_in_help
from ._options import (
    ABSTAIN_POLICIES, ALLOCATION_DESIGNS, ALT_TEST_SCORINGS, ASSIGNMENT_FORMATS, CORRECTIONS, DRAW_DESIGNS, DUPLICATE_POLICIES, ESTIMATE_DESIGNS, ESTIMATE_MODELS, ESTIMATE_TARGETS, EXPORT_FORMATS, JUDGE_ONLY_ITEMS, LEVELS, MISSING_POLICIES, OUTPUT_FORMATS, PER_HUMAN_TESTS, RANK_BY, SEQUENTIAL_METHODS, SIMULATE_PRESETS, TABLE_OR_JSON, VALIDATION_METHODS,
)
from ._scores import COEFFICIENTS, PER_ITEM_COEFFICIENTS, SCORES, names_text

__all__ = [
    "OptionSpec", "OPTIONS", "choices", "AbstainPolicy", "JudgeOnlyItems", "SeqMethod", "FileFormat",
    "DesignName", "ScoreName", "PoolCoefficient", "Level", "Duplicates", "Missing", "OutputFormat",
    "TableOrJson", "Model", "Target", "Design", "Preset", "DrawDesign", "ExportFormat", "Method", "Scoring",
    "Correction", "PerHumanTest", "RankBy"
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class OptionSpec:
    """One command-line option: its ``flags`` (long name first), ``default`` (``...``: required), ``help``, and
    what Typer checks and shows of it (``readable``: a path Typer need not open; ``min``: the least value;
    ``hidden``; ``metavar``)."""

    flags: tuple[str, ...]
    default: Any
    help: str
    readable: bool = True
    min: float | None = None
    hidden: bool = False
    metavar: str | None = None


def _resamples(*, minimum: int = 0, help: str = "Bootstrap resamples for every interval and decision stability",
               default: int = DEFAULT_N_RESAMPLES, zero: str = "0 = none") -> OptionSpec:
    """``--n-resamples`` (alias ``--resamples``): one name and one default everywhere. ``minimum``: the fewest the
    command takes, said in the help (0: none at all is accepted, ``zero`` says what that gives; the report's
    sections all have intervals, it needs :data:`voirdire._defaults.REPORT_MIN_N_RESAMPLES`)."""
    least = zero if minimum == 0 else f"at least {minimum}"
    return OptionSpec(flags=("--n-resamples", "--resamples"), default=default, help=f"{help} ({least}).")


_ROLE_HELP = "Column with human/judge per row (instead of --judge)."
_MISSING_HELP = "Empty labels: error or drop."

#: Every option, keyed ``"<command>.<parameter>"`` (``"study.draw.design"`` for a ``study`` subcommand).
OPTIONS: dict[str, OptionSpec] = {
    # options many commands share (a command that says more of one has its own entry)
    "confidence_level": OptionSpec(flags=("--confidence-level",), default=0.95, help="Level of the intervals."),
    "format": OptionSpec(flags=("--format", "-f"), default="table", help="table or json."),
    "seed": OptionSpec(flags=("--seed",), default=0, help="Seed of every random stream (same seed, same numbers)."),
    "judge": OptionSpec(flags=("--judge", "-j"), default=None, help="An LLM judge (repeatable)."),
    "n_resamples": _resamples(),
    "judge_file": OptionSpec(flags=("--judge-file",), default=None, readable=False,
        help="Nested JSON of judge labels."),
    # reader options (cli._app)
    "reader.scale": OptionSpec(flags=("--scale",), default=None, help="Level of measurement of the labels."),
    "reader.categories": OptionSpec(flags=("--categories",), default=None,
        help="Categories in order (comma-separated or repeated)."),
    "reader.abstain": OptionSpec(flags=("--abstain",), default=None,
        help="A label value meaning 'cannot assess' (repeatable)."),
    "reader.item": OptionSpec(flags=("--item",), default="item", help="Item id column."),
    "reader.rater": OptionSpec(flags=("--rater",), default="rater", help="Rater column."),
    "reader.label": OptionSpec(flags=("--label",), default="label", help="Label column."),
    "reader.role": OptionSpec(flags=("--role",), default=None, help=_ROLE_HELP),
    "reader.cluster": OptionSpec(flags=("--cluster",), default=None,
        help="Column grouping items into clusters (resampled together)."),
    "reader.cluster_sep": OptionSpec(flags=("--cluster-sep",), default=None,
        help="Cluster = item id before this separator (e.g. '__')."),
    "reader.duplicates": OptionSpec(flags=("--duplicates",), default="error",
        help="A rater labelling an item twice differently: error, first or last."),
    "reader.missing": OptionSpec(flags=("--missing",), default="error", help=_MISSING_HELP),
    # format options (cli._app)
    "format.format_in": OptionSpec(flags=("--format-in",), default="auto", help=format_in_help()),  # input formats
    "format.wide": OptionSpec(flags=("--wide",), default=False,
        help="FILE is wide: one row per item, one column per rater (--judge names the judge columns). Detected when "
             "there are no rater/label columns."),
    "format.where": OptionSpec(flags=("--where",), default=None,
        help="Keep only rows where COLUMN=VALUE (repeatable; a column repeated means any of its values)."),
    "format.control": OptionSpec(flags=("--control",), default=None,
        help="Label Studio export: the control (from_name) holding the label."),
    "format.question": OptionSpec(flags=("--question",), default=None,
        help="Argilla export: the question whose answers are the labels."),
    "format.by": OptionSpec(flags=("--by",), default=None,
        help="One result per value of COLUMN (a criterion, a language), and the pooled one (repeatable: --by "
             "criterion --by language). A wide file may name its columns RATER:CRITERION."),
    # pairwise-reader options (cli._app)
    "pairwise-reader.pair": OptionSpec(flags=("--pair",), default=None,
        help="Pairwise file: column with the pair id; repeat it for a key spanning several columns (--pair q_id "
             "--pair model_a --pair model_b). Default: pair."),
    "pairwise-reader.rater": OptionSpec(flags=("--rater",), default="rater", help="Column with the rater name."),
    "pairwise-reader.verdict": OptionSpec(flags=("--verdict",), default="verdict",
        help="Pairwise file: column with the verdict (A, T for tie, or B)."),
    "pairwise-reader.order": OptionSpec(flags=("--order",), default="order",
        help="Pairwise file: column with the presented order AB/BA (judges)."),
    "pairwise-reader.role": OptionSpec(flags=("--role",), default=None, help=_ROLE_HELP),
    "pairwise-reader.presented": OptionSpec(flags=("--presented",), default=False,
        help="Pairwise verdicts are in the presented order (A = shown first)."),
    "pairwise-reader.verdict_map": OptionSpec(flags=("--verdict-map",), default=None,
        help="Pairwise file: extra verdict spelling RAW=A|T|B, e.g. model_1=A (repeatable)."),
    "pairwise-reader.missing": OptionSpec(flags=("--missing",), default="error", help=_MISSING_HELP),
    # the reader options a command gives its own meaning, default or name
    "estimate.scale": OptionSpec(flags=("--scale",), default="interval", help="Level of the scores (numeric)."),
    "estimate.abstain": OptionSpec(flags=("--abstain",), default=None,
        help="A score value meaning 'cannot assess' (repeatable)."),
    "estimate.label": OptionSpec(flags=("--label",), default="label", help="Score column."),
    "estimate.cluster": OptionSpec(flags=("--cluster",), default=None, help="Column grouping items into clusters."),
    "estimate.cluster_sep": OptionSpec(flags=("--cluster-sep",), default=None,
        help="Cluster = item id before this separator."),
    "plan-estimate.scale": OptionSpec(flags=("--scale",), default="interval", help="Level of the pilot's scores."),
    "plan-estimate.abstain": OptionSpec(flags=("--abstain",), default=None,
        help="A pilot score meaning 'cannot assess' (repeatable)."),
    "plan-estimate.item": OptionSpec(flags=("--item",), default="item",
        help="Item id column of the pilot and --draw files."),
    "plan-estimate.rater": OptionSpec(flags=("--rater",), default="rater", help="Rater column of the pilot."),
    "plan-estimate.label": OptionSpec(flags=("--label",), default="label", help="Score column of the pilot."),
    "plan-estimate.role": OptionSpec(flags=("--role",), default=None,
        help="Column with human/judge per row of the pilot (instead of --judge)."),
    "simulate.item": OptionSpec(flags=("--item",), default="item", help="Item id column of --full long files."),
    "simulate.rater": OptionSpec(flags=("--rater",), default="rater", help="Rater column of --full long files."),
    "simulate.label": OptionSpec(flags=("--label",), default="label", help="Label column of --full long files."),
    "assign.rater": OptionSpec(flags=("--rater-column",), default="rater", help="Rater column of FILE."),
    # estimate
    "estimate.judges": OptionSpec(flags=("--judge", "-j"), default=...,
        help="An LLM judge (repeatable: several judges, prompts or samples are combined); each must score every "
             "item."),
    "estimate.seed": OptionSpec(flags=("--seed",), default=0, help="Seed of the cross-fitting folds."),
    "plan-estimate.confidence_level": OptionSpec(flags=("--confidence-level",), default=0.95,
        help="Level for --target-halfwidth."),
    "plan-estimate.judges": OptionSpec(flags=("--judge", "-j"), default=None,
        help="A judge in the pilot file (repeatable: several judges are combined, as in estimate)."),
    "plan-estimate.seed": OptionSpec(flags=("--seed",), default=0,
        help="Seed of the --draw sample (same seed, same sample)."),
    "estimate.inclusion_prob": OptionSpec(flags=("--inclusion-prob", "-p"), default=...,
        help="Probability each item was sent to humans: a number for all items, or a column of FILE (constant "
             "within an item)."),
    "estimate.model": OptionSpec(flags=("--model",), default="calibrated",
        help="Prediction of the human score from the judges': calibrated (ridge + power tuning, never worse than "
             "human-only), identity (the paper's), linear, ridge, isotonic, gbm."),
    "estimate.cross_fit": OptionSpec(flags=("--cross-fit",), default=0,
        help="Cross-fitting folds (1 = none); 0 (default) = auto: leave-one-out for calibrated/linear/ridge up to "
             "2000 labelled units, else 5."),
    "estimate.strata": OptionSpec(flags=("--strata",), default=None,
        help="Column of FILE with the design stratum of each item."),
    "estimate.target": OptionSpec(flags=("--target",), default="superpopulation",
        help="superpopulation (items sampled from a larger pool) or finite (these items)."),
    "estimate.compare": OptionSpec(flags=("--compare/--no-compare",), default=True,
        help="Also show human-only and PPI++ estimates."),
    "estimate.drop_unscored": OptionSpec(flags=("--drop-unscored",), default=False,
        help="Drop items the judge did not score instead of failing."),
    "plan-estimate.target_halfwidth": OptionSpec(flags=("--target-halfwidth",), default=None,
        help="Wanted CI half-width (score units)."),
    "plan-estimate.n_star": OptionSpec(flags=("--n-star",), default=None,
        help="Human-only sample size whose precision to match."),
    "plan-estimate.effect_size": OptionSpec(flags=("--effect-size",), default=None,
        help="Difference to detect (score units)."),
    "plan-estimate.power": OptionSpec(flags=("--power",), default=0.8, help="Power for --effect-size."),
    "plan-estimate.significance_level": OptionSpec(flags=("--significance-level",), default=0.05,
        help="Test level for --effect-size."),
    "plan-estimate.sd": OptionSpec(flags=("--sd",), default=None,
        help="Standard deviation of the human scores (or from --pilot)."),
    "plan-estimate.r2": OptionSpec(flags=("--r2",), default=None,
        help="Share of the human variance the judge explains, in [0, 1)."),
    "plan-estimate.pilot": OptionSpec(flags=("--pilot",), default=None, readable=False,
        help="Pilot annotation file (judge and humans on the same items)."),
    "plan-estimate.design": OptionSpec(flags=("--design",), default="standard",
        help="standard (sample sizes, or Neyman strata with --strata) or active: item-level probabilities from the "
             "judges' predicted residuals and costs (needs --pilot with every judge on every item, --budget and "
             "--out)."),
    "plan-estimate.cost_column": OptionSpec(flags=("--cost-column",), default=None,
        help="Column of the --pilot file with each item's cost of a human label (--design active)."),
    "plan-estimate.pilot_prob": OptionSpec(flags=("--pilot-prob",), default=None,
        help="Probability with which the pilot's human-scored items were drawn: a number or a column (--design "
             "active)."),
    "plan-estimate.floor": OptionSpec(flags=("--floor",), default=None,
        help="Share of the uniform design mixed into --design active (default: chosen on the pilot's residuals, 1 = "
             "uniform when they are not predictable; 0.3 without a pilot)."),
    "plan-estimate.model": OptionSpec(flags=("--model",), default="calibrated",
        help="Prediction model the study will use (for the pilot R²; the same default as estimate)."),
    "plan-estimate.n_total": OptionSpec(flags=("--N", "--n-total"), default=None, help="Items the LLM scores."),
    "plan-estimate.n_labeled": OptionSpec(flags=("--n", "--n-labeled"), default=None, help="Items humans score."),
    "plan-estimate.inclusion_prob": OptionSpec(flags=("--inclusion-prob", "-p"), default=None,
        help="pi = n/N instead of --n."),
    "plan-estimate.strata_file": OptionSpec(flags=("--strata",), default=None, readable=False,
        help="CSV of strata (stratum, n_items, residual_sd[, cost][, sd]) for a Neyman allocation; needs --budget."),
    "plan-estimate.budget": OptionSpec(flags=("--budget",), default=None,
        help="Expected cost of human labels for --strata."),
    "plan-estimate.min_prob": OptionSpec(flags=("--min-prob",), default=0.0,
        help="Floor on each stratum's inclusion probability."),
    "plan-estimate.draw": OptionSpec(flags=("--draw",), default=None, readable=False,
        help="File listing the study's items (an item column): draw the human sample with the planned probabilities."),
    "plan-estimate.draw_out": OptionSpec(flags=("--out", "-o"), default=None, readable=False,
        help="Where --draw writes the assignment CSV (item, inclusion_prob, selected[, stratum])."),
    "plan-estimate.strata_column": OptionSpec(flags=("--strata-column",), default=None,
        help="Column of the --draw file with each item's stratum (with --strata)."),
    # validate
    "validate.judge": OptionSpec(flags=("--judge", "-j"), default=None,
        help="The LLM judge to validate (repeat for several; default: every judge in the file)."),
    "validate.output_format": OptionSpec(flags=("--format", "-f"), default="table",
        help="table, json, csv, markdown (a CI summary) or junit (one case per judge)."),
    "validate.method": OptionSpec(flags=("--method", "-m"), default="both", help="loo, alt-test or both."),
    "validate.epsilon": OptionSpec(flags=("--epsilon", "-e"), default=None,
        help="Tolerance of the chosen method (loo default 0.05; alt-test default 0.2). With --method both it is the "
             "leave-one-out tolerance; use --alt-epsilon for the alt-test."),
    "validate.alt_epsilon": OptionSpec(flags=("--alt-epsilon",), default=None,
        help="Alt-test margin: 0.2 expert, 0.15 skilled, 0.1 crowd annotators (default 0.2)."),
    "validate.score": OptionSpec(flags=("--score",), default=None,
        help="Leave-one-out agreement score (default: alpha on interval/ratio labels, else agreement)."),
    "validate.scoring": OptionSpec(flags=("--scoring",), default=None,
        help="Alt-test scoring (default: neg_rmse for numeric ordinal/interval labels, else accuracy)."),
    "validate.threshold": OptionSpec(flags=("--threshold",), default=0.5,
        help="Leave-one-out: accept when omega reaches it."),
    "validate.min_items": OptionSpec(flags=("--min-items",), default=10,
        help="Leave-one-out: humans with fewer eligible items are reported but not evaluated (1 = the plain rule)."),
    "validate.correction": OptionSpec(flags=("--correction",), default="by",
        help="Alt-test multiplicity correction."),
    "validate.test": OptionSpec(flags=("--test",), default="t", help="Alt-test per-human test: t or wilcoxon."),
    "validate.q": OptionSpec(flags=("--q",), default=0.05, help="Alt-test level of the correction (FDR for by/bh)."),
    "validate.min_items_per_human": OptionSpec(flags=("--min-items-per-human",), default=30,
        help="Alt-test: skip humans with fewer items."),
    "validate.min_humans_per_item": OptionSpec(flags=("--min-humans-per-item",), default=2,
        help="Alt-test: keep items with this many humans."),
    "validate.rank_by": OptionSpec(flags=("--rank-by",), default=None,
        help="Ranking statistic with several judges (default rho with the alt-test, else mean_d)."),
    "validate.stability_threshold": OptionSpec(flags=("--stability-threshold",), default=0.8,
        help="A decision less stable than this is inconclusive (in (0, 1])."),
    "validate.reference_floor": OptionSpec(flags=("--reference-floor",), default=0.4,
        help="Humans' own alpha below which no judge is accepted (in [0, 1))."),
    "validate.fail_on": OptionSpec(flags=("--fail-on",), default=None,
        help="Exit with code 3 when a judge's verdict is reject ('reject') or reject/inconclusive ('inconclusive'); "
             "1 when it cannot run."),
    "validate.junit": OptionSpec(flags=("--junit",), default=None, readable=False,
        help="Also write the JUnit XML report (one case per judge) to this file: one run gives a CI summary and a "
             "CI reporter's file."),
    "validate.exclude_rater": OptionSpec(flags=("--exclude-rater",), default=None,
        help="Leave this human out of the validation (repeatable); said in the output, never silent."),
    "validate.check_raters": OptionSpec(flags=("--check-raters/--no-check-raters",), default=True,
        help="Flag outlier annotators and show the leave-one-out decision again without them."),
    "validate.sequential": OptionSpec(flags=("--sequential",), default=False,
        help="Anytime-valid validation look by look (betting e-processes, e-BH across humans); needs "
             "--round-column. See voirdire watch."),
    "validate.round_column": OptionSpec(flags=("--round-column",), default=None,
        help="With --sequential: the column holding each label's round (batch number or arrival time)."),
    "validate.group_error": OptionSpec(flags=("--group-error",), default="fwer",
        help="With --by: the error rate controlled across groups: fwer (Holm), fdr (Benjamini-Hochberg) or none."),
    # agree
    "agree.output_format": OptionSpec(flags=("--format", "-f"), default="table", help="table, json or csv."),
    "agree.coefficient": OptionSpec(flags=("--coefficient", "-c"), default=None,
        help=f"{', '.join(COEFFICIENTS)} (repeatable; default: a sensible set)."),  # the registry's names
    "agree.level": OptionSpec(flags=("--level",), default=None,
        help="Metric of Krippendorff's alpha (default: the scale)."),
    "agree.weights": OptionSpec(flags=("--weights",), default=None,
        help="Weights of the weighted coefficients (linear, quadratic, ...)."),
    "agree.abstain_policy": OptionSpec(flags=("--abstain-policy",), default="exclude",
        help="exclude, category (its own label) or disagree (a penalty)."),
    "agree.judge_only_items": OptionSpec(flags=("--judge-only-items",), default="drop",
        help="Items only the judge labelled: drop them from the 'humans + judge' rows (default; they would only "
             "shift the chance term) or keep them (the old behaviour)."),
    "agree.positive": OptionSpec(flags=("--positive",), default=None, help="Positive category of the binary family."),
    "agree.matrix": OptionSpec(flags=("--matrix",), default=False,
        help="Also print the rater-by-rater Cohen's kappa matrix."),
    "agree.stream": OptionSpec(flags=("--stream",), default=False,
        help="Read a Parquet/CSV file in batches, holding per-item statistics only (tables larger than memory; "
             f"items must be grouped). Streams {names_text(PER_ITEM_COEFFICIENTS, 'and')}."),
    "agree.scheduler": OptionSpec(flags=("--scheduler",), default=None,
        help="With --stream: compute the statistics of a Parquet file's row groups on this Dask scheduler "
             "(tcp://host:8786; only one you trust: Dask unpickles what it sends); needs voirdire[dask]."),
    # plan
    "plan.judge": OptionSpec(flags=("--judge", "-j"), default=None, help="An LLM judge to plan for (repeatable)."),
    "plan.seed": OptionSpec(flags=("--seed",), default=0,
        help="Seed of the simulation and of the verdicts (as validate --seed)."),
    "overlap.primary": OptionSpec(flags=("--primary",), default=None,
        help="The first-pass human (default: who labelled every item)."),
    "overlap.min_eligible": OptionSpec(flags=("--min-eligible",), default=30,
        help="Warn below this many eligible items per comparison."),
    "plan.epsilon": OptionSpec(flags=("--epsilon",), default=0.05,
        help="Tolerance of the leave-one-out rule (d_k >= -epsilon)."),
    "plan.significance_level": OptionSpec(flags=("--significance-level",), default=0.05,
        help="One comparison may falsely reject with probability a/2."),
    "plan.score": OptionSpec(flags=("--score",), default="agreement",
        help="Score of the rule: agreement (closed form) or alpha/kappa/ac1 (bootstrap sigma0)."),
    "plan.mu_d": OptionSpec(flags=("--mu-d",), default=None,
        help="Mean per-item difference judge - human (no pilot)."),
    "plan.sigma0": OptionSpec(flags=("--sigma0",), default=None, help="Its per-item standard deviation (no pilot)."),
    "plan.delta_min": OptionSpec(flags=("--delta-min",), default=None,
        help="Smallest gap between the best judge and a rival (no pilot)."),
    "plan.n_judges": OptionSpec(flags=("--n-judges",), default=None, help="Number of judges to rank (no pilot)."),
    "plan.budget": OptionSpec(flags=("--budget", "-b"), default=None,
        help="Candidate items per secondary to simulate (repeatable or comma-separated)."),
    "plan.design": OptionSpec(flags=("--design",), default="random", help="Allocation design for --budget."),
    "plan.repetitions": OptionSpec(flags=("--repetitions",), default=200, help="Simulated runs per budget."),
    "plan.fr_target": OptionSpec(flags=("--fr-target",), default=0.1, help="Largest acceptable false-reject rate."),
    "plan.fa_target": OptionSpec(flags=("--fa-target",), default=0.1, help="Largest acceptable false-accept rate."),
    "plan.n_jobs": OptionSpec(flags=("--n-jobs",), default=1, help="Worker processes for --budget."),
    # watch
    "watch.seed": OptionSpec(flags=("--seed",), default=0, min=0, help="Order of the items within a round."),
    "watch.round_column": OptionSpec(flags=("--round-column",), default=...,
        help="Column with each label's round or arrival time."),
    "watch.method": OptionSpec(flags=("--method",), default="alt-test", help="alt-test or loo."),
    "watch.epsilon": OptionSpec(flags=("--epsilon",), default=None, help="Margin (default 0.2 alt-test, 0.05 loo)."),
    "watch.q": OptionSpec(flags=("--q",), default=0.05, help="e-BH level across humans."),
    "watch.follow": OptionSpec(flags=("--follow",), default=None,
        help="Re-read the file every SECONDS while it grows, until a decision (Ctrl-C stops)."),
    "watch.max_wait": OptionSpec(flags=("--max-wait",), default=None, min=0.0,
        help="With --follow: give up after SECONDS."),
    # report
    "report.n_resamples": _resamples(minimum=REPORT_MIN_N_RESAMPLES),
    "report.seed": OptionSpec(flags=("--seed",), default=0,
        help="Seed of every resampling step (same seed, same numbers)."),
    "report.confidence_level": OptionSpec(flags=("--confidence-level",), default=0.95,
        help="Level of every interval."),
    "report.out": OptionSpec(flags=("--out", "-o"), default="voirdire-report", readable=False,
        help="Output folder for report.html and report.json."),
    "report.pairwise": OptionSpec(flags=("--pairwise",), default=None, readable=False,
        help="Pairwise verdicts file for the Pairwise section."),
    "report.pairwise_judge": OptionSpec(flags=("--pairwise-judge",), default=None,
        help="An LLM judge in the pairwise file (default: its 'role' column, else the --judge names in it)."),
    "report.inclusion_prob": OptionSpec(flags=("--inclusion-prob",), default=None,
        help="Known probability each item went to the humans: a number, or a column of FILE."),
    "report.epsilon": OptionSpec(flags=("--epsilon",), default=0.05,
        help="Tolerance of the leave-one-human-out rule."),
    "report.alt_epsilon": OptionSpec(flags=("--alt-epsilon",), default=0.2,
        help="Margin of the alt-test: 0.2 expert, 0.15 skilled, 0.1 crowd annotators."),
    "report.stability_threshold": OptionSpec(flags=("--stability-threshold",), default=0.8,
        help="A decision less stable than this is inconclusive (in (0, 1])."),
    "report.reference_floor": OptionSpec(flags=("--reference-floor",), default=0.4,
        help="Humans' own alpha below which no judge is accepted (in [0, 1))."),
    "report.title": OptionSpec(flags=("--title",), default=None, help="Page title."),
    "report.unsampled": OptionSpec(flags=("--unsampled",), default="error", hidden=True,
        help="error|omit: a human-labelled item with no inclusion probability is an error, or outside the "
             "probability sample (study report)."),
    "report.quiet": OptionSpec(flags=("--quiet", "-q"), default=False, help="No progress bar."),
    # raters
    "raters.resamples": _resamples(help="Bootstrap resamples", zero="0 = no intervals, no flags"),
    "raters.judge": OptionSpec(flags=("--judge", "-j"), default=None,
        help="Mark this rater as a judge (left out of the pool)."),
    "raters.output_format": OptionSpec(flags=("--format", "-f"), default="table", help="table, json or csv."),
    "raters.seed": OptionSpec(flags=("--seed",), default=0,
        help="Seed of the bootstrap (same seed, same numbers as validate and the report)."),
    "raters.rater_names": OptionSpec(flags=("--rater-name",), default=None,
        help="Pool of annotators (repeat; default: every human)."),
    "raters.score": OptionSpec(flags=("--score",), default=None,
        help="Leave-one-out score S (as validate's; default: alpha on interval/ratio labels, else agreement)."),
    "raters.coefficient": OptionSpec(flags=("--coefficient",), default="krippendorff_alpha", metavar="<name>",
        help=f"Pool coefficient recomputed without each annotator: {names_text(PER_ITEM_COEFFICIENTS)}."),
    "raters.margin": OptionSpec(flags=("--margin",), default=0.05,
        help="Smallest shortfall below the others' median worth flagging (units of S)."),
    "raters.significance_level": OptionSpec(flags=("--significance-level",), default=0.05,
        help="Family-wise error rate of the flags (Holm)."),
    "raters.min_items": OptionSpec(flags=("--min-items",), default=10,
        help="Annotators sharing fewer items with the pool are not tested."),
    "raters.competence": OptionSpec(flags=("--competence/--no-competence",), default=True,
        help="Fit Dawid-Skene and MACE."),
    "raters.top": OptionSpec(flags=("--top",), default=10, help="Contested items to show (0 = none)."),
    "raters.sensitivity": OptionSpec(flags=("--sensitivity/--no-sensitivity",), default=True,
        help="When an annotator is flagged, show each judge's leave-one-out decision again without them."),
    "raters.adjudicate": OptionSpec(flags=("--adjudicate",), default=None, readable=False,
        help="Write the --top most contested items as an assignment file (.csv, .jsonl, or .json with --to) with a "
             "manifest."),
    "raters.adjudicator": OptionSpec(flags=("--adjudicator",), default="adjudicator",
        help="Rater name in the adjudication file."),
    "raters.file_format": OptionSpec(flags=("--to",), default=None,
        help="Format of the --adjudicate file: csv or jsonl (default: from the extension), label-studio (tasks "
             "JSON) or argilla (records JSON)."),
    # pairwise
    "pairwise.judge": OptionSpec(flags=("--judge", "-j"), default=None,
        help="A rater that is an LLM judge (repeatable)."),
    "pairwise.seed": OptionSpec(flags=("--seed",), default=0, help="Random seed (reproducible results)."),
    "pairwise.fmt": OptionSpec(flags=("--format", "-f"), default="table",
        help="table, json, or csv (one row per pair; with --evaluate the comparison)."),
    "pairwise.evaluate": OptionSpec(flags=("--evaluate",), default=False,
        help="Leave-one-human-out comparison with the baselines."),
    "pairwise.group": OptionSpec(flags=("--group",), default=None,
        help="Human group for --evaluate: NAME=GROUP or PREFIX*=GROUP (first match wins)."),
    "pairwise.choice": OptionSpec(flags=("--choice/--no-choice",), default=True,
        help="Held-out choice of the forecaster: the model and the baselines forecast held-out humans; the per-pair "
             "forecasts shown are those of the lowest held-out NLL (the model on a tie)."),
    "pairwise.choice_folds": OptionSpec(flags=("--choice-folds",), default=5,
        help="Folds of humans for the held-out choice (>= 2)."),
    "report.choice": OptionSpec(flags=("--choice/--no-choice",), default=True,
        help="With --pairwise: the held-out choice of the forecaster, as in `voirdire pairwise`."),
    "report.choice_folds": OptionSpec(flags=("--choice-folds",), default=5,
        help="With --pairwise: folds of humans for the held-out choice (>= 2)."),
    "pairwise.particles": OptionSpec(flags=("--particles",), default=300, help="SMC particles."),
    "pairwise.update": OptionSpec(flags=("--update",), default="soft",
        help="Dirichlet update of the humans' counts: soft or hard."),
    "pairwise.laplace": OptionSpec(flags=("--laplace/--profile",), default=True,
        help="Laplace-corrected or profile-likelihood weights."),
    "pairwise.judge_ties": OptionSpec(flags=("--judge-ties/--no-judge-ties",), default=True,
        help="Learn each judge's tie offset."),
    "pairwise.judge_reliability": OptionSpec(flags=("--judge-reliability/--no-judge-reliability",), default=True,
        help="Learn each judge's reliability in [0, 1] (0: its verdicts carry no information; both --no-* options: "
             "the paper's judge)."),
    "pairwise.calibrated": OptionSpec(flags=("--calibrated-intervals",), default=False,
        help="The whole fit under adaptive quadrature and an importance-sampled batch move of the particles (about "
             "8x the time). The default already reads the bias intervals from the judges' batch posterior "
             "(docs/pairwise.md, 'Are the bias intervals honest?')."),
    "pairwise.mode": OptionSpec(flags=("--mode",), default="auto",
        help="Particles: joint, per-judge, or auto (per-judge above 16 judges)."),
    "pairwise.top": OptionSpec(flags=("--top",), default=10,
        help="How many of the most uncertain pairs to list (0: none)."),
    "pairwise.max_humans": OptionSpec(flags=("--max-humans",), default=8,
        help="Confusion matrices shown in the table output."),
    "pairwise.save_state": OptionSpec(flags=("--save-state",), default=None, readable=False,
        help="Save the model state (.npz) to resume the stream."),
    "pairwise.resume": OptionSpec(flags=("--resume",), default=None, readable=False,
        help="Continue the stream from a saved state (model options come from the state)."),
    # bias
    "bias.judge": OptionSpec(flags=("--judge", "-j"), default=None,
        help="A rater that is an LLM judge (repeatable)."),
    "bias.fmt": OptionSpec(flags=("--format", "-f"), default="table", help="table, json or csv."),
    "bias.family": OptionSpec(flags=("--family",), default=None,
        help="NAME=FAMILY for a judge or model whose family the built-in rule does not know (repeatable)."),
    "bias.fdr": OptionSpec(flags=("--fdr",), default=0.05,
        help="False discovery rate of the flags (Benjamini-Hochberg)."),
    # assign
    "assign.judge": OptionSpec(flags=("--judge", "-j"), default=None, help="An LLM judge in FILE (repeatable)."),
    "assign.seed": OptionSpec(flags=("--seed",), default=None,
        help="Seed (a drawn seed is recorded in the manifest)."),
    "assign.n_per_rater": OptionSpec(flags=("--n-per-rater", "-n"), default=..., help="Items each rater gets."),
    "assign.output": OptionSpec(flags=("--output", "-o"), default=..., readable=False,
        help="File to write (.csv, .jsonl, or .json with --to)."),
    "assign.design": OptionSpec(flags=("--design",), default="strat",
        help="random, strat (primary's labels as strata), panel (one shared panel), seq-refined or seq-coverage."),
    "assign.assignee": OptionSpec(flags=("--rater", "-r"), default=None,
        help="Who gets work, in order (repeatable; new names allowed). Default: every human but the primary."),
    "assign.primary": OptionSpec(flags=("--primary",), default=None, help="Human whose labels define the strata."),
    "assign.file_format": OptionSpec(flags=("--to", "--format", "-f"), default=None,
        help="csv or jsonl (default: from the extension), or the annotation tool that will import the round: "
             "label-studio (tasks JSON) or argilla (records JSON)."),
    "assign.json_out": OptionSpec(flags=("--json",), default=False,
        help="Print the manifest as JSON instead of a summary."),
    # simulate
    "simulate.seed": OptionSpec(flags=("--seed",), default=0,
        help="Seed (results are identical for a seed on any executor)."),
    "simulate.judge": OptionSpec(flags=("--judge", "-j"), default=None,
        help="Judges in --full long files (repeatable)."),
    "simulate.fmt": OptionSpec(flags=("--format", "-f"), default="table", help="table or json (the summaries)."),
    "simulate.preset": OptionSpec(flags=("--preset",), default="sparse-overlap", help="The experiment to run."),
    "simulate.repetitions": OptionSpec(flags=("--repetitions", "-r"), default=50,
        help="Repetitions per setting (matrix), design and coverage."),
    "simulate.matrices": OptionSpec(flags=("--matrices",), default=8,
        help="Synthetic matrices drawn per (K, L), each from its own seed: reference decisions are averaged over "
             "them."),
    "simulate.n_jobs": OptionSpec(flags=("--n-jobs",), default=1, help="Local worker processes (-1: all cores)."),
    "simulate.scheduler": OptionSpec(flags=("--scheduler",), default=None,
        help="Dask scheduler address, e.g. tcp://host:8786 (only one you trust: Dask unpickles what it sends)."),
    "simulate.output": OptionSpec(flags=("--output", "-o"), default=None, readable=False,
        help="Directory for the CSV and Markdown tables."),
    "simulate.full": OptionSpec(flags=("--full",), default=None, readable=False,
        help="A fully crossed real data set to subsample as well (repeatable; e.g. an AltTest directory)."),
    "simulate.design": OptionSpec(flags=("--design",), default=None,
        help="Designs (default: random, strat, seq-refined, seq-coverage)."),
    "simulate.coverage": OptionSpec(flags=("--coverage",), default=None,
        help="Per-secondary coverages (default 0.05, 0.25, 0.5)."),
    "simulate.n_items": OptionSpec(flags=("--n-items",), default=500, help="Items of the synthetic matrices."),
    "simulate.clustered": OptionSpec(flags=("--clustered",), default=False,
        help="Also run the clustered synthetic variant."),
    "simulate.n_clusters": OptionSpec(flags=("--n-clusters",), default=None,
        help="Clusters of the clustered variant (default n/10)."),
    "simulate.cluster_sd": OptionSpec(flags=("--cluster-sd",), default=1.0,
        help="Cluster difficulty sd (logit scale) of the clustered variant."),
    "simulate.no_synthetic": OptionSpec(flags=("--no-synthetic",), default=False,
        help="Only the --full real data sets."),
    "simulate.epsilon": OptionSpec(flags=("--epsilon",), default=0.05, help="Tolerance of the leave-one-out rule."),
    # demo
    "demo.resamples": _resamples(default=1000, minimum=REPORT_MIN_N_RESAMPLES, help="Bootstrap resamples"),
    "demo.seed": OptionSpec(flags=("--seed",), default=0, help="Seed of the bootstrap."),
    "demo.out": OptionSpec(flags=("--out", "-o"), default=None, readable=False,
        help="Folder for the demo's files (agreement.json, report)."),
    # study
    "study.status.seed": OptionSpec(flags=("--seed",), default=0, min=0, help="Order of the items within a round."),
    "study.assign.seed": OptionSpec(flags=("--seed",), default=0, min=0, help="Seed of the draw (recorded)."),
    "study.draw.judge": OptionSpec(flags=("--judge", "-j"), default=None,
        help="Judge(s) whose scores drive active/neyman (default: every judge of the study)."),
    "study.draw.seed": OptionSpec(flags=("--seed",), default=0, min=0, help="Seed of the draw (recorded)."),
    "study.init.note": OptionSpec(flags=("--note",), default="", help="A note stored with the study."),
    "study.add.strict": OptionSpec(flags=("--strict",), default=False,
        help="Refuse the round if a human label was never assigned."),
    "study.add.by": OptionSpec(flags=("--by",), default=None,
        help="Keep each item's COLUMN (a criterion, a language; one value per item; repeatable) so that the study's "
             "commands can group by it."),
    "study.status.sequential": OptionSpec(flags=("--sequential/--no-sequential",), default=True,
        help="Show the running anytime-valid decision per judge over the rounds (as voirdire watch)."),
    "study.status.method": OptionSpec(flags=("--method",), default="alt-test", help="alt-test or loo."),
    "study.status.epsilon": OptionSpec(flags=("--epsilon",), default=None,
        help="Margin (default 0.2 alt-test, 0.05 loo)."),
    "study.status.by": OptionSpec(flags=("--by",), default=None,
        help="One running decision and verdict per value of an item group kept by `study add --by` (repeatable), "
             "and the pooled one."),
    "study.export.output": OptionSpec(flags=("--output", "-o"), default=..., readable=False, help="File to write."),
    "study.export.to": OptionSpec(flags=("--to",), default="csv", help="csv or parquet."),
    "study.assign.n_per_rater": OptionSpec(flags=("--n-per-rater", "-n"), default=..., min=1,
        help="Items each rater gets."),
    "study.assign.output": OptionSpec(flags=("--output", "-o"), default=..., readable=False,
        help="The next batch (.csv, .jsonl, or .json with --to)."),
    "study.assign.design": OptionSpec(flags=("--design",), default="strat",
        help="random, strat, panel, seq-refined or seq-coverage."),
    "study.assign.assignee": OptionSpec(flags=("--rater", "-r"), default=None,
        help="A human to give work (repeatable; default all)."),
    "study.assign.to": OptionSpec(flags=("--to",), default=None, help="csv, jsonl, label-studio or argilla."),
    "study.draw.n": OptionSpec(flags=("-n",), default=..., min=1, help="Expected number of items to send to humans."),
    "study.draw.output": OptionSpec(flags=("--output", "-o"), default=..., readable=False,
        help="CSV of the drawn items with their probabilities."),
    "study.draw.design": OptionSpec(flags=("--design",), default="uniform",
        help="uniform (Poisson, pi = n/N); active (more where the judges disagree, plan_active); neyman (strata = "
             "the first judge's score, residual sd from the humans' scores so far, plan_allocation)."),
    "study.draw.floor": OptionSpec(flags=("--floor",), default=0.3,
        help="active: share of the uniform design mixed in; neyman: every item keeps at least floor * n / N."),
    "study.rounds": OptionSpec(flags=("--rounds",), default=None,
        help="The draw round(s) whose drawn items and recorded probabilities the estimate uses (comma-separated or "
             "repeated; default: every draw round)."),
    "study.estimate.inclusion_prob": OptionSpec(flags=("--inclusion-prob", "-p"), default=None,
        help="Default: the probabilities the study's draw rounds recorded. A number or a column name instead: as "
             "`voirdire estimate` on `study export`'s file, with every label."),
}


def choices(name: str, names: tuple[str, ...]) -> type[Enum]:
    """A ``str`` Enum whose members are a registry's ``names``: an option's choices (Typer checks them, the help's
    metavar lists them), so a value added to :mod:`voirdire._options` or :mod:`voirdire._scores` is a choice of
    every option that takes it."""
    return Enum(name, {n: n for n in names}, type=str)  # type: ignore[return-value]


# The choices of the options whose values are a registry's names (for mypy, any Enum).
if TYPE_CHECKING:
    from enum import (  # noqa: I001
        Enum as AbstainPolicy, Enum as JudgeOnlyItems, Enum as SeqMethod, Enum as FileFormat, Enum as
        DesignName, Enum as ScoreName, Enum as PoolCoefficient, Enum as Level, Enum as Duplicates, Enum as
        Missing, Enum as OutputFormat, Enum as TableOrJson, Enum as Model, Enum as Target, Enum as Design, Enum
        as Preset, Enum as DrawDesign, Enum as ExportFormat, Enum as Method, Enum as Scoring, Enum as
        Correction, Enum as PerHumanTest, Enum as RankBy,
    )
else:
    AbstainPolicy = choices("AbstainPolicy", ABSTAIN_POLICIES)
    JudgeOnlyItems = choices("JudgeOnlyItems", JUDGE_ONLY_ITEMS)
    SeqMethod = choices("SeqMethod", SEQUENTIAL_METHODS)
    FileFormat = choices("FileFormat", ASSIGNMENT_FORMATS)
    DesignName = choices("DesignName", ALLOCATION_DESIGNS)
    ScoreName = choices("ScoreName", SCORES)
    PoolCoefficient = choices("PoolCoefficient", PER_ITEM_COEFFICIENTS)
    Level = choices("Level", LEVELS)
    Duplicates = choices("Duplicates", DUPLICATE_POLICIES)
    Missing = choices("Missing", MISSING_POLICIES)
    OutputFormat = choices("OutputFormat", OUTPUT_FORMATS)
    TableOrJson = choices("TableOrJson", TABLE_OR_JSON)
    Model = choices("Model", ESTIMATE_MODELS)
    Target = choices("Target", ESTIMATE_TARGETS)
    Design = choices("Design", ESTIMATE_DESIGNS)
    Preset = choices("Preset", SIMULATE_PRESETS)
    DrawDesign = choices("DrawDesign", DRAW_DESIGNS)
    ExportFormat = choices("ExportFormat", EXPORT_FORMATS)
    Method = choices("Method", VALIDATION_METHODS)
    Scoring = choices("Scoring", ALT_TEST_SCORINGS)
    Correction = choices("Correction", CORRECTIONS)
    PerHumanTest = choices("PerHumanTest", PER_HUMAN_TESTS)
    RankBy = choices("RankBy", RANK_BY)
