"""Generate the Python API reference, the reason codes and the exit codes (run by mkdocs-gen-files).

One page per public subpackage: mkdocstrings renders every name of its ``__all__`` from the numpydoc
docstrings. ``PUBLIC`` is the list tests/docs/test_site.py checks against the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "voirdire"

#: page name -> module; every public subpackage (no leading underscore) and the exceptions module
PUBLIC = {
    "voirdire": "voirdire",
    "data": "voirdire.data",
    "datasets": "voirdire.datasets",
    "agreement": "voirdire.agreement",
    "validation": "voirdire.validation",
    "workflows": "voirdire.workflows",
    "diagnostics": "voirdire.diagnostics",
    "design": "voirdire.design",
    "simulate": "voirdire.simulate",
    "estimation": "voirdire.estimation",
    "pairwise": "voirdire.pairwise",
    "study": "voirdire.study",
    "report": "voirdire.report",
    "exceptions": "voirdire.exceptions",
    "cli": "voirdire.cli",
}


def module_file(module: str) -> Path:
    parts = module.split(".")[1:]
    pkg = SRC.joinpath(*parts)
    return pkg / "__init__.py" if pkg.is_dir() else pkg.with_suffix(".py")


def public_names(module: str) -> list[str]:
    """The module's ``__all__``, read without importing it."""
    tree = ast.parse(module_file(module).read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            return list(ast.literal_eval(node.value))
    raise RuntimeError(f"{module} has no literal __all__")


def module_doc(module: str) -> str:
    doc = ast.get_docstring(ast.parse(module_file(module).read_text(encoding="utf-8"))) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


index = ["# Python API", "",
         "Generated from the numpydoc docstrings of each public subpackage: every name in its `__all__`.",
         "Every function returns a frozen result object with raw floats, `.to_dict()` (JSON-safe) and",
         "`.to_frame()` (tidy pandas).", "",
         "| module | names | what it holds |", "|---|---|---|"]
for page, module in PUBLIC.items():
    names = public_names(module)
    # `exceptions` is a module attribute of voirdire, documented on its own page
    members = [n for n in names if not (module == "voirdire" and n == "exceptions")]
    with mkdocs_gen_files.open(f"reference/api/{page}.md", "w") as fh:
        fh.write(f"# `{module}`\n\n")
        fh.write(f"::: {module}\n")
        fh.write("    options:\n")
        fh.write("      show_root_heading: false\n")
        fh.write("      members:\n")
        for n in members:
            fh.write(f"        - {n}\n")
    mkdocs_gen_files.set_edit_path(f"reference/api/{page}.md", str(module_file(module).relative_to(ROOT)))
    index.append(f"| [`{module}`]({page}.md) | {len(names)} | {module_doc(module)} |")
with mkdocs_gen_files.open("reference/api/index.md", "w") as fh:
    fh.write("\n".join(index) + "\n")

# Reason codes of verdicts, from voirdire.workflows.REASON_CODES itself.
from voirdire.workflows import REASON_CODES  # noqa: E402

lines = ["# Verdict reason codes", "",
         "Every verdict of `voirdire validate`, `voirdire report` and `voirdire.workflows.validate_judges`",
         "carries machine-readable reason codes (`reasons[].code` in the JSON; `Verdict.codes` in Python).",
         "This table is generated from `voirdire.workflows.REASON_CODES`; the rules that produce them are in",
         "[Judge validation](../validation.md#verdicts-accept-reject-or-inconclusive-with-reasons).", "",
         "| code | meaning |", "|---|---|"]
lines += [f"| `{code}` | {text} |" for code, text in REASON_CODES.items()]
with mkdocs_gen_files.open("reference/reason-codes.md", "w") as fh:
    fh.write("\n".join(lines) + "\n")

# Exit codes, from the constants the CLI uses.
from voirdire.cli._app import EXIT_ERROR, EXIT_GATE, EXIT_OK, EXIT_USAGE  # noqa: E402

meaning = {
    EXIT_OK: "ran; no judge's verdict failed the gate (or no `--fail-on`)",
    EXIT_ERROR: "could not run: bad input or options (a one-line error on stderr naming the file, row and column)",
    EXIT_USAGE: "the command line itself was malformed (unknown option, missing argument: Click's usage error)",
    EXIT_GATE: "ran, and at least one judge's verdict failed the `--fail-on` gate",
}
lines = ["# Exit codes", "",
         "Every `voirdire` command exits with one of these codes (generated from the constants in",
         "`voirdire/cli/_app.py`). Only `validate --fail-on` (and the commands that forward to it, such as",
         "`study validate`) can exit with the gate code.", "",
         "| exit code | meaning |", "|---|---|"]
lines += [f"| {code} | {text} |" for code, text in sorted(meaning.items())]
lines += ["", "See [Gate CI on a verdict](../how-to/gate-ci.md) for a pipeline that reads them."]
with mkdocs_gen_files.open("reference/exit-codes.md", "w") as fh:
    fh.write("\n".join(lines) + "\n")

# The JSON schema of the report (report.json), from the file the package ships and the tests validate against.
import json  # noqa: E402

schema_path = SRC / "report" / "templates" / "report.schema.json"
schema = json.loads(schema_path.read_text(encoding="utf-8"))
lines = ["# Report JSON schema", "",
         f"`voirdire report` writes `report.json` beside `report.html`: {schema.get('description', '')}",
         "The schema below is the file the package ships (`voirdire/report/templates/report.schema.json`);",
         "`voirdire.report.report_schema()` returns it, and the test suite validates the reports it builds against it.",
         "`--format json` of the other commands",
         "writes the `to_dict()` of the result objects documented in the [Python API](api/index.md).", "",
         "| property | type | required |", "|---|---|---|"]
required = set(schema.get("required", []))
for name, prop in schema.get("properties", {}).items():
    kind = prop.get("type") or ("const" if "const" in prop else prop.get("$ref", "").rsplit("/", 1)[-1])
    lines.append(f"| `{name}` | {kind if isinstance(kind, str) else ' or '.join(kind)} | {'yes' if name in required else ''} |")
lines += ["", "```json", json.dumps(schema, indent=2), "```"]
with mkdocs_gen_files.open("reference/report-schema.md", "w") as fh:
    fh.write("\n".join(lines) + "\n")
