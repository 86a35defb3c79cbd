"""The next round handed to the annotation tool and read back: write, simulate the tool's export, read."""

from __future__ import annotations

import json

import numpy as np
import pytest

from voirdire.data import AnnotationTable, argilla_records, label_studio_tasks, read_annotations
from voirdire.design import allocate


@pytest.fixture
def assignments():
    rng = np.random.default_rng(3)
    items = [f"doc-{k}" for k in range(30)]
    rows = [(i, r, str(rng.choice(["pass", "fail"]))) for i in items for r in ("ann", "bob") if rng.random() < 0.6]
    rows += [(i, "gpt", "pass") for i in items]
    t = AnnotationTable.from_arrays(*zip(*rows), judges=["gpt"])
    return allocate(t, design="random", n_per_rater=6, raters=["ann", "bob", "cy@example.org"], rng=5)


def _truth(item: str, rater: str) -> str:
    return "pass" if (len(item) + len(rater) + int(item.split("-")[1])) % 3 else "fail"


def test_label_studio_round_trip(tmp_path, assignments):
    tasks = label_studio_tasks(assignments)
    assert all(set(t) == {"data"} and {"item", "assigned_to", "stratum"} <= set(t["data"]) for t in tasks)
    # Label Studio imports the tasks, gives each an id; each assigned annotator submits a choice
    users = {name: k for k, name in enumerate(sorted({r for t in tasks for r in t["data"]["assigned_to"]}), 1)}
    export = []
    for tid, t in enumerate(json.loads(json.dumps(tasks)), start=500):
        anns = [{"id": 10 * tid + k, "completed_by": {"id": users[r], "email": r},
                 "result": [{"id": f"r{k}", "from_name": "verdict", "to_name": "text", "type": "choices",
                             "origin": "manual", "value": {"choices": [_truth(t["data"]["item"], r)]}}],
                 "was_cancelled": False, "ground_truth": False, "task": tid}
                for k, r in enumerate(t["data"]["assigned_to"])]
        export.append({"id": tid, "data": t["data"], "annotations": anns, "predictions": []})
    p = tmp_path / "export.json"
    p.write_text(json.dumps(export))
    back = read_annotations(p).to_frame()
    got = {(i, r): lab for i, r, lab in zip(back["item"], back["rater"], back["label"])}
    want = {(str(i), str(r)): _truth(str(i), str(r)) for i, r in zip(assignments.item, assignments.rater)}
    assert got == want


def test_argilla_round_trip(tmp_path, assignments):
    records = argilla_records(assignments)
    # Argilla logs the records; annotators answer question 'verdict'; dataset.records.to_json exports
    for rec in records:
        rec["responses"] = {"verdict": [{"value": _truth(rec["fields"]["item"], u), "user_id": u, "status": "submitted"}
                                        for u in rec["metadata"]["assigned_to"]]}
        rec["_server_id"] = None
    p = tmp_path / "records.json"
    p.write_text(json.dumps(records))
    back = read_annotations(p).to_frame()
    got = {(i, r): lab for i, r, lab in zip(back["item"], back["rater"], back["label"])}
    want = {(str(i), str(r)): _truth(str(i), str(r)) for i, r in zip(assignments.item, assignments.rater)}
    assert got == want


@pytest.mark.parametrize("tool", ["label-studio", "argilla"])
def test_assign_to_tool_writes_importable_json(tmp_path, tool):
    from typer.testing import CliRunner

    from voirdire.cli import app

    src = tmp_path / "labels.csv"
    src.write_text("item,rater,label\n" + "".join(f"d{k},ann,{'ab'[k % 2]}\nd{k},bob,{'ab'[k % 3 == 0]}\nd{k},gpt,a\n"
                                                  for k in range(12)))
    out = tmp_path / "next.json"
    r = CliRunner().invoke(app, ["assign", str(src), "-n", "4", "-o", str(out), "--to", tool, "--judge", "gpt",
                                 "--design", "random", "--seed", "1", "-r", "cy", "-r", "dee"])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    man = json.loads((tmp_path / "next.manifest.json").read_text())
    assert man["format"] == tool and "import" in man
    assigned = [(d["data"] if tool == "label-studio" else d["metadata"])["assigned_to"] for d in data]
    assert sum(len(a) for a in assigned) == 8 and {x for a in assigned for x in a} == {"cy", "dee"}


