"""The Pair explorer's Edits tab in a real browser, warm: from pressing Analyse on a new pair to its edits table
drawn, with the five shipped snli-small models (issue 22: ≤ 50 edits × 5 models ≤ 1 s warm).

    OMP_NUM_THREADS=1 python bench/browser_edits_speed.py [--pairs 8] [--out bench/results/browser_edits_speed.md]

Starts `streamlit run app.py` (as the README does), opens the Edits tab on one SNLI dev pair (not timed: it loads
the models, spaCy and WordNet), then, in the same tab, picks each further dev row and presses Analyse. A visit
ends when Streamlit's script is done (`notRunning`) and the page shows that pair's premise and its "N edit(s)"
line. "new pair" is a row the server never saw (its edits proposed and predicted, its sentences parsed for the
first time, each model's reading of the pair for the glance above the tabs); "seen pair" goes back to an earlier
row (every result from the server's caches: what the page itself costs). Beside each wall time, the CPU seconds
the server process spent meanwhile (all threads, /proc): on a shared, loaded machine the wall time grows with the
load, the CPU time much less. Prints the 1-minute load average.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

from browser import DATA, AppServer, chromium, require_chromium
from browser_speed import TIMEOUT_S, bench_environment
from harness import ROOT, SHIPPED, add_out_option, publish

ROWS = (3934, 12, 150, 777, 1204, 2048, 2600, 3301, 4100, 5555, 6020, 7007, 8123, 9000)
"""SNLI dev rows visited (the first warms the server up)."""
VIEWPORT = {"width": 1600, "height": 1000}

SHOWN = """
([premise]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return null;
  const text = document.querySelector('[data-testid="stMain"]').innerText;
  if (!text.includes(premise)) return null;
  const found = text.match(/(\\d+) edit\\(s\\)/);
  return found ? Number(found[1]) : null;
}
"""


def premise_of(row: int) -> str:
    from nlivis.data.protocols import get_protocol, read_split

    return read_split(get_protocol("snli-small").select, DATA).pairs[row].premise


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (Linux /proc), all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def analyse_row(page, row: int, pid: int) -> tuple[float, int, float]:
    """Pick `row` and press Analyse; (seconds until its edits table is shown, how many edits, the server's CPU
    seconds meanwhile)."""
    premise = " ".join(premise_of(row).split())[:40]
    number = page.locator(".st-key-explorer_pair_row input")
    number.fill(str(row))
    cpu = cpu_seconds(pid)
    started = time.perf_counter()
    page.locator(".st-key-explorer_analyse_row button").click()
    page.wait_for_timeout(150)  # the click's rerun starts
    handle = page.wait_for_function(SHOWN, arg=[premise], timeout=TIMEOUT_S * 1000, polling=50)
    return time.perf_counter() - started, int(handle.json_value()), cpu_seconds(pid) - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=8, help="new pairs timed after the warm-up pair (default 8)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    rows = ROWS[:args.pairs + 1]
    scratch = Path(tempfile.mkdtemp(prefix="nlivis-browser-edits-"))
    env = bench_environment(ROOT / "checkpoints", scratch)
    models = ",".join(f"{m}-snli-small" for m in SHIPPED)
    with AppServer(env, scratch / "streamlit.log") as server, chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        started = time.perf_counter()
        page.goto(f"{server.url}/Pair_explorer?models={models}&split=snli_dev&pair={rows[0]}&tab=Edits",
                  wait_until="commit")
        premise = " ".join(premise_of(rows[0]).split())[:40]
        first_edits = int(page.wait_for_function(SHOWN, arg=[premise], timeout=TIMEOUT_S * 1000,
                                                 polling=100).json_value())
        cold = time.perf_counter() - started
        new = [(row, *analyse_row(page, row, server.process.pid)) for row in rows[1:]]
        seen = [(row, *analyse_row(page, row, server.process.pid)) for row in rows[:len(new)]]
        problems = page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').all_inner_texts()
    load = os.getloadavg()[0]
    lines = [f"Edits tab, 5 shipped snli-small models, Chromium 1600 px, OMP_NUM_THREADS="
             f"{env['OMP_NUM_THREADS']}, 1-min load {load:.1f} on {os.cpu_count()} cores:", "",
             "| visit | SNLI dev row | edits | seconds to the table | server CPU s |", "|---|---|---|---|---|",
             f"| first (server cold: models, spaCy, WordNet load) | {rows[0]} | {first_edits} | {cold:.1f} | |"]
    lines += [f"| new pair | {row} | {edits} | {seconds:.2f} | {cpu:.2f} |" for row, seconds, edits, cpu in new]
    lines += [f"| seen pair (cached) | {row} | {edits} | {seconds:.2f} | {cpu:.2f} |" for row, seconds, edits, cpu in seen]
    lines += ["", f"new pairs: median {statistics.median(v[1] for v in new):.2f} s (server CPU "
              f"{statistics.median(v[3] for v in new):.2f} s), max {max(v[1] for v in new):.2f} s "
              f"({max(v[2] for v in new)} edits at most); seen pairs: median {statistics.median(v[1] for v in seen):.2f} s "
              f"(server CPU {statistics.median(v[3] for v in seen):.2f} s)"]
    if problems:
        lines += ["", "problems shown: " + re.sub(r"\s+", " ", "; ".join(problems))[:500]]
    publish(lines, args.out)

if __name__ == "__main__":
    main()
