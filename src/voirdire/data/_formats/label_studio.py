"""Label Studio: JSON and JSON-MIN exports in, tasks JSON (with per-annotator assignment) out.

Shapes follow the Label Studio documentation ("Label Studio JSON format of annotated tasks",
labelstud.io/guide/task_format, and the JSON-MIN converter of label-studio-sdk): a JSON export is a
list of tasks ``{"id", "data", "annotations": [{"completed_by", "result": [...], "was_cancelled"}],
"predictions": [{"model_version", "result": [...]}]}``; a result region is ``{"from_name",
"to_name", "type", "value": {"choices": [...]} | {"rating": n} | {"number": x}}``. JSON-MIN has
one record per annotation: the task's data keys, ``id``, ``annotator``, ``annotation_id`` and one
key per control (a single choice as a string, a rating as ``[{"rating": n}]``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...exceptions import SchemaError
from ._common import ToolFrame, shaped, shown

__all__ = ["is_label_studio", "is_label_studio_min", "label_studio_frame", "label_studio_min_frame",
           "label_studio_tasks", "label_studio_item_data"]

_VALUE_KEYS = {"choices": "choices", "rating": "rating", "number": "number"}
_MIN_META = {"id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time", "agreement"}
_WRITE_BACK = ("assigned_to", "stratum")  # label_studio_tasks' own task fields, beside ``item``


def is_label_studio(obj: Any) -> bool:
    return (isinstance(obj, list) and bool(obj) and isinstance(obj[0], dict) and "data" in obj[0]
            and ("annotations" in obj[0] or "predictions" in obj[0] or "completions" in obj[0]))


def is_label_studio_min(obj: Any) -> bool:
    return (isinstance(obj, list) and bool(obj) and isinstance(obj[0], dict)
            and "annotator" in obj[0] and "annotation_id" in obj[0])


def _user(completed_by: Any) -> str:
    if isinstance(completed_by, dict):
        return str(completed_by.get("email") or completed_by.get("id") or "unknown")
    return str(completed_by)


def _region_value(r: dict[str, Any], where: str, src: str) -> Any:
    v = r.get("value") or {}
    key = _VALUE_KEYS.get(str(r.get("type", "")).lower())
    if key is None:
        for k in _VALUE_KEYS:
            if k in v:
                key = k
                break
    if key is None or key not in v:
        raise SchemaError(f"control {shown(r.get('from_name'), 40)} holds {shown(v)}; only choices, rating and number "
                          f"controls give one label per item.", source=src, row=where)
    val = v[key]
    if key == "choices":
        if not isinstance(val, list) or len(val) != 1:
            raise SchemaError(f"control {shown(r.get('from_name'), 40)} has {shown(val)}: several choices are not one label. "
                              f"Use a single-choice control.", source=src, row=where)
        val = val[0]
    return val


def _controls(tasks: list[dict[str, Any]]) -> Counter[str]:
    seen: Counter[str] = Counter()
    for t in tasks:  # entries of another shape are skipped here and named by the reader
        for kind in ("annotations", "completions", "predictions"):
            for a in (t.get(kind) or [] if isinstance(t, dict) else []):
                for r in (a.get("result") or [] if isinstance(a, dict) else []):
                    if isinstance(r, dict) and str(r.get("type", "")).lower() in _VALUE_KEYS:
                        seen[str(r.get("from_name"))] += 1
    return seen


def _pick(found: list[str], control: str | None, src: str, *, flag: str = "--control") -> str:
    if control is not None:
        if control not in found:
            raise SchemaError(f"control {shown(control)} is not in the export; it has {shown(found, 120)}. "
                              f"Name one with {flag}.", source=src)
        return control
    if not found:
        raise SchemaError("no choices, rating or number control holds a label.", source=src)
    if len(found) > 1:
        raise SchemaError(f"the export has several controls {shown(found, 120)}; name the one to read with {flag} NAME "
                          f"(Python: control='NAME').", source=src)
    return found[0]


def _item_of(task: dict[str, Any], item: str) -> Any:
    data = task.get("data") or {}
    return data[item] if isinstance(data, dict) and item in data else task.get("id")


def label_studio_frame(tasks: list[dict[str, Any]], src: str, *, control: str | None = None,
                       item: str = "item") -> ToolFrame:
    """Flatten a Label Studio JSON export: annotations -> humans, predictions -> judges."""
    name = _pick(sorted(_controls(tasks)), control, src)
    recs: list[tuple[Any, Any, Any, str, str]] = []
    skipped: Counter[str] = Counter()
    for k, t in enumerate(tasks):
        if not isinstance(t, dict):
            raise SchemaError(f"entry {k + 1} is {shown(t)}, not a task object.", source=src)
        tid = t.get("id", k + 1)
        with shaped("a Label Studio JSON export", src, where=f"task {shown(tid, 40, quote=False)}"):
            it = _item_of(t, item)
            for a in (t.get("annotations") or t.get("completions") or []):
                where = f"task {tid}, annotation {a.get('id', '?')}"
                if a.get("was_cancelled") or a.get("skipped"):
                    skipped["skipped/cancelled annotation"] += 1
                    continue
                regions = [r for r in a.get("result") or [] if r.get("from_name") == name]
                if not regions:
                    skipped[f"annotation without {shown(name, 40)}"] += 1
                    continue
                recs.append((it, _user(a.get("completed_by")), _region_value(regions[0], where, src), "human", where))
            for p in t.get("predictions") or []:
                where = f"task {tid}, prediction {p.get('id', '?')}"
                regions = [r for r in p.get("result") or [] if r.get("from_name") == name]
                if not regions:
                    skipped[f"prediction without {shown(name, 40)}"] += 1
                    continue
                judge = str(p.get("model_version") or "prediction")
                recs.append((it, judge, _region_value(regions[0], where, src), "judge", where))
    return ToolFrame.build(recs, skipped=dict(skipped), taken_for=f"Label Studio JSON export (control {shown(name, 40)})",
                           src=src, what="annotations")


def _min_value(v: Any, where: str, key: str, src: str) -> Any:
    if isinstance(v, list):
        if len(v) == 1 and isinstance(v[0], dict):
            d = v[0]
            for k in ("rating", "number"):
                if k in d:
                    return d[k]
            if isinstance(d.get("choices"), list) and len(d["choices"]) == 1:
                return d["choices"][0]
        raise SchemaError(f"field {shown(key, 40)} holds {shown(v)}, not one label.", source=src, row=where)
    return v


def _min_item(r: dict[str, Any], item: str) -> str:
    """The item id :func:`label_studio_min_frame` gives a record (``item`` when the record has it, else the task id)."""
    from .._columns import id_str

    return id_str(r[item] if item in r else r.get("id"))


def _min_data_keys(records: list[dict[str, Any]], keys: list[str], item: str) -> set[str]:
    """The keys of a JSON-MIN export that are task data, not a control.

    A task's data keys hold one value in every annotation of the task and of the item (an item
    written back by :func:`label_studio_tasks` and imported again is a new task with its item's
    text), and differ between items; a control's values vary, or repeat across items as
    categories do, and a structured value (a list: rating, number) is always a control's.
    ``item`` and the write-back's own fields (``assigned_to``, ``stratum``: task data in every
    record that names an ``item``) are task data too. With two items or fewer, nothing tells a
    constant control from data: only ``item`` and the write-back fields.
    """
    rs = [r for r in records if isinstance(r, dict)]
    by_task: dict[Any, list[dict[str, Any]]] = {}
    by_item: dict[str, list[dict[str, Any]]] = {}
    for r in rs:
        by_task.setdefault(repr(r.get("id")), []).append(r)
        by_item.setdefault(_min_item(r, item), []).append(r)

    def constant(k: str, groups: dict[Any, list[dict[str, Any]]]) -> bool:
        return all(len({repr(r.get(k)) for r in g}) == 1 for g in groups.values())

    def distinct(k: str, groups: dict[Any, list[dict[str, Any]]]) -> bool:
        return len(groups) > 2 and len({repr(g[0].get(k)) for g in groups.values()}) == len(groups)

    data = {item}
    for k in keys:
        holders = [r for r in rs if k in r]
        if k in _WRITE_BACK and holders and all(item in r for r in holders) and constant(k, by_task):
            data.add(k)
        elif (not any(isinstance(r[k], (list, dict)) for r in holders)  # a structured value is a control's
              and any(constant(k, g) and distinct(k, g) for g in (by_task, by_item))):
            data.add(k)
    return data


def label_studio_min_frame(records: list[dict[str, Any]], src: str, *, control: str | None = None,
                           item: str = "item") -> ToolFrame:
    """Flatten a Label Studio JSON-MIN export (one record per annotation; every rater is human).

    Without ``control``, the one key that is neither annotation metadata nor task data
    (:func:`_min_data_keys`) is the control; several are an error that names them.
    """
    keys = [k for k in dict.fromkeys(k for r in records for k in r) if k not in _MIN_META]
    if control is None:
        data = _min_data_keys(records, keys, item)
        structured = [k for k in keys if k not in data and any(isinstance(r.get(k), list) for r in records)]
        found = structured + [k for k in keys if k not in data and k not in structured]
    else:
        found = keys
    name = _pick(found, control, src)
    recs: list[tuple[Any, Any, Any, str, str]] = []
    skipped: Counter[str] = Counter()
    for n, r in enumerate(records, start=1):
        where = f"record {n} (task {r.get('id')}, annotation {r.get('annotation_id')})"
        with shaped("a Label Studio JSON-MIN export", src, where=where):
            if name not in r or r[name] is None:
                skipped[f"annotation without {shown(name, 40)}"] += 1
                continue
            it = r[item] if item in r and item != name else r.get("id")
            recs.append((it, _user(r.get("annotator")), _min_value(r[name], where, name, src), "human", where))
    return ToolFrame.build(recs, skipped=dict(skipped), taken_for=f"Label Studio JSON-MIN export (field {shown(name, 40)})",
                           src=src, what="annotations")


def label_studio_item_data(obj: Any, *, item: str = "item", control: str | None = None) -> dict[str, dict[str, Any]]:
    """Each item's task ``data`` in a Label Studio JSON or JSON-MIN export, keyed by the item id the
    readers give it (``data[item]``, else the task id; :func:`~voirdire.data._columns.id_str`).

    What the next round's tasks carry over, so that the labelling config shows annotators the same
    text. In JSON-MIN a task's data are the keys of its records that are not annotation metadata,
    not a structured control (a list) and hold one value across the task's records, less
    ``control``; without ``control``, only the keys the reader takes for task data (constant per
    task and item, differing between every two tasks or items, and ``item``, ``assigned_to``,
    ``stratum`` of a round written back by :func:`label_studio_tasks`). ``{}`` for anything else.
    """
    from .._columns import id_str

    out: dict[str, dict[str, Any]] = {}
    if not isinstance(obj, list):
        return out
    if is_label_studio(obj):
        for k, t in enumerate(obj):
            if isinstance(t, dict) and isinstance(t.get("data"), dict):
                it = _item_of(t, item)
                if it is not None:
                    out.setdefault(id_str(it), dict(t["data"]))
        return out
    if is_label_studio_min(obj):
        by_task: dict[Any, list[dict[str, Any]]] = {}
        for r in obj:
            if isinstance(r, dict):
                by_task.setdefault(r.get("id"), []).append(r)
        keys = [k for k in dict.fromkeys(k for r in obj if isinstance(r, dict) for k in r)
                if k not in _MIN_META and k != control]
        keys = [k for k in keys if not any(isinstance(r.get(k), (list, dict)) for r in obj if isinstance(r, dict))
                and all(len({repr(r.get(k)) for r in rs}) == 1 for rs in by_task.values())]
        if control is None:  # a control several annotators agree on is constant within its task too
            task_data = _min_data_keys(obj, keys, item)
            keys = [k for k in keys if k in task_data]
        for tid, rs in by_task.items():
            data = {k: rs[0].get(k) for k in keys if k in rs[0]}
            it = rs[0].get(item) if item in rs[0] else tid
            if it is not None:
                out.setdefault(id_str(it), data)
    return out


def label_studio_tasks(assignments: Any, *, item_data: Any = None) -> list[dict[str, Any]]:
    """Label Studio import tasks, one per item, listing who is assigned to it.

    ``data.item`` is the item id (read back by :func:`label_studio_frame`), ``data.assigned_to``
    the annotators in assignment order and ``data.stratum`` the design's stratum. Filter the Data
    Manager on ``assigned_to`` (or assign the filtered tasks to that annotator in Label Studio
    Enterprise) to give each annotator their tasks. ``item_data`` (item id -> the source task's
    ``data``, e.g. :func:`label_studio_item_data` of the export the round was drawn from) is
    carried over, so the labelling config finds its text; ``item``, ``assigned_to`` and
    ``stratum`` are set over it.
    """
    df = assignments.to_frame()
    src = item_data or {}
    tasks: list[dict[str, Any]] = []
    for it, g in df.groupby("item", sort=False):
        base = src.get(str(it)) or {}
        tasks.append({"data": {**base, "item": str(it), "assigned_to": [str(r) for r in g["rater"]],
                               "stratum": str(g["stratum"].iloc[0])}})
    return tasks
