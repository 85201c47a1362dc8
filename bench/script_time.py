"""The server's side of a click: the CPU time of the script runs each of the browser bench's clicks causes.

    OMP_NUM_THREADS=1 python bench/script_time.py [--rounds 2] [--app-root DIR] [--profile DIR] [--out FILE]

Serves the app as `bench/browser_speed.py` does, but through this file's `--serve` mode: `streamlit run` with
every script run timed in its own thread (`time.thread_time`: CPU seconds, which a shared machine's load barely
moves, and wall seconds), and with `--profile DIR` a cProfile of each run written there. Headless Chromium then
clicks what a reader clicks (`browser_speed.interactions`' actions: the sidebar switches, Error analysis's tabs, a
pair opened from the list of errors and Next), one round to warm the caches and `--rounds` more; a new pair is
opened each round (rows 0, 2, 4 … of the list), so opening and Next always show a pair the server has not read.
Per action: the median over the warm rounds of its runs' script CPU and wall time, the server process's CPU over
the action (all its threads, from /proc), and the browser's click-to-drawn time (`browser_speed.after_click`:
on a loaded machine mostly Chromium drawing the charts).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUN_LOG, PROFILES = "NLIVIS_BENCH_RUN_LOG", "NLIVIS_BENCH_PROFILES"


def serve(argv: list[str]) -> int:
    """`streamlit run ARGV…` with each script run's thread CPU and wall time appended to $NLIVIS_BENCH_RUN_LOG (one
    JSON line per run) and, when $NLIVIS_BENCH_PROFILES names a folder, its cProfile written there (in wall
    seconds: a run shares the server's interpreter with its other threads, and the profile shows where the
    click's wall time went, waits included)."""
    from streamlit.web import cli

    from harness import ScriptRun, timed_script_runs  # imports nothing of nlivis: the served app's own comes first

    profiles = os.environ.get(PROFILES)

    def log_run(run: ScriptRun) -> None:
        if run.profile:
            run.profile.dump_stats(Path(profiles) / f"run-{run.number:03d}.prof")
        with open(os.environ[RUN_LOG], "a", encoding="utf-8") as log:
            log.write(json.dumps({"run": run.number, "wall": run.wall, "cpu": run.cpu, "ended": run.ended}) + "\n")

    sys.argv = ["streamlit", "run", *argv]
    with timed_script_runs(log_run, profile=lambda: bool(profiles), profile_clock=None):
        return cli.main()


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid`, all its threads (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ended_runs(log: Path) -> list[float]:
    """When each script run logged so far ended (`time.time`)."""
    return [json.loads(line)["ended"] for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def after_run(page, click, log: Path, title: str | None = None) -> float:
    """Seconds from `click()` until a script run that ended after it is in the server's log, the page is idle
    (nothing ran for a second) and every chart drew: the later of the run's end and the last chart's drawing. The
    server's log, not the page's running state, says that the click ran: a run of a few tens of milliseconds may
    never show the page as running, which `browser_speed.after_click` waits for."""
    from browser_speed import LAST_DRAWN, SETTLED, TIMEOUT_S

    since_page, since = page.evaluate("() => performance.now()"), time.time()
    click()
    guard = time.monotonic() + TIMEOUT_S
    while not any(ended >= since for ended in ended_runs(log)):
        if time.monotonic() > guard:
            raise TimeoutError(f"no script run ended within {TIMEOUT_S:.0f} s of the click")
        time.sleep(0.02)
    if title:
        page.wait_for_function("t => document.querySelector('h1') && document.querySelector('h1').innerText.includes(t)",
                               arg=title, timeout=TIMEOUT_S * 1000, polling=100)
    page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
    ran = max(ended for ended in ended_runs(log) if ended >= since) - since
    drawn = page.evaluate(LAST_DRAWN, since_page)
    return max(ran, (drawn - since_page) / 1000 if drawn else 0.0)


def one_round(context, server, round_number: int, mark, log: Path) -> dict[str, float]:
    """The reader's clicks in one tab (`browser_speed.reader_clicks`, a new line of the list each round), each
    `mark`ed before it; returns each action's click-to-drawn seconds."""
    from browser_speed import RECORDER, reader_clicks

    timed: dict[str, float] = {}

    def timed_click(name: str, click, title: str | None) -> None:
        mark(name)  # before the click: its runs end after this mark and before the next
        timed[name] = after_run(page, click, log, title)

    page = context.new_page()
    page.add_init_script(RECORDER)
    try:
        reader_clicks(page, server, timed_click, row=2 * round_number, untimed=lambda: mark(None))
        mark(None)
    finally:
        page.close()
    return timed


def measure(app_root: Path, rounds: int, scratch: Path, profiles: Path | None) -> dict:
    """Serve the app in `app_root`, warm it, click `rounds` + 1 rounds; the runs, marks and click times."""
    from browser import AppServer, chromium, free_port
    from browser_speed import bench_environment, page_url, visit
    from harness import ROOT

    log = scratch / "runs.jsonl"
    env = {**bench_environment(ROOT / "checkpoints", scratch), RUN_LOG: str(log)}
    if profiles is not None:
        profiles.mkdir(parents=True, exist_ok=True)
        env[PROFILES] = str(profiles)

    class TimedServer(AppServer):
        def __init__(self) -> None:  # AppServer's command, through this file's --serve
            self.port, self.log_path, self.started = free_port(), scratch / "server.log", time.perf_counter()
            self.url, self.log = f"http://127.0.0.1:{self.port}", open(self.log_path, "ab")
            self.process = subprocess.Popen(
                [sys.executable, __file__, "--serve", "app.py", "--server.headless", "true", "--server.port",
                 str(self.port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
                 "--server.fileWatcherType", "none"],
                cwd=app_root, env=env, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    marks: list[tuple[float, str | None, float]] = []
    with chromium() as browser, TimedServer() as server:
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        for page in ("Home", "Pair_explorer", "Gates", "Attribution", "Error_analysis"):
            visit(context, page_url(server, page))

        def mark(name: str | None) -> str | None:
            marks.append((time.time(), name, process_cpu(server.process.pid)))
            return name

        clicked = [one_round(context, server, number, mark, log) for number in range(rounds + 1)]
    runs = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return {"marks": marks, "runs": runs, "clicked": clicked, "load": os.getloadavg()[0]}


def table(measured: dict) -> list[str]:
    """Per action, medians over the warm rounds (all rounds but the first)."""
    per: dict[str, list[tuple[float, float, float]]] = {}
    for (start, name, cpu_before), (end, _, cpu_after) in zip(measured["marks"], measured["marks"][1:]):
        if name is not None:
            runs = [run for run in measured["runs"] if start <= run["ended"] < end]
            per.setdefault(name, []).append((sum(r["cpu"] for r in runs), sum(r["wall"] for r in runs),
                                             cpu_after - cpu_before))
    lines = ["| action | script CPU (s) | script wall (s) | server process CPU (s) | click to drawn (s) |",
             "|---|---|---|---|---|"]
    for name, values in per.items():
        warm = values[1:] or values
        drawn = [clicked[name] for clicked in measured["clicked"][1:] or measured["clicked"]]
        cells = [statistics.median(v[i] for v in warm) for i in range(3)] + [statistics.median(drawn)]
        lines.append(f"| {name} | " + " | ".join(f"{cell:.2f}" for cell in cells) + " |")
    return lines


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        return serve(sys.argv[2:])
    from browser import require_chromium
    from harness import ROOT, add_out_option, publish

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="warm rounds after the first (default 2)")
    parser.add_argument("--app-root", type=Path, default=ROOT, help="the checkout whose app.py is served")
    parser.add_argument("--profile", type=Path, default=None,
                        help="write a cProfile (wall time) of every script run here")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    with tempfile.TemporaryDirectory(prefix="script-time-") as scratch:
        measured = measure(args.app_root.resolve(), args.rounds, Path(scratch), args.profile)
    publish([f"Script time per click, {args.app_root}, median of {args.rounds} warm rounds (1-minute load "
             f"{measured['load']:.1f} at the end):", "", *table(measured)], args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
