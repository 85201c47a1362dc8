"""Whether a change left the charts as they were: the same charts screenshotted from this checkout and an earlier one.

    OMP_NUM_THREADS=1 python bench/chart_pixels.py --before-root DIR [--pages Pair_explorer,Gates] [--charts 3]
        [--scheme light|dark] [--keep DIR] [--out FILE]

Serves this checkout's app and the one in `--before-root` (e.g. `git archive <commit> | tar -x -C DIR`) in turn,
five shipped snli-small models, opens each page by URL in headless Chromium (a viewport tall enough that no chart
is cut) in the light or dark colour scheme Streamlit follows, and screenshots the first `--charts` plotly charts of
each page. Printed per chart: its size and how many pixels differ between the two checkouts (any channel; and by
more than 30 of 765 summed over the channels). `--keep DIR` keeps the screenshots (DIR/after, DIR/before).
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from browser import CHROMIUM, CHROMIUM_ARGS, AppServer, require_chromium
from browser_speed import RECORDER, SETTLED, TIMEOUT_S, bench_environment, page_url
from harness import ROOT, add_out_option, command_line, load_average, publish

PAGES = ("Pair_explorer", "Gates", "Error_analysis", "Data_map", "Attribution", "Ablations", "DIIN_interaction_space",
         "Projection")


def screenshots(browser, root: Path, scratch: Path, pages: list[str], charts: int, scheme: str,
                folder: Path) -> None:
    """The first `charts` charts of each page of the app in `root`, as folder/<page>_<i>.png."""
    folder.mkdir(parents=True, exist_ok=True)
    with AppServer(bench_environment(root / "checkpoints", scratch / folder.name), scratch / f"{folder.name}.log",
                   root) as server:
        context = browser.new_context(viewport={"width": 1600, "height": 4000}, color_scheme=scheme)
        for page_name in pages:
            page = context.new_page()
            page.add_init_script(RECORDER)
            page.goto(page_url(server, page_name), wait_until="commit", timeout=TIMEOUT_S * 1000)
            page.wait_for_function(SETTLED, timeout=TIMEOUT_S * 1000, polling=100)
            shown = page.locator('[class*="st-key-chart_"] .js-plotly-plot')
            for index in range(min(shown.count(), charts)):
                shown.nth(index).screenshot(path=str(folder / f"{page_name}_{index}.png"))
            page.close()
        context.close()


def compared(after: Path, before: Path) -> list[str]:
    """A markdown row per screenshot of `after`: its size and the pixels that differ from `before`'s."""
    import numpy as np
    from PIL import Image

    rows = ["| chart | size (px) | pixels differing | by more than 30/765 |", "|---|---|---|---|"]
    for shot in sorted(after.glob("*.png")):
        new = np.asarray(Image.open(shot).convert("RGB"), dtype=int)
        old_path = before / shot.name
        if not old_path.exists():
            rows.append(f"| {shot.stem} | {new.shape[1]}×{new.shape[0]} | only in this checkout | |")
            continue
        old = np.asarray(Image.open(old_path).convert("RGB"), dtype=int)
        if old.shape != new.shape:
            rows.append(f"| {shot.stem} | {new.shape[1]}×{new.shape[0]} | sizes differ "
                        f"({old.shape[1]}×{old.shape[0]} before) | |")
            continue
        difference = np.abs(new - old).sum(axis=2)
        rows.append(f"| {shot.stem} | {new.shape[1]}×{new.shape[0]} | {int((difference > 0).sum())} | "
                    f"{int((difference > 30).sum())} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before-root", type=Path, required=True, help="the earlier checkout to compare with")
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated url paths")
    parser.add_argument("--charts", type=int, default=3, help="charts per page (default 3)")
    parser.add_argument("--scheme", choices=("light", "dark"), default="light", help="the browser's colour scheme")
    parser.add_argument("--keep", type=Path, default=None, help="keep the screenshots in this folder")
    add_out_option(parser)
    args = parser.parse_args()
    require_chromium()
    from playwright.sync_api import sync_playwright

    scratch = Path(tempfile.mkdtemp(prefix="nlivis-chart-pixels-"))
    shots = args.keep or scratch / "shots"
    pages = [p for p in args.pages.split(",") if p]
    lines = [command_line(f"the first {args.charts} charts of each page, {args.scheme} scheme; this checkout "
                          "against --before-root"), load_average("the start"), ""]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for name, root in (("after", ROOT), ("before", args.before_root)):
            screenshots(browser, root, scratch, pages, args.charts, args.scheme, shots / name)
        browser.close()
    publish(lines + compared(shots / "after", shots / "before"), args.out)


if __name__ == "__main__":
    main()
