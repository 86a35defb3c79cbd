"""The package's import layers (ARCHITECTURE.md): no package imports another package's private
module or private name; ``design`` and ``simulate`` do not import each other; the report reaches
the analyses by plain imports. Read from the source with ``ast``, so an import inside a function
counts like one at the top."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "voirdire"


def _imports(path: Path, tree: ast.AST) -> Iterator[tuple[int, list[str]]]:
    """Every imported dotted target of a module (``voirdire.x.y``, and ``voirdire.x.y.name``)."""
    mod = ["voirdire", *path.relative_to(SRC).with_suffix("").parts]
    if mod[-1] == "__init__":
        mod = mod[:-1]
        base = mod
    else:
        base = mod[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = base[: len(base) - (node.level - 1)]
                target = pkg + (node.module.split(".") if node.module else [])
            else:
                target = (node.module or "").split(".")
            if target[0] != "voirdire":
                continue
            yield node.lineno, target
            for alias in node.names:
                yield node.lineno, target + [alias.name]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "voirdire":
                    yield node.lineno, alias.name.split(".")


def violations(path: Path, source: str) -> list[str]:
    """Imports of another package's private module or name from ``path`` (a file under SRC)."""
    here = path.relative_to(SRC).parts
    own = here[0] if len(here) > 1 else None  # None: a top-level module (a shared layer)
    out = []
    for line, target in _imports(path, ast.parse(source)):
        if len(target) < 3:
            continue
        pkg = target[1]
        if pkg.startswith("_") or pkg == own:
            continue  # a shared private layer (voirdire._x), or the package's own modules
        if any(part.startswith("_") and not part.startswith("__") for part in target[2:]):
            out.append(f"{path.relative_to(SRC.parent)}:{line}: {'.'.join(target)}")
    return out


def _all_violations() -> list[str]:
    return [v for f in sorted(SRC.rglob("*.py")) for v in violations(f, f.read_text(encoding="utf-8"))]


def _packages_imported(package: str) -> set[str]:
    found = set()
    for f in (SRC / package).rglob("*.py"):
        for _, target in _imports(f, ast.parse(f.read_text(encoding="utf-8"))):
            if len(target) >= 2:
                found.add(target[1])
    return found


def test_the_checker_sees_private_imports_in_every_spelling():
    f = SRC / "diagnostics" / "_x.py"
    bad = ("from ..agreement._core import bootstrap\n"
           "from ..agreement import _core\n"
           "def g():\n    from voirdire.validation._kernel import finalize\n"
           "import voirdire.data._table\n"
           "from ..validation import _private_name\n")
    assert len({v.split(":")[1] for v in violations(f, bad)}) == 5
    ok = ("from .._stats.resampling import weight_batches\nfrom ..agreement import krippendorff_alpha\n"
          "from ._raters import rater_diagnostics\nfrom ..data import AnnotationTable\n")
    assert violations(f, ok) == []


def test_no_package_imports_another_packages_private_module_or_name():
    assert _all_violations() == []


#: The layers by direction (ARCHITECTURE.md, "Third wave"): an import may go down or sideways, never up.
#: Top-level modules (``voirdire._checks``, ``_results``, ``exceptions``, ``_designs``...) are shared and below
#: every package.
LAYERS: dict[str, int] = {
    "data": 0, "_stats": 0,
    "agreement": 1, "validation": 1, "estimation": 1, "pairwise": 1, "diagnostics": 1, "datasets": 1,
    "design": 2, "_simulation": 2, "simulate": 2,
    "workflows": 3,
    "cli": 4, "report": 4, "study": 4,
}


def upward_imports(path: Path, source: str) -> list[str]:
    """Imports from ``path`` (a file of a package) of a package in a higher layer."""
    here = path.relative_to(SRC).parts
    if len(here) < 2:
        return []
    own = here[0]
    out = []
    for line, target in _imports(path, ast.parse(source)):
        if len(target) >= 2 and target[1] in LAYERS and LAYERS[target[1]] > LAYERS.get(own, 99):
            out.append(f"{path.relative_to(SRC.parent)}:{line}: {own} -> {target[1]}")
    return sorted(set(out))


def test_every_package_has_a_layer():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(LAYERS), sorted(packages - set(LAYERS))


def test_the_checker_sees_upward_imports():
    f = SRC / "diagnostics" / "_x.py"
    bad = "from ..design import AssignmentResult\ndef g():\n    from voirdire.workflows import validate_judges\n"
    assert len(upward_imports(f, bad)) == 2
    ok = "from ..data import AnnotationTable\nfrom .._designs import AssignmentResult\nfrom ..agreement import agreement\n"
    assert upward_imports(f, ok) == []


def test_no_import_goes_up_a_layer():
    found = [v for f in sorted(SRC.rglob("*.py")) for v in upward_imports(f, f.read_text(encoding="utf-8"))]
    assert found == []


def test_the_report_reads_workflows_only():
    """The report renders workflow results and computes nothing (issue 28): of the packages it imports only
    ``workflows`` and ``data`` (the table types it is given); shared bottom modules (``_results``, ``_safe``,
    ``_scores``, ``exceptions``...) are fine."""
    found = set()
    for f in (SRC / "report").rglob("*.py"):
        for line, target in _imports(f, ast.parse(f.read_text(encoding="utf-8"))):
            if len(target) >= 2 and target[1] in LAYERS and target[1] not in ("report", "workflows", "data"):
                found.add(f"{f.relative_to(SRC.parent)}:{line}: {'.'.join(target[:2])}")
    assert sorted(found) == []


def test_design_and_simulate_do_not_import_each_other():
    assert "simulate" not in _packages_imported("design")
    assert "design" not in _packages_imported("simulate")


def test_the_report_imports_the_analyses_plainly():
    for f in (SRC / "report").rglob("*.py"):
        assert "import_module" not in f.read_text(encoding="utf-8"), f  # importlib.resources (templates) is fine


def test_validate_does_not_import_scipy_stats(tmp_path):
    """``voirdire validate`` reads, validates and writes without importing scipy.stats (about a
    second of every command's start): its t and normal laws come from scipy.special."""
    import subprocess
    import sys

    rows = ["item,rater,label"]
    for i in range(40):
        for r in ("h1", "h2", "h3", "gpt"):
            rows.append(f"q{i},{r},{(i * 7 + len(r) * (i % 3)) % 4 + 1}")
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code = ("import sys\nfrom voirdire.cli import main\nsys.argv = ['voirdire', 'validate', sys.argv[1], '--judge', 'gpt',"
            " '--format', 'json', '--n-resamples', '200']\ntry:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "assert 'scipy.stats' not in sys.modules, 'scipy.stats imported'\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert '"verdict"' in out.stdout or '"judges"' in out.stdout