def _ls_export(n=12):
    """A Label Studio JSON export: task data text, two annotators, a judge's predictions; no data.item
    (the item ids are the task ids)."""
    tasks = []
    for k in range(n):
        tid = 101 + k
        anns = [{"id": 10 * tid + a, "completed_by": {"id": a + 1, "email": u},
                 "result": [{"from_name": "sentiment", "to_name": "text", "type": "choices",
                             "value": {"choices": ["Positive" if (k + a) % 3 else "Negative"]}}],
                 "was_cancelled": False, "task": tid}
                for a, u in enumerate(["ann@x.org", "bob@x.org"]) if (k + a) % 4]
        preds = [{"id": 9000 + k, "model_version": "gpt-judge",
                  "result": [{"from_name": "sentiment", "to_name": "text", "type": "choices",
                              "value": {"choices": ["Positive"]}}]}]
        tasks.append({"id": tid, "data": {"text": f"review number {k}", "meta_info": {"shop": k % 3}},
                      "annotations": anns, "predictions": preds})
    return tasks


def _ls_import_then_export(tasks, first_id=5000):
    """What Label Studio does with the written tasks: import (new ids), each assigned annotator submits."""
    out = []
    for tid, t in enumerate(json.loads(json.dumps(tasks)), start=first_id):
        anns = [{"id": 10 * tid + k, "completed_by": {"id": 100 + k, "email": r},
                 "result": [{"from_name": "sentiment", "to_name": "text", "type": "choices",
                             "value": {"choices": [_truth("d-" + t["data"]["item"], r)]}}],
                 "was_cancelled": False, "task": tid}
                for k, r in enumerate(t["data"]["assigned_to"])]
        out.append({"id": tid, "data": t["data"], "annotations": anns, "predictions": []})
    return out


def test_assign_to_label_studio_carries_the_task_data_and_reads_back(tmp_path):
    # issue 29 item 6: the tasks were {"data": {"item", "assigned_to", "stratum"}}: the text the labelling
    # config shows ($text) was dropped, so the imported batch showed the annotators nothing
    from typer.testing import CliRunner

    from voirdire.cli import app

    src = tmp_path / "export.json"
    src.write_text(json.dumps(_ls_export()))
    out = tmp_path / "next.json"
    r = CliRunner().invoke(app, ["assign", str(src), "--control", "sentiment", "-n", "5", "-o", str(out), "--to",
                                 "label-studio", "--design", "random", "--seed", "2", "-r", "cy@x.org", "-r",
                                 "dee@x.org"])
    assert r.exit_code == 0, r.output
    assert "no content" not in r.output
    tasks = json.loads(out.read_text())
    text = {str(101 + k): f"review number {k}" for k in range(12)}
    for t in tasks:
        d = t["data"]
        assert d["text"] == text[d["item"]] and d["meta_info"] == {"shop": (int(d["item"]) - 101) % 3}
        assert set(d) == {"text", "meta_info", "item", "assigned_to", "stratum"}
    man = json.loads((tmp_path / "next.manifest.json").read_text())
    assert man["n_items_with_content"] == len(tasks)
    # the tool imports the batch (new task ids), the assigned annotators label, the export reads back
    back_p = tmp_path / "round2.json"
    back_p.write_text(json.dumps(_ls_import_then_export(tasks)))
    back = read_annotations(back_p, control="sentiment").to_frame()
    got = sorted(zip(back["item"].astype(str), back["rater"].astype(str)))
    want = sorted((t["data"]["item"], r) for t in tasks for r in t["data"]["assigned_to"])
    assert got == want and len(want) == 10
    assert set(back["item"].astype(str)) <= set(text)     # the source items, not the tool's new task ids


