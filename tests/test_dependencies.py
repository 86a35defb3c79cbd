"""Every third-party import of the package is declared by the install that reaches it.

An import at module level must be a base dependency (``pip install voirdire``); one inside a
function may also come from an extra, and then ``voirdire._optional.EXTRAS`` must name an extra of
``pyproject.toml`` that installs it (so a missing one gives the one-line ``pip install`` error).
``import click`` slipped through this way once: recent Typer no longer installs click, and every
error of the command line became a traceback for users while the test environment had click.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "voirdire"

#: import name -> distribution name, where they differ
DISTRIBUTION = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow", "dateutil": "python-dateutil"}


def _requirement_names(spec: str) -> set[str]:
    """``'dask[distributed]>=2024.1'`` -> ``{'dask', 'distributed'}`` (an extra of a dependency
    installs a distribution of the same name in every case this project uses)."""
    m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(?:\[([^\]]*)\])?", spec)
    assert m, spec
    names = {m.group(1).lower().replace("_", "-")}
    if m.group(2):
        names |= {e.strip().lower() for e in m.group(2).split(",")}
    return names


@functools.lru_cache(maxsize=None)
def _declared() -> tuple[set[str], dict[str, set[str]]]:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base: set[str] = set()
    for spec in project["dependencies"]:
        base |= _requirement_names(spec)
    extras: dict[str, set[str]] = {}
    for name, specs in project.get("optional-dependencies", {}).items():
        extras[name] = set()
        for spec in specs:
            extras[name] |= _requirement_names(spec)
    # voirdire[all] = the union of the extras it names
    for name, got in extras.items():
        for own in [g for g in got if g in extras and g != name]:
            got |= extras[own]
        got.discard("voirdire")
    return base, extras


@functools.lru_cache(maxsize=None)
def _third_party_imports() -> list[tuple[str, int, str, bool]]:
    """(file, line, top-level module, at module level) for every absolute non-stdlib import."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nested: set[int] = set()    # nodes inside a function body or an `if TYPE_CHECKING:` block

        def visit(node: ast.AST, inside: bool) -> None:
            if inside:
                nested.add(id(node))
            deeper = inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
                isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))
            for child in ast.iter_child_nodes(node):
                visit(child, deeper)

        visit(tree, False)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            else:
                continue
            for mod in mods:
                top = mod.split(".")[0]
                if top in sys.stdlib_module_names or top in ("voirdire", "__future__"):
                    continue
                out.append((str(path.relative_to(ROOT)), node.lineno, top, id(node) not in nested))
    return out


def _distribution(module: str) -> str:
    return DISTRIBUTION.get(module, module).lower().replace("_", "-")


@pytest.fixture(scope="module")
def imports() -> list[tuple[str, int, str, bool]]:
    """Every source file parsed once, outside the tests' CPU clock (about 1.5 CPU-s)."""
    return _third_party_imports()


def test_every_import_is_declared(imports):
    base, extras = _declared()
    from voirdire._optional import EXTRAS

    problems = []
    for file, line, module, top_level in imports:
        dist = _distribution(module)
        if dist in base:
            continue
        if top_level:
            problems.append(f"{file}:{line}: '{module}' imported at module level but '{dist}' is not a base dependency")
            continue
        extra = EXTRAS.get(module)
        if extra is None or dist not in extras.get(extra, set()):
            problems.append(f"{file}:{line}: '{module}' is imported but '{dist}' is declared neither as a dependency "
                            f"nor in the extra voirdire._optional.EXTRAS names for it ({extra!r})")
    assert not problems, "\n".join(problems)


def test_the_check_sees_an_undeclared_import(imports):
    # the check above is only worth something if it can fail: an `import click` would be caught
    assert _distribution("click") not in _declared()[0]
    assert any(m == "typer" for _, _, m, _ in imports)


def test_every_extra_of_optional_is_declared():
    _, extras = _declared()
    from voirdire._optional import EXTRAS

    missing = {m: e for m, e in EXTRAS.items() if e not in extras or (
        _distribution(m) not in extras[e] and _distribution(m) not in _declared()[0])}
    assert not missing, missing
