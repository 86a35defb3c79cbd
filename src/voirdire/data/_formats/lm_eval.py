"""lm-evaluation-harness: the per-sample JSONL of ``lm_eval --log_samples``.

Shape, from lm-eval's ``EvaluationTracker.save_results_samples`` (v0.4): one JSON object per line
``{"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
"doc_hash", "prompt_hash", "target_hash", <metric>: value}``; ``target`` is written as a string and
``filtered_resps`` as strings (a multiple-choice task's are ``[[loglikelihood, is_greedy], ...]``).
The file lies in ``<output_path>/<model_name_sanitized>/samples_<task>_<date>.jsonl``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...exceptions import SchemaError
from ._common import ToolFrame, shaped, shown

__all__ = ["is_lm_eval", "lm_eval_frame"]


def is_lm_eval(first: Any) -> bool:
    return isinstance(first, dict) and "doc_id" in first and ("filtered_resps" in first or "resps" in first)


def _prediction(resps: Any, where: str, src: str) -> Any:
    if isinstance(resps, list) and resps and all(isinstance(x, list) and len(x) == 2 for x in resps):
        try:
            ll = [float(x[0]) for x in resps]
        except (TypeError, ValueError):
            raise SchemaError(f"filtered_resps {shown(resps)} are not [loglikelihood, is_greedy] pairs.",
                              source=src, row=where) from None
        return str(max(range(len(ll)), key=ll.__getitem__))  # the chosen option's index, as lm-eval's target
    if isinstance(resps, list) and len(resps) == 1 and not isinstance(resps[0], (list, dict)):
        return str(resps[0]).strip()
    if isinstance(resps, str):
        return resps.strip()
    raise SchemaError(f"filtered_resps {shown(resps)} are not one answer.", source=src, row=where)


def lm_eval_frame(records: list[dict[str, Any]], rows: list[int], src: str, *, model: str) -> ToolFrame:
    """Flatten lm-eval samples: ``target`` -> the human reference, the model's answer -> a judge."""
    filters = list(dict.fromkeys(str(r.get("filter", "none")) for r in records))
    recs: list[tuple[Any, Any, Any, str, str]] = []
    skipped: Counter[str] = Counter()
    seen_target: set[Any] = set()
    for r, n in zip(records, rows):
        where = f"line {n}"
        with shaped("lm-evaluation-harness samples", src, where=where):
            doc = r.get("doc_id")
            if doc is None:
                raise SchemaError("the sample has no doc_id.", source=src, row=n)
            judge = model if len(filters) == 1 else f"{model}/{r.get('filter', 'none')}"
            if doc not in seen_target:
                seen_target.add(doc)
                if r.get("target") in (None, ""):
                    skipped["sample without a target"] += 1
                else:
                    recs.append((doc, "target", str(r["target"]).strip(), "human", where))
            recs.append((doc, judge, _prediction(r.get("filtered_resps", r.get("resps")), where, src), "judge", where))
    return ToolFrame.build(recs, skipped=dict(skipped),
                           taken_for=f"lm-evaluation-harness samples (model '{model}' against target)",
                           src=src, what="samples")
