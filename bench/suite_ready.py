"""How long after a launch the app's warm-up has the behavioural suite built and kept on disk.

    OMP_NUM_THREADS=1 python bench/suite_ready.py [--rounds 2] [--out FILE]

Per round: `streamlit run app.py` with the five shipped snli-small models, the data in ../shared/data and an empty
cache folder of its own (`NLIVIS_CACHE_DIR`: a machine that never ran the app; WordNet where it is installed), Home opened by URL in headless
Chromium and left alone, as a user reading it. The warm-up (`app.background.warm_up`) loads the models, spaCy and
WordNet, then builds the suite the Behavioural tests tab runs (`app.cache.keep_probe_suite`); the round ends when
the suite's file appears in the cache (`probes/nli-*.json`). Printed: seconds from the launch to Home drawn and to
the suite kept — before that, a click on Run waits for the rest of the build (`bench/probe_speed.py`'s "in the app"
column is a click after it).
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from browser import AppServer, app_environment, chromium, require_chromium
from browser_speed import RECORDER, SETTLED, TIMEOUT_S, VIEWPORT, page_url
from harness import ROOT, add_out_option, command_line, load_average, publish

from nlivis.features.wordnet import default_nltk_data_dir

POLL_S = 0.25


def one_launch(scratch: Path) -> tuple[float, float, float]:
    """(seconds from the launch until the server answers, until Home has drawn, until the suite is kept)."""
    cache = scratch / "cache"
    env = {**app_environment([ROOT / "checkpoints"], scratch / "runs"), "NLIVIS_CACHE_DIR": str(cache),
           "NLIVIS_NLTK_DATA": str(default_nltk_data_dir())}  # WordNet as installed: not fetched again
    started = time.perf_counter()
    with AppServer(env, scratch / "server.log") as server, chromium() as browser:
        answering = time.perf_counter() - started
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.add_init_script(RECORDER)  # what SETTLED reads
        page.goto(page_url(server, "Home"), wait_until="commit", timeout=TIMEOUT_S * 1000)
        page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
        drawn = time.perf_counter() - started
        deadline = time.monotonic() + TIMEOUT_S
        while not list((cache / "probes").glob("nli-*.json")):
            if time.monotonic() > deadline:
                raise RuntimeError(f"no suite kept in {cache / 'probes'} after {TIMEOUT_S:.0f} s: {server.log_tail()}")
            time.sleep(POLL_S)
        return answering, drawn, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="launches, each on an empty cache (default 2)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    rounds = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="suite-ready-") as scratch:
            rounds.append(one_launch(Path(scratch)))
    lines = [command_line(), "", f"Launches on an empty cache, Home opened and left alone. {load_average('the end')}",
             "", "| round | server answers (s) | Home drawn (s) | suite kept (s) |", "|---|---|---|---|"]
    lines += [f"| {i + 1} | {a:.1f} | {d:.1f} | {k:.1f} |" for i, (a, d, k) in enumerate(rounds)]
    lines.append(f"| median | {statistics.median(r[0] for r in rounds):.1f} | {statistics.median(r[1] for r in rounds):.1f}"
                 f" | {statistics.median(r[2] for r in rounds):.1f} |")
    publish(lines, args.out)


if __name__ == "__main__":
    main()
