"""promptfoo: the results JSON of ``promptfoo eval --output results.json``.

Shape, from promptfoo's own example output (``examples/*/output.json``, results version 3,
promptfoo 0.120): ``{"evalId", "results": {"version", "timestamp", "prompts", "results": [
{"testIdx", "promptIdx", "provider": {"id", "label"}, "success", "score", "error",
"gradingResult": {"pass", "score", "componentResults": [{"pass", "score", "reason",
"assertion": {"type", "value", "metric"}}]}}], "stats"}, "config", "shareableUrl"}``.
A rating given in promptfoo's web viewer is a component result whose assertion type is ``human``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...exceptions import SchemaError
from ._common import ToolFrame, shaped, shown

__all__ = ["is_promptfoo", "promptfoo_frame"]


def _rows(obj: Any) -> list[dict[str, Any]] | None:
    if isinstance(obj, dict):
        res = obj.get("results")
        if isinstance(res, dict) and isinstance(res.get("results"), list):
            return res["results"]
        if isinstance(res, list) and res and isinstance(res[0], dict) and (
                "gradingResult" in res[0] or "testIdx" in res[0]):
            return res
    return None


def is_promptfoo(obj: Any) -> bool:
    return _rows(obj) is not None


def promptfoo_frame(obj: Any, src: str, *, value: str = "pass") -> ToolFrame:
    """Flatten promptfoo results: each assertion (grader) per test output -> a judge; a viewer rating -> human.

    ``value="pass"`` reads each grader's pass/fail, ``value="score"`` its score.
    """
    rows = _rows(obj) or []
    multi_prompt = len({r.get("promptIdx") for r in rows if isinstance(r, dict)}) > 1
    multi_provider = len({_provider(r) for r in rows if isinstance(r, dict)}) > 1
    recs: list[tuple[Any, Any, Any, str, str]] = []
    skipped: Counter[str] = Counter()
    for n, r in enumerate(rows, start=1):
        if not isinstance(r, dict):
            raise SchemaError(f"result {n} is {shown(r)}, not an object.", source=src)
        with shaped("a promptfoo results file", src, where=f"result {n}"):
            item = f"test {r.get('testIdx', n - 1)}"
            if multi_prompt:
                item += f", prompt {r.get('promptIdx')}"
            if multi_provider:
                item += f", {_provider(r)}"
            gr = r.get("gradingResult")
            if not isinstance(gr, dict):
                skipped["result without grading (errored or unasserted)"] += 1
                continue
            comps = gr.get("componentResults") or []
            seen: Counter[str] = Counter()
            for c in comps:
                a = c.get("assertion") or {}
                kind = str(a.get("type") or "assertion")
                name = "human" if kind == "human" else str(a.get("metric") or kind)
                seen[name] += 1
                rater = name if seen[name] == 1 else f"{name}#{seen[name]}"
                where = f"result {n} ({item}), assertion {shown(rater, 40)}"
                if value == "score":
                    lab = c.get("score")
                    if lab is None:
                        skipped["assertion without a score"] += 1
                        continue
                else:
                    if c.get("pass") is None:
                        skipped["assertion without pass/fail"] += 1
                        continue
                    lab = "pass" if c.get("pass") else "fail"
                recs.append((item, rater, lab, "human" if kind == "human" else "judge", where))
    return ToolFrame.build(recs, skipped=dict(skipped), taken_for=f"promptfoo results JSON ({value} per assertion)",
                           src=src, what="graded results")


def _provider(r: dict[str, Any]) -> str:
    p = r.get("provider")
    if isinstance(p, dict):
        return str(p.get("label") or p.get("id"))
    return str(p)
