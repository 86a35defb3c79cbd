"""SIGKILL at the moment a destination changes leaves the old complete file or the new complete file.

Each command runs in a forked child whose ``os.replace`` kills the process (SIGKILL, which no
handler can catch) just before, or just after, the n-th rename of a temporary file over its
destination. Afterwards every destination must hold either its complete old content or its
complete new content, never a mixture, a truncated file or nothing. (A stray temporary file may
remain after a SIGKILL; the next run ignores it.)
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from voirdire.cli import app

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs os.fork (Linux)")
runner = CliRunner()


def _killed_run(args: list[str], n: int, after: bool, setup: Callable[[], None] | None = None) -> None:
    """Run ``voirdire ARGS`` in a forked child killed at its n-th ``os.replace`` (before or after it)."""
    pid = os.fork()
    if pid == 0:  # child
        try:
            real = os.replace
            count = [0]

            def replace(src: str, dst: str) -> None:
                count[0] += 1
                if count[0] == n and not after:
                    os.kill(os.getpid(), signal.SIGKILL)
                real(src, dst)
                if count[0] == n and after:
                    os.kill(os.getpid(), signal.SIGKILL)

            os.replace = replace  # type: ignore[assignment]
            if setup is not None:
                setup()
            CliRunner().invoke(app, args)
        finally:
            os._exit(3)  # reached only if the kill never came
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, f"child was not killed: {status}"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.endswith(".tmp")}


def _labels(path: Path) -> Path:
    rows = ["item,rater,label"] + [f"i{i},{r},{(i * 7 + k) % 3}" for i in range(60) for k, r in enumerate(("h1", "h2"))]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("n,after", [(1, False), (1, True), (2, True)])
def test_assign_killed_while_replacing(tmp_path: Path, n: int, after: bool) -> None:
    f = _labels(tmp_path / "labels.csv")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "next.csv"

    def args(seed: int) -> list[str]:
        return ["assign", str(f), "-n", "5", "-r", "h3", "-r", "h4", "--design", "random", "--seed", str(seed),
                "-o", str(out)]

    assert runner.invoke(app, args(1)).exit_code == 0
    old = _snapshot(out_dir)
    new_dir = tmp_path / "new"
    new_dir.mkdir()
    assert runner.invoke(app, [*args(2)[:-1], str(new_dir / "next.csv")]).exit_code == 0
    new = _snapshot(new_dir)
    _killed_run(args(2), n, after)
    got = _snapshot(out_dir)
    assert set(got) == {"next.csv", "next.manifest.json"}
    assert got["next.csv"] in (old["next.csv"], new["next.csv"])
    seed = json.loads(got["next.manifest.json"])["seed"]  # the manifest is complete JSON, old or new
    assert seed in (1, 2)
    if n == 1 and not after:
        assert got["next.csv"] == old["next.csv"] and seed == 1
    if n == 2 and after:
        assert got["next.csv"] == new["next.csv"] and seed == 2


@pytest.mark.parametrize("after", [False, True])
def test_pairwise_save_state_killed_while_replacing(tmp_path: Path, after: bool) -> None:
    from voirdire.pairwise import PairwiseBayesModel, simulate_pairwise

    votes = []
    for k, n in enumerate((20, 30)):
        table, _ = simulate_pairwise(n, biases=[1.0, 0.0], rng=k)
        votes.append(tmp_path / f"votes{k}.csv")
        table.to_frame().drop(columns="role").to_csv(votes[-1], index=False)
    state = tmp_path / "state.npz"
    base = ["pairwise", "--particles", "30", "--save-state", str(state)]
    assert runner.invoke(app, [*base[:1], str(votes[0]), *base[1:]]).exit_code == 0
    old_seen = PairwiseBayesModel.load(state).n_items_seen_
    _killed_run([*base[:1], str(votes[1]), *base[1:]], 1, after)
    seen = PairwiseBayesModel.load(state).n_items_seen_  # loads: the state is complete, old or new
    assert seen == (30 if after else old_seen)
    assert old_seen == 20


@pytest.fixture(scope="module")
def two_experiments() -> tuple[object, object]:
    """Two real (tiny) sparse-overlap experiments, computed once; the CLI under test writes them."""
    from voirdire.simulate import run_experiment, sparse_overlap_settings

    def run(seed: int) -> object:
        settings = sparse_overlap_settings(n_items=40, rng=seed)[:1]
        return run_experiment(settings, designs=["random"], coverages=[0.5], n_repetitions=1, rng=seed)

    return run(1), run(2)


@pytest.mark.parametrize("n,after", [(1, False), (3, True), (8, True)])
def test_simulate_killed_while_replacing(tmp_path: Path, two_experiments: tuple[object, object], n: int,
                                         after: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    import voirdire.simulate as sim

    res_old, res_new = two_experiments
    out = tmp_path / "sim"
    args = ["simulate", "-r", "1", "-o", str(out), "-f", "json"]

    def use(res: object) -> Callable[[], None]:
        def setup() -> None:
            monkeypatch.setattr(sim, "run_experiment", lambda *a, **k: res)
        return setup

    use(res_old)()
    assert runner.invoke(app, args).exit_code == 0
    old = _snapshot(out)
    new_dir = tmp_path / "new"
    use(res_new)()
    assert runner.invoke(app, [*args[:4], str(new_dir), *args[5:]]).exit_code == 0
    new = _snapshot(new_dir)
    assert old["runs.csv"] != new["runs.csv"]
    _killed_run(args, n, after, setup=use(res_new))
    got = _snapshot(out)
    assert set(got) == set(old)
    for name, data in got.items():
        assert data in (old[name], new[name]), name
    # renames run in a fixed order, experiment.json last: the files replaced so far are new, the rest old
    order = ["runs.csv", "tasks.csv", "cells.csv", "table1_alpha.csv", "table2_ranking.csv",
             "table3_decisions.csv", "tables.md", "experiment.json"]
    done = n if after else n - 1
    for k, name in enumerate(order):
        assert got[name] == (new[name] if k < done else old[name]), name
