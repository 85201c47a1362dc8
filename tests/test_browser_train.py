"""The Train page in a real browser (the session's server and browser, tests/conftest.py, driven with the helpers
of tests/test_browser.py): a tiny run started from the page says its phase and step as its worker writes them, then
"Finished", and the next free name is offered. Saves docs/screenshots/train_run.png. Needs the shipped checkpoints
and ../shared/data (skips with the reason otherwise); never downloads a browser.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_browser import (PAGE_SECONDS, SCREENSHOTS, assert_clean, open_url, page, requested,  # noqa: F401
                                settle)

pytestmark = pytest.mark.slow


def choose_option(page, key: str, option: str) -> None:
    """Pick `option` in the selectbox with key `key`."""
    page.locator(f".st-key-{key} input").first.click()
    before = requested(page)
    page.get_by_role("option", name=option, exact=True).first.click()
    settle(page, before)


def test_a_tiny_run_says_its_phase_and_step_then_finished_and_offers_the_next_name(app_url, app_folder, page):
    """Train page, tiny settings (random word vectors, 3 steps): the page shows the worker's own phase and step from
    its progress file, "Finished" at the end, and the next free run name, with which Start works again. Waits on the
    progress file's events, never on a clock."""
    from tests.fixtures.waiting import wait_for
    from nlivis.training import runs as training_runs

    open_url(page, f"{app_url}/Train", "Train")
    page.wait_for_selector(".st-key-train_start button", timeout=PAGE_SECONDS * 1000)  # after torch names the device
    settle(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    runs = app_folder / re.search(r"under (\S+) \(your runs folder", text)[1]  # relative to the server's folder
    choose_option(page, "train_embeddings", "random")
    steps = page.locator(".st-key-train_max_steps input").first
    before = requested(page)
    steps.fill("3")
    steps.press("Enter")
    settle(page, before)
    name = page.locator(".st-key-train_name_gcnn_snli-small_1 input").first.input_value()
    out = runs / name
    page.locator(".st-key-train_start button").first.click()
    wait_for(lambda: training_runs.read_run(out) is not None, lambda: True, "the run was recorded")
    alive = lambda: training_runs.read_run(out).running  # noqa: E731
    wait_for(lambda: training_runs.run_progress(out) is not None, alive, "its progress file said what it does")
    page.wait_for_function("() => /status\\s*running · (reading|training|evaluating|saving)/.test(document.body.innerText)",
                           timeout=PAGE_SECONDS * 1000)  # the phase, from the file, while it runs (a hang guard)
    wait_for(lambda: (training_runs.run_progress(out).step or 0) >= 1, alive, "it made a step")
    page.wait_for_function("() => /step \\d of 3|status\\s*running · (evaluating|saving)|Finished/.test(document.body.innerText)",
                           timeout=PAGE_SECONDS * 1000)
    page.locator(".st-key-train_start").scroll_into_view_if_needed()
    wait_for(lambda: training_runs.run_progress(out).phase == "finished", alive, "it finished")
    page.wait_for_function("() => document.body.innerText.includes('Finished at')", timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, "Train, finished")
    page.get_by_text("Runs", exact=True).first.scroll_into_view_if_needed()
    page.mouse.move(0, 0)
    page.screenshot(path=str(SCREENSHOTS / "train_run.png"))
    offered = page.locator(".st-key-train_name_gcnn_snli-small_1 input").first.input_value()
    assert offered != name and offered.startswith("gcnn-snli-small"), "the next free name is offered"
    assert page.locator(".st-key-train_start button").first.is_enabled()
    page.locator(".st-key-train_start button").first.click()
    second = runs / offered
    wait_for(lambda: training_runs.read_run(second) is not None, lambda: True, "the second run was recorded")
    run = training_runs.read_run(second)
    assert run.running or training_runs.run_status(run) != "failed", "the second Start with the offered name runs"
    training_runs.request_stop(run)
    wait_for(lambda: not training_runs.read_run(second).running, lambda: True, "the second run ended")
