"""The one registry of option values users type (private): the choices of the commands' options and of the
library's parameters they map to. The library checks its parameters against these tuples and the CLI builds its
choices from them (``cli._app.registry_choices``), so a value is spelled here once. No imports, so a command's
``--help`` stays cheap."""

from __future__ import annotations

__all__ = ["LEVELS", "DUPLICATE_POLICIES", "MISSING_POLICIES", "VALIDATION_METHODS", "ALT_TEST_SCORINGS", "CORRECTIONS", "PER_HUMAN_TESTS", "RANK_BY", "GROUP_ERRORS",
           "ABSTAIN_POLICIES", "JUDGE_ONLY_ITEMS", "ALLOCATION_DESIGNS", "DRAW_DESIGNS",
           "SEQUENTIAL_METHODS", "ANNOTATION_TOOLS", "ASSIGNMENT_FORMATS", "EXPORT_FORMATS",
           "ESTIMATE_MODELS", "ESTIMATE_TARGETS", "ESTIMATE_DESIGNS", "SIMULATE_PRESETS",
           "OUTPUT_FORMATS", "TABLE_OR_JSON"]

#: ``--scale`` / ``--level`` / ``Scale(level=)``: the levels of measurement.
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
#: ``--duplicates`` / ``read_annotations(duplicates=)``: a rater labelling an item twice differently.
DUPLICATE_POLICIES: tuple[str, ...] = ("error", "first", "last")
#: ``--missing`` / ``read_annotations(missing=)``, ``read_pairwise(missing=)``: empty labels or verdicts.
MISSING_POLICIES: tuple[str, ...] = ("error", "drop")
#: ``validate --method`` / ``validate_judges(method=)``.
VALIDATION_METHODS: tuple[str, ...] = ("loo", "alt-test", "both")
#: ``validate --scoring`` / ``alt_test(scoring=)``: the alt-test's per-item score.
ALT_TEST_SCORINGS: tuple[str, ...] = ("accuracy", "neg_rmse")
#: ``validate --correction`` / ``alt_test(correction=)``: the multiplicity correction over humans.
CORRECTIONS: tuple[str, ...] = ("by", "bh", "holm", "bonferroni")
#: ``validate --test`` / ``alt_test(test=)``: the per-human test.
PER_HUMAN_TESTS: tuple[str, ...] = ("t", "wilcoxon")
#: ``validate --rank-by`` / ``rank_judges(by=)``: the ranking statistic.
RANK_BY: tuple[str, ...] = ("rho", "omega", "mean_d", "score")
#: ``--group-error`` with ``--by``: the error rate controlled across groups.
GROUP_ERRORS: tuple[str, ...] = ("fwer", "fdr", "none")
#: ``agree --abstain-policy`` / ``agreement(abstain_policy=)``.
ABSTAIN_POLICIES: tuple[str, ...] = ("exclude", "category", "disagree")
#: ``agree --judge-only-items`` / ``compare_raters(judge_only_items=)``.
JUDGE_ONLY_ITEMS: tuple[str, ...] = ("drop", "keep")
#: ``assign --design`` / ``plan --design`` / ``simulate --design`` / ``allocate(design=)``: the allocation designs.
ALLOCATION_DESIGNS: tuple[str, ...] = ("random", "strat", "panel", "seq-refined", "seq-coverage")
#: ``study draw --design`` / ``Study.draw(design=)``: the designs of the human subsample for estimation.
DRAW_DESIGNS: tuple[str, ...] = ("uniform", "active", "neyman")
#: ``watch --method`` / ``study status --method`` / ``validate_sequential(method=)``: the sequential rules.
SEQUENTIAL_METHODS: tuple[str, ...] = ("alt-test", "loo")
#: The annotation tools an assignment file can be written for (tasks JSON, records JSON), with each item's content.
ANNOTATION_TOOLS: tuple[str, ...] = ("label-studio", "argilla")
#: ``assign --to`` / ``raters --to`` / ``study assign --to`` / ``write_assignments(format=)``.
ASSIGNMENT_FORMATS: tuple[str, ...] = ("csv", "jsonl", *ANNOTATION_TOOLS)
#: ``study export --to`` / ``Study.export(to=)``.
EXPORT_FORMATS: tuple[str, ...] = ("csv", "parquet")
#: ``estimate --model`` / ``plan-estimate --model``: the prediction models a command offers (the library's
#: ``estimation.MODELS`` has one more, ``select``).
ESTIMATE_MODELS: tuple[str, ...] = ("calibrated", "identity", "linear", "ridge", "isotonic", "gbm")
#: ``estimate --target`` / ``dr_mean(target=)``: the population the mean is of.
ESTIMATE_TARGETS: tuple[str, ...] = ("superpopulation", "finite")
#: ``plan-estimate --design`` / ``plan_estimation(design=)``: sample sizes, or item-level probabilities.
ESTIMATE_DESIGNS: tuple[str, ...] = ("standard", "active")
#: ``simulate --preset``: the experiment grids.
SIMULATE_PRESETS: tuple[str, ...] = ("sparse-overlap",)
#: ``--format`` of the commands that print a table, JSON or CSV (agree, raters, pairwise, bias).
OUTPUT_FORMATS: tuple[str, ...] = ("table", "json", "csv")
#: ``--format`` of the commands that print a table or JSON.
TABLE_OR_JSON: tuple[str, ...] = OUTPUT_FORMATS[:2]
