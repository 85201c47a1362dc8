"""The `explain` and `faithfulness` sub-commands.

    python -m nlivis explain checkpoints/gcnn-snli-small --premise "A man plays." --hypothesis "A man sleeps." \
        --method integrated_gradients --json
    python -m nlivis faithfulness checkpoints/gcnn-snli-small --dataset snli --split dev \
        --data-dir ../shared/data/snli/esnli_tokenized --sample 500 --json

Every failure a user can cause (bad checkpoint, missing data, empty text, unknown class) prints one line
and exits 2.
"""
from __future__ import annotations

import json
import math
import sys
from typing import Any

# torch is imported inside the commands, so `python -m nlivis --help` stays fast
STEPS_HELP = ("integrated-gradients steps, fixed (default: adaptive — 50 steps, doubled up to 1600 for a pair whose "
              "completeness gap is ≥ 0.05; see nlivis.analysis.attribution)")
AT_HELP = ("where gradients and integrated gradients attribute: token_features (default: each token's whole input "
           "representation — word vector, char CNN, POS, exact match, as the model reads it — from a removed "
           "token's representation, as deletion removes it) or word_vectors (the word vectors only, the other "
           "features held at their values; the earlier default)")


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def class_index(labels: tuple[str, ...], target: str | None) -> int | None:
    """A `--target` given as a label name or a class index; None keeps the predicted class."""
    if target is None:
        return None
    if target in labels:
        return labels.index(target)
    if target.isdigit() and int(target) < len(labels):
        return int(target)
    raise ValueError(f"--target {target!r} is neither one of this model's labels {list(labels)} nor a class index")


def explain_command(args) -> int:
    """`python -m nlivis explain CHECKPOINT --premise P --hypothesis H --method M [--target T] [--json]`."""
    from nlivis.analysis.attribution import DEFAULT_INPUT, analysed_text_pair, explain_pair
    from nlivis.training.checkpoint import CheckpointError, load_checkpoint

    args.attribute_at = args.attribute_at or DEFAULT_INPUT

    try:
        loaded = load_checkpoint(args.checkpoint)
    except CheckpointError as error:
        return _fail(str(error))
    try:
        target = class_index(loaded.labels, args.target)
        item = analysed_text_pair(args.premise, args.hypothesis)
        result = explain_pair(loaded.model, loaded.featurizer, item, [args.method], target=target, steps=args.steps,
                              at=args.attribute_at)
    except ValueError as error:
        return _fail(str(error))
    if args.method not in result:
        return _fail(f"{loaded.path.name} traces no attention this method can use (see nlivis.analysis.attribution)")
    scores = result[args.method]
    output: dict[str, Any] = {
        "method": args.method, "premise_tokens": scores.premise_tokens, "premise_scores": scores.premise_scores,
        "hypothesis_tokens": scores.hypothesis_tokens, "hypothesis_scores": scores.hypothesis_scores,
        "predicted": loaded.labels[scores.predicted], "target": loaded.labels[scores.target], "note": scores.note}
    if args.method in ("integrated_gradients", "gradient", "grad_x_input"):
        output["attribute_at"] = args.attribute_at
    if scores.completeness_gap is not None:
        output["completeness_gap"] = scores.completeness_gap
        output["completeness_difference"] = scores.completeness_difference
        output["completeness_gap_note"] = scores.completeness_note
        output["steps"] = scores.steps
        output["steps_adaptive"] = args.steps is None
    if scores.layers:
        output["layers"] = {name: {"premise_scores": p, "hypothesis_scores": h} for name, (p, h) in scores.layers.items()}
    if args.json:
        print(json.dumps(_without_nan(output), indent=1))  # a gap is NaN where f(x) = f(baseline) exactly
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


