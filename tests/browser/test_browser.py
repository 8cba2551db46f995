"""The real-browser test: the app as `make app` starts it (specviz.ui.launch) with the real default model, driven by
Playwright in Debian's chromium (/usr/bin/chromium; never `playwright install`). Opens every page app.py's navigation
lists (specviz/ui/routes.json), plays a run on the Step-through page, and fails on any exception box, page error or
console error.

Skips when chromium or playwright is missing — except under CI=true, where that is a failure.
Recipe: shared/tools/shoot.py.
"""
import os
import re
from pathlib import Path

import pytest

from specviz.harness import loadtest
from specviz.ui.routes import ROUTES

ROOT = Path(__file__).resolve().parents[2]
LOAD_S = 300  # the first page that needs the model waits for it (~20 s alone; more on a busy 2-core box)
CHROMIUM, FLAGS, READY_JS = loadtest.CHROMIUM, loadtest.FLAGS, loadtest.READY_JS


def app_pages() -> list[tuple[str, str]]:
    """(script, url) for every page app.py's navigation builds, in order: app.py builds one st.Page per entry of
    specviz/ui/routes.json, and the default page (Home, url "") lives at '/'."""
    assert "for route in ROUTES" in (ROOT / "app.py").read_text(), "app.py no longer builds its pages from ROUTES"
    return [(r.path, "/" + r.url) for r in ROUTES]


def test_app_pages_are_read_from_the_routes_app_py_uses():
    pages = app_pages()
    assert ("pages/home.py", "/") in pages and ("pages/step_through.py", "/step") in pages
    assert len(pages) == len(set(u for _, u in pages)) >= 3
    assert all((ROOT / script).is_file() for script, _ in pages)


def _need_browser():
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install playwright)")
    if not os.path.exists(CHROMIUM):
        missing.append(f"chromium at {CHROMIUM} (apt-get install -y chromium)")
    if missing:
        msg = "missing: " + ", ".join(missing)
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " — required under CI=true")
        pytest.skip(msg)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _need_browser()
    log_path = tmp_path_factory.mktemp("browser") / "server.log"
    try:
        proc, base = loadtest.start_server(log_path)
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        yield base, log_path
    finally:
        loadtest.stop_server(proc)


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        ctx = b.new_context(viewport={"width": 1400, "height": 900})
        yield ctx
        b.close()


def _open(ctx, url: str, problems: list[str]):
    page = ctx.new_page()

    def on_console(m):
        src = (m.location or {}).get("url", "")
        # the frontend probes <page>/_stcore/{health,host-config} for a base path; that 404 is benign
        if m.type == "error" and not (re.search(r"/_stcore/(health|host-config)$", src) and "404" in m.text):
            problems.append(f"console error on {url}: {m.text[:300]}")

    page.on("console", on_console)
    page.on("pageerror", lambda e: problems.append(f"page error on {url}: {e}"))
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    return page


def _wait_ready(page, wait_text=None, timeout_s=LOAD_S):
    for _ in range(2):  # twice, 0.5 s apart, so a just-queued rerun is not missed
        page.wait_for_function(READY_JS, arg=wait_text, polling=250, timeout=timeout_s * 1000)
        page.wait_for_timeout(500)


def _boxes(page, url: str) -> list[str]:
    out = [f"exception box on {url}: {t[:500]}" for t in page.locator('[data-testid="stException"]').all_inner_texts()]
    out += [f"dialog on {url}: {d.inner_text()[:300]}" for d in page.locator('[role="dialog"]').all() if d.is_visible()]
    return out


@pytest.mark.browser
@pytest.mark.slow
def test_every_page_opens_and_a_run_plays(server, browser):
    base, log_path = server
    problems: list[str] = []
    # A deep link as the fresh server's very first visit must still route through app.py
    # (st.navigation), not run pages/compare.py alone as a legacy multipage app.
    page = _open(browser, base + "/compare", problems)
    _wait_ready(page)
    body = page.inner_text("body")
    assert "Compare proposers" in body and "Tokenizers & checkpoints" in body, body[:1500]
    page.close()
    # Home next: it starts loading the model in the background and says so; wait for it here.
    page = _open(browser, base + "/", problems)
    _wait_ready(page, "Target model loaded")
    problems += _boxes(page, "/")
    page.close()
    for script, url in app_pages():
        if url == "/":
            continue
        page = _open(browser, base + url, problems)
        _wait_ready(page)
        problems += _boxes(page, url)
        assert "Page not found" not in page.inner_text("body"), f"{script} at {url}"
        page.close()

    # Step through: play a whole run of the default workload with the real model
    page = _open(browser, base + "/step", problems)
    _wait_ready(page)
    page.get_by_role("button", name="Play to the end").click()
    page.wait_for_timeout(1000)
    _wait_ready(page, "One step in detail")
    body = page.inner_text("body")
    passes = re.search(r"Target passes\s*\n\s*(\d+)", body)
    assert passes and int(passes.group(1)) > 0, body[:2000]
    assert page.locator('[data-testid="stPlotlyChart"] .main-svg').count() >= 1
    problems += _boxes(page, "/step")
    page.close()
    assert not problems, "\n".join(problems) + "\n--- server log tail ---\n" + log_path.read_text()[-2000:]
