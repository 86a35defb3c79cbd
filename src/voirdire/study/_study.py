"""A study workspace: one SQLite file holding every round of labels, assignments and probabilities."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import _options
from .._options import DUPLICATE_POLICIES
from .._results import Result
from .._safe import shown
from .._scores import names_text
from ..data import HUMAN, JUDGE, AnnotationTable, pipe_as_file, read_annotations, read_long_frame
from ..exceptions import InvalidParameterError, SchemaError, VoirdireError

__all__ = ["SCHEMA_VERSION", "Study", "StudyError", "StudyStatus", "AddResult", "ProbabilitySample", "StudyInput",
           "text_frame"]

#: Version of the database layout this release writes (``meta.schema_version``).
SCHEMA_VERSION = 3
_APP = "voirdire-study"
_BUSY_MS = 30_000

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE rounds (
    round INTEGER PRIMARY KEY, kind TEXT NOT NULL, created TEXT NOT NULL, source TEXT,
    file_hash TEXT UNIQUE, n_rows INTEGER NOT NULL DEFAULT 0, n_imported INTEGER NOT NULL DEFAULT 0,
    n_replaced INTEGER NOT NULL DEFAULT 0, n_duplicate INTEGER NOT NULL DEFAULT 0,
    n_rejected INTEGER NOT NULL DEFAULT 0, n_flagged INTEGER NOT NULL DEFAULT 0,
    design TEXT, seed INTEGER, note TEXT);
CREATE TABLE raters (rater TEXT PRIMARY KEY, role TEXT NOT NULL CHECK (role IN ('human', 'judge')));
CREATE TABLE items (item TEXT PRIMARY KEY, cluster TEXT);
CREATE TABLE labels (
    item TEXT NOT NULL REFERENCES items(item), rater TEXT NOT NULL REFERENCES raters(rater),
    label TEXT NOT NULL, round INTEGER NOT NULL REFERENCES rounds(round), flagged INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (item, rater));
CREATE INDEX labels_round ON labels(round);
CREATE TABLE rejections (round INTEGER NOT NULL REFERENCES rounds(round), reason TEXT NOT NULL,
                         n_rows INTEGER NOT NULL);
CREATE TABLE assignments (
    round INTEGER NOT NULL REFERENCES rounds(round), item TEXT NOT NULL, rater TEXT,
    design TEXT NOT NULL, seed INTEGER, inclusion_prob REAL NOT NULL CHECK (inclusion_prob > 0 AND inclusion_prob <= 1),
    stratum TEXT, status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'delivered')),
    PRIMARY KEY (round, item, rater));
CREATE INDEX assignments_item ON assignments(item, rater);
CREATE TABLE item_groups (item TEXT NOT NULL REFERENCES items(item), name TEXT NOT NULL, value TEXT NOT NULL,
                          PRIMARY KEY (item, name));
"""

# Version 1 had no `replaced` count and no `stratum` column, version 2 no item groups: what `migrate` adds.
_MIGRATIONS = {
    1: ["ALTER TABLE rounds ADD COLUMN n_replaced INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE assignments ADD COLUMN stratum TEXT"],
    2: ["CREATE TABLE item_groups (item TEXT NOT NULL REFERENCES items(item), name TEXT NOT NULL, "
        "value TEXT NOT NULL, PRIMARY KEY (item, name))"],
}

#: The columns a study's labels already have: an item group (``add --by``) cannot take their names.
_OWN_COLUMNS = ("item", "cluster", "rater", "role", "label", "round", "flagged", "inclusion_prob")


#: The designs of :meth:`Study.draw` (the registry of option values).
DRAW_DESIGNS = _options.DRAW_DESIGNS


