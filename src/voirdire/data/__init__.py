"""Reading annotation data into one table model: :class:`AnnotationTable` and :class:`Scale`."""

from ._formats import FORMATS, argilla_records, label_studio_tasks
from ._columns import id_str
from ._groups import GroupedTables, read_annotation_groups
from ._item_data import read_item_data
from ._limits import check_zip  # for pairwise's resume files; an internal helper, not in __all__
from ._pairwise import ORDERS, VERDICTS, PairwiseTable, join_pair_key, pairwise_set_of, read_pairwise
from ._pairwise_sets import PAIRWISE_SETS, pairwise_set_frame, read_pairwise_set
from ._readers import read_annotations, read_long_frame
from ._rounds import read_rounds
from ._scale import LEVELS, Scale
from ._table import HUMAN, JUDGE, AnnotationTable, DuplicatePolicy, MissingPolicy, TableSummary
from ._virtual import frame_as_file, pipe_as_file

__all__ = ["AnnotationTable", "Scale", "TableSummary", "read_annotations", "read_long_frame",
           "LEVELS", "HUMAN", "JUDGE", "PairwiseTable", "read_pairwise",
           "PAIRWISE_SETS", "pairwise_set_frame", "pairwise_set_of", "read_pairwise_set", "read_rounds",
           "FORMATS", "label_studio_tasks", "argilla_records", "read_item_data", "VERDICTS", "ORDERS", "join_pair_key", "id_str",
           "DuplicatePolicy", "MissingPolicy", "GroupedTables", "read_annotation_groups", "frame_as_file",
           "pipe_as_file"]
