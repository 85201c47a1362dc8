"""When a page's elements appear in a new tab, after its run ended: checkouts side by side, visits in turn.

    OMP_NUM_THREADS=1 python bench/element_appearance.py --roots /tmp/before,/tmp/after [--pages Error_analysis]
        [--visits 4] [--out FILE]

Serves each checkout's app (five shipped snli-small models, as `browser_speed.py` does), warms each page twice,
then `--visits` rounds, each opening every page by URL in a new tab on every checkout in turn. In each tab a
`MutationObserver` stamps the first moment each watched element is in the page (`WATCHED`: a clickable figure's
component, a server-drawn figure's SVG, a data grid, a Markdown table); the run's end is read as `browser_speed.py`
reads its "script" time (`script_end_ms`). It also stamps, per element kind (`data-testid`), when the last element of
that kind that was drawn as a skeleton first (`browser_speed.PENDING`: its code still loading) was shown, named
"kind: stSelectbox" and so on. The table gives, per page, checkout and element, the range and median over the
visits of (appeared − run ended) in ms. Why: a lazily loaded element (a grid, a component) shows in the page only when its
code has loaded, and on Error analysis the confusion matrix's element had appeared only together with the data grids
(session 32); the by-URL time of `browser_speed.py` does not say which element is late.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path

from browser import AppServer, chromium, require_chromium
from browser_speed import (PENDING, RECORDER, SETTLED, TIMEOUT_S, VIEWPORT, bench_environment, page_url,
                           script_end_ms, visit)
from harness import add_out_option, command_line, load_average, publish

WATCHED = {
    "clickable figure": '[data-testid^="stBidiComponent"] .nlivis-figure',
    "server-drawn SVG": ".nlivis-figure svg",
    "data grid": '[data-testid="stDataFrame"]',
    "list of pairs": ".nlivis-pair-table table",
    "Markdown table": '[data-testid="stMarkdown"] table',
}
"""Element → the selector whose first match marks it in the page."""

OBSERVER = """
(() => {
  window.__appear = {};
  const watched = WATCHED, waiting = new Set();
  new MutationObserver(() => {
    const now = performance.now();
    for (const [name, selector] of Object.entries(watched))
      if (!(name in window.__appear) && document.querySelector(selector)) window.__appear[name] = now;
    document.querySelectorAll('[data-testid="stElementContainer"]').forEach(holder => {
      const shown = holder.querySelector('[data-testid]');
      if (!shown) return;
      if (shown.matches(PENDING)) waiting.add(holder);
      else if (waiting.delete(holder)) window.__appear['kind: ' + shown.getAttribute('data-testid')] = now;
    });
  }).observe(document, {subtree: true, childList: true, attributes: true});
})();
""".replace("PENDING", repr(PENDING))
"""Installed in every tab before the page loads: `window.__appear[name]` = ms since the navigation when the element
was first in the page, and `window.__appear["kind: <data-testid>"]` when the last element of that kind that had
waited as a skeleton for its code was shown."""


def appearances(context, url: str) -> dict[str, float]:
    """One visit of `url` in a new tab: element → ms from the run's end to its first appearance."""
    page = context.new_page()
    page.add_init_script(RECORDER)
    page.add_init_script(OBSERVER.replace("WATCHED", json.dumps(WATCHED)))
    page.goto(url, wait_until="commit")
    page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
    ended, appeared = script_end_ms(page), page.evaluate("() => window.__appear")
    page.close()
    return {name: at - ended for name, at in appeared.items()}


def measure(roots: list[Path], pages: list[str], visits: int, scratch: Path) -> dict[tuple[str, str, str], list[float]]:
    """(page, checkout, element) → its appearance after the run's end, one value per visit that showed it."""
    found: dict[tuple[str, str, str], list[float]] = {}
    with chromium() as browser, ExitStack() as stack:
        servers = [stack.enter_context(AppServer(bench_environment(root / "checkpoints", scratch / str(i)),
                                                 scratch / f"{i}.log", root)) for i, root in enumerate(roots)]
        context = browser.new_context(viewport=VIEWPORT)
        for server in servers:
            for page in ["Home", *pages]:
                visit(context, page_url(server, page)), visit(context, page_url(server, page))
        for _ in range(visits):
            for page in pages:
                for root, server in zip(roots, servers):
                    for name, after in appearances(context, page_url(server, page)).items():
                        found.setdefault((page, str(root), name), []).append(after)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roots", required=True, help="comma-separated checkouts (e.g. git archive <commit> | tar -x -C DIR)")
    parser.add_argument("--pages", default="Error_analysis", help="comma-separated url paths (default Error_analysis)")
    parser.add_argument("--visits", type=int, default=4, help="visits per page and checkout (default 4)")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    roots = [Path(root).resolve() for root in args.roots.split(",") if root]
    pages = [page for page in args.pages.split(",") if page]
    found = measure(roots, pages, args.visits, Path(tempfile.mkdtemp(prefix="nlivis-appearance-")))
    lines = [command_line(f"{args.visits} visits per page and checkout, in turn; {load_average('the end')}"), "",
             "| page | checkout | element | appeared after the run ended (ms): min–max | median | visits |",
             "|---|---|---|---|---|---|"]
    for (page, root, name), values in found.items():
        lines.append(f"| {page} | {root} | {name} | {min(values):.0f}–{max(values):.0f} | "
                     f"{statistics.median(values):.0f} | {len(values)} |")
    publish(lines, args.out)


if __name__ == "__main__":
    main()
