"""Per-token salience of one pair: gradients, grad × input, integrated gradients, occlusion, attention.

    python -m nlivis explain checkpoints/gcnn-snli-small --premise "A man plays." --hypothesis "A man sleeps." \
        --method integrated_gradients --json
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nlivis.workflows.explain import Explanation

JSON_HELP = "print JSON instead of a table"
JSON_ASCII = True


def print_text(explanation: Explanation, args: argparse.Namespace) -> None:
    """The asked method's score per token of each sentence, and integrated gradients' completeness gap."""
    method = explanation.options.methods[0]
    scores = explanation.scores[method]
    output = explanation.record()
    print(f"{method} for {output['target']} (predicted {output['predicted']}); {scores.note}")
    for side in ("premise", "hypothesis"):
        print(f"{side}:")
        for token, value in zip(output[f"{side}_tokens"], output[f"{side}_scores"]):
            print(f"  {token:<20} {value:+.4f}")
    if scores.completeness_gap is not None:
        print(f"completeness gap: {scores.completeness_gap:+.5f} ({scores.steps} steps; "
              f"f(x) − f(baseline) = {scores.completeness_difference:+.4f})")
        if scores.completeness_note:
            print(f"note: {scores.completeness_note}")
