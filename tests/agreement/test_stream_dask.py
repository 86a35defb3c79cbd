"""Streaming on a Dask cluster (agreement/_stream_dask.py): row groups on workers, joined in file
order, the same result as the local streaming path and the whole-file path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voirdire.agreement import agreement
from voirdire.agreement._stream import agreement_stream
from voirdire.data import read_annotations

pytest.importorskip("pyarrow")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1, dashboard_address=":0") as cl:
        yield cl


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as c:
        yield c


def _file(tmp_path, row_group_size):
    rng = np.random.default_rng(11)
    n, R = 300, 4
    mask = rng.random((n, R)) < 0.7
    ii, rr = np.nonzero(mask)
    truth = rng.integers(1, 6, n)
    lab = np.clip(truth[ii] + rng.integers(-1, 2, ii.size), 1, 5)
    df = pd.DataFrame({"item": np.char.add("it", ii.astype(str)), "rater": np.char.add("r", rr.astype(str)),
                       "label": lab})
    path = tmp_path / f"t{row_group_size}.parquet"
    df.to_parquet(path, index=False, row_group_size=row_group_size)  # row groups cut items
    return path


@pytest.mark.parametrize("row_group_size", [7, 5000])  # items cut by row groups; one row group
def test_dask_partitions_equal_the_local_path(tmp_path, client, row_group_size):
    path = _file(tmp_path, row_group_size)
    names = ["observed_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1", "gwet_ac2"]
    kw = dict(coefficients=names, scale="ordinal", level="ordinal", n_resamples=40, rng=5)
    local = agreement_stream(path, batch_rows=50, **kw)
    on_dask = agreement_stream(path, batch_rows=50, scheduler=client, **kw)
    whole = agreement(read_annotations(path, scale="ordinal"), coefficients=names, level="ordinal", n_resamples=40,
                      rng=5)
    for a, b, c in zip(on_dask, local, whole, strict=True):
        for x, y, z in ((a.estimate, b.estimate, c.estimate), (a.ci.low, b.ci.low, c.ci.low),
                        (a.ci.high, b.ci.high, c.ci.high), (a.analytic_se, b.analytic_se, c.analytic_se)):
            assert x == pytest.approx(y, abs=1e-12) and x == pytest.approx(z, abs=1e-12)
        assert (a.n_items, a.n_labels, a.n_pairs) == (b.n_items, b.n_labels, b.n_pairs) == (c.n_items, c.n_labels,
                                                                                           c.n_pairs)


def test_dask_needs_parquet(tmp_path, client):
    from voirdire.exceptions import InvalidParameterError

    path = tmp_path / "t.csv"
    pd.read_parquet(_file(tmp_path, 100)).to_csv(path, index=False)
    with pytest.raises(InvalidParameterError, match="splits a Parquet file by row groups") as e:
        agreement_stream(path, scheduler=client)
    assert "\n" not in str(e.value)


def test_cli_scheduler_address_gives_the_local_numbers(tmp_path, cluster):
    import json

    from typer.testing import CliRunner

    from voirdire.cli import app

    f = str(_file(tmp_path, 13))
    args = ["agree", f, "--stream", "-c", "krippendorff_alpha", "-c", "fleiss_kappa", "--resamples", "40", "-f", "json"]
    runner = CliRunner()
    local = runner.invoke(app, args)
    remote = runner.invoke(app, [*args, "--scheduler", cluster.scheduler_address])
    assert local.exit_code == remote.exit_code == 0, remote.output
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    for x, y in zip(a["groups"][0]["results"], b["groups"][0]["results"], strict=True):
        for k in ("estimate", "se", "analytic_se"):
            assert x[k] == pytest.approx(y[k], abs=1e-12)
