"""Rerun: .venv/bin/python bench/memory_guard_6gib.py. The issue's 6 GiB case: 20,000 items, two humans and a judge, 20,000 distinct nominal labels, on a
machine that (as the issue's) has 4 GiB available: `validate` and `report` refuse before allocating."""
import resource, sys, time
from pathlib import Path
import voirdire._checks as checks
from typer.testing import CliRunner
from voirdire.cli import app

f = Path("/tmp/voirdire_six_gib.csv")
rows = ["item,rater,label"]
for i in range(20_000):
    rows += [f"i{i},h1,lab{i}", f"i{i},h2,lab{(i + 1) % 20_000}", f"i{i},llm,lab{i}"]
f.write_text("\n".join(rows) + "\n")
checks.available_memory = lambda: 4 * 2**30
for cmd in (["validate", str(f), "--judge", "llm"], ["report", str(f), "--judge", "llm", "--out", "/tmp/voirdire_six_gib_report", "-q"]):
    t0 = time.time()
    r = CliRunner().invoke(app, cmd)
    print(cmd[0], "exit", r.exit_code, f"{time.time() - t0:.1f} s", "|", r.output.strip())
print("max RSS", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "MiB")
