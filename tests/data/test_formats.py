"""Every tool format on a fixture shaped like the tool's real export (see fixtures/formats/README.md)."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from voirdire.data import read_annotations
from voirdire.exceptions import SchemaError

FIX = Path(__file__).parent / "fixtures" / "formats"


def _labels(t) -> dict[tuple[str, str], object]:
    """{(item, rater): label} of a table, for comparing readers label by label."""
    df = t.to_frame()
    return {(str(i), str(r)): lab for i, r, lab in zip(df["item"], df["rater"], df["label"])}


# ---------------------------------------------------------------- Label Studio
def test_label_studio_export_annotations_are_humans_predictions_judges():
    t = read_annotations(FIX / "label_studio_export.json", control="sentiment")
    assert sorted(t.humans) == ["1", "2", "3"] and t.judges == ("gpt-4o-judge",)
    lab = _labels(t)
    # task 102: user 3 cancelled (skipped), users 1 and 2 said Negative, the model Neutral
    assert lab[("102", "1")] == lab[("102", "2")] == "Negative" and lab[("102", "gpt-4o-judge")] == "Neutral"
    assert ("102", "3") not in lab
    assert t.n_labels == 9
    assert t.summary().dropped == {"skipped/cancelled annotation": 1}


def test_label_studio_several_controls_need_control():
    with pytest.raises(SchemaError, match=r"several controls \['quality', 'sentiment'\].*--control NAME"):
        read_annotations(FIX / "label_studio_export.json")
    with pytest.raises(SchemaError, match="control 'mood' is not in the export"):
        read_annotations(FIX / "label_studio_export.json", control="mood")


def test_label_studio_rating_control_is_numeric():
    t = read_annotations(FIX / "label_studio_export.json", control="quality", scale="ordinal")
    lab = _labels(t)
    assert (lab[("101", "1")], lab[("101", "2")], lab[("101", "gpt-4o-judge")]) == (5, 4, 5)
    assert t.scale.categories == (1, 2, 3, 4, 5)


def test_label_studio_json_min_gives_the_same_human_labels_as_json():
    full = _labels(read_annotations(FIX / "label_studio_export.json", control="sentiment"))
    mini = _labels(read_annotations(FIX / "label_studio_min.json", control="sentiment"))
    assert mini == {k: v for k, v in full.items() if k[1] != "gpt-4o-judge"}
    with pytest.raises(SchemaError, match=r"several controls \['quality', 'sentiment'\]"):
        read_annotations(FIX / "label_studio_min.json")  # 'text' is task data: not offered


def _min_after_write_back() -> list[dict]:
    """JSON-MIN of a project after one write-back round: tasks 101-103 as first imported, then tasks 201 and 202,
    the round that `assign --to label-studio` wrote for items 101 and 102 (their text carried over, with the
    write-back's own fields item, assigned_to, stratum), each labelled by the annotators it names."""
    text = {101: "Refund in two days.", 102: "Still waiting.", 103: "Works, I guess."}
    first = [(101, 1, "Positive"), (101, 2, "Positive"), (102, 1, "Negative"), (103, 2, "Neutral")]
    again = [(201, 101, 3, "Positive"), (202, 102, 2, "Negative"), (202, 102, 3, "Neutral")]
    recs = [{"text": text[t], "id": t, "sentiment": lab, "annotator": u, "annotation_id": 10 * t + u}
            for t, u, lab in first]
    recs += [{"text": text[it], "item": str(it), "assigned_to": ["2", "3"] if it == 102 else ["3"], "stratum": "all",
              "id": t, "sentiment": lab, "annotator": u, "annotation_id": 10 * t + u} for t, it, u, lab in again]
    return recs


def test_label_studio_json_min_after_a_write_back_round_reads_without_control(tmp_path):
    # issue 29: 'item', 'assigned_to', 'stratum' are the write-back's task data, and 'text' is constant per item
    # (tasks 101 and 201 hold the same text) though no longer distinct per task: 'sentiment' is the one control
    from voirdire.data import read_item_data

    p = tmp_path / "min.json"
    p.write_text(json.dumps(_min_after_write_back()))
    lab = _labels(read_annotations(p))
    assert lab == {("101", "1"): "Positive", ("101", "2"): "Positive", ("102", "1"): "Negative",
                   ("103", "2"): "Neutral", ("101", "3"): "Positive", ("102", "2"): "Negative",
                   ("102", "3"): "Neutral"}
    assert read_item_data(p)["101"]["text"] == "Refund in two days."   # the next round carries the text again


def test_label_studio_json_min_stratum_is_a_control_without_a_write_back(tmp_path):
    # a project's own control named 'stratum' (no 'item' on its records): still a control
    recs = [{k if k != "sentiment" else "stratum": v for k, v in r.items()} for r in _min_after_write_back()[:4]]
    recs[1]["stratum"] = "Negative"   # the annotators of task 101 disagree: not task data
    p = tmp_path / "min.json"
    p.write_text(json.dumps(recs))
    assert _labels(read_annotations(p))[("103", "2")] == "Neutral"


def test_label_studio_multi_choice_is_a_clear_error(tmp_path):
    tasks = json.loads((FIX / "label_studio_export.json").read_text())
    tasks[0]["annotations"][1]["result"][0]["value"]["choices"] = ["Positive", "Neutral"]
    p = tmp_path / "export.json"
    p.write_text(json.dumps(tasks))
    with pytest.raises(SchemaError, match=r"task 101, annotation 1002: control 'sentiment' has \['Positive', 'Neutral'\]"):
        read_annotations(p, control="sentiment")


# ---------------------------------------------------------------- Argilla
def test_argilla_responses_are_humans_suggestions_judges():
    t = read_annotations(FIX / "argilla_records.json", question="label")
    assert t.judges == ("gpt-4o-judge",) and len(t.humans) == 3
    lab = _labels(t)
    assert lab[("rec-2", "gpt-4o-judge")] == "bad"
    assert ("rec-2", "9b7d3c2a-6e5f-4a1b-8c9d-0e1f2a3b4c03") not in lab  # discarded
    assert ("rec-3", "0a6e8e3c-1b1f-4c0e-9d3a-3f1f5b3f9a01") not in lab  # draft
    assert t.n_labels == 9
    assert t.summary().dropped == {"discarded response": 1, "draft response": 1}


def test_argilla_question_choice():
    with pytest.raises(SchemaError, match=r"several questions \['label', 'rating'\].*--question NAME"):
        read_annotations(FIX / "argilla_records.json")
    t = read_annotations(FIX / "argilla_records.json", question="rating", scale="interval")
    assert t.n_items == 2 and sorted(t.values[t.rater_idx == t.rater_index("gpt-4o-judge")]) == [2.0, 5.0]


# ---------------------------------------------------------------- promptfoo
def test_promptfoo_assertions_are_judges_viewer_ratings_human():
    t = read_annotations(FIX / "promptfoo_results.json")
    assert set(t.judges) == {"Correctness", "Tone"} and t.humans == ("human",)
    lab = _labels(t)
    assert [lab[(f"test {i}", "Tone")] for i in range(4)] == ["pass", "fail", "fail", "pass"]
    assert [lab.get((f"test {i}", "human")) for i in range(4)] == ["pass", "fail", "fail", None]
    assert t.summary().dropped == {"result without grading (errored or unasserted)": 1}
    s = read_annotations(FIX / "promptfoo_results.json", label="score", scale="interval")
    assert _labels(s)[("test 2", "Correctness")] == 1


# ---------------------------------------------------------------- lm-evaluation-harness
def test_lm_eval_samples_model_against_target():
    p = next((FIX / "lm_eval" / "EleutherAI__pythia-160m").glob("samples_*.jsonl"))
    t = read_annotations(p)
    assert t.humans == ("target",) and t.judges == ("EleutherAI__pythia-160m",)
    lab = _labels(t)
    # the model's choice (argmax loglikelihood) matches the target exactly where lm-eval's own acc is 1
    for line in p.read_text().splitlines():
        s = json.loads(line)
        same = lab[(str(s["doc_id"]), "EleutherAI__pythia-160m")] == lab[(str(s["doc_id"]), "target")]
        assert same == (s["acc"] == 1.0)


# ---------------------------------------------------------------- Inspect AI
def test_inspect_log_scorers_are_judges_errored_sample_skipped():
    pytest.importorskip("inspect_ai", reason="the inspect extra (pip install 'voirdire[inspect]') is not installed")
    t = read_annotations(FIX / "inspect_support_grading.eval")
    assert set(t.judges) == {"model_graded_qa", "model_graded_fact", "exact"} and t.n_items == 4
    assert t.summary().dropped == {"errored sample": 1}
    assert _labels(t)[("t2", "model_graded_qa")] == "I"
    u = read_annotations(FIX / "inspect_support_grading.eval", judges=["model_graded_qa"])
    assert u.judges == ("model_graded_qa",) and set(u.humans) == {"model_graded_fact", "exact"}


# ---------------------------------------------------------------- spreadsheets
WIDE = "item,ann1,ann2,gpt4\ns1,pass,pass,pass\ns2,fail,,fail\ns3,pass,fail,pass\n"


def test_wide_table_detected_and_judge_columns(tmp_path):
    p = tmp_path / "sheet.csv"
    p.write_text(WIDE)
    t = read_annotations(p, judges=["gpt4"])
    assert t.humans == ("ann1", "ann2") and t.judges == ("gpt4",)
    assert t.n_labels == 8  # the empty cell is a label nobody gave
    assert _labels(t)[("s3", "ann2")] == "fail"
    assert _labels(read_annotations(p, wide=True, judges=["gpt4"])) == _labels(t)


def test_wide_table_mixing_numbers_and_text_names_the_cell(tmp_path):
    p = tmp_path / "sheet.csv"
    p.write_text("item,ann1,ann2\ns1,4,5\ns2,3,n/a\ns3,2,2\ns4,5,4\n")
    with pytest.raises(SchemaError, match=r"row 3, column 'ann2': rater column 'ann2' mixes numbers and text: 'n/a'"):
        read_annotations(p, wide=True)
    t = read_annotations(p, wide=True, abstain=["n/a"])
    assert t.n_labels == 8 and int(t.is_abstention.sum()) == 1


def test_guessed_format_is_named_in_errors(tmp_path):
    p = tmp_path / "sheet.csv"
    p.write_text(WIDE)
    with pytest.raises(SchemaError, match=r"read as a wide table .*--format-in"):
        read_annotations(p, judges=["gpt5"])


def test_semicolon_csv_is_sniffed(tmp_path):
    p = tmp_path / "labels.csv"
    p.write_text("item;rater;label\n1;a;x, with a comma\n1;b;y\n2;a;y\n2;b;y\n")
    t = read_annotations(p)
    assert t.n_labels == 4 and "x, with a comma" in t.scale.categories


def test_crowdkit_column_names(tmp_path):
    p = tmp_path / "crowd.tsv"
    p.write_text("task\tworker\tlabel\nt1\tw1\tcat\nt1\tw2\tdog\nt2\tw1\tcat\n")
    t = read_annotations(p)
    assert (t.n_items, t.n_raters) == (2, 2)


def test_txt_and_no_extension_read_as_delimited(tmp_path):
    for name in ("labels.txt", "labels"):
        p = tmp_path / name
        p.write_text("item,rater,label\n1,a,x\n1,b,y\n")
        assert read_annotations(p).n_labels == 2


def test_excel(tmp_path):
    pytest.importorskip("openpyxl", reason="the excel extra (pip install 'voirdire[excel]') is not installed")
    p = tmp_path / "sheet.xlsx"
    pd.read_csv(io.StringIO(WIDE), dtype=str, keep_default_na=False).to_excel(p, index=False)
    t = read_annotations(p, judges=["gpt4"])
    assert t.n_labels == 8 and t.judges == ("gpt4",)


def test_stdin_with_and_without_format(monkeypatch):
    data = "item,rater,label\n1,a,x\n1,b,y\n2,a,x\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    t = read_annotations("-")
    assert t.source == "<stdin>" and t.n_labels == 3
    ls = (FIX / "label_studio_export.json").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ls)))
    t = read_annotations("-", format="label-studio", control="sentiment")
    assert t.judges == ("gpt-4o-judge",)


