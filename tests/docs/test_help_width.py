"""`--help` is readable at 80 columns (issue 32): every option name printed whole, no line wider than 80."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from voirdire.cli import app

runner = CliRunner()


def _commands():
    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="voirdire")
    out = [([], root, ctx)]
    for name in root.list_commands(ctx):
        cmd = root.get_command(ctx, name)
        sub_ctx = cmd.context_class(cmd, info_name=name, parent=ctx)
        out.append(([name], cmd, sub_ctx))
        if hasattr(cmd, "list_commands"):
            out += [([name, s], cmd.get_command(sub_ctx, s), None) for s in cmd.list_commands(sub_ctx)]
    return out


def test_help_at_80_columns_never_truncates_an_option_name():
    problems = []
    for path, cmd, _ in _commands():
        res = runner.invoke(app, [*path, "--help"], terminal_width=80, env={"COLUMNS": "80"})
        assert res.exit_code == 0, (path, res.output)
        wide = [line for line in res.output.splitlines() if len(line) > 80]
        if wide:
            problems.append((path, "wider than 80", wide[:2]))
        if "…" in res.output:
            problems.append((path, "an ellipsis", [l for l in res.output.splitlines() if "…" in l][:2]))
        for p in cmd.params:
            if getattr(p, "hidden", False) or p.param_type_name != "option":
                continue
            for name in list(p.opts) + list(p.secondary_opts or []):
                if name not in res.output:
                    problems.append((path, "missing", name))
    assert problems == []
