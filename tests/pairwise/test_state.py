"""Tampered --resume states (issue 17): every one is a one-line SchemaError, none is used."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voirdire.exceptions import SchemaError
from voirdire.pairwise import PairwiseBayesModel, simulate_pairwise


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    table, _ = simulate_pairwise(15, biases=[1.0, 0.0], rng=0)
    m = PairwiseBayesModel(n_particles=20, rng=0).fit(table)
    p = tmp_path_factory.mktemp("st") / "state.npz"
    m.save(p)
    return p


def _tamper(saved: Path, tmp_path: Path, edit: Callable[[dict[str, Any], dict[str, np.ndarray]], None]) -> Path:
    with np.load(saved, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        arrays = {k: z[k] for k in z.files if k != "meta"}
    edit(meta, arrays)
    out = tmp_path / "tampered.npz"
    np.savez(out, meta=np.array(json.dumps(meta)), **arrays)
    return out


def _set(path: list[str], value: Any) -> Callable[[dict[str, Any], dict[str, np.ndarray]], None]:
    def edit(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        d = meta
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return edit


def _arr(name: str, f: Callable[[np.ndarray], np.ndarray]) -> Callable[[dict[str, Any], dict[str, np.ndarray]], None]:
    def edit(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        arrays[name] = f(arrays[name])
    return edit


def _drop(key: str) -> Callable[[dict[str, Any], dict[str, np.ndarray]], None]:
    def edit(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        meta.pop(key)
    return edit


CASES = {
    "unknown-key": (_set(["evil"], 1), "unknown key"),
    "missing-key": (_drop("judges"), "missing key"),
    "n-particles-1e12": (_set(["params", "n_particles"], 10**12), "n_particles"),
    "bit-generator-attribute": (_set(["rng", "bit_generator"], "seed"), "unknown random generator"),
    "bit-generator-module": (_set(["rng", "bit_generator"], "__builtins__"), "unknown random generator"),
    "negative-dirichlet": (_arr("alpha", lambda a: -a), "Dirichlet counts"),
    "nan-logw": (_arr("logw", lambda a: np.full_like(a, np.nan)), "NaN"),
    "wrong-shape": (_arr("beta", lambda a: a[:, :1]), "shape"),
    "string-count": (_set(["n_items_seen"], "many"), "n_items_seen"),
    "negative-count": (_set(["judge_counts"], [-5, 3]), "judge_counts"),
    "bad-rng-state": (_set(["rng", "state"], {"state": "x"}), "random generator's state"),
}


@pytest.mark.parametrize("case", CASES)
def test_tampered_state_is_refused(saved: Path, tmp_path: Path, case: str) -> None:
    edit, needle = CASES[case]
    p = _tamper(saved, tmp_path, edit)
    with pytest.raises(SchemaError, match="not a valid saved PairwiseBayesModel state") as e:
        PairwiseBayesModel.load(p)
    assert needle in str(e.value) and str(e.value).startswith(str(p))


def test_valid_state_still_loads(saved: Path) -> None:
    assert PairwiseBayesModel.load(saved).n_items_seen_ == 15


def test_truncated_archive_and_random_bytes(saved: Path, tmp_path: Path) -> None:
    data = saved.read_bytes()
    trunc = tmp_path / "trunc.npz"
    trunc.write_bytes(data[: len(data) // 2])
    with pytest.raises(SchemaError, match="damaged or truncated"):
        PairwiseBayesModel.load(trunc)
    rnd = tmp_path / "random.npz"
    rnd.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(SchemaError, match="not a NumPy .npz archive") as e:
        PairwiseBayesModel.load(rnd)
    assert "pickle" not in str(e.value)