class StudyError(VoirdireError, ValueError):
    """A study that cannot be opened or changed as asked (the database is left as it was)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AddResult(Result):
    """What :meth:`Study.add` did with every row of a file (``n_rows`` = the sum of the others)."""

    round: int
    source: str
    file_hash: str
    n_rows: int
    n_imported: int
    n_replaced: int
    n_duplicate: int
    n_rejected: int
    n_flagged: int
    rejected: dict[str, int]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StudyStatus(Result):
    """Rounds, coverage and open work of a study (:meth:`Study.status`)."""

    path: str
    schema_version: int
    n_items: int
    n_humans: int
    n_judges: int
    n_labels: int
    n_flagged: int
    rounds: pd.DataFrame
    coverage: pd.DataFrame
    n_open_assignments: int
    n_delivered_assignments: int
    n_items_with_probability: int

    def to_frame(self) -> pd.DataFrame:
        """One row per round."""
        return self.rounds.copy()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ProbabilitySample(Result):
    """The items drawn with a recorded probability, and the labels estimation uses (:meth:`Study.probability_sample`).

    ``frame`` is the long table ``study estimate`` reads: every judge label, the human labels of
    the drawn items (whichever round they came in), and each drawn item's ``inclusion_prob``.
    Human labels on items no chosen draw round drew are left out (``n_human_labels_left_out``, on
    ``n_items_left_out`` items, imported in ``left_out_rounds``): nothing says with what
    probability those items went to the humans.
    """

    draw_rounds: tuple[int, ...]
    n_items_drawn: int
    n_items_labelled: int
    n_human_labels: int
    n_human_labels_left_out: int
    n_items_left_out: int
    left_out_rounds: tuple[int, ...]
    inclusion_prob: pd.Series
    frame: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        """The long table of labels estimation reads."""
        return self.frame.copy()

    @property
    def note(self) -> str:
        """What ``study estimate`` / ``study report`` estimate from, and what they leave out, in words."""
        rounds = ", ".join(map(str, self.draw_rounds))
        text = (f"Estimating from the probability sample of draw round(s) {rounds}: {self.n_items_drawn:,} item(s) "
                f"drawn with recorded probabilities, {self.n_items_labelled:,} of them with human labels "
                f"({self.n_human_labels:,} labels).")
        if self.n_human_labels_left_out:
            text += (f" Left out: {self.n_human_labels_left_out:,} other human label(s) on {self.n_items_left_out:,} "
                     f"item(s) no chosen draw drew (round(s) {', '.join(map(str, self.left_out_rounds))}): no "
                     f"probability says how those items went to the humans.")
        if self.n_items_labelled < self.n_items_drawn:
            text += (f" {self.n_items_drawn - self.n_items_labelled:,} drawn item(s) have no human label yet and count "
                     f"as not drawn; add their labels (an estimate is valid for the design only when the drawn items "
                     f"are labelled).")
        return text + (" Choose the draws with --rounds." if self.n_human_labels_left_out else "")

    def summary(self) -> dict[str, Any]:
        """What it estimated from and what it left out (the ``study`` key of ``study estimate -f json``)."""
        return {"draw_rounds": list(self.draw_rounds), "n_items_drawn": self.n_items_drawn,
                "n_items_labelled": self.n_items_labelled, "n_human_labels": self.n_human_labels,
                "n_human_labels_left_out": self.n_human_labels_left_out, "n_items_left_out": self.n_items_left_out,
                "left_out_rounds": list(self.left_out_rounds), "note": self.note}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StudyInput(Result):
    """What a study hands to ``voirdire validate|estimate|report`` (``study validate``...): the long frame the
    command reads as its file, the column it weights by (``None``: the command's own ``--inclusion-prob``),
    the report's ``unsampled`` policy, the probability sample it estimates from, and a note to say first."""

    frame: pd.DataFrame
    inclusion_prob: str | None = None
    unsampled: str | None = None
    sample: ProbabilitySample | None = None
    note: str | None = None

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _schema_version(meta: dict[str, str], path: str) -> int:
    """The study's ``meta.schema_version``, checked: a whole number from 1 to :data:`SCHEMA_VERSION`."""
    raw = meta.get("schema_version")
    if raw is None:
        raise StudyError(f"{shown(path)} has no schema_version in its meta table: not a study this release can read "
                         f"(was it changed by another program?). Restore it from a copy.")
    text = str(raw).strip()
    if not text.isdigit() or text != str(int(text)):
        raise StudyError(f"{shown(path)} has schema_version {shown(str(raw))}, which is not a study schema (a whole "
                         f"number from 1 to {SCHEMA_VERSION}); was it changed by another program? Restore it from a "
                         f"copy.")
    v = int(text)
    if v > SCHEMA_VERSION:
        raise StudyError(f"{shown(path)} was written by a newer voirdire (study schema {v}; this release "
                         f"reads up to {SCHEMA_VERSION}). Upgrade voirdire.")
    if v < 1:
        raise StudyError(f"{shown(path)} has schema_version {v}, which is not a study schema (a whole number from 1 "
                         f"to {SCHEMA_VERSION}); was it changed by another program? Restore it from a copy.")
    return v


def _numeric_key(s: str) -> str | None:
    """The number an id reads as (``"001"`` and ``"1"`` both give ``"1"``), or None."""
    try:
        f = float(s)
    except ValueError:
        return None
    if not np.isfinite(f):
        return None
    return str(int(f)) if f.is_integer() else repr(f)


class Study:
    """A study on one SQLite file: rounds of labels, assignments with their inclusion probabilities.

    Create one with :meth:`init`, open it with ``Study(path)``. Every change is one transaction:
    a round is imported whole or not at all (also when the process is killed), and two processes
    writing at once take turns (the second waits up to 30 s, then fails with a message).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from voirdire.datasets import hanna_path
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> s = Study.init(d / "study.vdb")
    >>> r = s.add(hanna_path(), label="score", role="role", scale="interval", abstain=[-1])
    >>> r.n_rows == r.n_imported + r.n_duplicate + r.n_rejected + r.n_replaced
    True
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise StudyError(f"{shown(str(path))} is not a study (no such file). Create one with `voirdire study "
                             f"init {shown(str(path), quote=False)}`.")
        with self._read() as con:
            meta = self._meta(con)
        self.schema_version = _schema_version(meta, str(path))
        self.meta = meta

    # ------------------------------------------------------------------ storage
    def _connect(self) -> sqlite3.Connection:
        try:
            con = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, isolation_level=None)
            con.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
            con.execute("PRAGMA foreign_keys = ON")
            con.execute("PRAGMA synchronous = FULL")
            return con
        except sqlite3.Error as exc:
            raise StudyError(f"{shown(str(self.path))} cannot be opened as a study: {exc}.") from None

    def _meta(self, con: sqlite3.Connection) -> dict[str, str]:
        """The ``meta`` table, checked to be a voirdire study's."""
        try:
            rows = con.execute("SELECT key, value FROM meta").fetchall()
        except sqlite3.DatabaseError:
            raise StudyError(f"{shown(str(self.path))} is not a study (not a voirdire study database).") from None
        meta = dict(rows)
        if meta.get("application") != _APP:
            raise StudyError(f"{shown(str(self.path))} is not a study (a database, but not a voirdire study).")
        return meta

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        con = self._connect()
        try:
            yield con
        finally:
            con.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One immediate transaction: committed whole, or rolled back whole."""
        con = self._connect()
        try:
            try:
                con.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StudyError(f"{shown(str(self.path))} is busy (another process is writing to it): {exc}. "
                                 f"Try again when it has finished.") from None
            try:
                self._migrate(con)
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        finally:
            con.close()

    def _migrate(self, con: sqlite3.Connection) -> None:
        """Bring an older study to this release's schema, inside the caller's write transaction.

        Only a command that changes the study migrates it (with its change, in its transaction);
        reading (``status``, ``export``, ...) leaves an older study as it is.
        """
        version = _schema_version(self._meta(con), str(self.path))  # read again: another process may have
        for v in range(version, SCHEMA_VERSION):                    # migrated it since we opened it
            for stmt in _MIGRATIONS.get(v, []):
                con.execute(stmt)
        if version < SCHEMA_VERSION:
            con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        self.schema_version = SCHEMA_VERSION

    @classmethod
    def init(cls, path: str | os.PathLike[str], *, note: str | None = None) -> Study:
        """Create an empty study file (refuses to overwrite anything)."""
        p = Path(path)
        if p.exists():
            raise StudyError(f"{shown(str(path))} already exists; a study is never created over a file.")
        if not p.parent.exists():
            raise StudyError(f"the folder of {shown(str(path))} does not exist.")
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        con: sqlite3.Connection | None = None
        try:
            con = sqlite3.connect(tmp, isolation_level=None)
            con.executescript("BEGIN;" + _SCHEMA + "COMMIT;")
            from .. import __version__
            con.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("application", _APP), ("schema_version", str(SCHEMA_VERSION)), ("created", _now()),
                ("voirdire_version", __version__), ("note", note or "")])
            con.close()
            os.link(tmp, p)          # fails if someone created p meanwhile: never overwrite
        except sqlite3.Error as exc:  # a read-only folder, a full disk: SQLite's own errors, one line
            raise StudyError(f"{shown(str(path))} cannot be created: {exc}. Check that its folder is writable "
                             "and has space.") from None
        finally:
            if con is not None:
                con.close()
            with suppress(OSError):  # a read-only folder refuses even removing what is not there
                tmp.unlink(missing_ok=True)
        return cls(p)

    # ------------------------------------------------------------------ rounds of labels
    def add(self, file: str | os.PathLike[str], *, duplicates: str = "error", strict: bool = False,
            by: tuple[str, ...] | list[str] = (), **read: Any) -> AddResult:
        """Import a file of labels as one new round, in one transaction.

        ``read`` holds the reading options of :func:`voirdire.data.read_annotations` (``judges``,
        ``role``, ``item``, ``rater``, ``label``, ``scale``, ``abstain``...). Labels for an
        (item, rater) already in the study follow ``duplicates``: ``error`` refuses the round
        when a label differs, ``first`` keeps the study's, ``last`` takes the file's (the same
        label again is always counted as a duplicate and kept once). When the study has
        assignments, a label nobody was assigned is imported and flagged (``strict=True``
        refuses the round). The same file (by content) twice is refused. ``by`` names columns of a long
        file whose value per item the study keeps (a criterion, a language: one value per item), so that
        its commands can group by them (``study validate --by COLUMN``). A FIFO or character device
        (``<(...)``) is read once, within the limits every reader keeps (``VOIRDIRE_MAX_PIPE_BYTES``,
        ``VOIRDIRE_PIPE_TIMEOUT``); an empty one (``/dev/null``) is refused as an empty file.
        """
        if duplicates not in DUPLICATE_POLICIES:
            raise InvalidParameterError(f"duplicates must be {names_text(DUPLICATE_POLICIES)}. Got {duplicates!r}.")
        src = Path(file)
        if not src.exists():
            raise StudyError(f"{shown(str(file), 4096)}: file not found.")  # the path whole (up to PATH_MAX)
        if src.is_dir():
            raise StudyError(f"{shown(str(file), 4096)} is a folder; a round is one file of labels.")
        if not (src.is_file() or src.is_fifo() or src.is_char_device()):
            raise StudyError(f"{shown(str(file))} is neither a file nor a pipe (a socket or a block device?); a round "
                             "is one file of labels.")
        with pipe_as_file(src, format=str(read.get("format", "auto"))) as data:  # a FIFO or device: copied once
            digest = _file_hash(data)
            table, phantom = _read_round(src, duplicates, read)
            groups = _item_groups(src, tuple(by), read, table) if by else None
        frame = table.to_frame()
        if phantom is not None:  # a one-rater file: drop the stand-in rater that let the reader accept it
            frame = frame[frame["rater"].astype(str) != phantom]
        labels = frame["label"].map(_label_text)
        new = pd.DataFrame({"item": frame["item"].astype(str), "rater": frame["rater"].astype(str),
                            "role": frame["role"].astype(str), "label": labels})
        clusters = frame["cluster"].astype(str) if "cluster" in frame.columns else None
        n_rows = int(table.n_rows_read)
        rejected = {str(k): int(v) for k, v in table.dropped.items() if v}
        with self._write() as con:
            if con.execute("SELECT round FROM rounds WHERE file_hash = ?", (digest,)).fetchone():
                raise StudyError(f"{shown(str(file))} was imported before (same content, sha256 {digest[:12]}...); "
                                 f"a file is imported once.")
            self._check_roles(con, new, str(file))
            self._check_item_types(con, new["item"].unique(), str(file))
            rnd = self._new_round(con, "labels", source=str(src), file_hash=digest, n_rows=n_rows)
            old = pd.read_sql_query("SELECT item, rater, label FROM labels WHERE item IN (SELECT value FROM "
                                    "json_each(?))", con, params=(pd.Series(new["item"].unique()).to_json(
                                        orient="values"),))
            merged = new.merge(old, on=["item", "rater"], how="left", suffixes=("", "_old"))
            had = merged["label_old"].notna()
            same = had & (merged["label_old"] == merged["label"])
            differ = had & ~same
            if differ.any() and duplicates == "error":
                r = merged[differ].iloc[0]
                raise StudyError(
                    f"{shown(str(file))}: item {shown(r['item'])} already has a label from {shown(r['rater'])} "
                    f"({shown(r['label_old'])}, this file says {shown(r['label'])}); {int(differ.sum())} such "
                    f"label(s). Use --duplicates first (keep the study's) or last (take the file's).")
            take = ~had | (differ & (duplicates == "last"))
            n_dup = int(same.sum() + (differ & (duplicates == "first")).sum())
            n_rep = int((differ & (duplicates == "last")).sum())
            ins = merged[take]
            flagged = self._flag_unassigned(con, ins, rnd)
            if strict and flagged.any():
                r = ins[flagged].iloc[0]
                raise StudyError(f"{shown(str(file))}: {int(flagged.sum())} label(s) were never assigned, e.g. item "
                                 f"{shown(r['item'])} for {shown(r['rater'])} (--strict refuses them).")
            con.executemany("INSERT OR IGNORE INTO raters VALUES (?, ?)",
                            new[["rater", "role"]].drop_duplicates().itertuples(index=False, name=None))
            items = pd.DataFrame({"item": new["item"], "cluster": clusters if clusters is not None else None})
            con.executemany("INSERT OR IGNORE INTO items VALUES (?, ?)",
                            items.drop_duplicates("item").itertuples(index=False, name=None))
            if groups is not None:
                self._add_groups(con, groups, str(file))
            rows = list(zip(ins["item"], ins["rater"], ins["label"], [rnd] * len(ins),
                            flagged.astype(int).tolist()))
            con.executemany("INSERT INTO labels VALUES (?, ?, ?, ?, ?) ON CONFLICT(item, rater) DO UPDATE SET "
                            "label = excluded.label, round = excluded.round, flagged = excluded.flagged", rows)
            con.executemany("INSERT INTO rejections VALUES (?, ?, ?)", [(rnd, k, v) for k, v in rejected.items()])
            n_rej = int(sum(rejected.values()))
            n_imp = int((take & ~had).sum())
            con.execute("UPDATE rounds SET n_imported = ?, n_replaced = ?, n_duplicate = ?, n_rejected = ?, "
                        "n_flagged = ? WHERE round = ?", (n_imp, n_rep, n_dup, n_rej, int(flagged.sum()), rnd))
            self._deliver(con, ins)
        return AddResult(round=rnd, source=str(src), file_hash=digest, n_rows=n_rows, n_imported=n_imp,
                         n_replaced=n_rep, n_duplicate=n_dup, n_rejected=n_rej, n_flagged=int(flagged.sum()),
                         rejected=rejected)

    @staticmethod
    def _add_groups(con: sqlite3.Connection, groups: pd.DataFrame, src: str) -> None:
        """Record each item's group values; a value other than the one an earlier round recorded is refused."""
        old = pd.read_sql_query("SELECT item, name, value AS old FROM item_groups", con)
        both = groups.merge(old, on=["item", "name"], how="inner")
        clash = both[both["value"] != both["old"]]
        if not clash.empty:
            r = clash.iloc[0]
            raise StudyError(f"{shown(src)}: item {shown(r['item'])} has {shown(r['name'])} = {shown(r['value'])} here "
                             f"but {shown(r['old'])} in an earlier round; an item keeps one value of each --by column.")
        con.executemany("INSERT OR IGNORE INTO item_groups VALUES (?, ?, ?)",
                        groups[["item", "name", "value"]].itertuples(index=False, name=None))

    @staticmethod
    def _new_round(con: sqlite3.Connection, kind: str, **fields: Any) -> int:
        cols = ["kind", "created", *fields]
        cur = con.execute(f"INSERT INTO rounds ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                          (kind, _now(), *fields.values()))
        return int(cur.lastrowid or 0)

    def _check_roles(self, con: sqlite3.Connection, new: pd.DataFrame, src: str) -> None:
        roles = dict(con.execute("SELECT rater, role FROM raters").fetchall())
        r = new[["rater", "role"]].drop_duplicates()
        for rater, role in zip(r["rater"], r["role"]):
            if rater in roles and roles[rater] != role:
                raise StudyError(f"{shown(src)}: rater {shown(rater)} is a {role} here but a {roles[rater]} in earlier "
                                 f"rounds; a rater keeps one role in a study.")

    def _check_item_types(self, con: sqlite3.Connection, items: np.ndarray, src: str) -> None:
        known = [r[0] for r in con.execute("SELECT item FROM items")]
        if not known:
            return
        num: dict[str, str] = {}
        for k in known:
            key = _numeric_key(k)
            if key is not None:
                num.setdefault(key, k)
        kset = set(known)
        for it in items:
            if it in kset:
                continue
            key = _numeric_key(it)
            if key is not None and key in num:
                raise StudyError(f"{shown(src)}: item {shown(it)} reads as the same number as item {shown(num[key])} "
                                 f"of an earlier round; ids must match exactly (keep leading zeros consistent).")

    def _flag_unassigned(self, con: sqlite3.Connection, ins: pd.DataFrame, rnd: int) -> np.ndarray:
        n_assign = con.execute("SELECT COUNT(*) FROM assignments").fetchone()[0]
        if n_assign == 0 or ins.empty:
            return np.zeros(len(ins), dtype=bool)
        asg = pd.read_sql_query("SELECT DISTINCT item, rater FROM assignments WHERE rater IS NOT NULL", con)
        anyrater = set(pd.read_sql_query("SELECT DISTINCT item FROM assignments WHERE rater IS NULL", con)["item"])
        roles = dict(con.execute("SELECT rater, role FROM raters").fetchall())
        # new arrays, never in place: under pandas 3 (copy-on-write) `.to_numpy()` is a read-only view
        hit = (ins.merge(asg.assign(_a=1), on=["item", "rater"], how="left")["_a"].notna().to_numpy()
               | ins["item"].isin(anyrater).to_numpy())
        human = np.array([roles.get(r, role) == HUMAN for r, role in zip(ins["rater"], ins["role"])])
        return human & ~hit           # judges label everything: only human labels need an assignment

    def _deliver(self, con: sqlite3.Connection, ins: pd.DataFrame) -> None:
        con.executemany("UPDATE assignments SET status = 'delivered' WHERE item = ? AND (rater = ? OR rater IS NULL)",
                        ins[["item", "rater"]].itertuples(index=False, name=None))

    # ------------------------------------------------------------------ assignments and draws
    def record_assignments(self, frame: pd.DataFrame, *, design: str, seed: int | None, kind: str = "assignment",
                           note: str | None = None, before_commit: Callable[[int], Any] | None = None) -> int:
        """Record a batch (columns item, inclusion_prob, optional rater and stratum) as one round.

        ``before_commit(round)`` runs inside the transaction, after the round is written and before
        it is committed: when it raises, the round is rolled back and the study is left as it was.
        The CLI writes the batch file there (atomically), so that a file that cannot be written
        leaves no round, and a round is never recorded without its file.
        """
        need = [c for c in ("item", "inclusion_prob") if c not in frame.columns]
        if need:
            raise InvalidParameterError(f"record_assignments needs the columns {need}.")
        p = pd.to_numeric(frame["inclusion_prob"], errors="coerce")
        if p.isna().any() or (p <= 0).any() or (p > 1).any():
            raise InvalidParameterError("inclusion probabilities must lie in (0, 1].")
        with self._write() as con:
            rnd = self._new_round(con, kind, design=design, seed=seed, n_rows=len(frame), note=note)
            rater = frame["rater"].astype(str) if "rater" in frame.columns else pd.Series([None] * len(frame))
            stratum = frame["stratum"].astype(str) if "stratum" in frame.columns else pd.Series([None] * len(frame))
            con.executemany("INSERT INTO assignments (round, item, rater, design, seed, inclusion_prob, stratum) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)",
                            zip([rnd] * len(frame), frame["item"].astype(str), rater, [design] * len(frame),
                                [seed] * len(frame), p.astype(float), stratum))
            if before_commit is not None:
                before_commit(rnd)
        return rnd

    def assign(self, *, design: str = "strat", n_per_rater: int, raters: list[str] | None = None,
               rng: int = 0, before_commit: Callable[[Any, int], Any] | None = None) -> tuple[Any, int]:
        """Allocate the next batch (:func:`voirdire.design.allocate`) and record it as one round.

        Each assignment is recorded with the design's inclusion probability of the item for its
        rater: the rater's assigned items in the stratum over its candidate items (those it has not
        labelled) in the stratum, the stratum's share of the candidates taken as its share of all
        items. Exact for ``random``; for ``strat`` exact when the strata are as common among the
        candidates as overall; for the sequential designs a description, not a guarantee.
        ``before_commit(result, round)`` runs before the round is committed (see
        :meth:`record_assignments`): when it raises, nothing is recorded. Returns the
        :class:`AssignmentResult` and the round.
        """
        from ..design import allocate

        table = self.to_table()
        res = allocate(table, design=design, n_per_rater=n_per_rater, raters=raters, rng=rng)
        frame = pd.DataFrame({"item": res.item.astype(str), "rater": res.rater.astype(str),
                              "stratum": res.stratum.astype(str)})
        # candidates of a rater: the items it has not labelled; a stratum's share among them is taken
        # to be its share among all items
        labelled = pd.Series(np.bincount(table.rater_idx, minlength=table.n_raters), index=table.raters.astype(str))
        cand = (table.n_items - frame["rater"].map(labelled).fillna(0)).clip(lower=1).astype(float)
        total = float(sum(res.strata.values()) or table.n_items)
        share = frame["stratum"].map(lambda h: res.strata.get(h, total) / total).astype(float)
        count = frame.groupby(["rater", "stratum"])["item"].transform("size").astype(float)
        frame["inclusion_prob"] = (count / (cand * share).clip(lower=1.0)).clip(upper=1.0)
        rnd = self.record_assignments(frame, design=design, seed=res.seed, before_commit=None if before_commit is None
                                      else lambda r: before_commit(res, r))
        return res, rnd

    def draw(self, *, n: int, design: str = "uniform", rng: int = 0, judges: list[str] | None = None,
             floor: float = 0.3, before_commit: Callable[[pd.DataFrame, int], Any] | None = None,
             output: str | os.PathLike[str] | None = None) -> tuple[pd.DataFrame, int]:
        """Draw the human subsample for estimation (Poisson sampling) and record every probability.

        ``uniform``: each item with probability ``n / N``. ``active``
        (:func:`voirdire.estimation.plan_active`, budget ``n``): more probability where the judges
        disagree (several judges; one judge gives the uniform design), with ``floor`` of the uniform
        design mixed in. ``neyman`` (:func:`voirdire.estimation.plan_allocation`, budget ``n``):
        strata are the first judge's score, each stratum's residual sd is the sd of the humans'
        scores there among the items humans have already scored (the pooled sd where a stratum has
        fewer than two), and every item keeps at least ``floor * n / N``. The judges' scores and
        the human scores must be numbers. The design only moves probability; each drawn item's
        probability is recorded (with its stratum) and ``study estimate`` weights by it. Returns
        the drawn items (``item``, ``inclusion_prob``, and ``stratum`` for neyman) and the round.
        ``before_commit(drawn, round)`` runs before the round is committed (see
        :meth:`record_assignments`): when it raises, nothing is recorded. ``output``: a CSV of the drawn
        items, written (atomically) the same way, before the commit.
        """
        from ..estimation import draw_human_sample

        if output is not None:
            then = before_commit

            def write(drawn: pd.DataFrame, rnd: int) -> None:
                from .._io import atomic_write
                from .._safe import csv_frame

                with atomic_write(output, inputs=[self.path]) as fh:
                    csv_frame(drawn).to_csv(fh, index=False)
                if then is not None:
                    then(drawn, rnd)

            before_commit = write

        if design not in DRAW_DESIGNS:
            raise InvalidParameterError(f"draw design must be one of {', '.join(DRAW_DESIGNS)}. Got {design!r}.")
        if not 0.0 <= float(floor) <= 1.0:
            raise InvalidParameterError(f"floor must be in [0, 1]. Got {floor!r}.")
        with self._read() as con:
            items = [r[0] for r in con.execute("SELECT item FROM items ORDER BY item")]
        if not items:
            raise StudyError(f"{shown(str(self.path))} holds no items yet; add the judge's scores first.")
        if n > len(items):
            raise InvalidParameterError(f"n = {n} is more than the {len(items)} items of the study.")
        strata = None
        if design == "uniform":
            prob: Any = n / len(items)
        else:
            prob, strata = self._design_probabilities(items, n, design, judges, float(floor))
        sample = draw_human_sample(np.asarray(items, dtype=object), prob, rng=rng)
        a = sample.assignments
        drawn = a[a["selected"]][["item", "inclusion_prob"]].reset_index(drop=True)
        drawn["item"] = drawn["item"].astype(str)
        if strata is not None:
            drawn["stratum"] = drawn["item"].map(dict(zip(items, strata)))
        rnd = self.record_assignments(drawn, design=design, seed=rng, kind="draw",
                                      before_commit=None if before_commit is None else lambda r: before_commit(drawn, r))
        return drawn, rnd

    def _design_probabilities(self, items: list[str], n: int, design: str, judges: list[str] | None,
                              floor: float) -> tuple[np.ndarray, np.ndarray | None]:
        """Each study item's inclusion probability under the active or neyman design (and its stratum)."""
        from ..estimation import judge_matrix, plan_active, plan_allocation

        try:
            table = self.to_table(scale="interval")
        except SchemaError as exc:
            raise InvalidParameterError(f"the {design} design needs numeric scores: {exc}") from None
        names = list(dict.fromkeys(judges)) if judges else list(table.judges)
        if not names:
            raise InvalidParameterError(f"the {design} design needs the judges' scores; the study has no judge.")
        X, y, _ = judge_matrix(table, names)
        pos = {str(i): k for k, i in enumerate(table.items)}
        idx = np.array([pos.get(i, -1) for i in items])
        missing = (idx < 0) | ~np.isfinite(X[np.maximum(idx, 0)]).all(axis=1)
        if missing.any():
            raise InvalidParameterError(
                f"the {design} design needs every judge's score on every item; item {shown(items[int(np.flatnonzero(missing)[0])])} "
                f"lacks one ({int(missing.sum())} item(s)). Add the judges' scores first.")
        X, y = X[idx], y[idx]
        if design == "active":
            res = plan_active(X if X.shape[1] > 1 else X[:, 0], budget=float(n), floor=floor,
                              uncertainty="disagreement" if X.shape[1] > 1 else "uniform")
            return np.asarray(res.inclusion_prob, dtype=float), None
        stratum = np.array([f"{v:g}" for v in X[:, 0]], dtype=object)
        lab = np.isfinite(y)
        if lab.sum() < 2:
            raise InvalidParameterError(
                "the neyman design needs human scores on at least two items (a pilot) to estimate each stratum's "
                "residual sd; draw uniform or active first.")
        pooled = float(np.std(y[lab] - X[lab, 0], ddof=1))
        rows = []
        for h in dict.fromkeys(stratum.tolist()):
            inh = stratum == h
            r = y[inh & lab] - X[inh & lab, 0]
            rows.append({"stratum": h, "n_items": int(inh.sum()),
                         "residual_sd": float(np.std(r, ddof=1)) if r.size >= 2 else pooled})
        alloc = plan_allocation(pd.DataFrame(rows), budget=float(n), min_inclusion_prob=floor * n / len(items))
        per = dict(zip(alloc.strata["stratum"].astype(str), alloc.strata["inclusion_prob"].astype(float)))
        return np.array([per[h] for h in stratum]), stratum

    def inclusion_probabilities(self) -> pd.Series:
        """Each drawn item's inclusion probability (from ``draw`` rounds; the latest draw of an item wins)."""
        with self._read() as con:
            df = pd.read_sql_query("SELECT item, inclusion_prob FROM assignments a JOIN rounds r USING (round) "
                                   "WHERE r.kind = 'draw' ORDER BY round", con)
        return df.drop_duplicates("item", keep="last").set_index("item")["inclusion_prob"]

    def draw_rounds(self) -> dict[int, str]:
        """The study's draw rounds: round -> design."""
        with self._read() as con:
            return {int(r): str(d) for r, d in con.execute("SELECT round, design FROM rounds WHERE kind = 'draw' "
                                                           "ORDER BY round")}

    def probability_sample(self, rounds: list[int] | None = None) -> ProbabilitySample:
        """The drawn items of the chosen draw rounds (default: every draw round) and the labels estimation uses.

        An item drawn in several chosen rounds keeps the latest round's probability (as
        :meth:`inclusion_probabilities`). Raises :class:`StudyError` when the study has no draw
        round, or when a chosen round is not one of its draw rounds.
        """
        draws = self.draw_rounds()
        if not draws:
            raise StudyError(f"{shown(str(self.path))} has no draw round, so no item has a known probability of "
                             f"having gone to the humans. Draw the human sample with `voirdire study draw`, or give "
                             f"the design's probability with --inclusion-prob.")
        chosen = sorted(set(int(r) for r in rounds)) if rounds else sorted(draws)
        bad = [r for r in chosen if r not in draws]
        if bad:
            with self._read() as con:
                kind = con.execute("SELECT kind FROM rounds WHERE round = ?", (bad[0],)).fetchone()
            what = (f"{'an' if kind[0][:1] in 'aeiou' else 'a'} {kind[0]} round" if kind
                    else "not a round of this study")
            raise StudyError(f"round {bad[0]} is {what}; --rounds takes draw rounds, and the draw rounds of "
                             f"{shown(str(self.path))} are {', '.join(map(str, sorted(draws)))}.")
        with self._read() as con:
            pi = pd.read_sql_query(
                "SELECT item, inclusion_prob FROM assignments WHERE round IN (SELECT value FROM json_each(?)) "
                "ORDER BY round", con, params=(json.dumps(chosen),))
        pi = pi.drop_duplicates("item", keep="last").set_index("item")["inclusion_prob"].astype(float)
        df = self.labels()
        human = (df["role"] == HUMAN).to_numpy()
        drawn = df["item"].isin(pi.index).to_numpy()
        out = human & ~drawn
        frame = df.loc[~out].copy()
        frame["inclusion_prob"] = frame["item"].map(pi)
        if frame["cluster"].isna().all() or (frame["cluster"] == "None").all():
            frame = frame.drop(columns="cluster")
        used = human & drawn
        return ProbabilitySample(
            draw_rounds=tuple(chosen), n_items_drawn=int(pi.size),
            n_items_labelled=int(df.loc[used, "item"].nunique()), n_human_labels=int(used.sum()),
            n_human_labels_left_out=int(out.sum()), n_items_left_out=int(df.loc[out, "item"].nunique()),
            left_out_rounds=tuple(sorted(int(r) for r in df.loc[out, "round"].unique())),
            inclusion_prob=pi, frame=frame.reset_index(drop=True))

    # ------------------------------------------------------------------ reading back
    def labels(self) -> pd.DataFrame:
        """Every label with its rater's role, round and flag (long frame), and a column per item group that
        ``add --by`` recorded (empty for an item without a value)."""
        with self._read() as con:
            df = pd.read_sql_query(
                "SELECT l.item, i.cluster, l.rater, r.role, l.label, l.round, l.flagged FROM labels l "
                "JOIN raters r USING (rater) JOIN items i USING (item) ORDER BY l.round, l.item, l.rater", con)
            has = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'item_groups'").fetchone()
            groups = pd.read_sql_query("SELECT item, name, value FROM item_groups ORDER BY name", con) if has \
                else None  # an older study, read without migrating it, has none
        if groups is not None:
            for name, g in groups.groupby("name", sort=False):
                df[str(name)] = df["item"].map(dict(zip(g["item"], g["value"])))
        return df

    def check_groups(self, by: list[str], frame: pd.DataFrame | None = None) -> None:
        """Refuse a ``--by`` column the study does not have: an item group kept by ``add --by``, or one of its
        own columns (``round``, ``cluster``...); the message names the groups kept and how to keep one."""
        cols = list((self.labels() if frame is None else frame).columns)
        groups = [c for c in cols if c not in _OWN_COLUMNS]
        for c in by:
            if c not in cols or c in ("item", "rater", "role", "label"):
                raise StudyError(f"{shown(str(self.path))} keeps no item group {shown(c)} (item groups kept: "
                                 f"{', '.join(map(shown, groups)) or 'none'}); keep one when adding a round: "
                                 f"`voirdire study add STUDY FILE --by {shown(c, quote=False)}`.")

    def grouped_tables(self, by: list[str], **read: Any) -> Any:
        """The study's labels split by item groups (``add --by``): :func:`voirdire.data.read_annotation_groups`
        on ``study export``'s frame (as ``study validate --by`` reads it; ``read``: its reading options)."""
        from ..data import frame_as_file, read_annotation_groups

        frame = self.export_frame()
        self.check_groups(by, frame)
        with frame_as_file(self.path, text_frame(frame), source=str(self.path)):
            return read_annotation_groups(self.path, by=by, item="item", rater="rater", label="label", role="role", format="long",
                                          **read)

    def export_frame(self) -> pd.DataFrame:
        """The long frame `export` writes: labels plus each drawn item's ``inclusion_prob``."""
        df = self.labels()
        pi = self.inclusion_probabilities()
        if not pi.empty:
            df["inclusion_prob"] = df["item"].map(pi)
        if df["cluster"].isna().all() or (df["cluster"] == "None").all():
            df = df.drop(columns="cluster")
        return df

    def command_input(self, command: str, *, rounds: list[int] | None = None, inclusion_prob: Any = None,
                      by: list[str] | None = None) -> StudyInput:
        """The labels ``study COMMAND`` hands to ``voirdire COMMAND`` (``validate``, ``estimate``, ``report``).

        ``validate``: every label (``study export``'s frame). ``estimate``: the probability sample of the
        draw ``rounds`` (default: all), weighted by the recorded probabilities; with the caller's own
        ``inclusion_prob``, every label instead. ``report``: every label, its Estimation section on the
        recorded probabilities with the human labels of undrawn items left out (none without a draw, or
        with ``by``: the grouped report takes no probabilities yet). Raises :class:`StudyError` for
        ``rounds`` with ``inclusion_prob`` (one or the other), or ``rounds`` that are not draw rounds.
        """
        if rounds and inclusion_prob is not None:
            raise StudyError("--rounds chooses the draws whose recorded probabilities are used; --inclusion-prob "
                             "gives your own. Give one or the other.")
        if command == "validate" or (command == "estimate" and inclusion_prob is not None):
            return StudyInput(frame=self.export_frame())
        if command == "estimate":
            ps = self.probability_sample(rounds)
            return StudyInput(frame=ps.frame, inclusion_prob="inclusion_prob", sample=ps, note=ps.note)
        frame = self.export_frame()
        if inclusion_prob is not None:
            return StudyInput(frame=frame, unsampled="error")
        if rounds is None and by and self.draw_rounds():
            return StudyInput(frame=frame, unsampled="error", note=(
                "with --by the report has no Estimation section (the draws' probabilities are not used by group "
                "yet); `voirdire study estimate --by` estimates per group."))
        if rounds is None and not self.draw_rounds():
            return StudyInput(frame=frame, unsampled="error")  # the report says why it has no Estimation section
        ps = self.probability_sample(rounds)
        frame["inclusion_prob"] = frame["item"].map(ps.inclusion_prob)
        return StudyInput(frame=frame, inclusion_prob="inclusion_prob", unsampled="omit", sample=ps)

    def export(self, output: str | os.PathLike[str], *, to: str = "csv") -> None:
        """Write :meth:`export_frame` to ``output`` (``csv`` or ``parquet``), atomically."""
        from .._io import atomic_write, write_bytes
        from .._safe import csv_frame

        df = self.export_frame()
        if to == "parquet":
            import io

            from .._optional import require

            require("pyarrow", "Writing Parquet")
            buf = io.BytesIO()
            df.to_parquet(buf, index=False)
            write_bytes(output, buf.getvalue(), inputs=[self.path])
        else:
            with atomic_write(output, inputs=[self.path]) as fh:
                csv_frame(df).to_csv(fh, index=False)

    def item_content(self) -> dict[str, dict[str, Any]]:
        """Each item's content (Label Studio task data, Argilla record fields) from the study's label rounds
        whose files are still where they were imported from, unchanged (same sha256); a later round's wins."""
        from ..data import read_item_data

        out: dict[str, dict[str, Any]] = {}
        for rec in self.status().rounds.to_dict("records"):
            if rec.get("kind") == "labels" and rec.get("source") and rec.get("file_hash"):
                out.update(read_item_data(str(rec["source"]), sha256=str(rec["file_hash"])))
        return out

    def to_table(self, **kw: Any) -> AnnotationTable:
        """The labels of every round as an :class:`AnnotationTable` (roles from the study)."""
        df = self.labels()
        if df.empty:
            raise StudyError(f"{shown(str(self.path))} holds no labels yet; add a file first.")
        return AnnotationTable.from_frame(df, item="item", rater="rater", label="label", role="role",
                                          source=str(self.path), **kw)

    def status(self) -> StudyStatus:
        """Rounds, coverage per rater, open assignments."""
        with self._read() as con:
            rounds = pd.read_sql_query("SELECT * FROM rounds ORDER BY round", con)
            if "n_replaced" not in rounds.columns:  # schema 1 (not migrated by reading): nothing was replaced
                rounds.insert(list(rounds.columns).index("n_imported") + 1, "n_replaced", 0)
            # one scan of the labels (grouped by rater), then the roles: no join over every label
            counts = pd.read_sql_query("SELECT rater, COUNT(*) AS n_labels, SUM(flagged) AS n_flagged FROM labels "
                                       "GROUP BY rater", con)
            cov = pd.read_sql_query("SELECT rater, role FROM raters ORDER BY role, rater", con).merge(
                counts, on="rater", how="left").fillna({"n_labels": 0, "n_flagged": 0})
            n_items = con.execute("SELECT COUNT(*) FROM items").fetchone()[0]
            n_labels = int(cov["n_labels"].sum())
            n_flag = int(cov["n_flagged"].sum())
            st = dict(con.execute("SELECT status, COUNT(*) FROM assignments GROUP BY status").fetchall())
            n_pi = con.execute("SELECT COUNT(DISTINCT item) FROM assignments a JOIN rounds r USING (round) "
                               "WHERE r.kind = 'draw'").fetchone()[0]
            v = _schema_version(self._meta(con), str(self.path))
        cov["coverage"] = cov["n_labels"] / max(n_items, 1)
        return StudyStatus(path=str(self.path), schema_version=v, n_items=int(n_items),
                           n_humans=int((cov["role"] == HUMAN).sum()), n_judges=int((cov["role"] == JUDGE).sum()),
                           n_labels=int(n_labels), n_flagged=int(n_flag), rounds=rounds, coverage=cov,
                           n_open_assignments=int(st.get("open", 0)), n_delivered_assignments=int(st.get("delivered", 0)),
                           n_items_with_probability=int(n_pi))

    def label_rounds(self) -> pd.DataFrame:
        """Each label's item, rater and the round it was imported in (``validate_sequential``'s ``rounds``)."""
        df = self.labels()
        return pd.DataFrame({"item": df["item"], "rater": df["rater"], "round": df["round"]})

    def sequential(self, judges: list[str] | None = None, *, method: str = "alt-test", epsilon: float | None = None,
                   q: float = 0.05, rng: int = 0, verdicts: bool = True, by: list[str] | None = None) -> Any:
        """The running anytime-valid decision per judge over the study's rounds (one look per round), and beside
        it the judge's verdict: :func:`voirdire.workflows.sequential_validation` (as ``voirdire watch``) on
        every label with the round it was imported in; with ``by`` (item groups kept by ``add --by``),
        :func:`~voirdire.workflows.sequential_validation_by` (as ``watch --by``).

        Raises :class:`~voirdire.exceptions.InvalidParameterError` when the study has no judge or fewer
        than two humans.
        """
        from ..workflows import sequential_validation, sequential_validation_by

        grouped = self.grouped_tables(by) if by else None
        table = self.to_table() if grouped is None else grouped.pooled
        if not (judges or list(table.judges)):
            raise InvalidParameterError(f"{shown(str(self.path))} has no judge to validate.")
        opts = dict(method=method, epsilon=epsilon, q=q, seed=rng, verdicts=verdicts)
        if grouped is not None:
            return sequential_validation_by(grouped, self.label_rounds(), judges, **opts)  # type: ignore[arg-type]
        return sequential_validation(table, self.label_rounds(), judges, **opts)  # type: ignore[arg-type]

    def integrity_check(self) -> bool:
        """SQLite's own integrity check (True when the file is sound)."""
        with self._read() as con:
            return con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _read_round(src: Path, duplicates: str, read: dict[str, Any]) -> tuple[AnnotationTable, str | None]:
    """Read a round's file; a file with one rater (one annotator's batch) is read too.

    The table reader refuses a single rater (no agreement can be computed on it), but a study round
    often holds one annotator's labels. Such a long file is read with a stand-in second rater on
    one row, removed again afterwards (returned as the second value).
    """
    try:
        return read_annotations(src, duplicates=duplicates, **read), None  # type: ignore[arg-type]
    except SchemaError as exc:
        if "at least two raters" not in str(exc):
            raise
    df, rows, source = read_long_frame(src)
    item, rater = read.get("item", "item"), read.get("rater", "rater")
    kw = {k: v for k, v in read.items() if k not in ("judge_path", "cluster_sep")}
    sep = read.get("cluster_sep")
    if sep is not None and kw.get("cluster") is None:  # as read_annotations: the item id before the separator
        df["_cluster"] = df[item].astype(str).str.split(sep, n=1).str[0]
        kw["cluster"] = "_cluster"
    phantom = "\x00voirdire-stand-in"
    extra = df.iloc[[0]].copy()
    extra[rater] = phantom
    role = read.get("role")
    if role is not None and role in extra.columns:
        extra[role] = HUMAN
    judges = kw.pop("judges", ())
    t = AnnotationTable.from_frame(pd.concat([df, extra], ignore_index=True), judges=judges,
                                   duplicates=duplicates, source=source,  # type: ignore[arg-type]
                                   row_numbers=np.concatenate([rows, [rows[-1] + 1]]),
                                   **{k: v for k, v in kw.items() if k not in ("item", "rater")}, item=item,
                                   rater=rater)
    return dataclasses.replace(t, n_rows_read=t.n_rows_read - 1), phantom


def text_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as its CSV export reads back: every cell a string, a missing value empty."""
    out = df.copy()
    for c in out.columns:
        col = out[c].astype(object)
        out[c] = col.where(col.notna(), "").astype(str)
    return out


def _item_groups(src: Path, by: tuple[str, ...], read: dict[str, Any], table: AnnotationTable) -> pd.DataFrame:
    """Each item's value of every ``by`` column of a long file (``item``, ``name``, ``value``): one value per
    item, none empty; refused otherwise (naming the row), as is a column the study already has."""
    from ..data import id_str

    df, rows, source = read_long_frame(src)
    item = read.get("item", "item")
    for c in by:
        if c in _OWN_COLUMNS:
            raise StudyError(f"--by {shown(c)}: a study's labels already have a column {shown(c)}; --by names another "
                             f"column of the file (a criterion, a language).")
        if c not in df.columns:
            raise StudyError(f"{shown(source)}: no column {shown(c)} for --by; the file's columns are "
                             f"{[str(x)[:40] for x in list(df.columns)[:12]]}.")
    ids = df[item].map(id_str)
    keep = ids.isin(set(map(str, table.items))).to_numpy()
    out = []
    for c in by:
        v = df[c].astype(object)
        empty = keep & (v.isna() | (v.astype(str).str.strip() == "")).to_numpy()
        if empty.any():
            raise StudyError(f"{shown(source)}, row {rows[int(np.argmax(empty))]}: column {shown(c)} is empty; --by keeps "
                             f"each item's {shown(c)}, so every row needs one.")
        pairs = pd.DataFrame({"item": ids[keep], "value": v[keep].astype(str), "row": rows[keep]})
        first = pairs.drop_duplicates(["item", "value"])
        two = first["item"].duplicated()
        if two.any():
            r = first[two].iloc[0]
            was = first[first["item"] == r["item"]].iloc[0]["value"]
            raise StudyError(f"{shown(source)}, row {r['row']}: item {shown(r['item'])} has {shown(c)} = "
                             f"{shown(r['value'])} here and {shown(was)} on an earlier row; a study keeps one {shown(c)} "
                             f"per item: give each ({item}, {c}) its own item id (e.g. item__{c}).")
        out.append(first.assign(name=c)[["item", "name", "value"]])
    return pd.concat(out, ignore_index=True)


def _label_text(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)