def test_assign_to_argilla_carries_the_record_fields_and_reads_back(tmp_path):
    from typer.testing import CliRunner

    from voirdire.cli import app

    recs = []
    for k in range(10):
        recs.append({"id": f"rec-{k}", "fields": {"prompt": f"prompt {k}", "response": f"answer {k}"},
                     "metadata": {"source": "support"},
                     "suggestions": {"label": {"value": "good", "score": 0.9, "agent": "gpt-judge"}},
                     "responses": {"label": [{"value": "good" if (k + u) % 2 else "bad", "user_id": f"user-{u}",
                                              "status": "submitted"} for u in range(2)]},
                     "vectors": {}, "_server_id": f"srv-{k}"})
    src = tmp_path / "records.json"
    src.write_text(json.dumps(recs))
    out = tmp_path / "next.json"
    r = CliRunner().invoke(app, ["assign", str(src), "-n", "4", "-o", str(out), "--to", "argilla", "--design",
                                 "random", "--seed", "1", "-r", "user-2", "-r", "user-3"])
    assert r.exit_code == 0, r.output
    written = json.loads(out.read_text())
    for rec in written:
        k = int(rec["fields"]["item"].split("-")[1])
        assert rec["fields"] == {"prompt": f"prompt {k}", "response": f"answer {k}", "item": f"rec-{k}"}
    # Argilla logs them (new server ids); the assigned annotators answer; to_json exports; it reads back
    for n, rec in enumerate(written):
        rec["_server_id"] = f"new-{n}"
        rec["responses"] = {"label": [{"value": "good", "user_id": u, "status": "submitted"}
                                      for u in rec["metadata"]["assigned_to"]]}
    back_p = tmp_path / "round2.json"
    back_p.write_text(json.dumps(written))
    back = read_annotations(back_p).to_frame()
    got = sorted(zip(back["item"].astype(str), back["rater"].astype(str)))
    want = sorted((rec["fields"]["item"], u) for rec in written for u in rec["metadata"]["assigned_to"])
    assert got == want and len(want) == 8


def test_read_item_data_of_each_export():
    from pathlib import Path

    from voirdire.data import read_item_data

    fix = Path(__file__).parent / "fixtures" / "formats"
    ls = read_item_data(fix / "label_studio_export.json")
    assert ls["101"] == {"text": "The refund arrived in two days, thank you!"}
    # JSON-MIN: the task data keys, not the controls (sentiment: the annotators agree on task 101, so only
    # --control, or its repeating across tasks, tells it from task data)
    for control in (None, "sentiment"):
        mini = read_item_data(fix / "label_studio_min.json", control=control)
        assert mini["101"] == {"text": "The refund arrived in two days, thank you!"}, control
    arg = read_item_data(fix / "argilla_records.json")
    assert arg["rec-1"] == {"prompt": "Summarise the ticket.", "response": "Customer got a refund quickly."}
    assert read_item_data(fix / "README.md") == {}


def test_study_assign_to_label_studio_carries_the_rounds_task_data(tmp_path):
    # issue 29 item 6, `study assign`: the study's round came from a Label Studio export; the next batch's
    # tasks carry that export's task data, and the tool's export of the batch adds back as the same
    # items and annotators (the assignments are then delivered)
    from typer.testing import CliRunner

    from voirdire.cli import app
    from voirdire.study import Study

    runner = CliRunner()
    study = tmp_path / "s.vdb"
    src = tmp_path / "export.json"
    src.write_text(json.dumps(_ls_export()))
    assert runner.invoke(app, ["study", "init", str(study)]).exit_code == 0
    r = runner.invoke(app, ["study", "add", str(study), str(src)])
    assert r.exit_code == 0, r.output
    out = tmp_path / "batch.json"
    r = runner.invoke(app, ["study", "assign", str(study), "-n", "4", "-o", str(out), "--to", "label-studio",
                            "--design", "random", "-r", "cy@x.org", "-r", "dee@x.org", "--seed", "3"])
    assert r.exit_code == 0, r.output
    assert "no content" not in r.output
    tasks = json.loads(out.read_text())
    for t in tasks:
        assert t["data"]["text"] == f"review number {int(t['data']['item']) - 101}"
    back_p = tmp_path / "round2.json"
    back_p.write_text(json.dumps(_ls_import_then_export(tasks)))
    r = runner.invoke(app, ["study", "add", str(study), str(back_p), "--strict"])
    assert r.exit_code == 0, r.output     # --strict: every label of the batch was assigned
    st = Study(study).status()
    assert st.n_open_assignments == 0 and st.n_delivered_assignments == 8
    # the export moved (or changed) since it was added: no content, and the command says so
    src.write_text(json.dumps(_ls_export()[:3]))
    r = runner.invoke(app, ["study", "assign", str(study), "-n", "2", "-o", str(tmp_path / "b2.json"), "--to",
                            "label-studio", "--design", "random", "-r", "eve@x.org", "--seed", "4"])
    assert r.exit_code == 0, r.output
    assert "have no content" in " ".join(r.output.split())
