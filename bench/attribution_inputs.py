"""How much of a pair's evidence the word vectors alone carry, per shipped snli-small model.

    OMP_NUM_THREADS=1 python bench/attribution_inputs.py --data-dir ../shared/data/snli/esnli_tokenized [--sample 200]
        [--out FILE]

For each sampled SNLI dev pair (seed 1, the faithfulness draw) and the predicted class: Δ_words = f(x) −
f(every real token's word vector zeroed, other features kept) and Δ_tokens = f(x) − f(every real token's
whole representation set to a removed token's), in the target logit: what integrated gradients distribute
at `--attribute-at word_vectors` and at the default `token_features` (their completeness targets). Prints
the median and quartiles of Δ_words / Δ_tokens over the pairs with |Δ_tokens| ≥ 0.01 logit: below 1, the
word-vector attribution leaves part of what deleting the tokens removes unexplained.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import SHIPPED, Report, add_checkpoints_option, add_out_option


def word_share(loaded, chosen: list) -> list[float]:
    """Δ_words / Δ_tokens of each pair in `chosen` whose |Δ_tokens| reaches the floor, for one loaded checkpoint."""
    import torch

    from nlivis.analysis.attribution import (DIFFERENCE_FLOOR, InputForward, cut_to_featurizer, input_vectors,
                                             predicted_classes, removed_token_baseline)

    ratios = []
    for start in range(0, len(chosen), 32):
        batch = loaded.featurizer.encode([cut_to_featurizer(i, loaded.featurizer) for i in chosen[start:start + 32]])
        _, target = predicted_classes(loaded.model, batch)
        rows = torch.arange(len(batch))
        differences = {}
        with torch.no_grad():
            for at in ("word_vectors", "token_features"):
                premise, hypothesis = input_vectors(loaded.model, batch, at)
                base = removed_token_baseline(loaded.model, batch, premise, hypothesis, at)
                ends = InputForward(loaded.model, batch, at)(torch.cat([premise, base[0]]),
                                                             torch.cat([hypothesis, base[1]]))
                b = len(batch)
                differences[at] = (ends[:b][rows, target] - ends[b:][rows, target]).double()
        keep = differences["token_features"].abs() >= DIFFERENCE_FLOOR
        ratios += (differences["word_vectors"][keep] / differences["token_features"][keep]).tolist()
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="SNLI line-aligned files (../shared/data/snli/esnli_tokenized)")
    parser.add_argument("--sample", type=int, default=200, help="SNLI dev pairs (seed 1; default 200)")
    add_checkpoints_option(parser)
    add_out_option(parser)
    args = parser.parse_args(argv)

    import numpy as np
    import torch

    from nlivis.analysis.attribution import DIFFERENCE_FLOOR
    from nlivis.analysis.faithfulness import sample_items
    from nlivis.features.dataset import load_split_analysed
    from nlivis.inference import load_checkpoint
    from nlivis.data.protocols import resolve_split

    torch.set_num_threads(1)
    items, _ = load_split_analysed(resolve_split("snli", "dev"), args.data_dir)
    chosen = sample_items(items, args.sample, seed=1)
    with Report(args.out) as report:
        report.print(f"Δ_words / Δ_tokens in the predicted class's logit, {args.sample} SNLI dev pairs (seed 1); "
                     f"pairs with |Δ_tokens| < {DIFFERENCE_FLOOR} left out\n",
                     "| model (snli-small) | pairs | median | quartiles |", "|---|---|---|---|")
        for family in SHIPPED:
            ratios = word_share(load_checkpoint(Path(args.checkpoints) / f"{family}-snli-small"), chosen)
            q1, median, q3 = np.percentile(ratios, [25, 50, 75])
            report.print(f"| {family} | {len(ratios)} | {median:.2f} | {q1:.2f}–{q3:.2f} |")
    return 0

if __name__ == "__main__":
    sys.exit(main())
