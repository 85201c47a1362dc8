"""ERASER faithfulness (comprehensiveness, sufficiency), agreement with attention and plausibility against
e-SNLI highlights, over a sample of a split.

    python -m nlivis faithfulness checkpoints/gcnn-snli-small --dataset snli --split dev \
        --data-dir ../shared/data/snli/esnli_tokenized --sample 500 --json
"""
from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nlivis.workflows.faithfulness import FaithfulnessResult

JSON_HELP = "print JSON instead of a table"
JSON_ASCII = True


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


def print_text(result: FaithfulnessResult, args: argparse.Namespace) -> None:
    """What the run measured and how to read it, then `format_table`."""
    options = result.options
    print(f"faithfulness of {result.checkpoint} on {result.split}, {len(result.items)} pairs (seed {options.seed}); "
          f"AOPC over {', '.join(result.record()['bins'])}, 95% bootstrap intervals; removed tokens are deleted; "
          f"gradients at the {options.at.replace('_', ' ')}; random floor over {options.permutations} permutations "
          "per pair; AUPRC and τ rank signed methods by |score|; the pooled τ with attention is to be read beside "
          "the baseline, the τ of a plain 'is a hypothesis token' indicator")
    print(format_table(result.summary))
    if result.unavailable:
        print(f"\nnot available for this model: {', '.join(result.unavailable)}")
    if result.highlights_file is None:
        print("\nno e-SNLI highlights for these pairs: plausibility left out")
