"""No in-place change of an array pandas handed out (issue 27).

Under pandas 3 (copy-on-write) ``Series.to_numpy()``, ``.values`` and ``.array`` return read-only
views: ``hit = s.notna().to_numpy(); hit |= ...`` raised "output array is read-only" in ``study add``
after every assign or draw. This test walks ``src/voirdire`` and fails on a name bound to such a view
(``to_numpy()`` without ``copy=True``, ``.values``, ``.array``, or a ``reshape``/``ravel``/``T`` of
one) that is then changed in place: an augmented assignment (``x |= ...``), an item assignment
(``x[...] = ...``), ``x.sort()``/``x.fill()``, or ``out=x``. Write a new array instead
(``x = x | ...``), or ask for a copy (``to_numpy(copy=True)``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import voirdire

SRC = Path(voirdire.__file__).parent
_INPLACE_METHODS = ("sort", "fill", "put", "resize", "itemset")


def _view(node: ast.AST, names: dict[str, int]) -> bool:
    """Whether ``node`` may be a read-only view of pandas data."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "to_numpy":
            return not any(k.arg == "copy" for k in node.keywords)
        if node.func.attr in ("ravel", "reshape", "view", "squeeze"):
            return _view(node.func.value, names)
    if isinstance(node, ast.Attribute):
        if node.attr in ("values", "array"):
            return True
        if node.attr == "T":
            return _view(node.value, names)
    return isinstance(node, ast.Name) and node.id in names


def _base(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node


def _findings(tree: ast.AST, where: str) -> list[str]:
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        names: dict[str, int] = {}
        for node in sorted((n for n in ast.walk(fn) if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
            for t in node.targets:
                pairs = (zip(t.elts, node.value.elts) if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple)
                         else [(t, node.value)])
                for target, value in pairs:
                    if isinstance(target, ast.Name) and _view(value, names):
                        names.setdefault(target.id, node.lineno)
        if not names:
            continue
        for node in ast.walk(fn):
            targets: list[ast.AST] = []
            if isinstance(node, ast.AugAssign):
                targets = [node.target]
            elif isinstance(node, ast.Assign):
                targets = [t for t in node.targets if isinstance(t, ast.Subscript)]
            elif isinstance(node, ast.Call):
                if isinstance(node.func, ast.Attribute) and node.func.attr in _INPLACE_METHODS:
                    targets = [node.func.value]
                targets += [k.value for k in node.keywords if k.arg == "out"]
            for t in targets:
                b = _base(t)
                if isinstance(b, ast.Name) and b.id in names and node.lineno > names[b.id]:
                    out.append(f"{where}:{node.lineno}: {b.id!r} (a pandas view since line {names[b.id]}) is changed "
                               "in place")
    return out


def test_the_scan_finds_the_study_add_pattern() -> None:
    bad = ("def f(ins, any_rater):\n"
           "    hit = ins['a'].notna().to_numpy()\n"
           "    hit |= ins['item'].isin(any_rater).to_numpy()\n"
           "    v = ins.values\n"
           "    v[0] = 1\n"
           "    ok = ins['a'].to_numpy(copy=True)\n"
           "    ok |= 1\n")
    assert [f.split(":")[1] for f in _findings(ast.parse(bad), "x.py")] == ["3", "5"]


def test_no_array_from_pandas_is_changed_in_place() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        found += _findings(ast.parse(path.read_text(encoding="utf-8")), str(path.relative_to(SRC.parent)))
    assert found == [], "\n".join(found)
