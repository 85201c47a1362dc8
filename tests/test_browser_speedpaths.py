"""Clicks that open a pair, walked in a real browser (Chromium and the session's app, `chromium_browser` and `app_url`
in tests/conftest.py):
  * a line of a list opens its pair, and Next in the Pair explorer writes the new pair's URL in the run that shows
    it, before that pair is drawn, so a Back pressed while it is computed returns to the pair before instead of
    leaving the page (no wall-clock limit: what is checked is the order of events, recorded in the page);
  * an augmented training pair clicked in a Data map list opens with its edited text, not as the pair it was made
    from (a server of its own on a tiny augmented checkpoint trained on the app fixture data)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.browser import AppServer, app_environment
from nlivis.models.families import SHIPPED_FAMILIES
from nlivis.store.files import CACHE_ENV
from tests.fixtures.app_checkpoints import APP_DATA
from tests.test_browser import (PAGE_SECONDS, assert_clean, click_table_line, landed, new_tab, parameters, requested,
                                settle)

pytestmark = pytest.mark.slow

MODELS = ",".join(f"{family}-snli-small" for family in SHIPPED_FAMILIES)

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

@pytest.fixture
def tab(chromium_browser) -> Iterator:
    """A new tab (tests/test_browser.py's `new_tab`: a context of its own, animations off, script runs followed),
    recording its history writes."""
    page = new_tab(chromium_browser)
    page.context.add_init_script(HISTORY_RECORDER)
    try:
        yield page
    finally:
        page.context.close()


def wait_for_text(page, text: str) -> None:
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=text, timeout=PAGE_SECONDS * 1000)


def test_a_listed_pair_then_next_each_write_one_history_entry_before_the_new_view_and_back_retraces_them(app_url, tab):
    """Error analysis's list of errors → a click on its first line → the Pair explorer (pair 1 of the list) → Next:
    the URL names the second pair while the page still shows the first (written as the new pair's run starts, not at
    its end seconds later), one history entry; Back shows the first pair on the Pair explorer, and Back again the
    list it was opened from."""
    before = requested(tab)
    tab.goto(f"{app_url}/Error_analysis?models={MODELS}&tab=Every+error", wait_until="commit")
    settle(tab, before)
    assert_clean(tab, "the list of errors")
    tab.wait_for_selector(".st-key-errors_wrong_pairs_table .nlivis-pair-table", timeout=PAGE_SECONDS * 1000)
    listed = parameters(tab)
    click_table_line(tab, "errors_wrong_pairs_table", 0)
    first = landed(tab, "Pair explorer", "the list's first pair")
    wait_for_text(tab, "pair 1 of")
    assert first["from.via"] == "errors"
    writes_before = tab.evaluate("window.__nlivisHistory.length")

    before = requested(tab)
    tab.locator(".st-key-explorer_list_next button").click()
    wait_for_text(tab, "pair 2 of")
    settle(tab, before)
    assert_clean(tab, "the list's second pair")
    second = parameters(tab)
    assert second["pair"] != first["pair"] and second["from.model"] == first["from.model"]
    writes = tab.evaluate("window.__nlivisHistory")[writes_before:]
    assert [w["how"] for w in writes] == ["pushState"] and f"pair={second['pair']}&" in writes[0]["url"] + "&", (
        f"one history entry for Next: {writes}")
    assert "pair 1 of" in writes[0]["shown"] and "pair 2 of" not in writes[0]["shown"], (
        "the URL is written as the new pair's run starts, while the first pair is still shown")

    before = requested(tab)
    tab.go_back()
    wait_for_text(tab, "pair 1 of")
    settle(tab, before)
    assert_clean(tab, "Back to the first pair")
    assert tab.locator("h1").first.inner_text() == "Pair explorer" and parameters(tab) == first
    tab.go_back()
    assert landed(tab, "Error analysis", "Back to the list") == listed


AUGMENTED = "gcnn-snli-small-augmented"


@pytest.fixture(scope="module")
def augmented_checkpoint(tmp_path_factory, wordnet) -> Path:
    """A folder holding AUGMENTED: the tiny GCNN config trained for four steps on the app fixture's 12 SNLI pairs
    with every augmentation kind and every self-pair label group (each word counts as known: the fixture uses few
    words often), its candidate edits in the folder's sibling `cache` (so the app makes the edited text again at
    once)."""
    from nlivis.analysis import self_pairs
    from nlivis.training import augment
    from nlivis.training.config import load_config
    from nlivis.training.request import TrainRequest
    from nlivis.training.trainer import train
    from tests.fixtures.training.helpers import TINY_CONFIG

    root = tmp_path_factory.mktemp("augmented")
    config = load_config(TINY_CONFIG)
    config["config_name"] = "gcnn"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(augment, "MIN_WORD_COUNT", 1)
        # the self-pair neutral groups are off by default (below their audit floor); without them the cue-balanced
        # draw finds no stratum holding all three labels among 12 pairs, and this walk needs augmented pairs
        patch.setattr(self_pairs, "SWITCHED_OFF_GROUPS", {})
        train(TrainRequest(config, "snli-small", APP_DATA, root / "checkpoints" / AUGMENTED, device="cpu",
                           cache_dir=root / "cache", progress=False, max_steps=4, embeddings="random",
                           augment=tuple(augment.AUGMENT_KINDS), augment_ratio=1.0))
    return root / "checkpoints"


def test_an_augmented_pair_clicked_in_a_data_map_list_opens_with_its_edited_text(chromium_browser, tab,
                                                                                   augmented_checkpoint, tmp_path):
    """The Data map's Selected pairs (a box over the whole map, lowest confidence first) → the first augmented line:
    the Pair explorer shows the edited premise and hypothesis with the edited pair's gold label, the map's own
    checkpoint, and says it came from the selection; not the training pair it was made from."""
    from nlivis.analysis.datamap import ORDERS, data_map, listing, members, parse_selection
    from nlivis.store.dynamics import read_dynamics
    from nlivis.workflows.datamap import augmented_pairs, augmented_run

    folder, cache = augmented_checkpoint / AUGMENTED, augmented_checkpoint.parent / "cache"
    everything = "box:0,1,0,1"
    points = data_map(read_dynamics(folder))
    lines = listing(points, members(points, parse_selection(everything)), next(iter(ORDERS)))
    line = next(i for i, kind in enumerate(lines["augmented"]) if isinstance(kind, str))
    edited = augmented_pairs(augmented_run(folder, APP_DATA, cache), cache)[lines["id"].iloc[line]]
    environment = {**app_environment([augmented_checkpoint], tmp_path / "runs", APP_DATA), CACHE_ENV: str(cache)}
    with AppServer(environment, tmp_path / "streamlit.log") as server:
        before = requested(tab)
        tab.goto(f"{server.url}/Data_map?checkpoint={AUGMENTED}&sel={everything}&sel_on={AUGMENTED}",
                 wait_until="commit")
        settle(tab, before)
        assert_clean(tab, "the data map")
        tab.wait_for_selector(".st-key-datamap_selected_pairs_table", timeout=PAGE_SECONDS * 1000)
        listed = tab.locator('[data-testid="stMain"]').inner_text()
        click_table_line(tab, "datamap_selected_pairs_table", line)
        landed(tab, "Pair explorer", "the augmented pair")
        shown = parameters(tab)
        assert (shown.get("premise"), shown.get("hypothesis")) == (edited.premise, edited.hypothesis), (
            f"the edited pair opens, not its original: {shown}")
        assert shown.get("gold") == edited.label and "pair" not in shown and shown["models"] == AUGMENTED
        assert shown["from"] == "datamap" and shown["from.sel"] == everything
        assert "augmented pairs are listed with their edited text" in listed, "the list says how they open"
        assert "augmented pairs was made again and matches the digest the run recorded" in listed, (
            "a run of today's nlivis recorded its pairs' digests, and the text made again matches them")
        wait_for_text(tab, "Opened from a data-map selection")
