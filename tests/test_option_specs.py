"""The registry of option specs (``voirdire._option_specs``, issue 28): every option a command declares comes
from it, and every entry in it is declared by a command. Read from the source with ``ast`` (cheap), and from the
Typer app for what ``--help`` shows."""

from __future__ import annotations

import ast
from pathlib import Path

import typer.main

from voirdire._option_specs import OPTIONS
from voirdire.cli import app
from voirdire.cli._app import _FORMAT_SPECS, _PAIRWISE_SPECS, _READER_SPECS

CLI = Path(__file__).resolve().parents[1] / "src" / "voirdire" / "cli"
GROUPS = {"reader": _READER_SPECS, "format": _FORMAT_SPECS, "pairwise-reader": _PAIRWISE_SPECS}


def _keys_named_in_cli() -> set[str]:
    """The registry keys the command modules name in an ``option("...")`` call."""
    keys = set()
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "option"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                keys.add(str(node.args[0].value))
    return keys


def test_no_command_module_declares_an_option_itself():
    # the command modules read the registry; only cli._app's root options (--version, --debug) are its own
    own = [f"{path.name}:{node.lineno}" for path in sorted(CLI.glob("_*.py")) if path.name != "_app.py"
           for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
           if isinstance(node, ast.Call) and ast.unparse(node.func) == "typer.Option"]
    assert own == []


def test_every_registry_entry_is_declared_by_a_command():
    named = _keys_named_in_cli()
    assert named <= set(OPTIONS), sorted(named - set(OPTIONS))
    group_names = {name for specs in GROUPS.values() for name in specs}
    unused = [key for key in OPTIONS if key not in named
              and not (key.split(".", 1)[0] in GROUPS and key.split(".", 1)[1] in GROUPS[key.split(".", 1)[0]])
              and key.rsplit(".", 1)[1] not in group_names]  # a command's own meaning of a group option
    assert unused == []
    for group, specs in GROUPS.items():  # every option of a group has its shared entry
        assert {f"{group}.{name}" for name in specs} <= set(OPTIONS), group


def test_the_help_shows_the_registry_s_text():
    # one entry, read back from the Typer app: its flags, default and help are the registry's
    root = typer.main.get_command(app)
    params = {p.name: p for p in root.commands["estimate"].params}  # type: ignore[attr-defined]
    for key, name in (("estimate.model", "model"), ("estimate.seed", "seed"), ("estimate.scale", "scale"),
                      ("format.where", "where")):
        spec = OPTIONS[key]
        assert params[name].help == spec.help, key
        assert tuple(params[name].opts + params[name].secondary_opts) == tuple(
            f for flag in spec.flags for f in flag.split("/")), key
        default = params[name].default
        assert getattr(default, "value", default) == spec.default, key
