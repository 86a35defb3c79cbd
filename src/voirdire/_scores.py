"""The one registry of score names (private), shared by agreement, validation, simulate, design and the CLI.

Two vocabularies meet here. The agreement coefficients (:data:`voirdire.agreement.COEFFICIENTS`)
have long names (``krippendorff_alpha``); the validation tests, planners and simulations score a
judge by one of four pair-based scores with short names (``alpha``). :data:`SCORE_COEFFICIENT`
says which coefficient each short name is, and the display names below are the only spelling of
each coefficient on a terminal (ASCII) and in the HTML report (Unicode).
"""

from __future__ import annotations

__all__ = ["SCORES", "SCORE_COEFFICIENT", "TERMINAL_NAMES", "HTML_NAMES"]

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