def _without_nan(value: Any) -> Any:
    """JSON has no NaN: undefined numbers print as null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _without_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nan(v) for v in value]
    return value


def format_table(summary: dict[str, Any]) -> str:
    """One line per method: AOPC comprehensiveness and sufficiency with intervals, comprehensiveness minus the
    random floor with its paired interval, plausibility (by |score|), median τ with attention by |score| and
    signed."""
    lines = [f"{'method':<22}{'comprehensiveness':>28}{'sufficiency':>28}{'comp. − random':>28}{'AUPRC':>8}"
             f"{'F1':>7}{'median τ(att) |s|':>19}{'signed':>8}"]
    for name, entry in summary["methods"].items():
        def cell(value: float | None, interval) -> str:
            return "" if value is None else f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"

        def median(key: str) -> str:
            tau = entry.get(key, {}).get("average", {}).get("median")
            return "" if tau is None else f"{tau:.3f}"

        plausible = entry.get("plausibility", {})
        versus = entry.get("versus_random", {}).get("comprehensiveness", {})
        lines.append(f"{name:<22}{cell(entry['comprehensiveness'], entry['comprehensiveness_interval']):>28}"
                     f"{cell(entry['sufficiency'], entry['sufficiency_interval']):>28}"
                     f"{cell(versus.get('difference'), versus.get('interval')):>28}"
                     f"{plausible.get('auprc', math.nan):>8.3f}{plausible.get('f1', math.nan):>7.3f}"
                     f"{median('agreement_with_attention'):>19}{median('agreement_with_attention_signed'):>8}")
    return "\n".join(lines)


def faithfulness_command(args) -> int:
    """`python -m nlivis faithfulness CHECKPOINT --dataset D --split S --data-dir DIR [--sample N] [--json]`."""
    from nlivis.analysis.attribution import ATTRIBUTION_INPUTS, DEFAULT_INPUT
    from nlivis.analysis.faithfulness import (FAITHFULNESS_METHODS, RANDOM_PERMUTATIONS, hypothesis_tokens_by_id,
                                              ig_settings_key, run_faithfulness, summarize)
    from nlivis.data.highlights import find_highlights_file, highlights_by_pair, read_esnli_highlights
    from nlivis.data.protocols import split_key
    from nlivis.features.dataset import load_split_analyzed
    from nlivis.training.checkpoint import CheckpointError, load_checkpoint
    from nlivis.training.commands import resolve_split

    methods = FAITHFULNESS_METHODS if args.methods is None else tuple(m.strip() for m in args.methods.split(","))
    args.attribute_at = args.attribute_at or DEFAULT_INPUT
    args.permutations = RANDOM_PERMUTATIONS if args.permutations is None else args.permutations
    if args.attribute_at not in ATTRIBUTION_INPUTS:
        return _fail(f"--attribute-at {args.attribute_at!r}: choose one of {', '.join(ATTRIBUTION_INPUTS)}")
    if args.permutations < 1:
        return _fail(f"--permutations must be at least 1; got {args.permutations}")
    try:
        loaded = load_checkpoint(args.checkpoint)
    except CheckpointError as error:
        return _fail(str(error))
    ref = resolve_split(args.dataset, args.split)
    items, _ = load_split_analyzed(ref, args.data_dir, args.cache_dir)
    key = split_key(ref)
    run = run_faithfulness(loaded, items, key, sample=args.sample, seed=args.seed, methods=methods,
                           cache_dir=args.cache_dir, steps=args.steps, progress=not args.no_progress,
                           at=args.attribute_at, permutations=args.permutations)
    highlights_path = args.highlights or find_highlights_file(args.data_dir)
    highlights = None
    if highlights_path is not None:
        highlights = highlights_by_pair([item.pair for item in run.items], read_esnli_highlights(highlights_path)) or None
    summary = summarize(run.records, highlights, hypothesis_tokens_by_id(run.items, loaded.featurizer), seed=args.seed)
    output = {"checkpoint": str(loaded.path), "split": key, "sample": len(run.items), "seed": args.seed,
              "removal": "tokens deleted (sentence shortened and re-featurized), the same for every method",
              "integrated_gradients_steps": ig_settings_key(args.steps), "attribute_at": args.attribute_at,
              "random_permutations": args.permutations,
              "agreement_and_plausibility": "signed methods ranked by |score|; agreement_with_attention_signed keeps "
                                            "the signed τ",
              "bins": ["1%", "5%", "10%", "20%", "50%"], "cached": run.cached, "unavailable": run.unavailable,
              "highlights": None if highlights is None else {"file": str(highlights_path), "pairs": len(highlights)},
              **summary}
    if args.json:
        print(json.dumps(_without_nan(output), indent=1))
        return 0
    print(f"faithfulness of {loaded.path} on {key}, {len(run.items)} pairs (seed {args.seed}); AOPC over "
          f"{', '.join(output['bins'])}, 95% bootstrap intervals; removed tokens are deleted; gradients at the "
          f"{args.attribute_at.replace('_', ' ')}; random floor over {args.permutations} permutations per pair; "
          "AUPRC and τ rank signed methods by |score|")
    print(format_table(summary))
    if run.unavailable:
        print(f"\nnot available for this model: {', '.join(run.unavailable)}")
    if highlights is None:
        print("\nno e-SNLI highlights for these pairs: plausibility left out")
    return 0


def add_arguments(sub) -> None:
    """Declare both sub-commands on the CLI's sub-parser collection (defaults None: the analysis modules'
    own, so building the parser imports no torch)."""
    p = sub.add_parser("explain", help="per-token salience of one pair (gradients, integrated gradients, occlusion, attention)")
    p.add_argument("checkpoint")
    p.add_argument("--premise", required=True)
    p.add_argument("--hypothesis", required=True)
    p.add_argument("--method", default="integrated_gradients",
                   help="integrated_gradients (default) | gradient | grad_x_input | occlusion | attention")
    p.add_argument("--target", default=None, help="class to explain, as a label or index (default: the predicted class)")
    p.add_argument("--steps", type=int, default=None, help=STEPS_HELP)
    p.add_argument("--attribute-at", default=None, help=AT_HELP)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = sub.add_parser("faithfulness", help="ERASER comprehensiveness/sufficiency, attention agreement and plausibility over a split")
    p.add_argument("checkpoint")
    p.add_argument("--dataset", required=True)
    p.add_argument("--split", required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--sample", type=int, default=500, help="pairs drawn from the split by --seed (default 500)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sample, the random ranking and the bootstrap (default 1)")
    p.add_argument("--methods", default=None, help="comma-separated subset of integrated_gradients,gradient,grad_x_input,occlusion,attention,random (default: all)")
    p.add_argument("--steps", type=int, default=None, help=STEPS_HELP)
    p.add_argument("--attribute-at", default=None, help=AT_HELP)
    p.add_argument("--permutations", type=int, default=None,
                   help="random rankings per pair averaged into the random floor (default 10)")
    p.add_argument("--highlights", default=None, help="e-SNLI highlights file (default: esnli_highlights/ under --data-dir or up to two folders above)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--cache-dir", default=None, help="feature and attribution cache folder (default: ~/.cache/nlivis)")
