"""Design: overlap diagnostics, planning formulas, allocation designs and assignment files.

See ``docs/design.md`` for how to read the numbers; the spec is METHODS §2.
"""

from ._allocate import AssignmentResult, allocate, escape_formula, write_assignments
from ._core import DESIGNS
from ._judge_plan import JudgePlan, JudgePlanResult, plan_judges
from ._overlap import OverlapResult, overlap
from ._planning import (CertificationPlanResult, RankingPlanResult, false_reject_probability,
                        plan_certification, plan_ranking)
from ._simplan import SimulationPlanResult, fit_latent_class, plan_by_simulation

__all__ = ["OverlapResult", "overlap", "CertificationPlanResult", "RankingPlanResult", "SimulationPlanResult",
           "plan_certification", "plan_ranking", "plan_by_simulation", "fit_latent_class", "false_reject_probability",
           "AssignmentResult", "allocate", "write_assignments", "escape_formula", "DESIGNS",
           "JudgePlan", "JudgePlanResult", "plan_judges"]