def test_where_filter_on_hanna_matches_the_loader():
    from voirdire.datasets import hanna_path, load_hanna

    t = read_annotations(hanna_path(), label="score", role="role", scale="interval", abstain=[-1],
                         where=["criterion=Empathy"])
    ref = load_hanna(criterion="Empathy")
    assert (t.n_items, t.n_labels) == (ref.n_items, ref.n_labels)
    assert t.summary().dropped["not matching --where"] == 5 * t.n_rows_read  # six criteria, one kept



def test_where_errors_name_the_column_and_what_it_holds(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("item,rater,criterion,label\n1,a,Empathy,3\n1,b,Empathy,4\n1,a,Surprise,2\n")
    assert read_annotations(p, where=["criterion=Empathy"]).n_labels == 2
    with pytest.raises(SchemaError, match=r"--where names column 'crit'"):
        read_annotations(p, where=["crit=Empathy"])
    with pytest.raises(SchemaError, match=r"matches no row; 'criterion' holds \['Empathy', 'Surprise'\]"):
        read_annotations(p, where=["criterion=Empathie"])


def test_errors_echo_at_most_about_80_characters(tmp_path):
    long = "x" * 5000
    p = tmp_path / "export.json"
    tasks = json.loads((FIX / "label_studio_export.json").read_text())
    tasks[0]["annotations"][0]["result"][0]["value"]["choices"] = [long, long]
    p.write_text(json.dumps(tasks))
    with pytest.raises(SchemaError) as e:
        read_annotations(p, control="sentiment")
    assert len(str(e.value)) < 400


def test_unknown_format_value():
    from voirdire.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match=r"'format' parameter of read_annotations \(--format-in\)"):
        read_annotations(FIX / "argilla_records.json", format="argila")


