"""What every command shares: one-line errors (exit code 2, and `{"error": …}` on stdout under --json),
and argument types that refuse impossible numbers before any work starts."""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Callable

from nlivis.data import options
from nlivis.data.text import shown
from nlivis.training.augment import parse_kinds

USAGE_ERROR = 2
STEPS_HELP = ("integrated-gradients steps, fixed (default: adaptive — 50 steps, doubled up to 1600 for a pair whose "
              "completeness gap is ≥ 0.05; see nlivis.analysis.attribution)")
ATTRIBUTE_AT_HELP = ("where gradients and integrated gradients attribute: token_features (each token's whole input "
                     "representation — word vector, char CNN, POS, exact match, as the model reads it — from a removed "
                     "token's representation, as deletion removes it) or word_vectors (the word vectors only, the other "
                     "features held at their values; the earlier default)")
ATTRIBUTE_AT_CHOICES = ("token_features", "word_vectors")
"""`nlivis.analysis.attribution.ATTRIBUTION_INPUTS`, spelled here so building the parser imports no torch (a test
keeps the two equal)."""


def fail(message: str, as_json: bool = False) -> int:
    """Print one line `error: …` on stderr (escaped: a message may quote a file's bytes); with `as_json`
    also `{"error": …}` on stdout, so a script reading stdout sees what went wrong. Returns exit code 2."""
    print(f"error: {shown(message, keep_newlines=True)}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message}))
    return USAGE_ERROR


def _checked(parse: Callable[[str], Any], problem: Callable[..., str | None], what: str) -> Callable[[str], Any]:
    """An argparse type: `parse` the text, then refuse it with `problem`'s sentence (the ranges live in
    nlivis.data.options, one set of rules for the command line and the app)."""
    def check(text: str) -> Any:
        try:
            value = parse(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        message = problem(value, "the value")
        if message:
            raise argparse.ArgumentTypeError(message)
        return value
    check.__name__ = problem.__name__.removesuffix("_problem")
    return check


epochs = _checked(float, options.epochs_problem, "a number")
"""argparse type: a finite number of epochs above 0 (`--epochs inf` or `nan` is refused)."""
seed = _checked(int, options.seed_problem, "a whole number")
"""argparse type: a seed numpy and torch both accept."""
positive_int = _checked(int, options.count_problem, "a whole number")
"""argparse type: a whole number ≥ 1."""
augment_ratio = _checked(float, options.augment_ratio_problem, "a number")
"""argparse type: augmented pairs per training pair, above 0 and at most `options.MAX_AUGMENT_RATIO`."""


def augment_kinds(text: str) -> tuple[str, ...]:
    """argparse type: comma-separated augmentation kinds, each one `train --augment` knows."""
    try:
        return parse_kinds(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


ig_steps = _checked(int, options.integrated_gradients_steps_problem, "a whole number")
"""argparse type: integrated-gradients steps within what memory allows."""


def without_nan(value: Any) -> Any:
    """JSON has no NaN: undefined numbers print as null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: without_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_nan(v) for v in value]
    return value
