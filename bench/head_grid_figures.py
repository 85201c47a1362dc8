"""What the Pair explorer builds and sends for one pair's MiniLM attention: a heatmap per trace entry (the view
before the layer × head grid) against the grid, the picked head large and the rollout (now), measured in Python
without a browser — figures, seconds to build them and their JSON (the Vega-Lite specs: what Streamlit sends the
browser to draw; the plotly figures of before are in bench/results/head-grid-figures.md). bench/head_grid_draw.py times the same in Chromium.

    OMP_NUM_THREADS=1 python bench/head_grid_figures.py --checkpoint /tmp/ckpt/minilm-snli-small [--pair 3]
        [--repeats 5] [--out bench/results/head-grid-figures.md]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from harness import ROOT, add_out_option, command_line, load_average, publish

DATA = ROOT.parent / "shared" / "data"


def per_entry_figures(reading) -> list:
    """The view before: `alignment_heatmap` for every Alignment entry, as the explorer drew them layer by layer
    (now a Vega-Lite spec each, `nlivis.viz.vega.heatmaps`; the plotly heatmaps were measured in
    bench/results/head-grid-figures.md)."""
    from nlivis.models.trace import Alignment
    from nlivis.viz.vega.heatmaps import alignment_heatmap

    return [alignment_heatmap(entry, 0, reading.premise_tokens, reading.hypothesis_tokens, label=name)
            for name, entry in reading.trace.of_type(Alignment).items()]


def grid_figures(reading) -> list:
    """The view now (Vega-Lite specs): the grid (p→h), the default head large on the grid's scale, and each summary
    (rollout)."""
    from nlivis.viz.head_grid import head_family, summaries
    from nlivis.viz.vega.head_grid import colour_domain, head_grid, square_heatmap

    family = head_family(reading.trace)
    pick = family.default_pick()
    grid = head_grid(family, 0, reading.premise_tokens, reading.hypothesis_tokens, "p→h", pick, label="minilm")
    scale = colour_domain(grid)
    figures = [grid, square_heatmap(family.blocks(pick), 0, reading.premise_tokens, reading.hypothesis_tokens,
                                    f"head {pick}", "p→h", scale)]
    return figures + [square_heatmap(blocks, 0, reading.premise_tokens, reading.hypothesis_tokens, stem, "p→h")
                      for stem, blocks in summaries(reading.trace).items()]


def measure(build, reading, repeats: int) -> tuple[int, int, float, float]:
    """(figures, heatmaps: one per Vega-Lite spec; median seconds to build and serialise them, kB of their JSON)."""
    seconds, figures, size = [], [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        figures = build(reading)
        size = sum(len(json.dumps(f)) for f in figures)
        seconds.append(time.perf_counter() - started)
    return len(figures), len(figures), statistics.median(seconds), size / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True, help="a MiniLM checkpoint folder")
    parser.add_argument("--pair", type=int, default=3, help="the snli_dev row (0-based)")
    parser.add_argument("--repeats", type=int, default=5)
    add_out_option(parser)
    args = parser.parse_args()
    from nlivis.data.protocols import get_protocol, read_split
    from nlivis.inference import load_checkpoint
    from nlivis.workflows.reading import read_pair

    pair = read_split(get_protocol("snli-small").select, DATA).pairs[args.pair]
    reading = read_pair(load_checkpoint(args.checkpoint), args.checkpoint.name, pair.premise, pair.hypothesis)
    words = f"{len(reading.premise_tokens)} + {len(reading.hypothesis_tokens)} words"
    rows = [command_line(f"median of {args.repeats}"), "",
            f"{args.checkpoint.name}, snli_dev row {args.pair} ({words}): the figures of its attention section", "",
            "| view | figures | heatmaps | build + JSON (s) | JSON (kB) |", "|---|---|---|---|---|"]
    for name, build in (("a heatmap per trace entry (before)", per_entry_figures),
                        ("layer × head grid, head large, rollout (now)", grid_figures)):
        count, heatmaps, seconds, kilobytes = measure(build, reading, args.repeats)
        rows.append(f"| {name} | {count} | {heatmaps} | {seconds:.2f} | {kilobytes:,.0f} |")
    publish(rows + ["", load_average("the end")], args.out)


if __name__ == "__main__":
    main()
