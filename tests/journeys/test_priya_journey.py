"""Priya's path (../shared/USERS.md, 5) through the installed console script (issue 27, Build 3).

A Label Studio project as its JSON export gives it (the shape of tests/data/fixtures/formats/
label_studio_export.json: ``completed_by`` a user id, task ``data`` holding only the text, no item
column; the task id is the item), built from 120 bundled HANNA stories: three annotators' real
Complexity scores on a sparse share of them, two judge versions as predictions (``judge-v6`` =
ChatGPT, ``judge-v7`` = Beluga-13B). She reads it, gates CI on it (``validate --fail-on
inconclusive --format junit``: the exit code and the JUnit XML a CI server parses), writes the next
round straight into Label Studio (``assign --to label-studio``), the project is labelled and exported
again the way Label Studio does it (the imported tasks are new tasks with new ids, their ``data`` as
imported, the annotations by user id), and she reads that export: the same 120 items and the same
annotators, each with the assigned labels added, and gates again.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._cli import EXAMPLE, needs_console_script, table, voirdire

pytestmark = [pytest.mark.slow, needs_console_script]

USERS = {"human_1": 1, "human_2": 2, "human_3": 3}
JUDGES = {"judge-v6": "ChatGPT", "judge-v7": "Beluga-13B"}


def _region(value: float, rid: str) -> list[dict]:
    return [{"id": rid, "from_name": "complexity", "to_name": "story", "type": "number", "origin": "manual",
             "value": {"number": float(value)}}]


def _export_round1(tmp: Path) -> pd.Series:
    """export_round1.json, as Label Studio exports a project; returns every HANNA score by (story, rater)."""
    df = pd.read_csv(EXAMPLE)
    score = df.set_index(["item", "rater"])["label"]
    rng = np.random.default_rng(11)
    stories = sorted(int(s) for s in rng.choice(df["item"].unique(), size=120, replace=False))
    tasks = []
    for k, story in enumerate(stories, start=1):
        tid = 5000 + story
        annotations = [{"id": 10 * tid + uid, "completed_by": uid, "result": _region(score[story, h], f"a{tid}-{uid}"),
                        "was_cancelled": False, "ground_truth": False, "lead_time": 3.0, "task": tid, "result_count": 0}
                       for h, uid in USERS.items() if rng.random() < 0.45]
        predictions = [{"id": 90_000 + 10 * tid + n, "model_version": mv, "score": 0.5,
                        "result": _region(score[story, judge], f"p{tid}-{n}")}
                       for n, (mv, judge) in enumerate(JUDGES.items())]
        tasks.append({"id": tid, "data": {"text": f"Story {story}: once upon a time..."}, "annotations": annotations,
                      "predictions": predictions, "drafts": [], "meta": {}, "inner_id": k, "project": 7,
                      "total_annotations": len(annotations), "cancelled_annotations": 0,
                      "total_predictions": len(predictions)})
    (tmp / "export_round1.json").write_text(json.dumps(tasks, indent=1))
    return score


def _labelled_in_label_studio(tasks1: list[dict], round2: list[dict], score: pd.Series) -> list[dict]:
    """The project's JSON export after round 2: Label Studio imported the tasks as new tasks (new ids, their
    ``data`` as imported), each annotator labelled the tasks naming them (their HANNA score)."""
    name = {str(uid): h for h, uid in USERS.items()}
    tasks2 = list(tasks1)
    for n, new in enumerate(round2):
        tid = 9000 + n
        story = int(new["data"]["item"]) - 5000
        anns = [{"id": 10 * tid + int(u), "completed_by": int(u), "was_cancelled": False, "ground_truth": False,
                 "task": tid, "lead_time": 2.0, "result": _region(score[story, name[u]], f"r{tid}-{u}")}
                for u in new["data"]["assigned_to"]]
        tasks2.append({"id": tid, "data": new["data"], "annotations": anns, "predictions": [], "drafts": [],
                       "meta": {}, "inner_id": 121 + n, "project": 7, "total_annotations": len(anns),
                       "cancelled_annotations": 0, "total_predictions": 0})
    return tasks2


def _json_min(tasks: list[dict]) -> list[dict]:
    """The project's JSON-MIN export (label-studio-sdk's convert_to_json_min): one record per annotation, the
    task's data keys, ``id``, ``annotator`` (the user id), ``annotation_id``, times; a number control as
    ``[{"number": x}]``. Tasks without annotations (and every prediction) are not exported."""
    return [{**t["data"], "id": t["id"], "complexity": [{"number": a["result"][0]["value"]["number"]}],
             "annotator": a["completed_by"], "annotation_id": a["id"], "created_at": "2024-06-03T10:00:00.000000Z",
             "updated_at": "2024-06-03T10:00:00.000000Z", "lead_time": a.get("lead_time", 2.0)}
            for t in tasks for a in t["annotations"]]


def _gate(tmp: Path, export: str) -> tuple[int, dict[str, tuple[str, str]]]:
    """The CI step: its exit code and, per JUnit test case (judge), (failure type or 'accept', text)."""
    r = voirdire("validate", export, "--scale", "interval", "--judge", "judge-v6", "--judge", "judge-v7",
                 "--fail-on", "inconclusive", "--format", "junit", "--n-resamples", "200", cwd=tmp, rc=(0, 3))
    root = ET.fromstring(r.out)                       # stdout is the XML and nothing else (> voirdire.xml)
    suites = root.findall("testsuite")
    assert len(suites) == 1 and suites[0].get("tests") == "2", r.out
    cases: dict[str, tuple[str, str]] = {}
    for case in suites[0].findall("testcase"):
        failure = case.find("failure")
        if failure is None:
            cases[case.get("name")] = ("accept", "")
        else:
            kind = failure.get("type")
            assert failure.get("message", "").startswith(f"{kind}: "), ET.tostring(case)
            assert failure.text.startswith(f"{case.get('name')}: {kind.upper()} - "), failure.text
            cases[case.get("name")] = (kind, failure.text)
    assert set(cases) == set(JUDGES)
    failed = sum(kind != "accept" for kind, _ in cases.values())
    assert suites[0].get("failures") == str(failed)
    assert r.rc == (3 if failed else 0), r
    # the decisions the build gates on are validate's, at the same seed (the CI log and a notebook agree)
    j = json.loads(voirdire("validate", export, "--scale", "interval", "--judge", "judge-v6", "--judge", "judge-v7",
                            "--n-resamples", "200", "-f", "json", cwd=tmp).out)
    assert {x["judge"]: x["verdict"]["decision"] for x in j["judges"]} == {k: v[0] for k, v in cases.items()}
    for name, (kind, text) in cases.items():
        if kind == "inconclusive":   # a red build says what would settle it
            assert "settle" in text, text
    return r.rc, cases


def _coverage(tmp: Path, export: str, *extra: str) -> tuple[int, dict[str, int]]:
    o = voirdire("overlap", export, "--scale", "interval", *extra, cwd=tmp)
    t = table(o.out, header_has="labelled")
    n_items = int(t.title.split("(")[1].split()[0])
    return n_items, {k: int(r["labelled"]) for k, r in t.by("rater").items()}


def test_priya_label_studio_gate_write_back_and_read_again(tmp_path: Path) -> None:
    score = _export_round1(tmp_path)
    tasks1 = json.loads((tmp_path / "export_round1.json").read_text())
    per_user = {str(u): sum(a["completed_by"] == u for t in tasks1 for a in t["annotations"]) for u in USERS.values()}

    # read: the annotators by user id, the judges by model version, one item per task
    n_items, labelled = _coverage(tmp_path, "export_round1.json", "--judge", "judge-v6", "--judge", "judge-v7")
    assert n_items == 120
    assert labelled == {**per_user, "judge-v6": 120, "judge-v7": 120}

    # the CI gate
    _gate(tmp_path, "export_round1.json")

    # the next round, straight into Label Studio
    a = voirdire("assign", "export_round1.json", "--scale", "interval", "--judge", "judge-v7", "--design", "strat",
                 "-n", "20", "--seed", "0", "-o", "round2.json", "--to", "label-studio", cwd=tmp_path)
    shown = table(a.out, header_has="items").by("rater")
    assert {k: int(r["items"]) for k, r in shown.items()} == {"1": 20, "2": 20, "3": 20}
    round2 = json.loads((tmp_path / "round2.json").read_text())
    text_of = {str(t["id"]): t["data"]["text"] for t in tasks1}
    assert sum(len(t["data"]["assigned_to"]) for t in round2) == 60
    for t in round2:
        d = t["data"]
        assert d["item"] in text_of and set(d["assigned_to"]) <= {"1", "2", "3"}, t
        assert d["text"] == text_of[d["item"]], "the task does not carry the story the annotators must see"
    manifest = json.loads((tmp_path / "round2.manifest.json").read_text())
    assert manifest["n_assignments"] == 60 and manifest["format"] == "label-studio"

    # Label Studio imports the tasks (new ids), the annotators label them, the project is exported again
    tasks2 = _labelled_in_label_studio(tasks1, round2, score)
    (tmp_path / "export_round2.json").write_text(json.dumps(tasks2))

    # read again: the same items and annotators, each with the 20 assigned labels added
    n_items2, labelled2 = _coverage(tmp_path, "export_round2.json", "--judge", "judge-v6", "--judge", "judge-v7")
    assert n_items2 == 120, "the imported tasks' items were not read as the items they were assigned for"
    assert labelled2 == {**{u: c + 20 for u, c in per_user.items()}, "judge-v6": 120, "judge-v7": 120}

    # the same project exported as JSON-MIN (no predictions, no unannotated tasks): the same annotators and counts
    (tmp_path / "min_round2.json").write_text(json.dumps(_json_min(tasks2)))
    annotated = {str(t["data"].get("item", t["id"])) for t in tasks2 if t["annotations"]}
    assert _coverage(tmp_path, "min_round2.json", "--control", "complexity") == (
        len(annotated), {u: c + 20 for u, c in per_user.items()})

    # and the gate again, on the new export
    _, cases = _gate(tmp_path, "export_round2.json")

    # the same decisions in the report she sends and in a notebook, for the same seed
    voirdire("report", "export_round2.json", "--scale", "interval", "--judge", "judge-v6", "--judge", "judge-v7",
             "--n-resamples", "200", "-o", "report", "-q", cwd=tmp_path)
    rep = json.loads((tmp_path / "report" / "report.json").read_text())
    assert rep["meta"]["humans"] == ["1", "2", "3"]
    judged = rep["sections"]["validation"]["results"]["judges"]
    assert {j["judge"]: j["verdict"]["decision"] for j in judged} == {k: v[0] for k, v in cases.items()}
    from voirdire import read_annotations
    from voirdire.workflows import validate_judges

    nb = validate_judges(read_annotations(tmp_path / "export_round2.json", scale="interval"), ["judge-v6", "judge-v7"],
                         n_resamples=200, seed=0).to_dict()
    assert {j["judge"]: j["verdict"]["decision"] for j in nb["judges"]} == {k: v[0] for k, v in cases.items()}


# issue 29: the write-back's own task fields ('item', 'assigned_to', 'stratum') and the task text (repeated
# by the imported task, so constant per item rather than distinct per task) are task data, not controls
def test_priya_json_min_export_after_a_write_back_round_reads_without_control(tmp_path: Path) -> None:
    score = _export_round1(tmp_path)
    tasks1 = json.loads((tmp_path / "export_round1.json").read_text())
    (tmp_path / "min_round1.json").write_text(json.dumps(_json_min(tasks1)))
    n1, labelled1 = _coverage(tmp_path, "min_round1.json")          # round 1: the control is found
    voirdire("assign", "export_round1.json", "--scale", "interval", "--judge", "judge-v7", "-n", "20", "--seed", "0",
             "-o", "round2.json", "--to", "label-studio", cwd=tmp_path)
    round2 = json.loads((tmp_path / "round2.json").read_text())
    tasks2 = _labelled_in_label_studio(tasks1, round2, score)
    (tmp_path / "min_round2.json").write_text(json.dumps(_json_min(tasks2)))
    o = voirdire("overlap", "min_round2.json", "--scale", "interval", cwd=tmp_path, rc=(0, 1))
    assert o.rc == 0, o.err
    n2, labelled2 = _coverage(tmp_path, "min_round2.json")
    assert n2 >= n1 and labelled2 == {u: c + 20 for u, c in labelled1.items()}
