"""Clicks whose address and view must change together, walked in a real browser (the session's app and Chromium,
`app_url` and `chromium_browser` in tests/conftest.py): Next in the Pair explorer writes the new pair's URL in the
run that shows it, before that pair is drawn, so a Back pressed while it is computed returns to the pair before
instead of leaving the page. No wall-clock limit: what is checked is the order of events, recorded in the page."""
from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest

from nlivis.models.families import SHIPPED_FAMILIES

pytestmark = pytest.mark.slow

MODELS = ",".join(f"{family}-snli-small" for family in SHIPPED_FAMILIES)
HANG_GUARD_S = 300
"""How long a page may go on running before the test calls it stuck: a guard, not a speed criterion."""

HISTORY_RECORDER = """
(() => {
  window.__nlivisHistory = [];
  for (const name of ['pushState', 'replaceState']) {
    const original = history[name].bind(history);
    history[name] = (state, title, url) => {
      const main = document.querySelector('[data-testid="stMain"]');
      window.__nlivisHistory.push({how: name, url: String(url), shown: main ? main.innerText : ''});
      return original(state, title, url);
    };
  }
})();
"""
"""Installed before the app loads: each history write with what the page showed at that moment."""

SETTLED = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning' && !!document.querySelector('h1')
      && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'));
}
"""


@pytest.fixture
def tab(chromium_browser) -> Iterator:
    """A new tab in a browser context of its own, recording its history writes."""
    context = chromium_browser.new_context(viewport={"width": 1600, "height": 1200})
    page = context.new_page()
    page.add_init_script(HISTORY_RECORDER)
    try:
        yield page
    finally:
        context.close()


def settle(page, quiet: float = 1.5) -> None:
    """Until the script is done (and stays done for `quiet` seconds, room for a rerun to start) and charts drew."""
    guard = time.time() + HANG_GUARD_S
    calm_since = None
    while time.time() < guard:
        if page.evaluate(SETTLED):
            calm_since = calm_since or time.time()
            if time.time() - calm_since >= quiet:
                return
        else:
            calm_since = None
        time.sleep(0.2)
    raise AssertionError(f"{page.evaluate('location.href')}: still running after {HANG_GUARD_S} s")


def assert_clean(page, name: str) -> None:
    exceptions = page.locator('[data-testid="stException"]').all_inner_texts()
    errors = page.locator('[data-testid="stAlertContentError"]').all_inner_texts()
    assert not exceptions and not errors, f"{name}: {exceptions or errors}"


def parameters(page) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlparse(page.evaluate("location.href")).query).items()}


def wait_for_text(page, text: str) -> None:
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=text, timeout=HANG_GUARD_S * 1000)


def test_next_writes_the_new_pairs_url_before_showing_it_and_back_returns_to_the_pair_before(app_url, tab):
    """A pair opened from a list (SNLI dev by row, ESAN's predictions) → Next: the URL names the second pair while
    the page still shows the first (written in the run's start, not at its end ~seconds later), one history entry;
    Back then shows the first pair again, on the Pair explorer."""
    listed = "from=predictions&from.model=esan-snli-small&from.split=snli_dev&from.via=errors"
    tab.goto(f"{app_url}/Pair_explorer?models={MODELS}&split=snli_dev&pair=0&{listed}", wait_until="commit")
    wait_for_text(tab, "pair 1 of")
    settle(tab)
    assert_clean(tab, "the list's first pair")
    assert parameters(tab)["pair"] == "0"
    writes_before = tab.evaluate("window.__nlivisHistory.length")

    tab.locator(".st-key-explorer_list_next button").click()
    wait_for_text(tab, "pair 2 of")
    settle(tab)
    assert_clean(tab, "the list's second pair")
    assert parameters(tab)["pair"] == "1" and parameters(tab)["from.model"] == "esan-snli-small"
    writes = tab.evaluate("window.__nlivisHistory")[writes_before:]
    to_second = [w for w in writes if "pair=1" in w["url"]]
    assert len(to_second) == 1 and to_second[0]["how"] == "pushState", f"one history entry for Next: {writes}"
    assert "pair 1 of" in to_second[0]["shown"] and "pair 2 of" not in to_second[0]["shown"], (
        "the URL is written as the new pair's run starts, while the first pair is still shown")
    assert not [w for w in writes if "pair=1" not in w["url"]], f"no other address written: {writes}"

    tab.go_back()
    wait_for_text(tab, "pair 1 of")
    settle(tab)
    assert_clean(tab, "Back")
    assert tab.locator("h1").first.inner_text() == "Pair explorer" and parameters(tab)["pair"] == "0"
