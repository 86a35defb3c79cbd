"""Study workspace: rounds of labels, assignments and inclusion probabilities in one SQLite file.

See ``docs/study.md``.
"""

from ._study import (SCHEMA_VERSION, AddResult, ProbabilitySample, Study, StudyError, StudyInput, StudyStatus,
                     text_frame)

__all__ = ["SCHEMA_VERSION", "AddResult", "ProbabilitySample", "Study", "StudyError", "StudyInput", "StudyStatus",
           "text_frame"]
