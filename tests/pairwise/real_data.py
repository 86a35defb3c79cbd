"""Converters from the real pairwise data sets in ../shared/data/pairwise to long tables.

Each ``*_frame(root)`` returns a long frame with columns ``pair, rater, role, verdict, order``
(verdict A/T/B in the original response order; order AB/BA for judges, empty for humans),
ready for ``voirdire.data.read_pairwise`` (after ``to_csv``) or ``PairwiseTable.from_frame``.
Used by the tests, ``bench/bench_pairwise.py`` and the figures in ``docs/pairwise.md``.
The data are never shipped (see ../shared/data/pairwise/README.md for licences).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

COLUMNS = ["pair", "rater", "role", "verdict", "order"]
_WIN = {"model_1": "A", "model_2": "B", "tie": "T"}


def summeval_h2h_frame(root: Path) -> pd.DataFrame:
    """SummEval head-to-head: 3 experts (derived preferences) + gpt-3.5-turbo-0301 in both orders; 4,400 pairs."""
    d = pd.read_json(Path(root) / "summeval_h2h" / "summeval_h2h_gpt35_both_orders.jsonl", lines=True)
    d["pair"] = d["doc_id"] + "|" + d["model_1"] + "-" + d["model_2"] + "|" + d["dimension"]
    judge = pd.DataFrame({"pair": d["pair"], "rater": d["evaluator"], "role": "judge",
                          "verdict": d["winner"].map(_WIN), "order": d["order"]})
    ab = d[d["order"] == "AB"]
    hum = [pd.DataFrame({"pair": ab["pair"], "rater": f"expert_{k}", "role": "human",
                         "verdict": ab[f"expert_pref_{k}"].map(_WIN), "order": ""}) for k in (1, 2, 3)]
    return pd.concat(hum + [judge], ignore_index=True)[COLUMNS]


def summeval_h2h_8_frame(root: Path) -> pd.DataFrame:
    """SummEval head-to-head with the paper's 8 humans: 3 experts + 5 crowd workers (MTurk).

    The pairs and the judge (gpt-3.5-turbo-0301, both orders) are those of
    :func:`summeval_h2h_frame`; each human's verdict is derived from their own 1-5 scores of the
    two summaries (higher score wins, equal scores = tie) in ``../grading/summeval``. Raters are
    ``expert_1..3`` and ``crowd_1..5`` by their position in SummEval's lists (SummEval does not
    publish rater identities, so a position is not guaranteed to be one person)."""
    root = Path(root)
    d = pd.read_json(root / "summeval_h2h" / "summeval_h2h_gpt35_both_orders.jsonl", lines=True)
    d["pair"] = d["doc_id"] + "|" + d["model_1"] + "-" + d["model_2"] + "|" + d["dimension"]
    judge = pd.DataFrame({"pair": d["pair"], "rater": d["evaluator"], "role": "judge",
                          "verdict": d["winner"].map(_WIN), "order": d["order"]})
    h = pd.read_csv(root.parent / "grading" / "summeval" / "summeval_human_ratings_long.csv")
    h["rater"] = h["rater_type"].map({"expert": "expert_", "turker": "crowd_"}) + (h["rater_index"] + 1).astype(str)
    ab = d.loc[d["order"] == "AB", ["pair", "doc_id", "model_1", "model_2", "dimension"]]
    s1 = ab.merge(h.rename(columns={"model_id": "model_1", "score": "s1"}), on=["doc_id", "model_1", "dimension"])
    both = s1.merge(h.rename(columns={"model_id": "model_2", "score": "s2"})[
        ["doc_id", "model_2", "dimension", "rater", "s2"]], on=["doc_id", "model_2", "dimension", "rater"])
    verdict = pd.Series("T", index=both.index)
    verdict[both["s1"] > both["s2"]] = "A"
    verdict[both["s1"] < both["s2"]] = "B"
    hum = pd.DataFrame({"pair": both["pair"], "rater": both["rater"], "role": "human", "verdict": verdict,
                        "order": ""})
    return pd.concat([hum, judge], ignore_index=True)[COLUMNS]


def pandalm_frame(root: Path) -> pd.DataFrame:
    """PandaLM test set: 3 annotators, gpt-3.5-turbo and PandaLM-7B in one order (AB); 999 pairs.

    gpt-3.5's 25 unparsable ("garbage") verdicts are left empty (read with ``missing="drop"``)."""
    base = Path(root) / "pandalm"
    items = json.loads((base / "testset-v1.json").read_text())
    code = {"0": "T", "1": "A", "2": "B", "tie": "T"}
    rows = []
    for it in items:
        for k in (1, 2, 3):
            rows.append((str(it["idx"]), f"annotator{k}", "human", code[str(it[f"annotator{k}"])], ""))
    for fname, key, name in (("gpt-3.5-turbo-testset-v1.json", "gpt_result", "gpt-3.5-turbo"),
                             ("pandalm-7b-testset-v1.json", "pandalm_result", "PandaLM-7B")):
        for it in json.loads((base / fname).read_text()):
            rows.append((str(it["idx"]), name, "judge", code.get(str(it[key]).strip().lower(), ""), "AB"))
    return pd.DataFrame(rows, columns=COLUMNS)


