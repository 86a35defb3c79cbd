"""Running the installed ``voirdire`` console script as a user does, and reading what it prints.

The journeys call the console script of the environment running the tests (``.venv/bin/voirdire``,
what ``pip install`` put there), never ``voirdire.cli`` in process: what they check is the product
a user gets, its imports, its exit codes and its terminal output at a 200-column terminal.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

VOIRDIRE = Path(sys.executable).parent / "voirdire"
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "hanna_complexity.csv"
ENV = {**os.environ, "COLUMNS": "200"}

needs_console_script = pytest.mark.skipif(not VOIRDIRE.exists(), reason=f"no console script at {VOIRDIRE}")


@dataclass
class Run:
    args: tuple[str, ...]
    rc: int
    out: str
    err: str
    flat: str = field(init=False)          # stdout and stderr with every run of whitespace made one space

    def __post_init__(self) -> None:
        self.flat = " ".join((self.out + "\n" + self.err).split())

    def __str__(self) -> str:
        return f"voirdire {' '.join(self.args)} -> {self.rc}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def voirdire(*args: str, cwd: Path, rc: int | tuple[int, ...] = 0, timeout: float = 300) -> Run:
    """Run the console script in ``cwd``; fail on another exit code or on any traceback."""
    p = subprocess.run([str(VOIRDIRE), *args], cwd=cwd, capture_output=True, text=True, env=ENV, timeout=timeout)
    r = Run(tuple(args), p.returncode, p.stdout, p.stderr)
    want = (rc,) if isinstance(rc, int) else rc
    assert r.rc in want, str(r)
    assert "Traceback" not in r.out + r.err and "internal error" not in r.err, str(r)
    return r


@dataclass
class Table:
    """One rich table as printed: the lines above it (its title), its header cells and its rows."""
    title: str
    header: list[str]
    rows: list[list[str]]

    def column(self, name: str) -> list[str]:
        i = self.header.index(name)
        return [r[i] for r in self.rows]

    def dicts(self) -> list[dict[str, str]]:
        return [dict(zip(self.header, r)) for r in self.rows]

    def by(self, key: str) -> dict[str, dict[str, str]]:
        """Rows keyed by the cell of column ``key`` (continuation rows, whose key cell is empty, skipped)."""
        i = self.header.index(key)
        return {r[i]: dict(zip(self.header, r)) for r in self.rows if r[i]}


def tables(text: str) -> list[Table]:
    """Every box-drawn table (``┏ ┃ ┡ │ └``) of ``text``, in order."""
    out: list[Table] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("┏"):
            j = i - 1
            title: list[str] = []
            while j >= 0 and lines[j].strip() and not lines[j].lstrip().startswith(("└", "│")):
                title.insert(0, lines[j].strip())
                j -= 1
            i += 1
            header_lines = []
            while i < len(lines) and lines[i].lstrip().startswith("┃"):
                header_lines.append([c.strip() for c in lines[i].strip().strip("┃").split("┃")])
                i += 1
            header = [" ".join(p for p in parts if p) for parts in zip(*header_lines)]
            rows: list[list[str]] = []
            while i < len(lines) and not lines[i].lstrip().startswith("└"):
                s = lines[i].strip()
                if s.startswith("│"):
                    rows.append([c.strip() for c in s.strip("│").split("│")])
                i += 1
            out.append(Table(" ".join(title), header, rows))
        i += 1
    return out


def table(text: str, *, header_has: str, title_has: str = "") -> Table:
    """The first table whose header has a column ``header_has`` and whose title contains ``title_has``."""
    found = [t for t in tables(text) if header_has in t.header and title_has in t.title]
    assert found, f"no table with column {header_has!r} and title {title_has!r} in:\n{text}"
    return found[0]


def number(cell: str) -> float:
    """A printed number: '1,056' -> 1056.0, '+0.217' -> 0.217, '34.2%' -> 34.2."""
    return float(cell.replace(",", "").rstrip("%*"))


def verdict_lines(text: str) -> dict[str, str]:
    """``validate``'s Verdicts block: judge -> ACCEPT / REJECT / INCONCLUSIVE."""
    return dict(re.findall(r"^  (\S+): (ACCEPT|REJECT|INCONCLUSIVE) - ", text, flags=re.M))
