"""Judge validation: leave-one-human-out comparison, Alternative Annotator Test, judge ranking.

See ``docs/validation.md`` for how to read the numbers; the spec is METHODS §2.
"""

from ._alt_test import AltTestResult, alt_test, check_test_options, multiplicity_rejections, rejected_flags
from ._leave_one_out import LeaveOneOutResult, leave_one_out
from ._kernel import check_memory
from ._kernel import finalize as pair_scores
from ._loo import LooArrays, loo_core
from ._ranking import RankingResult, rank_judges
from ._rankerr import rank_error, top1_error
from ._seq_oc import SequentialOCResult, sequential_operating_characteristics
from ._sequential import SequentialResult, validate_sequential
from ._slices import SliceAdvantage, slice_advantage

__all__ = ["AltTestResult", "alt_test", "check_test_options", "multiplicity_rejections", "rejected_flags", "pair_scores", "check_memory", "LeaveOneOutResult", "LooArrays", "leave_one_out",
           "loo_core", "RankingResult", "rank_judges", "rank_error", "top1_error", "SequentialResult",
           "validate_sequential", "SequentialOCResult", "sequential_operating_characteristics", "SliceAdvantage",
           "slice_advantage"]
