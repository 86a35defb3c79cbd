"""The peer libraries the oracle tests compare against, imported without failing where they are absent.

The user environment (``make test``) has none of them: ``oracle(name)`` returns a stand-in there, and
the conftest marks every test that reaches an oracle (by reading the test module) with ``oracle``,
so ``-m "not oracle"`` leaves it out and ``make test-oracle`` runs it where the peers are installed.
A test that touches a stand-in was missed by that marking: it fails, naming the package, instead
of passing or skipping silently.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

#: Top-level names of the packages that are test oracles only (never installed for users).
ORACLE_PACKAGES = ("krippendorff", "irrCAC", "crowdkit", "ppi_py", "statsmodels")


class _Missing:
    """Stands in for an oracle package that is not installed; any use fails the test."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Missing(f"{self._name}.{attr}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        pytest.fail(f"{self._name} is an oracle package that is not installed here: the test that uses it "
                    "must be marked oracle (it runs in `make test-oracle`)", pytrace=False)


def oracle(name: str) -> Any:
    """The module ``name`` of an oracle package, or a stand-in that fails the test that uses it."""
    if name.split(".")[0] not in ORACLE_PACKAGES:
        raise ValueError(f"{name} is not an oracle package: import it directly")
    try:
        return importlib.import_module(name)
    except ImportError:
        return _Missing(name)
