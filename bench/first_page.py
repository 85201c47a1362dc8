"""The first page after a launch, in a real browser: this checkout against an earlier one, in turn.

    OMP_NUM_THREADS=1 python bench/first_page.py --before-root DIR [--pages Pair_explorer,Error_analysis]
        [--rounds 2] [--profile DIR] [--out FILE]

Per round and page, a fresh `streamlit run app.py` of each checkout in turn (after, then before), the page's URL
opened first in headless Chromium (`browser_speed.visit`'s recorder, five shipped snli-small models): when the
page's run ended (the server's last `script_finished` before the page settled), when its last chart drew, and the
server process's CPU seconds (all its threads, /proc) from its start to the run's end —
CPU, which a shared machine's load moves far less than wall time, says what the server did for that first page.
A priming pass serves each checkout once and opens every page, so the disk caches and the browser's cache hold what
a user's would (as `browser_speed.py` does); both checkouts read this checkout's checkpoints and the same data.
`--profile DIR` records each visit's server with py-spy (`py-spy record -r 50 -f raw --threads`, from the navigation
until the page settled) into DIR/<page>-<checkout>-<round>.raw; `bench/pyspy_summary.py` reads them.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from browser import AppServer, chromium, require_chromium
from browser_speed import FIGURES, RECORDER, SETTLED, TIMEOUT_S, VIEWPORT, bench_environment, page_url
from harness import ROOT, add_out_option, command_line, load_average, publish
from script_time import process_cpu


def profiled(server: AppServer, out: Path | None) -> subprocess.Popen | None:
    """py-spy recording `server`'s process into `out` (raw, per thread, 50 samples/s), or None without `out`."""
    if out is None:
        return None
    spy = subprocess.Popen(["py-spy", "record", "-r", "50", "-f", "raw", "--threads", "-o", str(out),
                            "--pid", str(server.process.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # py-spy attaches before the page is asked for
    return spy


def first_visit(context, server: AppServer, page: str, profile: Path | None = None) -> dict[str, float]:
    """`page` opened by URL in a new tab of `server` (its first visit): seconds to the run's end and to the last
    chart, and the server's CPU seconds from its start to the run's end (sampled every 50 ms while waiting, the
    sample just after the end; seconds from the navigation's start as the page's clock counts them)."""
    tab = context.new_page()
    tab.add_init_script(RECORDER)
    samples: list[tuple[float, float]] = []
    spy = profiled(server, profile)
    try:
        started = time.perf_counter()
        tab.goto(page_url(server, page), wait_until="commit", timeout=TIMEOUT_S * 1000)
        while not tab.evaluate(SETTLED):
            samples.append((time.perf_counter() - started, process_cpu(server.process.pid)))
            if samples[-1][0] > TIMEOUT_S:
                raise TimeoutError(f"{page} did not settle within {TIMEOUT_S:.0f} s")
            time.sleep(0.05)
        finished = tab.evaluate("() => window.__nlivis.finished")
        drawn = max([f["drawn"] or 0 for f in tab.evaluate(FIGURES)] or [0])
        problems = tab.locator('[data-testid="stException"]').all_inner_texts()
    finally:
        tab.close()
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
    if problems:
        print(f"{page}: the page raised: {problems[0][:200]}", file=sys.stderr)
    ended = max(finished) / 1000
    at_end = next((cpu for when, cpu in samples if when >= ended), samples[-1][1])
    return {"run ended (s)": ended, "drawn (s)": max(ended, drawn / 1000), "server CPU to run end (s)": at_end,
            "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before-root", type=Path, required=True,
                        help="the earlier checkout (git archive … | tar -x)")
    parser.add_argument("--pages", default="Pair_explorer,Error_analysis,Ablations,Attribution,Gates,"
                                           "DIIN_interaction_space", help="comma-separated url paths")
    parser.add_argument("--rounds", type=int, default=2, help="fresh servers per page and checkout (default 2)")
    parser.add_argument("--profile", type=Path, default=None, help="record each visit's server with py-spy here")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    pages = [p for p in args.pages.split(",") if p]
    scratch = Path(tempfile.mkdtemp(prefix="nlivis-first-page-"))
    roots = {"after": ROOT, "before": args.before_root}
    env = bench_environment(ROOT / "checkpoints", scratch)
    found: dict[tuple[str, str], list[dict[str, float]]] = {}
    lines = [command_line("each checkout's fresh server in turn; medians over the rounds"), "",
             load_average("start"), ""]
    with chromium() as browser:
        context = browser.new_context(viewport=VIEWPORT)
        for root in roots.values():  # priming: disk caches and the browser's cache as after a first use
            with AppServer(env, scratch / "prime.log", root) as server:
                for page in pages:
                    first_visit(context, server, page)
        if args.profile:
            args.profile.mkdir(parents=True, exist_ok=True)
        for round_number in range(1, args.rounds + 1):
            for page in pages:
                for side, root in roots.items():
                    out = args.profile / f"{page}-{side}-{round_number}.raw" if args.profile else None
                    with AppServer(env, scratch / f"{side}.log", root) as server:
                        found.setdefault((page, side), []).append(first_visit(context, server, page, out))
                    print(page, side, found[(page, side)][-1], file=sys.stderr)
    columns = ["run ended (s)", "drawn (s)", "server CPU to run end (s)", "load"]
    lines += ["| page | checkout | " + " | ".join(columns) + " | each round: drawn (s) / CPU (s) |",
              "|---|---|" + "---|" * (len(columns) + 1)]
    for page in pages:
        for side in roots:
            visits = found[(page, side)]
            medians = [statistics.median(v[c] for v in visits) for c in columns]
            rounds = ", ".join(f"{v['drawn (s)']:.2f} / {v['server CPU to run end (s)']:.2f}" for v in visits)
            lines.append(f"| {page.replace('_', ' ')} | {side} | " + " | ".join(f"{m:.2f}" for m in medians)
                         + f" | {rounds} |")
    publish(lines + ["", load_average("end")], args.out)


if __name__ == "__main__":
    main()
