"""ERASER faithfulness (comprehensiveness, sufficiency), agreement with attention and plausibility against
e-SNLI highlights, over a sample of a split.

    python -m nlivis faithfulness checkpoints/gcnn-snli-small --dataset snli --split dev \
        --data-dir ../shared/data/snli/esnli_tokenized --sample 500 --json
"""
from __future__ import annotations

import argparse
import json
import math
from typing import Any

from nlivis.cli.common import ATTRIBUTE_AT_CHOICES, ATTRIBUTE_AT_HELP, STEPS_HELP, ig_steps, positive_int, seed, without_nan
from nlivis.data.highlights import find_highlights_file
from nlivis.data.protocols import resolve_split, split_key
from nlivis.features.dataset import load_split_analysed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", help="checkpoint folder")
    parser.add_argument("--dataset", required=True, help="dataset or protocol of the split")
    parser.add_argument("--split", required=True, help="split name or key, e.g. dev or snli_dev")
    parser.add_argument("--data-dir", required=True, help="folder holding the split's files")
    parser.add_argument("--sample", type=positive_int, default=500, help="pairs drawn from the split by --seed")
    parser.add_argument("--seed", type=seed, default=1, help="seed of the sample, the random ranking and the bootstrap")
    parser.add_argument("--methods", default=None,
                        help="comma-separated subset of integrated_gradients,gradient,grad_x_input,occlusion,attention,"
                             "random (default: all)")
    parser.add_argument("--steps", type=ig_steps, default=None, help=STEPS_HELP)
    parser.add_argument("--attribute-at", default="token_features", choices=ATTRIBUTE_AT_CHOICES, help=ATTRIBUTE_AT_HELP)
    parser.add_argument("--permutations", type=positive_int, default=10,
                        help="random rankings per pair averaged into the random floor")
    parser.add_argument("--highlights", default=None,
                        help="e-SNLI highlights file (default: esnli_highlights/ under --data-dir or up to two folders above)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--cache-dir", default=None,
                        help="feature and attribution cache folder (default: $NLIVIS_CACHE_DIR or ~/.cache/nlivis)")


def format_table(summary: dict[str, Any]) -> str:
    """One line per method: AOPC comprehensiveness and sufficiency with intervals, comprehensiveness minus the
    random floor with its paired interval, plausibility (by |score|), and the median τ with the averaged
    attention by |score|: pooled, beside the sentence-membership baseline (the pooled τ of an attention that
    knows only which sentence a token is in), then within the premise, within the hypothesis and pooled
    signed."""
    from nlivis.analysis.faithfulness import agreement_columns

    lines = [f"{'method':<22}{'comprehensiveness':>28}{'sufficiency':>28}{'comp. − random':>28}{'AUPRC':>8}"
             f"{'F1':>7}{'τ(att) pooled':>15}{'baseline':>10}{'premise':>9}{'hypothesis':>12}{'signed':>8}"]
    for name, entry in summary["methods"].items():
        def cell(value: float | None, interval) -> str:
            return "" if value is None else f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"

        medians = {column: "" if math.isnan(tau) else f"{tau:.3f}" for column, tau in agreement_columns(entry).items()}
        plausible = entry.get("plausibility", {})
        versus = entry.get("versus_random", {}).get("comprehensiveness", {})
        lines.append(f"{name:<22}{cell(entry['comprehensiveness'], entry['comprehensiveness_interval']):>28}"
                     f"{cell(entry['sufficiency'], entry['sufficiency_interval']):>28}"
                     f"{cell(versus.get('difference'), versus.get('interval')):>28}"
                     f"{plausible.get('auprc', math.nan):>8.3f}{plausible.get('f1', math.nan):>7.3f}"
                     f"{medians['median_tau_attention']:>15}{medians['median_tau_membership_baseline']:>10}"
                     f"{medians['median_tau_within_premise']:>9}{medians['median_tau_within_hypothesis']:>12}"
                     f"{medians['median_tau_attention_signed']:>8}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from nlivis.analysis.faithfulness import FAITHFULNESS_METHODS
    from nlivis.inference import load_checkpoint
    from nlivis.workflows.faithfulness import FaithfulnessOptions, split_faithfulness

    methods = FAITHFULNESS_METHODS if args.methods is None else tuple(m.strip() for m in args.methods.split(","))
    loaded = load_checkpoint(args.checkpoint)
    ref = resolve_split(args.dataset, args.split)
    items, _ = load_split_analysed(ref, args.data_dir, args.cache_dir)
    options = FaithfulnessOptions(sample=args.sample, seed=args.seed, methods=methods, steps=args.steps,
                                  at=args.attribute_at, permutations=args.permutations)
    result = split_faithfulness(loaded, items, split_key(ref), options,
                                args.highlights or find_highlights_file(args.data_dir), args.cache_dir,
                                progress=not args.no_progress)
    output = result.record()
    if args.json:
        print(json.dumps(without_nan(output), indent=1))
        return 0
    print(f"faithfulness of {loaded.path} on {result.split}, {len(result.items)} pairs (seed {args.seed}); AOPC over "
          f"{', '.join(output['bins'])}, 95% bootstrap intervals; removed tokens are deleted; gradients at the "
          f"{args.attribute_at.replace('_', ' ')}; random floor over {args.permutations} permutations per pair; "
          "AUPRC and τ rank signed methods by |score|; the pooled τ with attention is to be read beside the "
          "baseline, the τ of a plain 'is a hypothesis token' indicator")
    print(format_table(result.summary))
    if result.unavailable:
        print(f"\nnot available for this model: {', '.join(result.unavailable)}")
    if result.highlights_file is None:
        print("\nno e-SNLI highlights for these pairs: plausibility left out")
    return 0
