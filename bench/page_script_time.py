"""Warm script time per page: each page opened as a link opens it (a new session, the five shipped snli-small models
in the URL) on caches already warm, its script run timed on its own thread — CPU (`time.thread_time`) and wall.

    OMP_NUM_THREADS=1 python bench/page_script_time.py [--pages Home,Ablations] [--visits 5] [--rounds 2]
        [--before-root DIR] [--profile DIR] [--out FILE]

Streamlit's AppTest runs app.py in a Python process of this script's: no browser and no websocket, so what is timed
is the page's own Python, the part of `bench/browser_speed.py`'s "script" time that the server spends. The figures'
converter is started first, as the served app's warm-up does (until session 32 it was not, so every figure was
timed on its Vega-Lite fallback instead of the server's drawing that a reader's page gets). Each page is
visited twice to warm its caches, then `--visits` times; a side's number is the median of those. With
`--before-root` (e.g. `git archive <commit> | tar -x -C /tmp/before`) that checkout is measured too, the two in turn
for `--rounds` rounds, each side in a fresh process; the table gives the median over rounds. `--profile DIR`
writes a cProfile, in CPU seconds, of each page's measured visits (DIR/<side>-<page>.prof, the last round's).
"""
from __future__ import annotations

import argparse
import json
import os
import pstats
import statistics
import subprocess
import sys
from pathlib import Path

PAGES = "Home,Train,Ablations,Attribution,DIIN_interaction_space,Projection"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
"""Both sides read this checkout's data folder (../shared/data), unless NLIVIS_DATA names one."""


def measure(root: Path, pages: list[str], visits: int, profiles: Path | None, side: str) -> dict[str, list[float]]:
    """In this process, with `root`'s app: page → [median CPU s, median wall s] of its warm visits."""
    os.chdir(root)
    sys.path.insert(0, str(root))
    os.environ.update(NLIVIS_CHECKPOINTS=str(root / "checkpoints"), NLIVIS_WARM_UP="0",
                      NLIVIS_DATA=os.environ.get("NLIVIS_DATA", str(DATA)))
    # imported here: the side's own checkout (its nlivis) is first on the path only from now on
    from streamlit.testing.v1 import AppTest

    from harness import ScriptRun, timed_script_runs
    from nlivis.app import paths
    from nlivis.viz.vega import export

    # as the served app's warm-up does: a page draws its figures on the server once the converter has started
    getattr(export, "start_converter", lambda: None)()
    from nlivis.models.families import SHIPPED_FAMILIES

    runs: list[ScriptRun] = []
    profiling = {"on": False}
    models = ",".join(f"{family}-snli-small" for family in SHIPPED_FAMILIES)
    by_url = {page.url_path: page.path for page in paths.PAGES}

    def visit(page: str) -> tuple[float, float]:
        before = len(runs)
        app = AppTest.from_file(str(root / "app.py"), default_timeout=900)
        app.query_params["models"] = models
        app.switch_page(str(root / by_url[page])).run()
        assert not app.exception, f"{page}: {app.exception}"
        return sum(run.cpu for run in runs[before:]), sum(run.wall for run in runs[before:])

    measured = {}
    with timed_script_runs(runs.append, profile=lambda: profiling["on"]):
        for page in pages:
            visit(page), visit(page)
            profiling["on"], first = profiles is not None, len(runs)
            times = [visit(page) for _ in range(visits)]
            profiling["on"] = False
            if profiles:
                pstats.Stats(*(run.profile for run in runs[first:])).dump_stats(str(profiles / f"{side}-{page}.prof"))
            measured[page] = [statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)]
    return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=PAGES, help=f"pages by URL path (default {PAGES})")
    parser.add_argument("--visits", type=int, default=5, help="warm visits per page and side (default 5)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each side once per round (default 2)")
    parser.add_argument("--before-root", type=Path, default=None, help="an earlier checkout to measure in turn")
    parser.add_argument("--profile", type=Path, default=None, help="write each page's cProfile (CPU time) here")
    parser.add_argument("--measure", nargs=2, metavar=("SIDE", "ROOT"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None, help="also write the table (markdown) here")
    args = parser.parse_args()
    pages = [page for page in args.pages.split(",") if page]
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    if args.measure:  # before harness is imported: it puts this checkout's nlivis on the path
        side, root = args.measure
        print(json.dumps(measure(Path(root).resolve(), pages, args.visits, args.profile, side)))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from harness import ROOT, command_line, publish

    sides = {"before": args.before_root.resolve()} if args.before_root else {}
    sides["after" if sides else "now"] = ROOT
    results: dict[str, list[dict[str, list[float]]]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for side, root in sides.items():
            command = [sys.executable, __file__, "--measure", side, str(root), "--pages", ",".join(pages),
                       "--visits", str(args.visits)] + (["--profile", str(args.profile)] if args.profile else [])
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            results[side].append(json.loads(done.stdout.strip().splitlines()[-1]))
    header = " | ".join(f"{side}: CPU / wall (ms)" for side in sides)
    lines = [command_line(f"median of {args.visits} warm visits per round, median over {args.rounds} rounds, "
                          f"1-minute load {os.getloadavg()[0]:.1f} at the end"), "",
             f"| page | {header} |", "|---" * (len(sides) + 1) + "|"]
    for page in pages:
        cells = [f"{1000 * statistics.median(r[page][0] for r in results[side]):.0f} / "
                 f"{1000 * statistics.median(r[page][1] for r in results[side]):.0f}" for side in sides]
        lines.append(f"| {page} | " + " | ".join(cells) + " |")
    publish(lines, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
