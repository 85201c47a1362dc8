"""The Train page in a real browser (the session's server and browser, tests/conftest.py, driven with the helpers
of tests/test_browser.py): a tiny run started from the page says its phase and step as its worker writes them, then
"Finished", and the next free name is offered. The run reads the full-SNLI layout from the hand-written files of
tests/fixtures/training (40 training pairs, 12 dev, 12 test), typed into the page's folder field as a user types
their own: the page, its worker and the progress file are what is under test, and evaluating SNLI dev twice and
test once took 40 of the 55 s this test used with the snli-small protocol (protocol runs from the Train page are
covered by tests/test_app_pages.py). Saves docs/screenshots/train_run.png. Needs the session's server, which needs
the shipped checkpoints and ../shared/data (skips with the reason otherwise); never downloads a browser.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
from pathlib import Path

import pytest

from tests.test_browser import (PAGE_SECONDS, SCREENSHOTS, assert_clean, open_url, page, requested,  # noqa: F401
                                settle)

pytestmark = pytest.mark.slow

TINY_SNLI = Path(__file__).resolve().parent / "fixtures" / "training"
"""snli_1.0_{train,dev,test}.jsonl written for the tests: the full-SNLI layout a user types a folder of."""


def choose_option(page, key: str, option: str) -> None:
    """Pick `option` in the selectbox with key `key`."""
    page.locator(f".st-key-{key} input").first.click()
    before = requested(page)
    page.get_by_role("option", name=option, exact=True).first.click()
    settle(page, before)


def type_into(page, key: str, value: str) -> None:
    """Type `value` into the text or number field with key `key` and press Enter (Streamlit reruns on it)."""
    field = page.locator(f".st-key-{key} input").first
    before = requested(page)
    field.fill(value)
    field.press("Enter")
    settle(page, before)


def test_a_tiny_run_says_its_phase_and_step_then_finished_and_offers_the_next_name(app_url, app_folder, page):
    """Train page, tiny settings (the full-SNLI layout from a typed folder, random word vectors, 3 steps): the page
    shows the worker's own phase and step from its progress file, "Finished" at the end, and the next free run name,
    with which Start works again. Waits on the progress file's events, never on a clock; the worker is paused
    (SIGSTOP) while the page is asked to show it running, since a run this small can end between two polls."""
    from tests.fixtures.waiting import wait_for
    from nlivis.training import runs as training_runs

    open_url(page, f"{app_url}/Train", "Train")
    page.wait_for_selector(".st-key-train_start button", timeout=PAGE_SECONDS * 1000)  # after torch names the device
    settle(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    runs = app_folder / re.search(r"under (\S+) \(your runs folder", text)[1]  # relative to the server's folder
    shutil.copytree(TINY_SNLI, app_folder / "tiny-snli", ignore=shutil.ignore_patterns("*.py", "*.toml", "__pycache__"))
    choose_option(page, "train_dataset", "snli")
    type_into(page, "train_folder_snli", "tiny-snli")  # relative to the server's folder, as a user types one
    choose_option(page, "train_embeddings", "random")
    type_into(page, "train_max_steps", "3")
    name = page.locator(".st-key-train_name_gcnn_snli_1 input").first.input_value()
    out = runs / name
    page.locator(".st-key-train_start button").first.click()
    wait_for(lambda: training_runs.read_run(out) is not None, lambda: True, "the run was recorded")
    alive = lambda: training_runs.read_run(out).running  # noqa: E731
    wait_for(lambda: training_runs.run_progress(out) is not None, alive, "its progress file said what it does")
    worker = training_runs.read_run(out).pid
    os.killpg(worker, signal.SIGSTOP)  # the worker's own session (start_new_session): its whole group holds still
    try:
        assert training_runs.run_progress(out).phase != "finished", "the run ended before it could be shown running"
        page.wait_for_function("() => /status\\s*running · (reading|training|evaluating|saving)/.test(document.body.innerText)",
                               timeout=PAGE_SECONDS * 1000)  # the phase, from the file, while it runs (a hang guard)
    finally:
        os.killpg(worker, signal.SIGCONT)
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
    offered = page.locator(".st-key-train_name_gcnn_snli_1 input").first.input_value()
    assert offered != name and offered.startswith("gcnn-snli"), "the next free name is offered"
    assert page.locator(".st-key-train_start button").first.is_enabled()
    page.locator(".st-key-train_start button").first.click()
    second = runs / offered
    wait_for(lambda: training_runs.read_run(second) is not None, lambda: True, "the second run was recorded")
    run = training_runs.read_run(second)
    assert run.running or training_runs.run_status(run) != "failed", "the second Start with the offered name runs"
    training_runs.request_stop(run)
    wait_for(lambda: not training_runs.read_run(second).running, lambda: True, "the second run ended")
