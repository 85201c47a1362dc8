"""Where the renderer's CPU goes on a warm page by URL: a JavaScript CPU profile and a trace of the tab's main thread.

    OMP_NUM_THREADS=1 python bench/chart_profile.py [--pages Home,Data_map,Pair_explorer] [--repeats 1]
        [--persistent] [--app-root DIR] [--top 25] [--out FILE]

Starts the app (five shipped snli-small models) and `browser_speed.FLOOR_APP` beside it, warms each page once, then
per page (and the floor) opens it by URL in a new tab, twice per round: once under V8's sampling profiler (DevTools
`Profiler`, 200 µs), once under a trace (DevTools `Tracing`: devtools.timeline, v8, v8.compile), each until the page
has settled (bench/browser_speed.py's `SETTLED`: the run ended and every chart drew). Printed per visit:

* the time the profile spends in Streamlit's plotly chunk, inclusive: evaluating the module (plotly.js's setup,
  once per tab) and the calls into it from Streamlit's chart component (the drawing);
* the profile's self time by script (Streamlit's chunks by name, `(program)`: V8 outside JavaScript, compiling among
  it, `(garbage collector)`) and its top functions by self time (script, line, name);
* the trace's self time on the renderer's main thread by event: compiling (`v8.compile`, `V8.CompileCode`, …),
  evaluating a script or module, function calls, layout, style, paint, garbage collection.

`--persistent` runs Chromium with a profile folder of its own (`launch_persistent_context`), as a user's browser
does, instead of Playwright's off-the-record context: whether the code cache of Streamlit's JavaScript, which an
off-the-record context may not keep, changes the numbers. `--app-root DIR` profiles another checkout's app (e.g.
`git archive <commit> | tar -x -C DIR`).
"""
from __future__ import annotations

import argparse
import collections
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from browser import CHROMIUM, CHROMIUM_ARGS, AppServer, require_chromium
from browser_speed import RECORDER, SETTLED, TIMEOUT_S, VIEWPORT, bench_environment, page_url, write_floor_app
from harness import ROOT, add_out_option, command_line, load_average, publish

PAGES = ("Home", "Data_map", "Pair_explorer")
TRACE_CATEGORIES = ",".join(("devtools.timeline", "v8", "v8.execute", "disabled-by-default-devtools.timeline",
                             "disabled-by-default-v8.compile", "blink", "loading"))
SPECIAL = ("(program)", "(garbage collector)", "(idle)", "(root)")


def script_name(url: str) -> str:
    """A profile node's script, short: a chunk's file name without its hash, `(native)` for none."""
    if not url:
        return "(native)"
    name = url.rsplit("/", 1)[-1].split("?")[0]
    parts = name.split(".")
    return f"{parts[0]}.js" if len(parts) > 2 and parts[-1] == "js" else name


