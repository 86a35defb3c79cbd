"""Shared fixtures: paths to the real data sets in ../shared/data (tests only; never shipped)."""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_CANDIDATES = [os.environ.get("VOIRDIRE_SHARED", ""), str(_HERE.parent.parent / "shared"), "/work/shared"]
SHARED = next((Path(c) for c in _CANDIDATES if c and (Path(c) / "data").is_dir()), Path("/work/shared")) / "data"


def shared_data(*parts: str) -> Path:
    """Path under ../shared/data; skips the test when the shared data are not present."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared data not available: {p}")
    return p


#: how the browser tests start Debian's Chromium: headless, and without the background connections this
#: machine's closed network refuses
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_or_skip() -> str:
    """The Chromium binary for the browser tests; skips the test, naming where it looked, when there is none."""
    import shutil

    for c in (os.environ.get("VOIRDIRE_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
              shutil.which("chromium-browser")):
        if c and Path(c).exists():
            return c
    pytest.skip("chromium not found (looked for $VOIRDIRE_CHROMIUM, /usr/bin/chromium, chromium on PATH); "
                "install it with `make chromium` (apt-get install chromium)")


@pytest.fixture
def alttest_dir():
    return lambda name: shared_data("alttest", name)


# --- test groups ------------------------------------------------------------------------------------
# `make test` runs the tests with none of the markers below, in the user environment, on two
# processes; `make test-all` adds the slow, statistical and browser groups, the oracle group in the
# oracle environment, and a few modules where no extra is installed (see the Makefile's test-base).

#: Unmarked tests must stay cheap: more CPU-seconds than this in the call (the test's own process and
#: the subprocesses it waited for; shared fixtures' setup is not counted) fails the test. Mark it
#: ``slow`` or ``statistical`` instead, or share its heavy work through a session fixture.
CPU_LIMIT_S = float(os.environ.get("VOIRDIRE_TEST_CPU_LIMIT", "2.0"))
_HEAVY_MARKERS = ("slow", "statistical", "browser", "oracle")

@functools.lru_cache(maxsize=None)
def _oracle_functions(path: str) -> frozenset[str]:
    """Names of the functions of a test module that reach an oracle package, directly or through
    module-level names and other functions of the module (read from its source, never imported)."""
    from ._oracles import ORACLE_PACKAGES

    def is_oracle(module: str | None) -> bool:
        return bool(module) and module.split(".")[0] in ORACLE_PACKAGES  # type: ignore[union-attr]

    def oracle_string_call(node: ast.AST) -> bool:
        return (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str) and is_oracle(node.args[0].value))

    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return frozenset()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if is_oracle(a.name)}
        elif isinstance(node, ast.ImportFrom) and is_oracle(node.module):
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Assign) and any(oracle_string_call(n) for n in ast.walk(node.value)):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    refs: dict[str, set[str]] = {}
    direct: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            used |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            refs.setdefault(node.name, set()).update(used)
            if used & names or any(oracle_string_call(n) for n in ast.walk(node)) or any(
                    isinstance(n, ast.Import) and any(is_oracle(a.name) for a in n.names)
                    or isinstance(n, ast.ImportFrom) and is_oracle(n.module) for n in ast.walk(node)):
                direct.add(node.name)
    reach = set(direct)
    grew = True
    while grew:
        grew = False
        for name, used in refs.items():
            if name not in reach and used & reach:
                reach.add(name)
                grew = True
    return frozenset(reach)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(str(config.rootpath))
    for item in items:
        path = Path(str(item.path))
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            rel = path.as_posix()
        fn = getattr(item, "function", None)
        if fn is None or not rel.startswith("tests/"):
            continue
        reach = _oracle_functions(str(path))
        cls = getattr(item, "cls", None)
        if reach and ({fn.__name__, *(getattr(item, "fixturenames", ()) or ())} | ({cls.__name__} if cls else set())) & reach:
            item.add_marker(pytest.mark.oracle)


@pytest.fixture(scope="session", autouse=True)
def _one_time_imports() -> None:
    """Load once per process, before any test's clock starts, what the package imports lazily and
    pays for once (scipy.stats, matplotlib and its fonts): the CPU limit above is for a test's own
    work, and the first test of a worker to touch a report or a p-value was charged up to 1.5 s of
    imports (one went over the limit this way in a clean-clone run). The command-line startup
    tests run in subprocesses and are not affected."""
    import io

    import scipy.stats  # noqa: F401
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    fig.text(0.5, 0.5, "x $x$")
    fig.savefig(io.BytesIO(), format="png")
    fig.savefig(io.BytesIO(), format="svg")


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    start = _cpu_seconds()
    yield
    item.stash[_CPU_KEY] = _cpu_seconds() - start


_CPU_KEY = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or not report.passed:
        return
    cpu = item.stash.get(_CPU_KEY, 0.0)
    log = os.environ.get("VOIRDIRE_TEST_CPU_LOG")
    if log:  # one line per test: its CPU-seconds, to find the tests that belong to a heavy group
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{cpu:.3f}\t{item.nodeid}\n")
    if cpu > CPU_LIMIT_S and not any(item.get_closest_marker(m) for m in _HEAVY_MARKERS):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} took {cpu:.1f} CPU-seconds, over the {CPU_LIMIT_S:g} s allowed to an "
                           "unmarked test: mark it slow or statistical, or share its heavy work through a "
                           "session fixture (tests/conftest.py)")
