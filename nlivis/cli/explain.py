"""Per-token salience of one pair: gradients, grad × input, integrated gradients, occlusion, attention.

    python -m nlivis explain checkpoints/gcnn-snli-small --premise "A man plays." --hypothesis "A man sleeps." \
        --method integrated_gradients --json
"""
from __future__ import annotations

import argparse
import json

from nlivis.cli.common import ATTRIBUTE_AT_CHOICES, ATTRIBUTE_AT_HELP, STEPS_HELP, fail, ig_steps, without_nan
from nlivis.data.text import whole_number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", help="checkpoint folder")
    parser.add_argument("--premise", required=True, help="the premise (or first question)")
    parser.add_argument("--hypothesis", required=True, help="the hypothesis (or second question)")
    parser.add_argument("--method", default="integrated_gradients",
                        help="attribution method: integrated_gradients | gradient | grad_x_input | occlusion | attention")
    parser.add_argument("--target", default=None,
                        help="class to explain, as a label or index (default: the predicted class)")
    parser.add_argument("--steps", type=ig_steps, default=None, help=STEPS_HELP)
    parser.add_argument("--attribute-at", default="token_features", choices=ATTRIBUTE_AT_CHOICES, help=ATTRIBUTE_AT_HELP)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def class_index(labels: tuple[str, ...], target: str | None) -> int | None:
    """A `--target` given as a label name or a class index; None keeps the predicted class."""
    if target is None:
        return None
    if target in labels:
        return labels.index(target)
    try:
        index = whole_number(target)
    except ValueError:
        index = -1
    if 0 <= index < len(labels):
        return index
    raise ValueError(f"--target {target!r} is neither one of this model's labels {list(labels)} nor a class index")


def run(args: argparse.Namespace) -> int:
    from nlivis.inference import load_checkpoint
    from nlivis.workflows.explain import ExplainOptions, explain

    loaded = load_checkpoint(args.checkpoint)
    options = ExplainOptions(methods=(args.method,), target=class_index(loaded.labels, args.target), steps=args.steps,
                             at=args.attribute_at)
    explanation = explain(loaded, args.premise, args.hypothesis, options)
    if args.method not in explanation.scores:
        return fail(f"{loaded.path.name} traces no attention this method can use (see nlivis.analysis.attribution)",
                    args.json)
    scores = explanation.scores[args.method]
    output = explanation.record()
    if args.json:
        print(json.dumps(without_nan(output), indent=1))  # a gap is NaN where f(x) = f(baseline) exactly
        return 0
    print(f"{args.method} for {output['target']} (predicted {output['predicted']}); {scores.note}")
    for side in ("premise", "hypothesis"):
        print(f"{side}:")
        for token, value in zip(output[f"{side}_tokens"], output[f"{side}_scores"]):
            print(f"  {token:<20} {value:+.4f}")
    if scores.completeness_gap is not None:
        print(f"completeness gap: {scores.completeness_gap:+.5f} ({scores.steps} steps; "
              f"f(x) − f(baseline) = {scores.completeness_difference:+.4f})")
        if scores.completeness_note:
            print(f"note: {scores.completeness_note}")
    return 0
