"""A base install (no extras) reads CSV, runs the commands and the report; the extras are only needed for their formats.

pyarrow, dask[distributed], openpyxl and inspect_ai are optional (``voirdire[parquet,dask,excel,inspect]``).
Code that can do without one asks ``voirdire._optional.optional_import`` and falls back (e.g. a
fast Arrow CSV path must fall back to pandas); code that cannot calls ``require`` (one-line error).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def _extra_cases(tmp_path):
    """(extra, modules to hide, argv) for every extra: each reaches its missing package from the CLI."""
    import zipfile

    xlsx = tmp_path / "x.xlsx"
    with zipfile.ZipFile(xlsx, "w") as z:   # enough of an .xlsx to be recognised as one
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
    parquet = tmp_path / "x.parquet"
    parquet.write_bytes(b"PAR1")
    log = tmp_path / "x.eval"
    with zipfile.ZipFile(log, "w") as z:
        z.writestr("header.json", "{}")
    est = tmp_path / "est.csv"
    est.write_text("item,rater,label,pi\n" + "".join(
        f"i{k},llm,{k % 5},0.5\n" + (f"i{k},h,{(k + 1) % 5},0.5\n" if k % 2 else "") for k in range(40)))
    return [
        ("parquet", ("pyarrow",), ["agree", str(parquet)]),
        ("excel", ("openpyxl",), ["agree", str(xlsx)]),
        ("inspect", ("inspect_ai",), ["agree", str(log), "--format-in", "inspect"]),
        ("dask", ("dask", "distributed"), ["simulate", "--preset", "sparse-overlap", "--scheduler", "tcp://127.0.0.1:1",
                                           "-o", str(tmp_path / "sim")]),
        ("ml", ("sklearn",), ["estimate", str(est), "--judge", "llm", "--inclusion-prob", "pi", "--model", "gbm"]),
    ]


@pytest.mark.parametrize("extra", ["parquet", "excel", "inspect", "dask", "ml"])
def test_every_extra_missing_is_one_line_naming_the_install(extra, tmp_path):
    # in .venv-base the packages are really absent; elsewhere they are hidden from the child process
    case = {e: (mods, argv) for e, mods, argv in _extra_cases(tmp_path)}[extra]
    mods, argv = case
    code = ("import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in mods)
            + f"sys.argv = ['voirdire', *{argv!r}]\nfrom voirdire.cli import main\nmain()\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COLUMNS": "200"})
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 1, res.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error:") and f"pip install 'voirdire[{extra}]'" in lines[0], lines


def test_an_installed_extra_that_does_not_import_says_why(tmp_path, monkeypatch):
    # pyarrow 26 beside numpy 1 raises "pyarrow requires NumPy 2.0 or newer" on import: the user must read
    # that, not the advice to install what is already installed
    from voirdire._optional import MissingExtraError, require

    (tmp_path / "brokenpkg_vd").mkdir()
    (tmp_path / "brokenpkg_vd" / "__init__.py").write_text(
        "raise ImportError('brokenpkg_vd requires NumPy 2.0 or newer, found 1.26.4')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError, match=r"installed but does not import: brokenpkg_vd requires NumPy 2\.0"):
        require("brokenpkg_vd", "Reading Parquet", "parquet")
    with pytest.raises(MissingExtraError, match=r"Install it with: pip install 'voirdire\[parquet\]'$"):
        require("absentpkg_vd", "Reading Parquet", "parquet")
