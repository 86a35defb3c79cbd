"""Griffe extension: read a docstring at run time when the source holds a template.

Some docstrings are completed when the module is imported (``agreement._coefficients._doc`` puts
the options every coefficient shares where ``{common}`` stands); griffe reads source, so it would
show the placeholder. For those functions the extension imports the object and uses its ``__doc__``.
"""

from __future__ import annotations

import importlib
import inspect
import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|data|attr|mod|obj|exc|const):`~?\.?([^`]+)`")


class RuntimeDocstrings(griffe.Extension):
    def on_function_instance(self, *, func: griffe.Function, **kwargs: object) -> None:
        if func.docstring is None or "{common}" not in func.docstring.value:
            return
        obj = importlib.import_module(func.module.path)
        for part in func.path.removeprefix(func.module.path + ".").split("."):
            obj = getattr(obj, part)
        func.docstring.value = _ROLE.sub(lambda m: f"`{m.group(1)}`", inspect.cleandoc(obj.__doc__ or ""))



class SphinxRoles(griffe.Extension):
    """``:func:`~voirdire.x.f``` (Sphinx roles, read by the docstrings' authors as code) shown as ``f`` code."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: object) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = _ROLE.sub(lambda m: f"`{m.group(1)}`", obj.docstring.value)


class ImportedOverSubmodule(griffe.Extension):
    """``from .._simulation import subsample`` imports the *function* ``subsample``, which its package
    re-exports from a submodule of the same name; griffe reads the name as the submodule. Where a
    module's ``__all__`` re-exports such a name, point it at the object inside the submodule."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: object) -> None:
        def walk(mod: griffe.Module) -> None:
            for name, member in list(mod.members.items()):
                if member.is_alias:
                    try:
                        target = member.final_target
                    except Exception:  # noqa: BLE001 - unresolvable aliases are left to mkdocstrings
                        continue
                    if (target.is_module and name in (mod.exports or ())
                            and name in target.members and not target.members[name].is_module):
                        mod.set_member(name, griffe.Alias(name, f"{target.path}.{name}", parent=mod))
                elif member.is_module:
                    walk(member)

        walk(pkg)
