"""The one command-line runner of every registered analysis (`nlivis.workflows.protocol.ANALYSES`): each gets
the command its spec names, the arguments of what it runs on (its subject), one flag per field of its options
dataclass (the field's `Flag`: name, type, choices, help with the default) and `--json`, which prints the
result's `record()`.

A command may have a module of its own in this package (`explain`, `edits`, `probe`, `faithfulness`) for what
only its table needs: `add_display_arguments(parser)`, `print_text(result, args)`, and the constants
`CHECKPOINTS_HELP`, `JSON_HELP` and `JSON_ASCII`. Without one, the table is the result's pair-list rows (or
its record, indented)."""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
from dataclasses import Field
from types import ModuleType
from typing import Any

from nlivis.cli.common import ARGUMENT_TYPES, without_nan
from nlivis.data.flags import Flag, default_of, flag_name, flagged_fields
from nlivis.workflows.protocol import ANALYSES, AnalysisSpec, ListRow, stderr_progress
from nlivis.workflows.subjects import Checkpoints, SplitSample, TypedPair


def analysis_of(command: str) -> AnalysisSpec | None:
    """The registered analysis whose command is `command` (None: not an analysis's command)."""
    return next((spec for spec in ANALYSES.values() if spec.command == command), None)


def own_module(spec: AnalysisSpec) -> ModuleType | None:
    """The command's own module in this package, if it has one."""
    name = f"nlivis.cli.{spec.command.replace('-', '_')}"
    return importlib.import_module(name) if importlib.util.find_spec(name) is not None else None


def add_subject_arguments(parser: argparse.ArgumentParser, spec: AnalysisSpec, module: ModuleType | None) -> None:
    """The positional arguments and flags of what the analysis runs on (`protocol.SUBJECTS`)."""
    if spec.subject == "checkpoints":
        parser.add_argument("checkpoints", nargs="+",
                            help=getattr(module, "CHECKPOINTS_HELP", "checkpoint folders (one task)"))
        return
    parser.add_argument("checkpoint", help="checkpoint folder")
    if spec.subject == "pair":
        parser.add_argument("--premise", required=True, help="the premise (or first question)")
        parser.add_argument("--hypothesis", required=True, help="the hypothesis (or second question)")
        return
    parser.add_argument("--dataset", required=True, help="dataset or protocol of the split")
    parser.add_argument("--split", required=True, help="split name or key, e.g. dev or snli_dev")
    parser.add_argument("--data-dir", required=True, help="folder holding the split's files")
    parser.add_argument("--cache-dir", default=None, dest="subject_cache_dir", metavar="CACHE_DIR",
                        help="feature and analysis cache folder (default: $NLIVIS_CACHE_DIR or ~/.cache/nlivis)")


def add_option(parser: argparse.ArgumentParser, item: Field, flag: Flag) -> None:
    """One option's flag: a switch for a bool field, else a value read by the flag's type."""
    default = default_of(item, flag)
    if isinstance(default, bool):
        parser.add_argument(flag_name(item), dest=item.name, action="store_false" if default else "store_true",
                            help=flag.help)
        return
    parser.add_argument(flag_name(item), dest=item.name, type=argument_type(flag), default=default, choices=flag.choices,
                        required=flag.required, help=flag.help, metavar=None if flag.choices else
                        flag_name(item).removeprefix("--").replace("-", "_").upper())


def argument_type(flag: Flag) -> Any:
    """How the command line reads the flag's text: its callable, or the checked type it names."""
    return ARGUMENT_TYPES[flag.type] if isinstance(flag.type, str) else flag.type


def add_arguments(parser: argparse.ArgumentParser, spec: AnalysisSpec) -> None:
    """Every argument of the analysis's command: its subject, its options, --json and its table's own."""
    module = own_module(spec)
    add_subject_arguments(parser, spec, module)
    for item, flag in flagged_fields(spec.options):
        add_option(parser, item, flag)
    parser.add_argument("--json", action="store_true",
                        help=getattr(module, "JSON_HELP", "print JSON (the result's record) instead of a table"))
    if hasattr(module, "add_display_arguments"):
        module.add_display_arguments(parser)


def subject_of(spec: AnalysisSpec, args: argparse.Namespace) -> Any:
    """What the analysis runs on, read as the arguments say (checkpoints loaded, a split read and analysed)."""
    if spec.subject == "checkpoints":
        return Checkpoints.read(args.checkpoints)
    if spec.subject == "pair":
        from nlivis.inference import load_checkpoint
        return TypedPair(load_checkpoint(args.checkpoint), args.premise, args.hypothesis)
    return SplitSample.read(args.checkpoint, args.dataset, args.split, args.data_dir, args.subject_cache_dir)


def options_of(spec: AnalysisSpec, args: argparse.Namespace) -> Any:
    """The options dataclass from the parsed flags (fields without a flag keep their default)."""
    return spec.options(**{item.name: getattr(args, item.name) for item, _ in flagged_fields(spec.options)})


def run(spec: AnalysisSpec, args: argparse.Namespace) -> int:
    """Run the analysis as the command line asks and print its record (--json) or its table."""
    module = own_module(spec)
    options = options_of(spec, args)
    result = spec.runner()(subject_of(spec, args), options, stderr_progress)
    if args.json:
        print(json.dumps(without_nan(result.record()), indent=1, ensure_ascii=getattr(module, "JSON_ASCII", False)))
    elif hasattr(module, "print_text"):
        module.print_text(result, args)
    elif spec.rows is not None:
        print(format_rows(spec.rows(result, {}), spec.score))
    else:
        print(json.dumps(without_nan(result.record()), indent=1, ensure_ascii=False))
    return 0


def format_rows(rows: list[ListRow], score: str) -> str:
    """One line per row, highest number first: the pair (split and row, or id), the number, the columns."""
    lines = []
    for row in sorted(rows, key=lambda row: -row.score):
        where = f"{row.split}:{row.row}" if row.split is not None else row.pair_id or "(typed)"
        columns = "  ".join(f"{name}={value}" for name, value in row.columns.items())
        lines.append(f"{where:<24} {score}={row.score:.4g}  {columns}")
    return "\n".join(lines)
