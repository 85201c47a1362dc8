"""Where a warm page's time goes, read from Streamlit's own messages as the browser receives them.

    OMP_NUM_THREADS=1 python bench/browser_messages.py [--pages Home,Gates] [--repeats 3] [--out FILE]

Starts the app (`streamlit run app.py`, five shipped snli-small models) and `browser_speed.FLOOR_APP` (Streamlit
alone) side by side, warms each page once, then opens each page by URL in a new tab, alternating nlivis and the
floor's page at the same depth (`browser_speed.floor_url`), `--repeats` times. In the tab, every websocket frame is stamped (performance.now(), ms from the navigation)
as the page's JavaScript receives or sends it; the frames themselves, taken from Playwright in the same order,
are decoded with Streamlit's protobuf classes. Per visit it prints the milestones — the page's HTML, the socket
open, the rerun request sent, `new_session` (the server started the run), the first and the last element
(`delta`), `script_finished` received, and the DOM's script state going back to notRunning — so that the time
before, inside and after the run, and the browser's own time after the last message, can each be read; and the
element counts, bytes and message kinds of the run. Medians over the repeats.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from browser import AppServer, chromium, require_chromium
from browser_speed import (FLOOR_APP, RECORDER, SETTLED, TIMEOUT_S, VIEWPORT, bench_environment, floor_url,
                           page_url, write_floor_app)
from harness import ROOT, add_out_option, command_line, load_average, publish

from nlivis.app import paths

FRAME_RECORDER = """
(() => {
  window.__frames = [];
  const Original = window.WebSocket;
  window.WebSocket = function (...args) {
    const socket = new Original(...args);
    socket.addEventListener('open', () => window.__frames.push([performance.now(), 'open', 0]));
    socket.addEventListener('message', e => window.__frames.push([performance.now(), 'in',
                                                                  e.data.byteLength || e.data.length || 0]));
    const send = socket.send.bind(socket);
    socket.send = data => { window.__frames.push([performance.now(), 'out', data.byteLength || data.length || 0]);
                            return send(data); };
    return socket;
  };
  window.WebSocket.prototype = Original.prototype;
  Object.assign(window.WebSocket, Original);
})();
"""
"""Installed before the page loads: the time of each frame as the page's own code sees it."""

MILESTONES = ("html", "socket open", "rerun sent", "new_session", "first element", "last element",
              "script_finished", "DOM notRunning")


def kind_of(payload: bytes) -> str:
    """A received frame's ForwardMsg kind (`delta:<element>` for an element)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    message = ForwardMsg()
    message.ParseFromString(payload)
    kind = message.WhichOneof("type") or ("ref_hash" if message.ref_hash else "?")
    if kind == "delta":
        delta = message.delta
        part = delta.WhichOneof("type")
        if part == "new_element":
            return f"delta:{delta.new_element.WhichOneof('type')}"
        return f"delta:{part}"
    return kind


def one_visit(context, url: str) -> dict:
    """Open `url` in a new tab; its milestones (ms), element count, received kB and message kinds."""
    page = context.new_page()
    page.add_init_script(FRAME_RECORDER)
    page.add_init_script(RECORDER)
    payloads: list[bytes] = []

    def on_socket(socket) -> None:
        socket.on("framereceived", lambda payload: payloads.append(
            payload if isinstance(payload, bytes) else payload.encode()))

    page.on("websocket", on_socket)
    try:
        page.goto(url, wait_until="commit", timeout=TIMEOUT_S * 1000)
        page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
        frames = page.evaluate("() => window.__frames")
        states = page.evaluate("() => window.__nlivis.states")
        html = page.evaluate("() => performance.getEntriesByType('navigation')[0].responseEnd")
    finally:
        page.close()
    received = [(t, size) for t, way, size in frames if way == "in"]
    kinds = [kind_of(p) for p in payloads[:len(received)]]
    timed = list(zip((t for t, _ in received), kinds))
    elements = [t for t, kind in timed if kind.startswith("delta")]
    started = next(t for t, state in states if state == "running")
    milestones = {"html": html, "socket open": next((t for t, way, _ in frames if way == "open"), None),
                  "rerun sent": next((t for t, way, _ in frames if way == "out"), None),
                  "new_session": next((t for t, kind in timed if kind == "new_session"), None),
                  "first element": elements[0] if elements else None,
                  "last element": elements[-1] if elements else None,
                  "script_finished": next((t for t, kind in timed if kind == "script_finished"), None),
                  "DOM notRunning": next((t for t, state in states if state == "notRunning" and t > started), None)}
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return {"milestones": milestones, "elements": len(elements), "kb": sum(s for _, s in received) / 1024,
            "kinds": counts}


def median_of(visits: list[dict], name: str) -> float | None:
    values = [v["milestones"][name] for v in visits if v["milestones"][name] is not None]
    return statistics.median(values) / 1000 if values else None


def table(results: dict[str, list[dict]]) -> list[str]:
    """One line per page (and the floor): each milestone's median, seconds from the navigation."""
    lines = ["| page | " + " | ".join(MILESTONES) + " | elements | received (kB) |",
             "|---|" + "---|" * (len(MILESTONES) + 2)]
    for name, visits in results.items():
        cells = [median_of(visits, m) for m in MILESTONES]
        lines.append(f"| {name} | " + " | ".join("—" if c is None else f"{c:.2f}" for c in cells)
                     + f" | {statistics.median(v['elements'] for v in visits):.0f} | "
                     f"{statistics.median(v['kb'] for v in visits):.0f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", default=",".join(page.url_path for page in paths.PAGES),
                        help="comma-separated url paths (default: every page)")
    parser.add_argument("--repeats", type=int, default=3, help="warm visits per page, medians reported (default 3)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    scratch = Path(tempfile.mkdtemp(prefix="nlivis-browser-messages-"))
    env = bench_environment(ROOT / "checkpoints", scratch)
    floor_root = write_floor_app(scratch / "floor")
    pages = [p for p in args.pages.split(",") if p]
    results: dict[str, list[dict]] = {"Streamlit floor": [], **{p: [] for p in pages}}
    kinds: dict[str, dict[str, int]] = {}
    start_load = load_average("the start")
    with chromium() as browser, AppServer(env, scratch / "app.log") as app, \
            AppServer(env, scratch / "floor.log", floor_root) as floor:
        context = browser.new_context(viewport=VIEWPORT)
        for page in pages:  # warm: models, caches, the browser's copy of the JavaScript
            one_visit(context, page_url(app, page))
        one_visit(context, floor.url)
        one_visit(context, floor_url(floor, "other"))
        for _ in range(args.repeats):
            for page in pages:
                visited = one_visit(context, page_url(app, page))
                results[page].append(visited)
                kinds[page] = visited["kinds"]
                results["Streamlit floor"].append(one_visit(context, floor_url(floor, page)))
    lines = [command_line("warm visits, nlivis and the floor alternating; medians, seconds from the navigation"),
             f"{start_load}; {load_average('the end')}", "", *table(results), "",
             "Messages of the last visit per page:", ""]
    lines += [f"* {page}: " + ", ".join(f"{kind} ×{count}" for kind, count in sorted(counted.items()))
              for page, counted in kinds.items()]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
