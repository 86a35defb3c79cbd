"""``voirdire watch --follow`` on a growing file, through the installed console script (issue 27, Build 3).

CeBaB stars (../shared/data/alttest/cebab_stars; skipped when absent) cut into twelve rounds of
about 60 reviews, written as a long CSV with a ``round`` column. ``watch --follow`` starts on the
first two rounds; a background writer appends the next round each time watch has printed its
decisions for the file as it stands (lock-step, so every look is read once), until watch stops on
its own when both judges are decided. The test reads the decisions printed after every look (with
a timeout: a watch that never stops fails the test), and compares the last block with a one-shot
``watch`` of the finished file.
"""

from __future__ import annotations

import csv
import json
import queue
import random
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from ..conftest import shared_data
from ._cli import ENV, VOIRDIRE, needs_console_script, voirdire

pytestmark = [pytest.mark.slow, needs_console_script]

JUDGES = ("gpt-4o", "mistral-v03")
WATCH = ("--role", "role", "--judge", "gpt-4o", "--judge", "mistral-v03", "--round-column", "round")
DECISION = re.compile(r"^running anytime-valid decision: (ACCEPT|REJECT|CONTINUE)\s+(\S+): (.*)$")


def _rounds() -> tuple[list[str], dict[int, list[list[str]]]]:
    """CeBaB stars as long rows (round, item, rater, role, label), twelve rounds of ~60 reviews."""
    folder = shared_data("alttest", "cebab_stars")
    h = json.loads((folder / "human_annotations.json").read_text())
    j = json.loads((folder / "llm_annotations.json").read_text())
    items = sorted({i for v in h.values() for i in v})
    random.Random(0).shuffle(items)
    rnd = {it: k // 60 for k, it in enumerate(items)}
    by_round: dict[int, list[list[str]]] = {}
    for src, role in ((h, "human"), (j, "judge")):
        for rater, labels in src.items():
            for it, v in labels.items():
                if it in rnd:
                    by_round.setdefault(rnd[it], []).append([str(rnd[it]), it, rater, role, str(v)])
    for rows in by_round.values():
        rows.sort(key=lambda r: (r[1], r[2]))
    return ["round", "item", "rater", "role", "label"], by_round


def _write(path: Path, rows: list[list[str]], mode: str) -> None:
    with open(path, mode, newline="") as fh:
        csv.writer(fh).writerows(rows)


def test_watch_follow_a_growing_file_until_every_judge_is_decided(tmp_path: Path) -> None:
    header, by_round = _rounds()
    last = max(by_round)
    grow = tmp_path / "labels.csv"
    _write(grow, [header, *by_round[0], *by_round[1]], "w")
    written = 1

    with open(tmp_path / "stderr.txt", "w") as err, subprocess.Popen(
            [str(VOIRDIRE), "watch", "labels.csv", *WATCH, "--follow", "0.1", "--max-wait", "150"],
            cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=err, text=True) as p:
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            for x in p.stdout:
                lines.put(x)
            lines.put(None)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        out: list[str] = []
        blocks: list[dict[str, tuple[str, str]]] = []      # after each look: judge -> (decision, sentence)
        current: dict[str, tuple[str, str]] = {}
        deadline = time.monotonic() + 240
        try:
            while True:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                if line is None:
                    break
                out.append(line)
                m = DECISION.match(line.strip())
                if not m:
                    continue
                current[m.group(2)] = (m.group(1), m.group(3))
                if m.group(2) == JUDGES[-1]:               # the block of this look is complete
                    blocks.append(current)
                    current = {}
                    if any(d == "CONTINUE" for d, _ in blocks[-1].values()) and written < last:
                        written += 1                       # the annotators' next batch arrives
                        _write(grow, by_round[written], "a")
        except queue.Empty:
            p.kill()
            pytest.fail(f"watch --follow printed nothing for 240 s; so far:\n{''.join(out)}")
        rc = p.wait(timeout=30)
        reader.join(timeout=10)
    stderr = (tmp_path / "stderr.txt").read_text()
    assert rc == 0, "".join(out) + stderr
    assert "Traceback" not in stderr

    # one block per look: the first two rounds, then each appended round, until both judges were decided
    assert len(blocks) == written, (len(blocks), written)
    assert 2 <= len(blocks) < last, "the judges are decided before the last round (see the one-shot run)"
    assert all(set(b) == set(JUDGES) for b in blocks)
    for judge in JUDGES:      # continue, continue, ..., then a decision that stands, with the look it was made at
        said = [b[judge] for b in blocks]
        first = next(i for i, (d, _) in enumerate(said) if d != "CONTINUE")
        assert all(d == "CONTINUE" for d, _ in said[:first]) and len(set(said[first:])) == 1, said
        assert re.search(r"\(look \d+\)$", said[first][1]), said[first]
    assert blocks[0]["gpt-4o"][0] == "ACCEPT" and blocks[0]["mistral-v03"][0] == "CONTINUE"
    assert blocks[-1]["mistral-v03"][0] == "ACCEPT" and "wins against 5 of 10 humans" in blocks[-1]["mistral-v03"][1]

    # watch stopped on its own after the decision: the last block is the one-shot run of the file it read
    once = voirdire("watch", "labels.csv", *WATCH, cwd=tmp_path)
    final = {m.group(2): (m.group(1), m.group(3)) for m in (DECISION.match(x.strip()) for x in once.out.splitlines()) if m}
    assert final == blocks[-1]


def test_watch_a_look_does_not_change_when_later_rounds_arrive(tmp_path: Path) -> None:
    header, by_round = _rounds()
    _write(tmp_path / "upto7.csv", [header, *(r for k in range(8) for r in by_round[k])], "w")
    _write(tmp_path / "all.csv", [header, *(r for k in sorted(by_round) for r in by_round[k])], "w")
    a = json.loads(voirdire("watch", "upto7.csv", *WATCH, "-f", "json", cwd=tmp_path).out)
    b = json.loads(voirdire("watch", "all.csv", *WATCH, "-f", "json", cwd=tmp_path).out)
    for ja, jb in zip(a["judges"], b["judges"]):
        assert ja["judge"] == jb["judge"]
        assert ja["n_items"] == jb["n_items"][:8]          # the same comparisons at looks 0-7 ...
        assert ja["decisions"] == jb["decisions"][:8]      # ... give the same decisions
        assert ja["n_win"] == jb["n_win"][:8]
        flat = [x for look in ja["e_win"] for x in look]
        assert flat == pytest.approx([x for look in jb["e_win"][:8] for x in look], rel=1e-9)
