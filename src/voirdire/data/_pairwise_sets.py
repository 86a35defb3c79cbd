"""Readers for public pairwise human + LLM-judge data sets (their files are not shipped).

Each reader turns one public data set, as published by its authors (see the folder's README in
the data directory you downloaded), into a long frame with one row per verdict:

``pair, rater, role, verdict, order`` and, where the set has them, ``model_a, model_b``
(the systems that wrote response A and B) and ``len_a, len_b`` (their lengths in characters).
Verdicts ``A``/``T``/``B`` are in the original response order; ``order`` is ``AB``/``BA`` for
judges and empty for humans (LLMFAO's crowd saw AB). Unparsable judge answers are left empty
(read with ``missing="drop"``). :func:`read_pairwise_set` gives a :class:`PairwiseTable` directly;
:func:`pairwise_set_frame` the frame (e.g. for ``to_csv`` and the CLI, or for
:func:`voirdire.pairwise.bias_report`, which uses the model and length columns).

``root`` is the folder that holds one sub-folder per set (``summeval_h2h/``, ``pandalm/``, ...);
``summeval_h2h_8`` also reads ``<root>/../grading/summeval/``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError, SchemaError
from ._pairwise import PairwiseTable

__all__ = ["PAIRWISE_SETS", "pairwise_set_frame", "read_pairwise_set"]

COLUMNS = ["pair", "rater", "role", "verdict", "order"]
_WIN = {"model_1": "A", "model_2": "B", "tie": "T"}


def _need(path: Path) -> Path:
    if not path.exists():
        raise SchemaError(f"file not found: {path}. Point root= at the folder holding the set's sub-folder.",
                          source=str(path))
    return path


def _summeval_pairs(root: Path) -> pd.DataFrame:
    d = pd.read_json(_need(root / "summeval_h2h" / "summeval_h2h_gpt35_both_orders.jsonl"), lines=True)
    d["pair"] = d["doc_id"] + "|" + d["model_1"] + "-" + d["model_2"] + "|" + d["dimension"]
    return d


def _summeval_judge(d: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"pair": d["pair"], "rater": d["evaluator"], "role": "judge",
                         "verdict": d["winner"].map(_WIN), "order": d["order"],
                         "model_a": d["model_1"], "model_b": d["model_2"]})


def summeval_h2h_frame(root: str | os.PathLike[str]) -> pd.DataFrame:
    """SummEval head-to-head: 3 experts (preferences derived from their 1-5 scores) and
    gpt-3.5-turbo-0301 asked in both orders; 4,400 pairs (11 system pairs x 100 documents x 4 dimensions)."""
    d = _summeval_pairs(Path(root))
    ab = d[d["order"] == "AB"]
    hum = [pd.DataFrame({"pair": ab["pair"], "rater": f"expert_{k}", "role": "human",
                         "verdict": ab[f"expert_pref_{k}"].map(_WIN), "order": "",
                         "model_a": ab["model_1"], "model_b": ab["model_2"]}) for k in (1, 2, 3)]
    return pd.concat(hum + [_summeval_judge(d)], ignore_index=True)


def summeval_h2h_8_frame(root: str | os.PathLike[str]) -> pd.DataFrame:
    """SummEval head-to-head with 8 humans: 3 experts + 5 crowd workers (MTurk).

    The pairs and the judge are those of ``summeval_h2h``; each human's verdict comes from their
    own 1-5 scores of the two summaries (higher wins, equal = tie) in ``<root>/../grading/summeval``.
    Raters are ``expert_1..3`` and ``crowd_1..5`` by their position in SummEval's lists (SummEval
    does not publish rater identities, so a position is not guaranteed to be one person)."""
    root = Path(root)
    d = _summeval_pairs(root)
    h = pd.read_csv(_need(root.parent / "grading" / "summeval" / "summeval_human_ratings_long.csv"))
    h["rater"] = h["rater_type"].map({"expert": "expert_", "turker": "crowd_"}) + (h["rater_index"] + 1).astype(str)
    ab = d.loc[d["order"] == "AB", ["pair", "doc_id", "model_1", "model_2", "dimension"]]
    s1 = ab.merge(h.rename(columns={"model_id": "model_1", "score": "s1"}), on=["doc_id", "model_1", "dimension"])
    both = s1.merge(h.rename(columns={"model_id": "model_2", "score": "s2"})[
        ["doc_id", "model_2", "dimension", "rater", "s2"]], on=["doc_id", "model_2", "dimension", "rater"])
    verdict = pd.Series("T", index=both.index)
    verdict[both["s1"] > both["s2"]] = "A"
    verdict[both["s1"] < both["s2"]] = "B"
    hum = pd.DataFrame({"pair": both["pair"], "rater": both["rater"], "role": "human", "verdict": verdict,
                        "order": "", "model_a": both["model_1"], "model_b": both["model_2"]})
    return pd.concat([hum, _summeval_judge(d)], ignore_index=True)


def pandalm_frame(root: str | os.PathLike[str]) -> pd.DataFrame:
    """PandaLM test set: 3 annotators, gpt-3.5-turbo and PandaLM-7B in one order (AB); 999 pairs.

    gpt-3.5's 25 unparsable ("garbage") verdicts are left empty. ``len_a``/``len_b``: characters
    of response 1 and 2; ``model_a``/``model_b`` from ``cmp_key``."""
    base = Path(root) / "pandalm"
    items = json.loads(_need(base / "testset-v1.json").read_text())
    code = {"0": "T", "1": "A", "2": "B", "tie": "T"}
    rows = []
    meta = {}
    for it in items:
        ma, _, mb = str(it["cmp_key"]).partition("_")
        meta[str(it["idx"])] = (ma, mb, len(str(it["response1"])), len(str(it["response2"])))
        for k in (1, 2, 3):
            rows.append((str(it["idx"]), f"annotator{k}", "human", code[str(it[f"annotator{k}"])], ""))
    for fname, key, name in (("gpt-3.5-turbo-testset-v1.json", "gpt_result", "gpt-3.5-turbo"),
                             ("pandalm-7b-testset-v1.json", "pandalm_result", "PandaLM-7B")):
        for it in json.loads(_need(base / fname).read_text()):
            rows.append((str(it["idx"]), name, "judge", code.get(str(it[key]).strip().lower(), ""), "AB"))
    df = pd.DataFrame(rows, columns=COLUMNS)
    m = pd.DataFrame.from_dict(meta, orient="index", columns=["model_a", "model_b", "len_a", "len_b"])
    return df.join(m, on="pair")


def llmfao_frame(root: str | os.PathLike[str]) -> pd.DataFrame:
    """LLMFAO: 124 crowd workers (1-5 per pair) + GPT-3 and GPT-4 in one order (AB); 2,139 pairs.

    ``model_a``/``model_b``: the systems' names (``models.jsonl``); ``len_a``/``len_b``:
    characters of ``result_x``/``result_y`` (``pairs-crowd.jsonl``)."""
    base = Path(root) / "llmfao"
    code = {"left": "A", "right": "B", "tie": "T"}
    c = pd.read_csv(_need(base / "crowd-comparisons.csv"), dtype=str)
    hum = pd.DataFrame({"pair": c["id"], "rater": "w" + c["worker"], "role": "human",
                        "verdict": c["winner"].map(code), "order": "AB"})
    frames = [hum]
    for f, name in (("gpt3-crowd-comparisons.csv", "GPT-3"), ("gpt4-crowd-comparisons.csv", "GPT-4")):
        g = pd.read_csv(_need(base / f), dtype=str)
        frames.append(pd.DataFrame({"pair": g["id"], "rater": name, "role": "judge",
                                    "verdict": g["winner"].map(code), "order": "AB"}))
    df = pd.concat(frames, ignore_index=True)
    names = pd.read_json(_need(base / "models.jsonl"), lines=True).set_index("id")["name"]
    p = pd.read_json(_need(base / "pairs-crowd.jsonl"), lines=True)
    meta = pd.DataFrame({"model_a": p["model_x"].map(names).to_numpy(), "model_b": p["model_y"].map(names).to_numpy(),
                         "len_a": p["result_x"].fillna("").astype(str).str.len().to_numpy(),
                         "len_b": p["result_y"].fillna("").astype(str).str.len().to_numpy()},
                        index=p["id"].astype(str).to_numpy())
    return df.join(meta, on="pair")


def llmbar_frame(root: str | os.PathLike[str], *, strategies: tuple[str, ...] | None = ("Vanilla_NoRules",)
                 ) -> pd.DataFrame:
    """LLMBar: the gold label as one human ("gold") + evaluator/strategy judges in both orders.

    ``strategies=None`` keeps all 15 strategies (65 judges); unparsable verdicts are empty."""
    v = pd.read_csv(_need(Path(root) / "llmbar" / "llmbar_judge_verdicts.csv"), dtype=str, keep_default_na=False)
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


def autoj_frame(root: str | os.PathLike[str]) -> pd.DataFrame:
    """Auto-J pairwise test set: one human label + Auto-J-13B in both orders; 1,392 pairs.

    The exchange file is in the presented frame (0 = first shown = original response 2), mapped back here."""
    base = Path(root) / "autoj"

    def lines(name: str) -> list[Any]:
        return [json.loads(x) for x in _need(base / name).read_text().splitlines() if x.strip()]

    lab, ab, ba = (lines("testdata_pairwise.jsonl"), lines("pairwise_example_output.jsonl"),
                   lines("pairwise_exchange_example_output.jsonl"))
    orig = {0: "A", 1: "B", 2: "T"}
    swapped = {0: "B", 1: "A", 2: "T"}
    rows = []
    for k, it in enumerate(lab):
        rows.append((str(k), "human", "human", orig[int(it["label"])], ""))
        rows.append((str(k), "Auto-J-13B", "judge", orig[int(ab[k]["output"])], "AB"))
        rows.append((str(k), "Auto-J-13B", "judge", swapped[int(ba[k]["output"])], "BA"))
    return pd.DataFrame(rows, columns=COLUMNS)


def chatbot_arena_frame(root: str | os.PathLike[str]) -> pd.DataFrame:
    """Chatbot Arena battles (prediction-powered-ranking release): one crowd vote ("human") and
    three LLM judges (gpt-4-0125-preview, claude-3-opus-20240229, gpt-3.5-turbo) in one order (AB);
    26,919 battles. Both "tie" and "tie (bothbad)" are ties. ``model_a``/``model_b`` are the battling
    systems (e.g. ``gpt-4``, ``claude-v1``), which makes self-preference measurable."""
    d = pd.read_csv(_need(Path(root) / "chatbot_arena_ppr" / "chatbot_arena_human_vs_llm_judges.csv"), dtype=str)
    code = {"model_a": "A", "model_b": "B", "tie": "T", "tie (bothbad)": "T"}
    pair = d["num"].astype(str)
    frames = []
    for col, name, role, order in (("winner_human", "human", "human", ""),
                                   ("winner_gpt4_0125_preview", "gpt-4-0125-preview", "judge", "AB"),
                                   ("winner_claude3_opus_20240229", "claude-3-opus-20240229", "judge", "AB"),
                                   ("winner_gpt35_turbo", "gpt-3.5-turbo", "judge", "AB")):
        frames.append(pd.DataFrame({"pair": pair, "rater": name, "role": role,
                                    "verdict": d[col].fillna("").str.strip().map(code).fillna(""), "order": order,
                                    "model_a": d["model_a"], "model_b": d["model_b"]}))
    return pd.concat(frames, ignore_index=True)


_READERS: dict[str, Callable[..., pd.DataFrame]] = {
    "summeval_h2h": summeval_h2h_frame, "summeval_h2h_8": summeval_h2h_8_frame, "pandalm": pandalm_frame,
    "llmfao": llmfao_frame, "llmbar": llmbar_frame, "autoj": autoj_frame, "chatbot_arena": chatbot_arena_frame,
}
#: Names accepted by :func:`pairwise_set_frame` and :func:`read_pairwise_set`.
PAIRWISE_SETS: tuple[str, ...] = tuple(_READERS)


def pairwise_set_frame(name: str, root: str | os.PathLike[str], **kwargs: Any) -> pd.DataFrame:
    """The long frame of the public pairwise set ``name`` (one of :data:`PAIRWISE_SETS`).

    Columns ``pair, rater, role, verdict, order`` and, where the set has them, ``model_a, model_b,
    len_a, len_b``. ``kwargs`` go to the set's reader (``llmbar``: ``strategies=``).

    ========================  =========  ===============================  ===========================  ==========
    name                      pairs      humans per pair                  judges                       orders
    ========================  =========  ===============================  ===========================  ==========
    ``summeval_h2h``          4,400      3 experts                        gpt-3.5-turbo-0301           AB and BA
    ``summeval_h2h_8``        4,400      3 experts + 5 crowd              gpt-3.5-turbo-0301           AB and BA
    ``pandalm``               999        3 annotators                     gpt-3.5-turbo, PandaLM-7B    AB
    ``llmfao``                2,139      1-5 crowd workers (124)          GPT-3, GPT-4                 AB
    ``llmbar``                1,200      1 gold label                     evaluator/strategy           AB and BA
    ``autoj``                 1,392      1 label                          Auto-J-13B                   AB and BA
    ``chatbot_arena``         26,919     1 crowd vote                     gpt-4, claude-3, gpt-3.5     AB
    ========================  =========  ===============================  ===========================  ==========
    """
    if name not in _READERS:
        raise InvalidParameterError(
            f"The 'name' parameter of pairwise_set_frame must be one of {list(PAIRWISE_SETS)}. Got {name!r} instead.")
    return _READERS[name](root, **kwargs)


def read_pairwise_set(name: str, root: str | os.PathLike[str], **kwargs: Any) -> PairwiseTable:
    """The public pairwise set ``name`` as a :class:`PairwiseTable` (empty verdicts dropped and counted).

    See :func:`pairwise_set_frame` for the sets and their columns."""
    df = pairwise_set_frame(name, root, **kwargs)
    return PairwiseTable.from_frame(df, role="role", missing="drop", source=f"{name} ({Path(root)})",
                                    row_numbers=np.arange(1, len(df) + 1))
