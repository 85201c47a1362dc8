"""Where each training pair sits on the checkpoint's data map (dataset cartography, Swayamdipta et al. 2020).

    python -m nlivis datamap checkpoints/esan-snli-small
    python -m nlivis datamap checkpoints/esan-snli-small --json > esan-datamap.json

From the training dynamics the run recorded (each pair's gold-label probability and correctness in every
epoch's training pass): per pair its confidence (mean probability), variability (population standard
deviation) and correctness (share of epochs right), and how many pairs fall in the easy-to-learn, ambiguous
and hard-to-learn regions under the thresholds given (defaults and reasons: nlivis.analysis.datamap). The
text output lists the hard-to-learn pairs with the lowest confidence, the candidates for mislabelling;
--json gives every pair. A run trained with --augment has its augmented pairs on the map too, counted apart
and marked in the JSON (`augmented`: the kind, `original`: the id of the pair it was made from).
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from nlivis.analysis.datamap import Thresholds, hardest, paper_cuts
from nlivis.cli.common import count_or_zero, fail, number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = Thresholds()
    parser.add_argument("checkpoint", help="checkpoint folder trained with training dynamics recorded")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object: thresholds, region counts (also apart for training and augmented "
                             "pairs), the paper's 33%% cut values and every pair {id, split, gold, confidence, "
                             "variability, correctness, epochs, region, augmented, original}")
    parser.add_argument("--ambiguous-variability", type=number, default=defaults.ambiguous_variability,
                        help="a pair whose variability is at least this is ambiguous (0 … 0.5)")
    parser.add_argument("--easy-confidence", type=number, default=defaults.easy_confidence,
                        help="a pair below the ambiguous variability with at least this confidence is easy-to-learn")
    parser.add_argument("--hard-confidence", type=number, default=defaults.hard_confidence,
                        help="a pair below the ambiguous variability with at most this confidence is hard-to-learn")
    parser.add_argument("--show", type=count_or_zero, default=10,
                        help="hard-to-learn pairs listed in the text output, lowest confidence first (0: none)")


def run(args: argparse.Namespace) -> int:
    try:
        thresholds = Thresholds(args.ambiguous_variability, args.easy_confidence, args.hard_confidence)
    except ValueError as error:
        return fail(str(error), args.json)
    from nlivis.workflows.datamap import read_data_map  # loads pandas: not for `--help`

    folder = Path(args.checkpoint)
    points = read_data_map(folder, thresholds)
    counts = points.region_counts()
    cuts = paper_cuts(points)
    if args.json:
        print(json.dumps({"checkpoint": str(folder), "epochs": points.total_epochs, "thresholds": asdict(thresholds),
                          "regions": counts, "regions_by_origin": points.region_counts_by_origin(),
                          "paper_cuts": cuts, "pairs": points.rows()}))
        return 0
    splits = ", ".join(dict.fromkeys(points.splits))
    print(f"{folder}: {len(points.ids):,} training pairs ({splits}) over {points.total_epochs} epochs, from each "
          "epoch's training pass")
    print(f"regions — {thresholds.describe()}")
    width = max(len(name) for name in counts)
    by_origin = points.region_counts_by_origin()
    if by_origin:
        print(f"  {'':<{width}}  {'all':>8}  {'':6}  {'training':>9}  {'augmented':>9}")
    for name, count in counts.items():
        split = "".join(f"  {by_origin[origin].get(name, 0):>9,}" for origin in by_origin)
        print(f"  {name:<{width}}  {count:>8,}  {count / max(1, len(points.ids)):6.1%}{split}")
    if by_origin:
        kinds = Counter(kind for kind in points.augmented if kind is not None)
        print(f"augmented pairs (train --augment): {sum(kinds.values()):,} — "
              + ", ".join(f"{kind} {n:,}" for kind, n in kinds.items()))
    if cuts["ambiguous_variability"] is not None:
        print(f"the paper's 33% subsets on this map begin at variability ≥ {cuts['ambiguous_variability']:.4f} "
              f"(most ambiguous), confidence ≥ {cuts['easy_confidence']:.4f} (easiest), ≤ {cuts['hard_confidence']:.4f} "
              "(hardest)")
    shown = hardest(points, args.show)
    if shown:
        print(f"\nhard-to-learn pairs with the lowest confidence (possibly mislabelled), {len(shown)} of "
              f"{counts['hard-to-learn']:,}:")
        print(f"  {'id':<24} {'gold':<14} confidence  variability  correctness  epochs")
        for i in shown:
            print(f"  {points.ids[i]:<24} {points.gold[i]:<14} {points.confidence[i]:10.4f}  {points.variability[i]:11.4f}"
                  f"  {points.correctness[i]:11.2f}  {points.epochs[i]:6d}")
    return 0
