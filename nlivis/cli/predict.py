"""Label one premise/hypothesis pair with a checkpoint.

    python -m nlivis predict checkpoints/gcnn-snli-small --premise "A man plays." --hypothesis "A man sleeps."

Text over the model's cut-offs is cut as in training and said so; unknown words are read as unknown.
"""
from __future__ import annotations

import argparse
import json
import sys

from nlivis.cli.common import fail
from nlivis.data.text import shown, text_problem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", help="checkpoint folder")
    parser.add_argument("--premise", required=True, help="the premise (or first question)")
    parser.add_argument("--hypothesis", required=True, help="the hypothesis (or second question)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    from nlivis.inference import load_checkpoint, predict_pair

    for name, text in (("premise", args.premise), ("hypothesis", args.hypothesis)):
        problem = text_problem(text, f"--{name}")
        if problem:
            return fail(problem, args.json)
    result = predict_pair(load_checkpoint(args.checkpoint), args.premise, args.hypothesis)
    if args.json:
        print(json.dumps({"label": result.label, "probabilities": result.probabilities,
                          "truncation": result.truncation, "unknown_words": result.unknown_words,
                          "unknown_word_count": len(result.unknown_words),
                          "premise_tokens": result.premise_tokens, "hypothesis_tokens": result.hypothesis_tokens},
                         indent=1))
    else:
        print(f"label: {result.label}")
        width = max(len(label) for label in result.probabilities)
        for label, probability in sorted(result.probabilities.items(), key=lambda kv: -kv[1]):
            print(f"  {label:<{width}}  {probability:.4f}")
        print(f"unknown words: {len(result.unknown_words)}")
    for notice in result.notices:
        print(f"notice: {shown(notice)}", file=sys.stderr)
    return 0
