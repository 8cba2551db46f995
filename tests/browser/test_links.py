"""A shared link in a real browser: a run played in one browser context, its "Link to this experiment" opened in
a fresh context (no cookies, no session), shows the same step: the same settings, drafts and text. The server runs
test-sized (SPECVIZ_TINY=1: the tiny random target), so the run takes seconds."""
import re

import pytest
from test_browser import CHROMIUM, FLAGS, _boxes, _need_browser, _open, _wait_ready

from specviz.harness import loadtest


@pytest.fixture(scope="module")
def tiny_server(tmp_path_factory):
    _need_browser()
    log_path = tmp_path_factory.mktemp("links") / "server.log"
    try:
        proc, base = loadtest.start_server(log_path, tiny=True)
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        yield base, log_path
    finally:
        loadtest.stop_server(proc)


def step_detail(page) -> str:
    """The shown step's headline ('Step N · context … · k = … · drafted: …') and the emitted line."""
    body = page.inner_text("body")
    head = re.search(r"Step \d+ · context \d+ tokens · k = \d+ · drafted:[^\n]*", body)
    emitted = re.search(r"Emitted this step:[^·\n]*", body)
    assert head and emitted, body[:3000]
    return head.group(0) + " | " + emitted.group(0).strip()


@pytest.mark.browser
@pytest.mark.slow
def test_shared_link_opens_the_same_step_in_a_fresh_context(tiny_server):
    from playwright.sync_api import sync_playwright
    base, log_path = tiny_server
    problems: list[str] = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            teacher = b.new_context(viewport={"width": 1400, "height": 900})
            page = _open(teacher, base + "/step", problems)
            _wait_ready(page)
            seed = page.get_by_label("Seed")
            seed.fill("11")
            seed.press("Enter")
            temp = page.get_by_label("Temperature (0 = greedy)")
            temp.fill("0.7")
            temp.press("Enter")
            _wait_ready(page)
            page.get_by_role("button", name="Play to the end").click()
            page.wait_for_timeout(1000)
            _wait_ready(page, "One step in detail")
            shown = step_detail(page)
            problems += _boxes(page, "/step (teacher)")                      # before the link's popover opens
            page.get_by_text("Link to this experiment").click()
            link = page.locator('[data-testid="stCode"]').first.inner_text().strip()
            assert link.startswith(base + "/step?") and "stp_seed=11" in link and "step=" in link, link

            student = b.new_context(viewport={"width": 1400, "height": 900})  # fresh: nothing shared but the link
            page2 = _open(student, link, problems)
            _wait_ready(page2, "One step in detail")
            assert step_detail(page2) == shown
            assert page2.get_by_label("Seed").input_value() == "11"
            assert "This link's" not in page2.inner_text("body")            # no parameter was refused
            problems += _boxes(page2, "/step (student)")
        finally:
            b.close()
    assert not problems, "\n".join(problems) + "\n--- server log tail ---\n" + log_path.read_text()[-2000:]
