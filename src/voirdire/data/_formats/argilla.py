"""Argilla v2: records exports in (``dataset.records.to_json``), records to log out.

Shape, from the Argilla v2 SDK (``Record.to_dict`` / ``JsonIO.to_json``): a JSON list of
``{"id", "fields": {...}, "metadata": {...}, "suggestions": {question: {"value", "score",
"agent"}}, "responses": {question: [{"value", "user_id", "status"}]}, "vectors": {...},
"_server_id"}``. ``status`` (``submitted``, ``draft``, ``discarded``) is present from SDK 2.2 on;
without it a response counts as submitted.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from ...exceptions import SchemaError
from ._common import ToolFrame, shaped, shown

__all__ = ["is_argilla", "is_argilla_flat", "argilla_frame", "argilla_flat_frame", "argilla_records",
           "argilla_item_fields"]

_USERS = ".responses.users"


def is_argilla(obj: Any) -> bool:
    return (isinstance(obj, list) and bool(obj) and isinstance(obj[0], dict) and "fields" in obj[0]
            and ("responses" in obj[0] or "suggestions" in obj[0]))


def _value(v: Any, where: str, q: str, src: str) -> Any:
    if isinstance(v, (list, dict)):
        raise SchemaError(f"question {shown(q, 40)} has {shown(v)}: a multi-label, ranking or span answer is not one "
                          f"label. Choose a label or rating question with --question.", source=src, row=where)
    return v


def argilla_frame(records: list[dict[str, Any]], src: str, *, question: str | None = None,
                  item: str = "item") -> ToolFrame:
    """Flatten Argilla records: responses per user -> humans, suggestions per agent -> judges."""
    questions = list(dict.fromkeys(
        q for r in records for part in ("responses", "suggestions") for q in (r.get(part) or {})))
    if question is not None:
        if question not in questions:
            raise SchemaError(f"question {shown(question)} is not in the export; it has {shown(questions, 120)}. "
                              f"Name one with --question.", source=src)
        q = question
    elif not questions:
        raise SchemaError("no record holds a response or a suggestion.", source=src)
    elif len(questions) > 1:
        raise SchemaError(f"the records answer several questions {shown(questions, 120)}; name the one to read with "
                          f"--question NAME (Python: question='NAME').", source=src)
    else:
        q = questions[0]
    recs: list[tuple[Any, Any, Any, str, str]] = []
    skipped: Counter[str] = Counter()
    for n, r in enumerate(records, start=1):
        if not isinstance(r, dict):
            raise SchemaError(f"entry {n} is {shown(r)}, not a record object.", source=src)
        with shaped("an Argilla records export", src, where=f"record {n}"):
            rid = r.get("id") if r.get("id") is not None else r.get("_server_id")
            fields = r.get("fields") or {}
            it = fields[item] if isinstance(fields, dict) and item in fields else rid
            for resp in (r.get("responses") or {}).get(q) or []:
                where = f"record {shown(rid, 40)}, response of user {shown(resp.get('user_id'), 40)}"
                status = str(resp.get("status") or "submitted").lower().split(".")[-1]
                if status != "submitted":
                    skipped[f"{status} response"] += 1
                    continue
                if resp.get("value") is None:
                    skipped["response without a value"] += 1
                    continue
                recs.append((it, str(resp.get("user_id")), _value(resp["value"], where, q, src), "human", where))
            sug = (r.get("suggestions") or {}).get(q)
            if sug:
                where = f"record {shown(rid, 40)}, suggestion"
                if sug.get("value") is None:
                    skipped["suggestion without a value"] += 1
                else:
                    recs.append((it, str(sug.get("agent") or "suggestion"), _value(sug["value"], where, q, src),
                                 "judge", where))
    return ToolFrame.build(recs, skipped=dict(skipped), taken_for=f"Argilla records export (question {shown(q, 40)})",
                           src=src, what="responses")


def is_argilla_flat(columns: Any) -> bool:
    """The flattened layout (``records.to_list(flatten=True)``, ``to_datasets``/``to_hub``): ``q.responses.users``."""
    return any(str(c).endswith(_USERS) for c in columns)


def _seq(v: Any) -> list[Any]:
    if v is None or (isinstance(v, float) and v != v):
        return []
    return list(v) if not isinstance(v, (str, bytes, dict)) and hasattr(v, "__iter__") else [v]


def _scalar(v: Any) -> Any:
    return None if v is None or (isinstance(v, float) and v != v) else v


def argilla_flat_frame(rows: list[dict[str, Any]], src: str, *, question: str | None = None,
                       item: str = "item") -> ToolFrame:
    """The flattened export (``q.responses``, ``q.responses.users``, ``q.responses.status``,
    ``q.suggestion``, ``q.suggestion.agent`` per record, as Argilla's ``GenericIO`` writes it)
    read like the nested one: it is regrouped per record and passed to :func:`argilla_frame`."""
    qs = [str(c)[: -len(_USERS)] for c in rows[0] if str(c).endswith(_USERS)] if rows else []
    qs += [str(c)[: -len(".suggestion")] for c in (rows[0] if rows else {})
           if str(c).endswith(".suggestion") and str(c)[: -len(".suggestion")] not in qs]
    nested = []
    for r in rows:
        resp = {}
        sug = {}
        for q in qs:
            vals, users = _seq(r.get(f"{q}.responses")), _seq(r.get(f"{q}{_USERS}"))
            status = _seq(r.get(f"{q}.responses.status")) or [None] * len(vals)
            resp[q] = [{"value": v, "user_id": u, "status": st} for v, u, st in zip(vals, users, status)]
            if _scalar(r.get(f"{q}.suggestion")) is not None:
                sug[q] = {"value": r[f"{q}.suggestion"], "agent": _scalar(r.get(f"{q}.suggestion.agent"))}
        fields = {item: r[item]} if item in r else {}
        nested.append({"id": r.get("id"), "_server_id": r.get("_server_id"), "fields": fields,
                       "responses": resp, "suggestions": sug})
    tf = argilla_frame(nested, src, question=question, item=item)
    return dataclasses.replace(tf, taken_for=tf.taken_for.replace("records export", "flattened records export"))


def argilla_item_fields(obj: Any, *, item: str = "item") -> dict[str, dict[str, Any]]:
    """Each item's record ``fields`` in an Argilla records export (nested, as ``to_json`` writes
    it), keyed by the item id :func:`argilla_frame` gives it (``fields[item]``, else the record id).
    ``{}`` for anything else (the flattened layout does not tell fields from metadata)."""
    from .._columns import id_str

    out: dict[str, dict[str, Any]] = {}
    if not is_argilla(obj):
        return out
    for r in obj:
        if not isinstance(r, dict) or not isinstance(r.get("fields"), dict):
            continue
        fields = r["fields"]
        it = fields[item] if item in fields else (r.get("id") if r.get("id") is not None else r.get("_server_id"))
        if it is not None:
            out.setdefault(id_str(it), dict(fields))
    return out


def argilla_records(assignments: Any, *, item_data: Any = None) -> list[dict[str, Any]]:
    """Argilla records, one per item, in the shape ``dataset.records.from_json`` logs.

    ``fields.item`` is the item id (read back by :func:`argilla_frame`); ``metadata.assigned_to``
    lists the annotators (a terms metadata property, so each annotator filters on their name) and
    ``metadata.stratum`` the design's stratum. ``item_data`` (item id -> the source record's
    ``fields``, e.g. :func:`argilla_item_fields` of the export the round was drawn from) is carried
    over, so annotators see the same text; ``item`` is set over it.
    """
    df = assignments.to_frame()
    src = item_data or {}
    out: list[dict[str, Any]] = []
    for it, g in df.groupby("item", sort=False):
        out.append({"id": str(it), "fields": {**(src.get(str(it)) or {}), "item": str(it)},
                    "metadata": {"assigned_to": [str(x) for x in g["rater"]], "stratum": str(g["stratum"].iloc[0])},
                    "suggestions": {}, "responses": {}, "vectors": {}})
    return out
