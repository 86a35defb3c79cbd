"""Agreement coefficients with honest uncertainty, the binary family, and abstention policies.

Every coefficient reduces the table to per-item sufficient statistics; the bootstrap resamples
items (clusters when the table has them) by re-summing those statistics, and the analytic
standard errors follow Gwet (2014) or Fleiss, Cohen & Everitt (1969). A table larger than memory is
read in batches by :func:`agreement_stream` (the coefficients in :data:`STREAMABLE`). See ``docs/agreement.md``.
"""

from ._binary import binary_agreement
from ._coefficients import (
    COEFFICIENTS,
    agreement,
    bennett_s,
    cohen_kappa,
    conger_kappa,
    default_coefficients,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
    observed_agreement,
    scott_pi,
)
from ._pairwise import pairwise_matrix
from ._prepare import ABSTAIN_POLICIES
from ._stream import STREAMABLE, StreamGroup, agreement_stream, krippendorff_alpha_stream, stream_groups
from ._results import (
    AbstentionInfo,
    AgreementResult,
    AgreementTable,
    BinaryAgreementResult,
    PairwiseMatrixResult,
)

__all__ = [
    "ABSTAIN_POLICIES",
    "COEFFICIENTS",
    "STREAMABLE",
    "AbstentionInfo",
    "AgreementResult",
    "AgreementTable",
    "BinaryAgreementResult",
    "PairwiseMatrixResult",
    "StreamGroup",
    "agreement",
    "agreement_stream",
    "bennett_s",
    "binary_agreement",
    "cohen_kappa",
    "conger_kappa",
    "default_coefficients",
    "fleiss_kappa",
    "gwet_ac1",
    "gwet_ac2",
    "krippendorff_alpha",
    "krippendorff_alpha_stream",
    "observed_agreement",
    "pairwise_matrix",
    "scott_pi",
    "stream_groups",
]
