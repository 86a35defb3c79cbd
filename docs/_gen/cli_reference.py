"""Generate the command-line reference from the Typer app (run by mkdocs-gen-files).

Walks the Click command tree that Typer builds (``typer.main.get_command``): every command and
subcommand, its usage line, its help, and every argument and option with its type and default, in
the order ``--help`` shows them. Nothing here is written by hand, so the page cannot drift from the code.
"""

from __future__ import annotations

import enum
import inspect
import re

import mkdocs_gen_files
import typer

from voirdire.cli import app


_CODE = re.compile(r"(`[^`]*`)")


def _md(text: str) -> str:
    """Help text as Markdown shows it literally: outside `code` spans, * _ [ ] < > are escaped."""
    parts = _CODE.split(str(text))
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"([\\*_\[\]<>])", r"\\\1", parts[i])
    return "".join(parts)


def _cell(text: str) -> str:
    return _md(" ".join(str(text).split())).replace("|", "\\|")


def _default(param, ctx) -> str:
    if getattr(param, "is_flag", False) and getattr(param, "secondary_opts", None):
        on = param.opts[-1] if param.default else param.secondary_opts[-1]
        return f"`{on}`"
    value = param.default
    if callable(value):
        return "(computed)"
    if value is None or value == () or value == []:
        return ""
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v.value if isinstance(v, enum.Enum) else v) for v in value)
    elif isinstance(value, enum.Enum):
        value = value.value
    return f"`{value}`"


def _type(param, ctx) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    shown = param.display_type_rich(ctx=ctx) or ""       # what --help shows, e.g. <loo|alt-test|both>
    shown = shown.strip("<>")
    if "|" in shown:
        return " \\| ".join(f"`{c}`" for c in shown.split("|"))
    return f"`{shown}`" if shown else ""


def _names(param) -> str:
    names = list(param.opts) + list(getattr(param, "secondary_opts", []) or [])
    if param.param_type_name == "argument":
        return f"`{(param.display_name_raw or param.name).upper()}`"
    return " / ".join(f"`{n}`" for n in names)


def _anchor(path: list[str]) -> str:
    return "-".join(path)


def _commands(group, ctx):
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is not None and not cmd.hidden:
            yield name, cmd


def render(cmd, ctx, path: list[str], out: list[str], level: int) -> None:
    title = " ".join(path)
    out.append(f"{'#' * level} `{title}` {{#{_anchor(path)}}}\n")
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    out.append(f"```text\n{title} {usage}\n```\n")
    if cmd.help:
        out.append(_md(inspect.cleandoc(cmd.help).replace("\b\n", "")) + "\n")
    params = [p for p in cmd.get_params(ctx) if not getattr(p, "hidden", False)]
    if params:
        out.append("| argument / option | type | default | description |")
        out.append("|---|---|---|---|")
        for p in params:
            req = " (required)" if p.required else ""
            out.append(f"| {_names(p)}{req} | {_type(p, ctx)} | {_default(p, ctx)} | {_cell(getattr(p, 'help', '') or '')} |")
        out.append("")
    if hasattr(cmd, "list_commands"):
        subs = list(_commands(cmd, ctx))
        if subs:
            out.append("| command | what it does |\n|---|---|")
            for name, sub in subs:
                text = sub.short_help or inspect.cleandoc(sub.help or "").split("\n\n")[0]
                out.append(f"| [`{' '.join(path + [name])}`](#{_anchor(path + [name])}) | {_cell(text)} |")
            out.append("")
        for name, sub in subs:
            sub_ctx = sub.context_class(sub, info_name=name, parent=ctx)
            render(sub, sub_ctx, path + [name], out, min(level + 1, 3))


root = typer.main.get_command(app)
root_ctx = root.context_class(root, info_name="voirdire")
lines = ["# Command line", "",
         "Generated at build time from the Typer app (`voirdire.cli.app`): every command, argument and",
         "option, with its type and default, as `voirdire COMMAND --help` prints them. Exit codes are on",
         "[their own page](exit-codes.md); every command reads the formats listed in",
         "[Read my tool's export](../how-to/read-exports.md).", ""]
render(root, root_ctx, ["voirdire"], lines, 2)
with mkdocs_gen_files.open("reference/cli.md", "w") as fh:
    fh.write("\n".join(lines) + "\n")
