"""What every command shares: one-line errors (exit code 2, and `{"error": …}` on stdout under --json),
and argument types that refuse impossible numbers before any work starts."""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

USAGE_ERROR = 2
SEED_LIMIT = 2 ** 32
"""Seeds must fit numpy's seed range (torch accepts more; one range for both keeps runs reproducible)."""
STEPS_HELP = ("integrated-gradients steps, fixed (default: adaptive — 50 steps, doubled up to 800 for a pair whose "
              "completeness gap is ≥ 0.05; see nlivis.analysis.attribution)")
MAX_IG_STEPS = 10_000
"""Integrated-gradients steps one call may ask for: the adaptive default stops at 800; 10,000 is already
minutes per pair, and 10^8 steps would need gigabytes of interpolation rows."""


def fail(message: str, as_json: bool = False) -> int:
    """Print one line `error: …` on stderr (escaped: a message may quote a file's bytes); with `as_json`
    also `{"error": …}` on stdout, so a script reading stdout sees what went wrong. Returns exit code 2."""
    from nlivis.data.text import shown

    print(f"error: {shown(message, keep_newlines=True)}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message}))
    return USAGE_ERROR


def finite_positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (`--epochs inf` or `nan` is refused with a plain message)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number above 0")
    return value


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def positive_int(text: str) -> int:
    """argparse type: a whole number ≥ 1."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: give a whole number of at least 1")
    return value


def seed(text: str) -> int:
    """argparse type: a seed in [0, 2^32)."""
    value = _whole_number(text)
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"{text}: a seed must lie in 0 … {SEED_LIMIT - 1}")
    return value


def ig_steps(text: str) -> int:
    """argparse type: integrated-gradients steps in [1, MAX_IG_STEPS]."""
    value = positive_int(text)
    if value > MAX_IG_STEPS:
        raise argparse.ArgumentTypeError(f"{value} steps: at most {MAX_IG_STEPS:,} (the adaptive default refines "
                                         "up to 800 where the completeness gap needs it)")
    return value


def without_nan(value: Any) -> Any:
    """JSON has no NaN: undefined numbers print as null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: without_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_nan(v) for v in value]
    return value
