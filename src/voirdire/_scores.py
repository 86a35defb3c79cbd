"""The one registry of score and coefficient names (private), shared by agreement, validation, diagnostics,
simulate, design, workflows, the CLI and the report.

Two vocabularies meet here. The agreement coefficients (:data:`COEFFICIENTS`, re-exported as
:data:`voirdire.agreement.COEFFICIENTS`) have long names (``krippendorff_alpha``); the validation tests,
planners and simulations score a judge by one of four pair-based scores with short names (``alpha``).
:data:`SCORE_COEFFICIENT` says which coefficient each short name is, and the display names below are the
only spelling of each coefficient on a terminal (ASCII) and in the HTML report (Unicode).

A new coefficient is added here (its name, its two display names, and whether it is per-item additive or
pairwise) and in ``agreement/_coefficients.py`` (its statistics); the CLI's choices and help, the report's
labels and the JSON keys read this module (``tests/test_registry.py`` checks it).
"""

from __future__ import annotations

__all__ = ["SCORES", "SCORE_COEFFICIENT", "COEFFICIENTS", "PER_ITEM_COEFFICIENTS", "PAIRWISE_COEFFICIENTS",
           "WEIGHTED_COEFFICIENTS", "REFERENCE_COEFFICIENT", "NOMINAL_MATRIX_COEFFICIENT", "TERMINAL_NAMES", "HTML_NAMES", "matrix_coefficient",
           "names_text"]

#: Every agreement coefficient, in the order tables and ``--coefficient`` list them.
COEFFICIENTS: tuple[str, ...] = (
    "observed_agreement", "cohen_kappa", "scott_pi", "fleiss_kappa", "conger_kappa", "krippendorff_alpha",
    "gwet_ac1", "gwet_ac2", "bennett_s",
)

#: The coefficients that reduce to per-item statistics with pooled marginals only (no per-rater marginals):
#: they stream (``agree --stream``) and are recomputed quickly without one annotator (``raters --coefficient``).
PER_ITEM_COEFFICIENTS: tuple[str, ...] = (
    "observed_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1", "gwet_ac2", "bennett_s",
)

#: The coefficients of a rater-by-rater matrix (:func:`voirdire.agreement.pairwise_matrix`).
PAIRWISE_COEFFICIENTS: tuple[str, ...] = (
    "cohen_kappa", "scott_pi", "observed_agreement", "krippendorff_alpha", "fleiss_kappa", "gwet_ac1", "gwet_ac2",
    "bennett_s",
)

#: The coefficients that take agreement weights (``--weights``).
WEIGHTED_COEFFICIENTS: tuple[str, ...] = (
    "observed_agreement", "fleiss_kappa", "bennett_s", "cohen_kappa", "scott_pi", "conger_kappa", "gwet_ac2",
)

#: The humans' own reliability every verdict is read against (the reference floor).
REFERENCE_COEFFICIENT = "krippendorff_alpha"
#: The rater-by-rater matrix's coefficient on nominal labels (``agree --matrix``).
NOMINAL_MATRIX_COEFFICIENT = "cohen_kappa"

#: The validation scores (leave-one-out, ranking, planning, simulation) and the coefficient each one is.
SCORE_COEFFICIENT: dict[str, str] = {
    "agreement": "observed_agreement",
    "alpha": "krippendorff_alpha",
    "kappa": "cohen_kappa",
    "ac1": "gwet_ac1",
}
SCORES: tuple[str, ...] = tuple(SCORE_COEFFICIENT)

#: Coefficient names as a terminal prints them.
TERMINAL_NAMES: dict[str, str] = {
    "observed_agreement": "agreement", "cohen_kappa": "Cohen kappa", "scott_pi": "Scott pi",
    "fleiss_kappa": "Fleiss kappa", "conger_kappa": "Conger kappa", "krippendorff_alpha": "Kripp. alpha",
    "gwet_ac1": "Gwet AC1", "gwet_ac2": "Gwet AC2", "bennett_s": "Bennett S",
}

#: Coefficient names as the HTML report shows them.
HTML_NAMES: dict[str, str] = {
    "observed_agreement": "observed agreement", "cohen_kappa": "Cohen κ", "fleiss_kappa": "Fleiss κ",
    "krippendorff_alpha": "Krippendorff α", "gwet_ac1": "Gwet AC1", "gwet_ac2": "Gwet AC2",
    "scott_pi": "Scott π", "bennett_s": "Bennett S", "conger_kappa": "Conger κ",
}


def matrix_coefficient(level: str) -> str:
    """The coefficient of the rater-by-rater matrix at a level of measurement: Cohen's kappa on nominal labels,
    else Krippendorff's alpha at the labels' level.

    >>> matrix_coefficient("nominal"), matrix_coefficient("ordinal")
    ('cohen_kappa', 'krippendorff_alpha')
    """
    return NOMINAL_MATRIX_COEFFICIENT if level == "nominal" else REFERENCE_COEFFICIENT


def names_text(names: tuple[str, ...] | list[str], last: str = "or") -> str:
    """``"a, b or c"``: registry names in one phrase for a command's help.

    >>> names_text(("gwet_ac1", "gwet_ac2", "bennett_s"))
    'gwet_ac1, gwet_ac2 or bennett_s'
    """
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" {last} {names[-1]}"