def profile_self_times(profile: dict) -> tuple[dict[str, float], dict[tuple[str, int, str], float]]:
    """Self time (s) of a CPU profile by script, and by function (script, line, name)."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    per_node: collections.Counter[int] = collections.Counter()
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"]):
        per_node[node_id] += delta / 1e6
    by_script: collections.Counter[str] = collections.Counter()
    by_function: collections.Counter[tuple[str, int, str]] = collections.Counter()
    for node_id, seconds in per_node.items():
        frame = nodes[node_id]["callFrame"]
        name = frame["functionName"] or "(anonymous)"
        script = name if name in SPECIAL else script_name(frame["url"])
        by_script[script] += seconds
        by_function[(script, frame["lineNumber"] + 1, name)] += seconds
    return dict(by_script), dict(by_function)


def plotly_phases(profile: dict) -> dict[str, float]:
    """A profile's time (s) in Streamlit's plotly chunk, inclusive: evaluating the module (its top-level function,
    which sets plotly.js up: every trace type, d3, the styles) and every call into it from the rest of the page
    (Streamlit's chart component: plotting, theme, selection handling); samples of V8 compiling or collecting inside
    those count there, the rest stay under `(program)` and `(garbage collector)`."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    own: collections.Counter[int] = collections.Counter()
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"]):
        own[node_id] += delta / 1e6
    phases = {"plotly.js module evaluation": 0.0, "calls into plotly.js (drawing)": 0.0}

    pending: list[tuple[int, str | None]] = [(profile["nodes"][0]["id"], None)]
    while pending:
        node_id, inside = pending.pop()
        frame = nodes[node_id]["callFrame"]
        if inside is None and script_name(frame["url"]) == "PlotlyChart.js":
            inside = ("plotly.js module evaluation" if (frame["lineNumber"], frame["columnNumber"]) == (0, 0)
                      else "calls into plotly.js (drawing)")
        if inside is not None:
            phases[inside] += own[node_id]
        pending += [(child, inside) for child in nodes[node_id].get("children", [])]
    return phases


def renderer_main_threads(events: list[dict]) -> set[tuple[int, int]]:
    """The (pid, tid) of every renderer main thread (`CrRendererMain`) a trace names."""
    return {(e["pid"], e["tid"]) for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}


def trace_self_times(events: list[dict]) -> dict[str, float]:
    """Self time (s) by event name on the renderer main thread(s) (`CrRendererMain`) of a trace."""
    main = renderer_main_threads(events)
    spans: dict[tuple[int, int], list[tuple[float, float, str]]] = collections.defaultdict(list)
    open_: dict[tuple[int, int], list[tuple[float, str]]] = collections.defaultdict(list)
    for event in sorted((e for e in events if (e.get("pid"), e.get("tid")) in main and "ts" in e),
                        key=lambda e: e["ts"]):
        thread, phase = (event["pid"], event["tid"]), event.get("ph")
        if phase == "X" and "dur" in event:
            spans[thread].append((event["ts"], event["ts"] + event["dur"], event["name"]))
        elif phase == "B":
            open_[thread].append((event["ts"], event["name"]))
        elif phase == "E" and open_[thread]:
            start, name = open_[thread].pop()
            spans[thread].append((start, event["ts"], name))
    self_time: collections.Counter[str] = collections.Counter()
    for thread_spans in spans.values():
        stack: list[list] = []  # [end, name, children's time]
        for start, end, name in sorted(thread_spans, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1][0] <= start:
                done = stack.pop()
                self_time[done[1]] += done[3] - done[2]
            if stack:
                stack[-1][2] += end - start
            stack.append([end, name, 0.0, end - start])
        for done in stack:
            self_time[done[1]] += done[3] - done[2]
    return {name: seconds / 1e6 for name, seconds in self_time.items()}


def settle(page, url: str) -> float:
    """Open `url` in `page` and wait until settled; the wall seconds."""
    started = time.perf_counter()
    page.goto(url, wait_until="commit", timeout=TIMEOUT_S * 1000)
    page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
    return time.perf_counter() - started


def profiled_visit(context, url: str) -> tuple[float, dict]:
    """A visit under V8's sampling profiler: (wall s, the profile)."""
    page = context.new_page()
    page.add_init_script(RECORDER)
    cdp = context.new_cdp_session(page)
    try:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
        wall = settle(page, url)
        profile = cdp.send("Profiler.stop")["profile"]
    finally:
        cdp.detach()
        page.close()
    return wall, profile


def traced_visit(context, url: str, settled: Callable[[Any], None] | None = None,
                 categories: str = TRACE_CATEGORIES) -> tuple[float, list[dict]]:
    """A visit under a DevTools trace of `categories`: (wall s, the trace's events); `settled(page)` reads the page
    once it has settled, before the trace ends."""
    page = context.new_page()
    page.add_init_script(RECORDER)
    cdp = context.new_cdp_session(page)
    events: list[dict] = []
    complete: list[bool] = []
    cdp.on("Tracing.dataCollected", lambda message: events.extend(message["value"]))
    cdp.on("Tracing.tracingComplete", lambda message: complete.append(True))
    try:
        cdp.send("Tracing.start", {"categories": categories, "transferMode": "ReportEvents"})
        wall = settle(page, url)
        if settled is not None:
            settled(page)
        cdp.send("Tracing.end")
        while not complete:
            page.wait_for_timeout(100)
    finally:
        cdp.detach()
        page.close()
    return wall, events


def top(counter: dict, count: int) -> list[tuple]:
    return sorted(counter.items(), key=lambda item: -item[1])[:count]


def visit_lines(name: str, wall: float, profile: dict, trace_wall: float, by_event: dict, count: int) -> list[str]:
    """One visit's profile and trace, as markdown."""
    by_script, by_function = profile_self_times(profile)
    total = sum(by_script.values())
    lines = [f"### {name}", "", f"Profiled visit: {wall:.2f} s wall, {total:.2f} s of samples "
             f"({total - by_script.get('(idle)', 0.0):.2f} s not idle); traced visit: {trace_wall:.2f} s wall.", "",
             "| Streamlit's plotly chunk, inclusive | s |", "|---|---|"]
    lines += [f"| {phase} | {seconds:.3f} |" for phase, seconds in plotly_phases(profile).items()]
    lines += ["", "| script (profile self time) | s |", "|---|---|"]
    lines += [f"| {script} | {seconds:.3f} |" for script, seconds in top(by_script, count) if seconds >= 0.005]
    lines += ["", "| function (script:line name) | self s |", "|---|---|"]
    lines += [f"| {script}:{line} {function} | {seconds:.3f} |"
              for (script, line, function), seconds in top(by_function, count)]
    lines += ["", "| main-thread trace event | self s |", "|---|---|"]
    lines += [f"| {event} | {seconds:.3f} |" for event, seconds in top(by_event, count) if seconds >= 0.005]
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated url paths")
    parser.add_argument("--repeats", type=int, default=1, help="rounds of visits (default 1)")
    parser.add_argument("--persistent", action="store_true",
                        help="a browser profile folder of its own instead of an off-the-record context")
    parser.add_argument("--app-root", type=Path, default=ROOT,
                        help="the checkout whose app is served (default: this one)")
    parser.add_argument("--top", type=int, default=25, help="rows per table (default 25)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    from playwright.sync_api import sync_playwright

    scratch = Path(tempfile.mkdtemp(prefix="nlivis-chart-profile-"))
    pages = [p for p in args.pages.split(",") if p]
    lines = [command_line("warm visits by URL, one profiled and one traced per page and round; renderer of the tab"),
             load_average("the start"), ""]
    with sync_playwright() as playwright, \
            AppServer(bench_environment(args.app_root / "checkpoints", scratch / "app"), scratch / "app.log",
                      args.app_root) as server, \
            AppServer(bench_environment(ROOT / "checkpoints", scratch / "floor"), scratch / "floor.log",
                      write_floor_app(scratch / "floor")) as floor:
        if args.persistent:
            context = playwright.chromium.launch_persistent_context(
                str(scratch / "profile"), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, viewport=VIEWPORT)
        else:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=VIEWPORT)
        urls = {**{page: page_url(server, page) for page in pages}, "Streamlit floor": floor.url}
        for url in urls.values():  # warm: models, caches, the browser's JavaScript (three times: V8's code cache)
            for _ in range(3):
                page = context.new_page()
                page.add_init_script(RECORDER)
                settle(page, url)
                page.close()
        for round_ in range(args.repeats):
            for name, url in urls.items():
                wall, profile = profiled_visit(context, url)
                trace_wall, events = traced_visit(context, url)
                lines += visit_lines(f"{name}, round {round_ + 1}", wall, profile, trace_wall,
                                     trace_self_times(events), args.top)
        context.close()
    lines.append(load_average("the end"))
    publish(lines, args.out)


if __name__ == "__main__":
    main()
