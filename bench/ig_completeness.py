"""How many pairs meet integrated gradients' completeness target, before and after adaptive refinement.

    OMP_NUM_THREADS=1 nice python bench/ig_completeness.py --data-dir ../shared/data/snli/esnli_tokenized \
        [--sample 200] [--seed 1] [--models gcnn,diin,attentive_conv,esan,amn] [--out FILE]

On a seeded sample of SNLI dev pairs (the same draw as `python -m nlivis faithfulness --sample N --seed S`),
for each shipped snli-small model and its predicted class: the share of pairs with |completeness gap| < 0.05
at a fixed `DEFAULT_STEPS` (what the default did before refinement), and with the default adaptive call
(`integrated_gradients(..., steps=None)`): refined pairs, the steps they used, pairs whose
|f(x) − f(baseline)| is below `DIFFERENCE_FLOOR` (relative gap not meaningful; their absolute error is
reported as |Σ attributions − Δ| in logits), and the pairs above the floor, if any, that still miss. Prints a markdown table and the wall seconds per model.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from harness import SHIPPED, add_checkpoints_option, add_out_option, publish

CHUNK = 4


def finite_max(values) -> float:
    """The largest value that is not NaN (a gap is NaN only where f(x) = f(baseline) exactly); NaN if none."""
    kept = [v for v in values if v == v]
    return max(kept) if kept else float("nan")


def completeness_row(family: str, checkpoints: str, chosen: list) -> str:
    """One model's row: IG at the fixed and the default steps over `chosen`, CHUNK pairs at a time."""
    from nlivis.analysis.attribution import (DEFAULT_STEPS, DIFFERENCE_FLOOR, GAP_TOLERANCE, cut_to_featurizer,
                                             integrated_gradients, predicted_classes)
    from nlivis.inference import load_checkpoint

    loaded = load_checkpoint(Path(checkpoints) / f"{family}-snli-small")
    model, featurizer = loaded.model.eval(), loaded.featurizer
    pairs = [cut_to_featurizer(item, featurizer) for item in chosen]
    fixed_gaps, gaps, differences, errors, steps = [], [], [], [], []
    fixed_seconds = refined_seconds = 0.0
    for start in range(0, len(pairs), CHUNK):
        batch = featurizer.encode(pairs[start:start + CHUNK])
        _, target = predicted_classes(model, batch)
        began = time.perf_counter()
        fixed = integrated_gradients(model, batch, target, DEFAULT_STEPS)
        fixed_seconds += time.perf_counter() - began
        began = time.perf_counter()
        refined = integrated_gradients(model, batch, target)
        refined_seconds += time.perf_counter() - began
        fixed_gaps += fixed.completeness_gap.abs().tolist()
        gaps += refined.completeness_gap.abs().tolist()
        differences += refined.completeness_difference.abs().tolist()
        errors += refined.completeness_error.abs().tolist()
        steps += refined.steps.tolist()
    n = len(gaps)
    below = [i for i in range(n) if differences[i] < DIFFERENCE_FLOOR]
    above = [i for i in range(n) if differences[i] >= DIFFERENCE_FLOOR]
    missing = [i for i in above if not gaps[i] < GAP_TOLERANCE]
    refined_pairs = [s for s in steps if s > DEFAULT_STEPS]
    below_cell = (f"{len(below)} ({finite_max(gaps[i] for i in below):.3f}, {max(errors[i] for i in below):.1e})"
                  if below else "0")
    return (f"| {family} | {100 * sum(g < GAP_TOLERANCE for g in fixed_gaps) / n:.1f}% ({finite_max(fixed_gaps):.3f}) | "
            f"{100 * sum(g < GAP_TOLERANCE for g in gaps) / n:.1f}% ({finite_max(gaps):.3f}) | "
            f"{len(missing)} ({max((gaps[i] for i in above), default=0.0):.3f}) | {below_cell} | "
            f"{len(refined_pairs)}{f' ({max(refined_pairs)})' if refined_pairs else ''} | "
            f"{fixed_seconds:.0f} / {refined_seconds:.0f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="folder with SNLI (e.g. ../shared/data/snli/esnli_tokenized)")
    parser.add_argument("--sample", type=int, default=200, help="SNLI dev pairs per model (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample (default 1)")
    parser.add_argument("--models", default=",".join(SHIPPED), help="comma-separated shipped families")
    add_checkpoints_option(parser)
    add_out_option(parser)
    args = parser.parse_args(argv)

    from nlivis.analysis.attribution import DEFAULT_STEPS, DIFFERENCE_FLOOR, GAP_TOLERANCE, MAX_STEPS
    from nlivis.analysis.faithfulness import sample_items
    from nlivis.features.dataset import load_split_analysed
    from nlivis.inference import load_checkpoint
    from nlivis.data.protocols import resolve_split

    items, _ = load_split_analysed(resolve_split("snli", "dev"), args.data_dir)
    chosen = sample_items(items, args.sample, args.seed)
    lines = [f"IG completeness on {len(chosen)} SNLI dev pairs (seed {args.seed}), predicted class; tolerance "
             f"{GAP_TOLERANCE}, floor |Δ| < {DIFFERENCE_FLOOR} logit, refinement {DEFAULT_STEPS}→{MAX_STEPS} steps", "",
             f"| model (snli-small) | \\|gap\\| < {GAP_TOLERANCE}, fixed {DEFAULT_STEPS} steps (max \\|gap\\|) "
             f"| \\|gap\\| < {GAP_TOLERANCE}, default (max \\|gap\\|) | \\|Δ\\| ≥ floor: pairs missing {GAP_TOLERANCE} "
             f"(max \\|gap\\|) | \\|Δ\\| < floor: pairs (max \\|gap\\|, max \\|error\\| logit) "
             "| refined pairs (max steps) | seconds fixed / default |",
             "|---|---|---|---|---|---|---|"]
    for family in args.models.split(","):
        lines.append(completeness_row(family, args.checkpoints, chosen))
        print(lines[-1], file=sys.stderr, flush=True)
    publish(lines, args.out)
    return 0

if __name__ == "__main__":
    sys.exit(main())
