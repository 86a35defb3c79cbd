"""MkDocs hook: run the pages' console sessions and Python blocks at build time, show what they print.

A fenced block whose info string is ``console exec`` holds ``$ command`` lines (a trailing ``\\``
continues a command); ``python exec`` holds a script. All blocks of one page run in order, in one
scratch folder of their own (``examples/`` is linked into it), through the ``voirdire`` and
``python`` of the environment that runs MkDocs, so later commands see the files earlier ones wrote.
The block is replaced by the commands followed by their real output; a command that exits with a
code other than the block's ``exit=N`` (default 0) fails the build.

``width=N`` runs a block's commands at N columns (default 100). ``publish=PATH`` on a block copies that file or folder of the scratch folder into the site, beside
the page, under ``<page>-output/PATH`` (a report the tutorial links to).

Cache: a page's outputs are kept in ``.docs-cache/exec/`` under a key hashing the page's blocks, the
package source (``src/voirdire``), ``examples/`` and the Python version; an unchanged page is not run
again. ``VOIRDIRE_DOCS_NO_CACHE=1`` runs everything; pages run side by side on
``VOIRDIRE_DOCS_JOBS`` workers (default: 2, or 1 on one core).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.hooks.execute")
VERSION = "1"
BLOCK = re.compile(r"^(?P<fence>```+)(?P<lang>console|python) exec(?P<opts>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                   re.M | re.S)
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".docs-cache" / "exec"
WIDTH = "100"

_results: dict[str, list[str]] = {}
_tree_hash: str | None = None


def _opts(text: str) -> dict[str, str]:
    out = {}
    for tok in shlex.split(text):
        key, _, value = tok.partition("=")
        out[key] = value
    return out


def _source_hash() -> str:
    global _tree_hash
    if _tree_hash is None:
        h = hashlib.sha256()
        for base in (ROOT / "src" / "voirdire", ROOT / "examples"):
            for p in sorted(base.rglob("*")):
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
                    h.update(str(p.relative_to(ROOT)).encode())
                    h.update(p.read_bytes())
        h.update(sys.version.encode())
        _tree_hash = h.hexdigest()
    return _tree_hash


def _commands(body: str) -> list[str]:
    cmds: list[str] = []
    cur: str | None = None
    for line in body.splitlines():
        if cur is not None:
            cur += "\n" + line
        elif line.startswith("$ "):
            cur = line[2:]
        elif line.strip():
            raise PluginError(f"console exec block: every line must start with '$ ' (got {line!r})")
        if cur is not None and not cur.endswith("\\"):
            cmds.append(cur)
            cur = None
    if cur is not None:
        cmds.append(cur)
    return cmds


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(COLUMNS=WIDTH, LINES="50", NO_COLOR="1", TERM="dumb", PYTHONHASHSEED="0", MPLBACKEND="Agg",
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("FORCE_COLOR", None)
    return env


def _clean(text: str) -> str:
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def _run_page(src_uri: str, blocks: list[re.Match[str]], work: Path) -> list[dict]:
    work.mkdir(parents=True)
    (work / "examples").symlink_to(ROOT / "examples")
    env = _env()
    results = []
    for i, m in enumerate(blocks):
        opts = _opts(m["opts"])
        expect = int(opts.get("exit", "0"))
        env = dict(env, COLUMNS=opts.get("width", WIDTH))
        runs = []
        if m["lang"] == "console":
            for cmd in _commands(m["body"]):
                t0 = time.perf_counter()
                p = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=600)
                out = _clean(p.stdout.decode("utf-8", "replace"))
                log.info("%s: %s (%.1f s, exit %d)", src_uri, cmd.splitlines()[0][:70], time.perf_counter() - t0,
                         p.returncode)
                if p.returncode != expect:
                    raise PluginError(f"{src_uri}: `{cmd}` exited with {p.returncode} (expected {expect}):\n{out}")
                runs.append({"cmd": cmd, "out": out, "rc": p.returncode})
        else:
            script = work / f".block{i}.py"
            script.write_text(m["body"], encoding="utf-8")
            p = subprocess.run([sys.executable, script.name], cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=600)
            out = _clean(p.stdout.decode("utf-8", "replace"))
            script.unlink()
            if p.returncode != expect:
                raise PluginError(f"{src_uri}: python block {i + 1} exited with {p.returncode}:\n{out}")
            runs.append({"cmd": None, "out": out, "rc": p.returncode})
        results.append({"lang": m["lang"], "runs": runs, "opts": opts})
    return results


def _render(m: re.Match[str], res: dict) -> str:
    fence = "````"
    if res["lang"] == "python":
        text = f"{fence}python\n{m['body'].rstrip()}\n{fence}\n"
        out = res["runs"][0]["out"]
        if out and "hide-output" not in res["opts"]:
            text += f"\n{fence}text\n{out}\n{fence}\n"
        return text
    lines = []
    for r in res["runs"]:
        lines.append("$ " + r["cmd"])
        if r["out"] and "hide-output" not in res["opts"]:
            lines.append(r["out"])
        if r["rc"]:
            lines.append(f"[exit code {r['rc']}]")
    return f"{fence}console\n" + "\n".join(lines) + f"\n{fence}\n"


def _execute(src_uri: str, slug: str, blocks: list[re.Match[str]], entry: Path) -> None:
    t0 = time.perf_counter()
    tmp = CACHE / slug / f".tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    results = _run_page(src_uri, blocks, tmp / "work")
    (tmp / "results.json").write_text(json.dumps(results), encoding="utf-8")
    # one cached run per page, the current one; another build's run in progress (its .tmp-PID) is left alone,
    # and when a concurrent build stored this key first, its entry stands (same key, same results)
    for old in (CACHE / slug).iterdir():
        if old.name != entry.name and not old.name.startswith(".tmp-"):
            shutil.rmtree(old, ignore_errors=True)
    try:
        tmp.rename(entry)
    except OSError:
        if not (entry / "results.json").is_file():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("%s: executed %d blocks in %.1f s", src_uri, len(blocks), time.perf_counter() - t0)


def on_files(files: Files, config) -> Files:
    use_cache = os.environ.get("VOIRDIRE_DOCS_NO_CACHE", "") in ("", "0")
    pages = []
    for f in list(files.documentation_pages()):
        if not f.abs_src_path:
            continue
        text = Path(f.abs_src_path).read_text(encoding="utf-8")
        blocks = list(BLOCK.finditer(text))
        if not blocks:
            continue
        key = hashlib.sha256("\x00".join([VERSION, _source_hash()] + [m.group(0) for m in blocks]).encode()).hexdigest()[:20]
        slug = f.src_uri.replace("/", "__").removesuffix(".md")
        pages.append((f, blocks, slug, CACHE / slug / key))
    todo = [p for p in pages if not (use_cache and (p[3] / "results.json").is_file())]
    if todo:
        # pages are independent (each has its own scratch folder): run them side by side, blocks in order
        jobs = int(os.environ.get("VOIRDIRE_DOCS_JOBS", "0")) or min(2, os.cpu_count() or 1)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for fut in [pool.submit(_execute, f.src_uri, slug, blocks, entry) for f, blocks, slug, entry in todo]:
                fut.result()
        log.info("executed %d page(s) on %d worker(s) in %.1f s", len(todo), jobs, time.perf_counter() - t0)
    for f, blocks, slug, entry in pages:
        results = json.loads((entry / "results.json").read_text(encoding="utf-8"))
        _results[f.src_uri] = [_render(m, r) for m, r in zip(blocks, results)]
        stem = f.src_uri.removesuffix(".md")
        for r in results:
            if "publish" not in r["opts"]:
                continue
            src = entry / "work" / r["opts"]["publish"]
            if not src.exists():
                raise PluginError(f"{f.src_uri}: publish={r['opts']['publish']} was not written")
            paths = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
            for p in paths:
                rel = p.relative_to(entry / "work").as_posix()
                files.append(File.generated(config, f"{stem}-output/{rel}", abs_src_path=str(p)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    rendered = _results.get(page.file.src_uri)
    if not rendered:
        return markdown
    it = iter(rendered)
    return BLOCK.sub(lambda m: next(it), markdown)
