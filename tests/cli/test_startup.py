"""Fast start: ``voirdire --help``, ``--version`` and every command's ``--help`` load none of the
heavy libraries (numpy, pandas, scipy, matplotlib, pyarrow); they are imported inside the commands.

The ratio of ``voirdire --version`` to ``python -c pass`` is measured in ``bench/bench_startup.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "pyarrow", "sklearn", "dask", "jinja2")

_PROBE = """
import sys
from voirdire.cli import app
import typer

HEAVY = %r
command = typer.main.get_command(app)
calls = [["--help"], ["--version"]]
for name, sub in sorted(command.commands.items()):
    calls.append([name, "--help"])
    for inner in sorted(getattr(sub, "commands", {}) or {}):
        calls.append([name, inner, "--help"])
for argv in calls:
    try:
        app(argv, prog_name="voirdire", standalone_mode=False)
    except SystemExit:
        pass
    loaded = [m for m in HEAVY if m in sys.modules]
    if loaded:
        print("LOADED", " ".join(argv), loaded)
        raise SystemExit(1)
print("OK", len(calls))
"""


def test_help_and_version_import_no_heavy_library():
    res = subprocess.run([sys.executable, "-c", _PROBE % (HEAVY,)], capture_output=True, text=True, timeout=120,
                         env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0 and "OK" in res.stdout, res.stdout[-2000:] + res.stderr[-2000:]
    assert int(res.stdout.split("OK")[1]) >= 20   # every command and study subcommand was asked


def test_console_script_version_and_a_usage_error():
    script = Path(sys.executable).parent / "voirdire"
    if not script.exists():
        import pytest

        pytest.skip("the console script is not installed next to this Python")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("voirdire "), out.stderr
    # a missing argument is a usage error (exit 2), never a traceback
    bad = subprocess.run([str(script), "agree"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "Missing argument" in bad.stderr
    # a missing file is one line naming it, exit 1
    gone = subprocess.run([str(script), "agree", "no-such-file.csv"], capture_output=True, text=True, timeout=60)
    assert gone.returncode == 1 and gone.stderr.count("\n") == 1 and "no-such-file.csv" in gone.stderr, gone.stderr
