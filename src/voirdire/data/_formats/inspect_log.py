"""Inspect AI eval logs (``.eval`` or ``.json``), read with ``inspect_ai``'s own log reader.

Each sample's ``scores`` maps a scorer name to a ``Score`` whose ``value`` is a string (``"C"``,
``"I"``, ``"P"``), a number, a boolean or a dict of named values (inspect_ai ``EvalLog`` /
``EvalSample`` / ``Score``, inspect_ai 0.3). Samples with an ``error`` are skipped and counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...exceptions import SchemaError
from ._common import ToolFrame, require_extra

__all__ = ["inspect_frame", "is_inspect_json"]


def is_inspect_json(obj: Any) -> bool:
    return isinstance(obj, dict) and "eval" in obj and "samples" in obj and "version" in obj


def inspect_frame(path: Path, src: str, *, judges: Sequence[str] = ()) -> ToolFrame:
    """Flatten an Inspect log: each scorer (and each named value of a dict score) -> a rater.

    Every scorer is a judge unless ``judges`` names some of them; then the others are humans
    (a scorer whose scores a person entered).
    """
    log_mod = require_extra("inspect_ai.log", "inspect", "Reading an Inspect AI log")
    try:
        log = log_mod.read_eval_log(str(path))
    except Exception as exc:  # inspect raises several types for a broken log
        raise SchemaError(f"cannot be read as an Inspect AI log: {str(exc)[:80]}", source=src) from None
    samples = log.samples or []
    epochs = {getattr(s, "epoch", 1) for s in samples}
    recs: list[tuple[Any, Any, Any, str, str]] = []
    skipped: Counter[str] = Counter()
    judge_set = {str(j) for j in judges}
    for s in samples:
        where = f"sample {s.id} (epoch {getattr(s, 'epoch', 1)})"
        if getattr(s, "error", None) is not None:
            skipped["errored sample"] += 1
            continue
        if not s.scores:
            skipped["sample without scores"] += 1
            continue
        for scorer, score in s.scores.items():
            v = score.value
            parts = v.items() if isinstance(v, dict) else [(None, v)]
            for key, val in parts:
                rater = scorer if key is None else f"{scorer}/{key}"
                if len(epochs) > 1:
                    rater += f" (epoch {s.epoch})"
                if isinstance(val, (list, dict)) or val is None:
                    skipped["score that is not one value"] += 1
                    continue
                base = scorer if key is None else f"{scorer}/{key}"
                role = "judge" if not judge_set or base in judge_set or rater in judge_set else "human"
                recs.append((s.id, rater, val, role, where))
    return ToolFrame.build(recs, skipped=dict(skipped), taken_for="Inspect AI eval log (scores per scorer)",
                           src=src, what="scored samples")