def llmfao_frame(root: Path) -> pd.DataFrame:
    """LLMFAO: 124 crowd workers (1-5 per pair) + GPT-3 and GPT-4 in one order; 2,139 pairs."""
    base = Path(root) / "llmfao"
    code = {"left": "A", "right": "B", "tie": "T"}
    c = pd.read_csv(base / "crowd-comparisons.csv", dtype=str)
    hum = pd.DataFrame({"pair": c["id"], "rater": "w" + c["worker"], "role": "human",
                        "verdict": c["winner"].map(code), "order": "AB"})
    frames = [hum]
    for f, name in (("gpt3-crowd-comparisons.csv", "GPT-3"), ("gpt4-crowd-comparisons.csv", "GPT-4")):
        g = pd.read_csv(base / f, dtype=str)
        frames.append(pd.DataFrame({"pair": g["id"], "rater": name, "role": "judge",
                                    "verdict": g["winner"].map(code), "order": "AB"}))
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def llmbar_frame(root: Path, *, strategies: tuple[str, ...] | None = ("Vanilla_NoRules",)) -> pd.DataFrame:
    """LLMBar: the gold label as one human ("gold") + evaluator/strategy judges in both orders.

    ``strategies=None`` keeps all 15 strategies (65 judges); unparsable verdicts are empty."""
    v = pd.read_csv(Path(root) / "llmbar" / "llmbar_judge_verdicts.csv", dtype=str, keep_default_na=False)
    if strategies is not None:
        v = v[v["strategy"].isin(strategies)]
    v = v.assign(pair=v["subset"] + "#" + v["item_index"], rater=v["evaluator"] + "/" + v["strategy"])
    code = {"1": "A", "2": "B", "": ""}
    gold = v.drop_duplicates("pair")
    frames = [pd.DataFrame({"pair": gold["pair"], "rater": "gold", "role": "human",
                            "verdict": gold["label"].map(code), "order": ""})]
    for col, o in (("winner_order_AB", "AB"), ("winner_order_BA", "BA")):
        frames.append(pd.DataFrame({"pair": v["pair"], "rater": v["rater"], "role": "judge",
                                    "verdict": v[col].map(code), "order": o}))
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def autoj_frame(root: Path) -> pd.DataFrame:
    """Auto-J pairwise test set: one human label + Auto-J-13B in both orders; 1,392 pairs.

    The exchange file is in the presented frame (0 = first shown = original response 2), mapped back here."""
    base = Path(root) / "autoj"
    lab = [json.loads(x) for x in (base / "testdata_pairwise.jsonl").read_text().splitlines() if x.strip()]
    ab = [json.loads(x) for x in (base / "pairwise_example_output.jsonl").read_text().splitlines() if x.strip()]
    ba = [json.loads(x) for x in (base / "pairwise_exchange_example_output.jsonl").read_text().splitlines()
          if x.strip()]
    orig = {0: "A", 1: "B", 2: "T"}
    swapped = {0: "B", 1: "A", 2: "T"}
    rows = []
    for k, it in enumerate(lab):
        rows.append((str(k), "human", "human", orig[int(it["label"])], ""))
        rows.append((str(k), "Auto-J-13B", "judge", orig[int(ab[k]["output"])], "AB"))
        rows.append((str(k), "Auto-J-13B", "judge", swapped[int(ba[k]["output"])], "BA"))
    return pd.DataFrame(rows, columns=COLUMNS)


LOADERS = {"summeval_h2h": summeval_h2h_frame, "summeval_h2h_8": summeval_h2h_8_frame, "pandalm": pandalm_frame, "llmfao": llmfao_frame,
           "llmbar": llmbar_frame, "autoj": autoj_frame}
