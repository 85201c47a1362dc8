"""What a warm page by URL waits on, in order: the renderer's long tasks and Streamlit's lazily loaded chunks.

    OMP_NUM_THREADS=1 python bench/main_thread_timeline.py [--pages Error_analysis,Data_map] [--repeats 2]
        [--app-root DIR] [--longest-ms 8] [--out FILE]

Starts the app (five shipped snli-small models), warms each page by URL three times, then opens it in a new tab
under a DevTools trace (`chart_profile.traced_visit`) and prints, in ms from the navigation:

* the recorder's marks (`browser_speed.RECORDER`): the script state's changes, `script_finished` received, each
  chart drawn;
* every task of the tab's main thread longer than `--longest-ms`, with its heaviest events (a React render shows
  as `MessagePort::Accept`, a module evaluated as `v8.evaluateModule`);
* every request sent after the page's HTML and first scripts (Streamlit's element chunks are loaded when the first
  element of their kind arrives): when it was sent, when the answer reached the main thread, and whether it came
  from the browser's cache.

A request answered from the cache still waits for the main thread: the gap between "sent" and "answered" is
time the tab was busy elsewhere. Tracing slows the tab; read the order and the gaps, not the totals.
"""
from __future__ import annotations

import argparse
import collections
import tempfile
from pathlib import Path

from browser import CHROMIUM, CHROMIUM_ARGS, AppServer, require_chromium
from browser_speed import RECORDER, VIEWPORT, bench_environment, page_url
from chart_profile import TRACE_CATEGORIES, renderer_main_threads, settle, traced_visit
from harness import ROOT, add_out_option, command_line, load_average, publish

TASKS = ("RunTask", "ThreadControllerImpl::RunTask")
NAMED = ("FunctionCall", "EvaluateScript", "v8.compile", "v8.evaluateModule")
CATEGORIES = f"{TRACE_CATEGORIES},blink.user_timing"
"""chart_profile's trace categories and the user-timing marks, among them the navigation's start
(`navigationStart`), from which every time is read, as the recorder's marks (`performance.now()`) are."""
MARKS = "() => ({states: window.__nlivis.states, drawn: window.__nlivis.drawn, finished: window.__nlivis.finished})"


def navigation_start(events: list[dict], main: set[tuple[int, int]]) -> float:
    """The navigation's start (µs, the trace's clock): its `navigationStart` mark on a renderer main thread."""
    starts = [e["ts"] for e in events if e.get("name") == "navigationStart" and (e.get("pid"), e.get("tid")) in main]
    if not starts:
        raise SystemExit("the trace has no navigationStart mark on the renderer's main thread")
    return min(starts)


def event_name(event: dict) -> str:
    """An event's name, with the script file (no folder, no hash) for a call or an evaluation."""
    data = event.get("args", {}).get("data", {})
    if event["name"] not in NAMED:
        return event["name"]
    script = (data.get("url") or "").rsplit("/", 1)[-1].split(".")[0]
    return f"{event['name']} {script}".strip()


