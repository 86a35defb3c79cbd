"""A base install (no extras) reads CSV, runs the commands and the report; the extras are only needed for their formats.

pyarrow, dask[distributed], openpyxl and inspect_ai are optional (``voirdire[parquet,dask,excel,inspect]``).
Code that can do without one asks ``voirdire._optional.optional_import`` and falls back (e.g. a
fast Arrow CSV path must fall back to pandas); code that cannot calls ``require`` (one-line error).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "hanna_complexity.csv"

_BLOCK = "import sys\nfor m in ('pyarrow', 'dask', 'distributed', 'openpyxl', 'inspect_ai'):\n    sys.modules[m] = None\n"


def test_base_install_reads_and_runs_without_any_extra(tmp_path):
    code = _BLOCK + (
        "from typer.testing import CliRunner\n"
        "from voirdire.cli import app\n"
        "from voirdire.data import read_annotations\n"
        f"t = read_annotations({str(EXAMPLE)!r}, role='role', scale='interval', abstain=[-1])\n"
        "assert t.n_labels == 8448, t.n_labels\n"
        f"r = CliRunner().invoke(app, ['agree', {str(EXAMPLE)!r}, '--role', 'role', '--scale', 'interval',"
        " '--abstain', '-1', '--resamples', '0'])\n"
        "assert r.exit_code == 0, r.output\n"
        f"p = {str(tmp_path / 'x.parquet')!r}\n"
        "open(p, 'wb').write(b'PAR1')\n"
        "r = CliRunner().invoke(app, ['agree', p])\n"
        "assert r.exit_code == 1 and \"pip install 'voirdire[parquet]'\" in r.stderr, r.output\n"
        "print('ok')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-2000:]


def test_scheduler_without_dask_names_the_extra(monkeypatch):
    import pytest

    from voirdire._optional import MissingExtraError
    from voirdire._simulation.runner import _dask_client

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'voirdire\[dask\]'$"):
        _dask_client("tcp://127.0.0.1:8786")
