"""The rendered page in headless Chromium (Debian's package, driven by Playwright's Python client).

Skipped, with the reason, only when no Chromium binary can be found (``make chromium`` installs it).
"""

from __future__ import annotations

import pytest

from ..conftest import CHROMIUM_ARGS, chromium_or_skip
from .conftest import SCRIPT_RATER, artifacts_dir

pytestmark = pytest.mark.browser

@pytest.fixture(scope="module")
def page_session(written):
    """Open report.html once: (page, console messages, dialogs, failed requests, report)."""
    exe = chromium_or_skip()
    sync_api = pytest.importorskip("playwright.sync_api")
    rep, _, _, paths = written
    pw = sync_api.sync_playwright().start()
    browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    console: list[tuple[str, str]] = []
    dialogs: list[str] = []
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append((m.type, m.text)))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))

    def _dialog(d):
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", _dialog)
    page.goto(paths.html.resolve().as_uri())
    page.wait_for_load_state("load")
    yield page, console, dialogs, errors, requests, rep
    browser.close()
    pw.stop()


def test_no_console_errors_and_no_network(page_session):
    page, console, dialogs, errors, requests, _ = page_session
    assert [m for m in console if m[0] in ("error", "warning")] == []
    assert errors == []
    assert dialogs == []
    # the only request is the page itself
    assert all(u.startswith("file://") for u in requests), requests


def test_every_section_plot_is_visible(page_session):
    page, _, _, _, _, rep = page_session
    ok = [s for s in rep.sections if s.status == "ok"]
    assert ok
    for s in ok:
        sec = page.locator(f"#sec-{s.key}")
        assert sec.count() == 1
        for f in s.figures:
            svg = page.locator(f"figure#fig-{f.key} svg")
            assert svg.count() == 1, f.key
            svg.scroll_into_view_if_needed()
            box = svg.bounding_box()
            assert box is not None and box["width"] > 50 and box["height"] > 30, (f.key, box)
            assert svg.is_visible()
    # every analysis section that ran shows at least one plot ("At a glance" is a table of their numbers)
    assert all(s.figures for s in ok if s.key != "glance"), [s.key for s in ok if not s.figures]
    assert page.locator("#sec-glance table").is_visible()


def test_script_rater_is_text_and_no_alert(page_session):
    page, _, dialogs, _, _, _ = page_session
    cell = page.get_by_text(SCRIPT_RATER, exact=True).first
    assert cell.is_visible()
    assert page.locator("script").count() == 0
    assert dialogs == []


def test_screenshot_artifact(page_session):
    page, *_ = page_session
    out = artifacts_dir() / "report.png"
    page.screenshot(path=str(out), full_page=True)
    assert out.stat().st_size > 10_000
    page.emulate_media(media="print")
    pdf_like = artifacts_dir() / "report-print.png"
    page.screenshot(path=str(pdf_like), full_page=True)
    assert page.locator("nav.toc").is_hidden()  # the print stylesheet hides the navigation
    page.emulate_media(media="screen")