def long_tasks(events: list[dict], main: set[tuple[int, int]], start: float, longest_ms: float) -> list[str]:
    """The top-level tasks of the `main` threads over `longest_ms`, each with its four heaviest events (inclusive
    ms), at ms from `start` (µs)."""
    spans = sorted((e for e in events if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X" and "dur" in e),
                   key=lambda e: (e["ts"], -e["dur"]))
    tasks, end = [], -1.0
    for event in spans:
        if event["name"] in TASKS and event["ts"] >= end:
            tasks.append(event)
            end = event["ts"] + event["dur"]
    lines = ["| at (ms) | task (ms) | heaviest inside (ms) |", "|---:|---:|---|"]
    for task in tasks:
        if task["dur"] < longest_ms * 1000:
            continue
        inside: collections.Counter[str] = collections.Counter()
        for event in spans:
            if task["ts"] <= event["ts"] < task["ts"] + task["dur"] and event["name"] not in TASKS:
                inside[event_name(event)] += event["dur"]
        heaviest = "; ".join(f"{name} {us / 1000:.0f}" for name, us in inside.most_common(4))
        lines.append(f"| {(task['ts'] - start) / 1000:.0f} | {task['dur'] / 1000:.1f} | {heaviest} |")
    return lines


def requests(events: list[dict], start: float, after_ms: float = 1000.0) -> list[str]:
    """Requests sent `after_ms` or later after `start` (µs): sent, answered on the main thread, finished, from the
    cache."""
    found: dict[str, dict] = {}
    for event in sorted((e for e in events if "ts" in e), key=lambda e: e["ts"]):
        data, at = event.get("args", {}).get("data", {}), (event["ts"] - start) / 1000
        if event.get("name") == "ResourceSendRequest":
            found[data["requestId"]] = {"url": data.get("url", ""), "sent": at}
        elif event.get("name") == "ResourceReceiveResponse" and data.get("requestId") in found:
            found[data["requestId"]].update(answered=at, cached=data.get("fromCache"))
        elif event.get("name") == "ResourceFinish" and data.get("requestId") in found:
            found[data["requestId"]]["finished"] = at
    lines = ["| file | sent (ms) | answered (ms) | finished (ms) | from cache |", "|---|---:|---:|---:|---|"]
    for request in found.values():
        if request["sent"] >= after_ms:
            name = request["url"].rsplit("/", 1)[-1].split("?")[0][:48]
            answered, finished = request.get("answered"), request.get("finished")
            lines.append(f"| {name} | {request['sent']:.0f} | {'—' if answered is None else f'{answered:.0f}'} | "
                         f"{'—' if finished is None else f'{finished:.0f}'} | {request.get('cached')} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", default="Error_analysis,Data_map", help="comma-separated url paths")
    parser.add_argument("--repeats", type=int, default=2, help="traced visits per page (default 2)")
    parser.add_argument("--app-root", type=Path, default=ROOT,
                        help="the checkout whose app is served (default: this one)")
    parser.add_argument("--longest-ms", type=float, default=8.0,
                        help="tasks shorter than this are left out (default 8)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    from playwright.sync_api import sync_playwright

    scratch = Path(tempfile.mkdtemp(prefix="nlivis-timeline-"))
    lines = [command_line("warm visits by URL under a DevTools trace; ms from the navigation"),
             load_average("the start"), ""]
    with sync_playwright() as playwright, \
            AppServer(bench_environment(args.app_root / "checkpoints", scratch / "app"), scratch / "app.log",
                      args.app_root) as server:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=VIEWPORT)
        for name in [p for p in args.pages.split(",") if p]:
            url = page_url(server, name)
            for _ in range(3):  # warm: models, caches, the browser's HTTP and code caches
                page = context.new_page()
                page.add_init_script(RECORDER)
                settle(page, url)
                page.close()
            for repeat in range(args.repeats):
                marks: dict = {}
                wall, events = traced_visit(context, url, lambda page: marks.update(page.evaluate(MARKS)), CATEGORIES)
                states = ", ".join(f"{state} {at:.0f}" for at, state in marks["states"])
                drawn = ", ".join(f"{key} {at:.0f}" for key, at in marks["drawn"].items()) or "none"
                finished = ", ".join(f"{at:.0f}" for at in marks["finished"])
                lines += [f"### {name}, traced visit {repeat + 1} ({wall:.2f} s wall)", "",
                          f"Script state: {states}; script_finished received: {finished}; charts drawn: {drawn}.", ""]
                main_threads = renderer_main_threads(events)
                start = navigation_start(events, main_threads)
                lines += [*long_tasks(events, main_threads, start, args.longest_ms), "", *requests(events, start), ""]
        context.close()
    lines.append(load_average("the end"))
    publish(lines, args.out)


if __name__ == "__main__":
    main()