@pytest.mark.parametrize("module, extra, suffix", [("openpyxl", "excel", ".xlsx"), ("pyarrow", "parquet", ".parquet"),
                                                   ("inspect_ai", "inspect", ".eval")])
def test_missing_extra_is_one_line_naming_the_install(tmp_path, monkeypatch, module, extra, suffix):
    from voirdire._optional import MissingExtraError

    p = tmp_path / f"file{suffix}"
    p.write_bytes(b"PK\x03\x04 not really")
    for name in list(sys.modules):
        if name == module or name.startswith(module + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError
    with pytest.raises(MissingExtraError, match=rf"^.*pip install 'voirdire\[{extra}\]'$") as e:
        read_annotations(p)
    assert "\n" not in str(e.value)


def test_missing_columns_are_short_and_point_at_wide(tmp_path):
    p = tmp_path / "many.csv"
    names = [f"column_with_a_rather_long_name_{k}" for k in range(300)]
    p.write_text("id,who," + ",".join(names) + "\n" + "\n".join(f"1,a,{','.join(['x'] * 300)}" for _ in range(2)) + "\n")
    with pytest.raises(SchemaError, match=r"missing column\(s\) \['item', 'rater', 'label'\].*--wide") as e:
        read_annotations(p)
    assert len(str(e.value)) < 500


def test_argilla_flattened_export_reads_like_the_nested_one(tmp_path):
    # GenericIO._record_to_dict(flatten=True): fields and metadata at top level, then
    # q.responses / q.responses.users / q.responses.status and q.suggestion / .score / .agent
    nested = json.loads((FIX / "argilla_records.json").read_text())
    flat = []
    for r in nested:
        row = {"id": r["id"], "_server_id": r["_server_id"], **r["fields"], **r["metadata"]}
        for q, resps in r["responses"].items():
            row[f"{q}.responses"] = [x["value"] for x in resps]
            row[f"{q}.responses.users"] = [x["user_id"] for x in resps]
            row[f"{q}.responses.status"] = [x["status"] for x in resps]
        for q, sug in r["suggestions"].items():
            row.update({f"{q}.suggestion": sug["value"], f"{q}.suggestion.score": sug["score"],
                        f"{q}.suggestion.agent": sug["agent"]})
        flat.append(row)
    keys = {k for row in flat for k in row}
    flat = [{k: row.get(k) for k in sorted(keys)} for row in flat]  # to_list fills absent keys with None
    p = tmp_path / "flat.json"
    p.write_text(json.dumps(flat))
    a = read_annotations(p, question="label")
    b = read_annotations(FIX / "argilla_records.json", question="label")
    assert _labels(a) == _labels(b) and a.summary().dropped == b.summary().dropped
    pq = tmp_path / "flat.parquet"
    pytest.importorskip("pyarrow", reason="the parquet extra is not installed")
    pd.DataFrame(flat).to_parquet(pq)  # a to_hub download
    assert _labels(read_annotations(pq, question="label")) == _labels(b)


def _broken(tmp_path: Path, name: str, edit) -> Path:
    obj = json.loads((FIX / name).read_text())
    edit(obj)
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return p


@pytest.mark.parametrize("name, edit, where", [
    # a field holding a value of another type than the tool writes: a one-line error naming the
    # file, the task/record and the format, never an internal error (AttributeError, TypeError)
    ("label_studio_export.json", lambda o: o[0]["annotations"].__setitem__(0, 5), "task 101"),
    ("label_studio_export.json", lambda o: o[1].__setitem__("predictions", [None]), "task"),
    ("label_studio_export.json", lambda o: o[0]["annotations"][0].__setitem__("result", [7]), ""),
    ("label_studio_min.json", lambda o: o[0].__setitem__("id", [1, 2]), "record 1"),
    ("argilla_records.json", lambda o: o[0]["responses"].__setitem__("label", ["x"]), "record 1"),
    ("argilla_records.json", lambda o: o[1].__setitem__("suggestions", "x"), ""),
    ("promptfoo_results.json", lambda o: o["results"]["results"][0]["gradingResult"].__setitem__(
        "componentResults", [3]), "result 1"),
    ("promptfoo_results.json", lambda o: o["results"]["results"][0].__setitem__("promptIdx", [0]), ""),
])
def test_a_field_of_the_wrong_type_is_a_one_line_error(tmp_path, name, edit, where):
    p = _broken(tmp_path, name, edit)
    with pytest.raises(SchemaError) as e:
        read_annotations(p, **({"control": "sentiment"} if "label_studio" in name else
                                {"question": "label"} if "argilla" in name else {}))
    msg = str(e.value)
    assert msg.startswith(str(p)) and where in msg and "\n" not in msg, msg
    assert "does not have the shape of" in msg or "is a list, not a single value" in msg, msg


def test_lm_eval_doc_id_of_the_wrong_type_is_a_one_line_error(tmp_path):
    src = next((FIX / "lm_eval").rglob("*.jsonl"))
    recs = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    recs[1]["doc_id"] = {"a": 1}
    d = tmp_path / src.parent.name
    d.mkdir()
    p = d / src.name
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    with pytest.raises(SchemaError, match=r", line 2: does not have the shape of lm-evaluation-harness samples"):
        read_annotations(p)


def test_a_named_pipe_is_read_once_and_named_in_errors(tmp_path, monkeypatch):
    # <(zcat x.gz) and FIFOs have size 0 and can be read only once: they were "empty" (or hung)
    import os
    import threading

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    good = b"item,rater,label\ni1,a,1\ni1,b,1\ni2,a,0\n"

    def through_pipe(name, data, **kw):
        fifo = tmp_path / name
        os.mkfifo(fifo)
        w = threading.Thread(target=fifo.write_bytes, args=(data,))
        w.start()
        try:
            return read_annotations(fifo, **kw)
        finally:
            w.join(5)

    t = through_pipe("p.csv", good)
    assert t.n_labels == 3 and t.source.endswith("p.csv")
    with pytest.raises(SchemaError) as e:
        through_pipe("nul", b"item,rater,label\ni1,a\0b,1\n")
    assert str(e.value).startswith(str(tmp_path / "nul") + ", row 2: cannot be parsed as CSV"), str(e.value)
    pytest.importorskip("pyarrow")
    buf = io.BytesIO()
    pd.DataFrame({"item": ["i1", "i1"], "rater": ["a", "b"], "label": [1, 0]}).to_parquet(buf, index=False)
    assert through_pipe("pq", buf.getvalue()).n_labels == 2  # Parquet found by its magic bytes
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(buf.getvalue())))
    assert read_annotations("-").n_labels == 2
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"item,rater,label\ni1,a\0b,1\n")))
    with pytest.raises(SchemaError, match=r"^<stdin>, row 2: cannot be parsed as CSV"):  # not the temporary file
        read_annotations("-")
