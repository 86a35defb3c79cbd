"""The documentation site (issue 32): it builds with --strict, and its references are complete.

The site is built once per module into a temporary folder with the ``mkdocs`` of the running
environment or of ``.venv-docs`` (``make docs`` creates it); without either the tests are skipped
with the reason. The executed tutorials come from ``.docs-cache/`` when their inputs are unchanged.
The CLI reference must list every command and every option of the Typer app; the API reference
every name in ``__all__`` of every public subpackage.
"""

from __future__ import annotations

import html
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ..conftest import CHROMIUM_ARGS, chromium_or_skip

ROOT = Path(__file__).resolve().parents[2]
# one xdist worker builds the site for every test here (`--dist loadgroup`), not one build per worker
pytestmark = pytest.mark.xdist_group("docs_site")


def _mkdocs() -> str | None:
    for c in (Path(sys.executable).parent / "mkdocs", ROOT / ".venv-docs" / "bin" / "mkdocs",
              Path(shutil.which("mkdocs") or "/nonexistent")):
        if c.exists():
            return str(c)
    return None


_BUILD_FAILED: list[str] = []   # a failed build is reported once, not rebuilt for every test


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    exe = _mkdocs()
    if exe is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]', or `make docs` to create .venv-docs)")
    if _BUILD_FAILED:
        pytest.fail("the site did not build (see the first error)", pytrace=False)
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, DISABLE_MKDOCS_2_WARNING="true", NO_MKDOCS_2_WARNING="1")
    p = subprocess.run([exe, "build", "--strict", "--site-dir", str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        _BUILD_FAILED.append("failed")
        errors = [line for line in p.stderr.splitlines() if line.startswith(("ERROR", "WARNING", "Aborted"))]
        pytest.fail("mkdocs build --strict failed:\n" + "\n".join(errors) + f"\n\n{p.stderr[-4000:]}", pytrace=False)
    return out


def _sections(page: str, level_tags=("h2", "h3")) -> dict[str, str]:
    """Each heading's id -> the HTML up to the next heading of the given levels."""
    heads = list(re.finditer(r"<(h[1-6]) id=\"([^\"]+)\"", page))
    out = {}
    for i, m in enumerate(heads):
        if m.group(1) not in level_tags:
            continue
        end = next((h.start() for h in heads[i + 1:] if h.group(1) in level_tags), len(page))
        out[m.group(2)] = page[m.start():end]
    return out


def _command_tree():
    import typer

    from voirdire.cli import app

    root = typer.main.get_command(app)
    stack = [(["voirdire"], root, root.context_class(root, info_name="voirdire"))]
    while stack:
        path, cmd, ctx = stack.pop()
        yield path, cmd, ctx
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    stack.append((path + [name], sub, sub.context_class(sub, info_name=name, parent=ctx)))


@pytest.mark.slow
def test_cli_reference_lists_every_command_and_option(site):
    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    sections = _sections(page)
    n_cmd = n_opt = 0
    missing = []
    for path, cmd, ctx in _command_tree():
        anchor = "-".join(path)
        if anchor not in sections:
            missing.append(" ".join(path))
            continue
        n_cmd += 1
        body = html.unescape(sections[anchor])
        for p in cmd.get_params(ctx):
            if getattr(p, "hidden", False):
                continue
            names = ([(p.display_name_raw or p.name).upper()] if p.param_type_name == "argument"
                     else list(p.opts) + list(getattr(p, "secondary_opts", []) or []))
            for n in names:
                n_opt += 1
                if f"<code>{n}</code>" not in body:
                    missing.append(f"{' '.join(path)} {n}")
    assert missing == [], f"not in the CLI reference: {missing}"
    assert n_cmd >= 20 and n_opt >= 300, (n_cmd, n_opt)


def _public_modules() -> list[str]:
    import voirdire

    mods = ["voirdire"]
    mods += [f"voirdire.{m.name}" for m in pkgutil.iter_modules(voirdire.__path__) if not m.name.startswith("_")]
    return mods


@pytest.mark.slow
def test_api_reference_lists_every_public_name(site):
    import importlib

    missing = []
    n = 0
    for module in _public_modules():
        page_name = "voirdire" if module == "voirdire" else module.split(".", 1)[1]
        f = site / "reference" / "api" / page_name / "index.html"
        if not f.exists():
            missing.append(f"{module} (no page)")
            continue
        page = f.read_text(encoding="utf-8")
        names = getattr(importlib.import_module(module), "__all__", None)
        assert names is not None, f"{module} has no __all__"
        for name in names:
            if module == "voirdire" and name == "exceptions":
                ok = (site / "reference" / "api" / "exceptions" / "index.html").exists()
            else:
                ok = f'id="{module}.{name}"' in page
            n += 1
            if not ok:
                missing.append(f"{module}.{name}")
    assert missing == [], f"not in the API reference: {missing}"
    assert n >= 200, n


@pytest.mark.slow
def test_generated_pages_and_executed_output(site):
    codes = (site / "reference" / "reason-codes" / "index.html").read_text(encoding="utf-8")
    from voirdire.workflows import REASON_CODES

    assert all(f"<code>{c}</code>" in codes for c in REASON_CODES)
    exits = (site / "reference" / "exit-codes" / "index.html").read_text(encoding="utf-8")
    assert all(f"<td>{c}</td>" in exits for c in (0, 1, 2, 3))
    # the getting-started page shows what `voirdire agree` printed, and links the report it wrote
    gs = (site / "getting-started" / "index.html").read_text(encoding="utf-8")
    assert "1056 items, 3 humans, 5 judges" in html.unescape(re.sub(r"<[^>]+>", "", gs))
    assert (site / "getting-started-output" / "report" / "report.html").is_file()
    # offline: no page asks a font or script host for anything
    for f in site.rglob("*.html"):
        text = f.read_text(encoding="utf-8", errors="replace")
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, f


# --- the site in headless Chromium ------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser_page(site):
    exe = chromium_or_skip()
    sync_api = pytest.importorskip("playwright.sync_api")
    # served over http (search runs in a web worker, which file:// URLs do not allow); localhost only
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pw = sync_api.sync_playwright().start()
    browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((base, "data:", "blob:")) else None)
    yield page, base, problems, outside
    browser.close()
    pw.stop()
    server.shutdown()
    server.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: nothing left open when the server stops

    def log_message(self, *args):  # noqa: D401 - keep pytest's output clean
        pass


@pytest.mark.browser
@pytest.mark.slow
def test_site_navigation_and_offline_search(browser_page):
    page, base, problems, outside = browser_page
    page.goto(base)
    page.wait_for_load_state("load")
    links = page.eval_on_selector_all("nav.md-nav--primary a.md-nav__link[href]", "els => els.map(e => e.href)")
    pages = sorted({u.split("#")[0] for u in links if u.startswith(base)})
    assert len(pages) >= 30, pages
    reports = set()
    for url in pages:
        resp = page.goto(url)
        assert resp is not None and resp.status == 200, url
        page.wait_for_load_state("load")
        reports |= set(page.eval_on_selector_all("article a[href$='report.html']", "els => els.map(e => e.href)"))
    assert len(reports) >= 4, reports            # the reports the tutorials wrote open from the site
    for url in sorted(reports):
        resp = page.goto(url)
        assert resp is not None and resp.status == 200, url
        page.wait_for_load_state("load")
        assert page.locator("svg").count() > 0 or "Pairwise" in page.content(), url
    page.goto(base)
    page.wait_for_load_state("load")
    page.click("label.md-search__icon, .md-search__input")
    # the search index is built in a web worker when the page loads (slow on a busy machine: wait for it),
    # then the query is typed key by key, as a user does (the search listens to keyboard events)
    page.wait_for_function("() => { const m = document.querySelector('.md-search-result__meta');"
                           " return m && !/Initializing/i.test(m.textContent); }", timeout=120000)
    page.locator("input.md-search__input").press_sequentially("krippendorff", delay=20)
    page.wait_for_selector(".md-search-result__item", timeout=60000)
    hits = page.eval_on_selector_all(".md-search-result__item a", "els => els.map(e => e.href)")
    assert any("agreement" in h for h in hits), hits
    # every first letter a user may start with: the search's prefix query walks the index's token set, and lunr
    # can build a token set with words the index does not hold for some vocabularies (every query then fails
    # with "Cannot read properties of undefined (reading '_index')" in the worker: it did for 'k' once)
    for word in ("alpha", "bootstrap", "estimate", "fleiss", "gwet", "judge", "margin", "pairwise", "rater",
                 "validate", "weights"):
        box = page.locator("input.md-search__input")
        box.fill("")
        box.press_sequentially(word, delay=5)
        page.wait_for_selector(".md-search-result__item", timeout=30000)
    assert problems == []
    assert outside == [], outside
