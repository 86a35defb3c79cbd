"""The one atomic-write helper (voirdire._io): complete or nothing, never through a planted link."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from voirdire._io import atomic_outputs, atomic_write, check_not_input, write_text
from voirdire.exceptions import InvalidParameterError


def _strays(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_write_replaces_atomically_and_leaves_no_temp(tmp_path: Path) -> None:
    p = tmp_path / "out.csv"
    p.write_text("old\n")
    write_text(p, "new\n")
    assert p.read_text() == "new\n" and _strays(tmp_path) == []


def test_error_inside_the_block_keeps_the_old_file_and_removes_the_temp(tmp_path: Path) -> None:
    p = tmp_path / "out.csv"
    p.write_text("old complete\n")
    with pytest.raises(ZeroDivisionError), atomic_write(p) as fh:
        fh.write("half")
        1 / 0  # noqa: B018
    assert p.read_text() == "old complete\n" and _strays(tmp_path) == []


def test_keyboard_interrupt_removes_every_temp_and_touches_no_destination(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "a.manifest.json"
    with pytest.raises(KeyboardInterrupt), atomic_outputs() as out:
        with out.open(a) as fh:
            fh.write("data\n")
        with out.open(b) as fh:
            raise KeyboardInterrupt
    assert not a.exists() and not b.exists() and _strays(tmp_path) == []


def test_group_renames_in_opening_order_manifest_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        order.append(Path(dst).name)
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    with atomic_outputs() as out:
        with out.open(tmp_path / "data.csv") as fh:
            fh.write("x\n")
        with out.open(tmp_path / "data.manifest.json") as fh:
            fh.write("{}\n")
    assert order == ["data.csv", "data.manifest.json"]


def test_planted_symlink_at_a_temp_name_is_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    out = tmp_path / "report.html"
    # the old report writer used report.html.tmp; plant links at every plausible name
    for name in ("report.html.tmp", ".report.html.tmp", "report.tmp"):
        (tmp_path / name).symlink_to(victim)
    write_text(out, "<html></html>")
    assert not victim.exists()
    assert out.read_text() == "<html></html>" and not out.is_symlink()


def test_output_equal_to_an_input_is_refused_through_any_path(tmp_path: Path) -> None:
    inp = tmp_path / "labels.csv"
    inp.write_text("item,rater,label\n1,a,x\n")
    link = tmp_path / "link.csv"
    link.symlink_to(inp)
    for out in (inp, link, tmp_path / "sub" / ".." / "labels.csv"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(InvalidParameterError, match="also an input"):
            write_text(out, "boom", inputs=[inp])
    assert inp.read_text() == "item,rater,label\n1,a,x\n"
    check_not_input(tmp_path / "other.csv", [inp, None])  # another name is fine


def test_missing_folder_and_folder_as_output_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="does not exist"):
        write_text(tmp_path / "nope" / "x.csv", "x")
    with pytest.raises(InvalidParameterError, match="is a folder"):
        write_text(tmp_path, "x")


def test_sigterm_while_writing_leaves_old_file_and_no_temp(tmp_path: Path) -> None:
    p = tmp_path / "out.csv"
    p.write_text("old complete\n")
    code = textwrap.dedent(f"""
        import os, signal, sys
        from voirdire._io import atomic_write
        with atomic_write({str(p)!r}) as fh:
            fh.write("half")
            fh.flush()
            os.kill(os.getpid(), signal.SIGTERM)
            fh.write("never")
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == -signal.SIGTERM, r.stderr
    assert p.read_text() == "old complete\n" and _strays(tmp_path) == []


def test_new_file_gets_umask_permissions_not_0600(tmp_path: Path) -> None:
    p = write_text(tmp_path / "x.txt", "x")
    mask = os.umask(0o022)
    os.umask(mask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~mask


def test_sigkill_leftover_is_cleaned_by_the_next_write_and_nothing_else(tmp_path: Path) -> None:
    from voirdire._io import STALE_AFTER_S

    p = tmp_path / "out.csv"
    p.write_text("old complete\n")
    # a real leftover: the writer is killed (SIGKILL cannot be caught) half-way through
    code = textwrap.dedent(f"""
        import os, signal
        from voirdire._io import atomic_write
        with atomic_write({str(p)!r}) as fh:
            fh.write("half")
            fh.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == -signal.SIGKILL
    (leftover,) = _strays(tmp_path)
    old = 2 * STALE_AFTER_S
    os.utime(tmp_path / leftover, (os.path.getmtime(p) - old,) * 2)
    # things the cleaner must leave alone
    fresh = tmp_path / ".out.csv.abcd1234.tmp"         # a concurrent writer's live temp (young)
    fresh.write_text("live")
    other = tmp_path / ".other.csv.abcd1234.tmp"       # another destination's temp
    other.write_text("x")
    odd = tmp_path / ".out.csv.backup.tmp"             # not the helper's pattern (7 characters)
    odd.write_text("x")
    target = tmp_path / "precious.txt"
    target.write_text("keep")
    link = tmp_path / ".out.csv.zzzz9999.tmp"          # a link of the right name: never followed or removed
    link.symlink_to(target)
    folder = tmp_path / ".out.csv.dir_0000.tmp"        # a folder of the right name
    folder.mkdir()
    for q in (other, odd, target):
        os.utime(q, (q.stat().st_mtime - old,) * 2)
    os.utime(link, (link.lstat().st_mtime - old,) * 2, follow_symlinks=False)
    os.utime(folder, (folder.stat().st_mtime - old,) * 2)

    write_text(p, "new complete\n")
    assert p.read_text() == "new complete\n"
    assert not (tmp_path / leftover).exists()
    assert fresh.read_text() == "live" and other.exists() and odd.exists() and folder.is_dir()
    assert link.is_symlink() and target.read_text() == "keep"
