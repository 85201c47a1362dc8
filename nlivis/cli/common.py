"""What every command shares: one-line errors (exit code 2, and `{"error": …}` on stdout under --json, usage
errors included), one escaper for everything printed, and argument types that refuse impossible numbers
(read by the one number parser, `nlivis.data.text.whole_number` / `decimal_number`) before any work starts."""
from __future__ import annotations

import argparse
import io
import json
import math
import sys
import unicodedata
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

from nlivis.data import options
from nlivis.data.text import decimal_number, shown, whole_number
from nlivis.store.files import CACHE_ENV, cache_root
from nlivis.training.augment import parse_kinds

USAGE_ERROR = 2
def fail(message: str, as_json: bool = False) -> int:
    """Print one line `error: …` on stderr (escaped: a message may quote a file's bytes); with `as_json`
    also `{"error": …}` on stdout, so a script reading stdout sees what went wrong. Returns exit code 2."""
    print(f"error: {shown(message, keep_newlines=True)}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message}))
    return USAGE_ERROR


def cache_failure(error: BaseException, where: Path) -> str:
    """A plain sentence for a cache folder that cannot be used (not a folder, not writable, disk full): which
    folder, why, and how to choose another."""
    reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    culprit = getattr(error, "filename", None)
    return (f"cannot use the nlivis cache folder {cache_root()} for {where} ({reason}"
            + (f": {culprit}" if culprit else "") + f"); choose another folder with the {CACHE_ENV} environment "
            f"variable (e.g. {CACHE_ENV}=/tmp/nlivis-cache)")


def escaped(text: str, as_json: bool = False) -> str:
    """`text` with every control, format, surrogate or unassigned character escaped (line breaks kept): the one
    escaper for everything a command prints, so a premise holding `ESC [31m` or `ESC ] 0;…BEL` is shown, not
    obeyed by the terminal. Under --json the escapes are JSON's (`\\u009b`), so the output stays valid JSON
    (JSON itself escapes only the C0 controls; C1 controls, bidirectional overrides and lone surrogates pass)."""
    if text.replace("\n", "").isprintable():
        return text
    if not as_json:
        return shown(text, keep_newlines=True)
    return "".join(json.dumps(char)[1:-1] if char != "\n" and unicodedata.category(char)[0] == "C" else char
                   for char in text)


class EscapedOutput(io.TextIOBase):
    """A text stream that escapes (`escaped`) everything written to it before passing it on."""

    def __init__(self, stream: TextIO, as_json: bool):
        super().__init__()
        self.stream, self.as_json = stream, as_json

    def write(self, text: str) -> int:
        self.stream.write(escaped(text, self.as_json))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")


@contextmanager
def escaped_stdout(as_json: bool) -> Iterator[None]:
    """While a command runs, what it prints on stdout passes through `escaped` (its own lines and the user's
    text in them alike, tables included)."""
    previous = sys.stdout
    sys.stdout = EscapedOutput(previous, as_json)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stdout = previous


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


def _any_number(text: str) -> float:
    """A number written with the digits 0-9, or nan / inf (which the range checks then refuse, saying why)."""
    return decimal_number(text, finite=False)


epochs = _checked(_any_number, options.epochs_problem, "a number")
"""argparse type: a finite number of epochs above 0 (`--epochs inf` or `nan` is refused)."""
seed = _checked(whole_number, options.seed_problem, "a whole number")
"""argparse type: a seed numpy and torch both accept."""
positive_int = _checked(whole_number, options.count_problem, "a whole number")
"""argparse type: a whole number ≥ 1."""
augment_ratio = _checked(_any_number, options.augment_ratio_problem, "a number")
"""argparse type: augmented pairs per training pair, above 0 and at most `options.MAX_AUGMENT_RATIO`."""
share = _checked(_any_number, options.share_problem, "a number")
"""argparse type: a share from 0 to 1."""


def augment_kinds(text: str) -> tuple[str, ...]:
    """argparse type: comma-separated augmentation kinds, each one `train --augment` knows."""
    try:
        return parse_kinds(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


ig_steps = _checked(whole_number, options.integrated_gradients_steps_problem, "a whole number")
"""argparse type: integrated-gradients steps within what memory allows."""


def _no_problem(value: Any, option: str) -> None:
    """Any value the parser reads is fine (the command checks its range itself)."""


def _not_negative_problem(value: int, option: str) -> str | None:
    return options.count_problem(value, option, minimum=0)


number = _checked(decimal_number, _no_problem, "a number")
"""argparse type: a finite number written with the digits 0-9."""
count_or_zero = _checked(whole_number, _not_negative_problem, "a whole number")
"""argparse type: a whole number ≥ 0."""
ARGUMENT_TYPES = {"epochs": epochs, "seed": seed, "positive_int": positive_int, "augment_ratio": augment_ratio,
                  "ig_steps": ig_steps, "number": number, "count_or_zero": count_or_zero}
"""The checked types by name, for an analysis's option (`nlivis.data.flags.Flag.type`) that the layers below
the command line declare."""


def without_nan(value: Any) -> Any:
    """JSON has no NaN: undefined numbers print as null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: without_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_nan(v) for v in value]
    return value
