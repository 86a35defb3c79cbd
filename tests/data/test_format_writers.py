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
